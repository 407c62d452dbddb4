// Package sample exercises the Go outline.
package sample

import "fmt"

// Limit is a constant.
const Limit = 10

const (
	A = iota
	B
)

var (
	registry = map[string]int{}
	verbose  bool
)

// Shape is an interface.
type Shape interface {
	Area() float64
}

// Point is a struct.
type Point struct {
	X, Y int
}

type (
	ID          string
	Pair[T any] struct{ a, b T }
)

type Alias = Point

// Area is a method with a value receiver.
func (p Point) Area() float64 {
	inner := func() int { return 1 }
	return float64(inner())
}

// Move has a pointer receiver.
func (p *Point) Move(dx int) {
	p.X += dx
}

func (q *Pair[T]) Swap() {
	q.a, q.b = q.b, q.a
}

func Hello(name string) string {
	type local struct{}
	return fmt.Sprint("hello ", name)
}
