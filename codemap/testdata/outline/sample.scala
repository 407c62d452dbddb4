// Sample for the Scala outline.
package sample

trait Shape {
  def area: Double
}

case class Point(x: Int, y: Int)

class Circle(r: Double) extends Shape {
  val label = "circle"

  def area: Double = 3.14 * r * r

  def scaled(k: Double): Circle = {
    def helper(v: Double) = v * k
    new Circle(helper(r))
  }
}

object Registry {
  type Key = String

  def register(s: Shape): Unit = ()
}

enum Color {
  case Red, Green
}

def topLevel(x: Int): Int = x + 1
