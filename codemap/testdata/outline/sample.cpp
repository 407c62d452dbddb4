// Sample for the C++ outline.
#include <string>

namespace geo {

class Shape {
public:
    virtual ~Shape() = default;
    virtual double area() const = 0;
    std::string name() const { return "shape"; }

    struct Inner {
        int v;
    };
};

struct Circle : Shape {
    double r;
    double area() const override;
};

double Circle::area() const {
    return 3.14 * r * r;
}

template <typename T>
T twice(T v) {
    return v + v;
}

enum class Color { Red, Green };

namespace detail {
int helper() { return 1; }
}

}  // namespace geo

using Number = int;

int main() {
    geo::Circle c;
    return 0;
}
