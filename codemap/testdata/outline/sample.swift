// Sample for the Swift outline.
import Foundation

let limit = 3

protocol Shape {
    func area() -> Double
}

struct Point {
    var x: Int
    func moved() -> Point { return self }
}

class Circle: Shape {
    let r: Double

    init(r: Double) {
        self.r = r
    }

    func area() -> Double {
        return 3.14 * r * r
    }

    class Nested {
        func run() {}
    }
}

enum Direction {
    case north, south

    func flipped() -> Direction {
        return self == .north ? .south : .north
    }
}

extension Circle {
    func diameter() -> Double { return 2 * r }
}

typealias Handler = (String) -> Void

func greet(_ name: String) -> String {
    return "hello \(name)"
}
