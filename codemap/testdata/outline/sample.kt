// Sample for the Kotlin outline.
package sample

const val LIMIT = 3

interface Shape {
    fun area(): Double
}

data class Point(val x: Int, val y: Int)

class Circle(private val r: Double) : Shape {
    override fun area(): Double = 3.14 * r * r

    companion object {
        fun unit(): Circle = Circle(1.0)
    }

    inner class Label {
        fun text() = "circle"
    }
}

object Registry {
    fun register(s: Shape) {}
}

enum class Color { RED, GREEN }

typealias Handler = (String) -> Unit

fun main() {
    fun local() = 1
    println(local())
}
