/* Sample for the C outline. */
#include <stdio.h>

#define MAX 10
#define SQUARE(x) ((x) * (x))

struct point {
    int x;
    int y;
};

typedef struct {
    int w, h;
} size_t2;

enum color { RED, GREEN };

typedef int (*callback)(int);

static int counter = 0;

int helper(int a);

static int add(int a, int b)
{
    return a + b;
}

int *make_array(size_t n)
{
    return 0;
}

int main(void)
{
    printf("%d\n", add(1, 2));
    return 0;
}
