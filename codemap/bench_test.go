//go:build cgo

package codemap

import (
	"fmt"
	"strings"
	"testing"
)

// goSource5000 generates a Go file of 5,000 lines: types, methods,
// functions and declarations in the proportions of ordinary code.
func goSource5000() []byte {
	var b strings.Builder
	b.WriteString("package bench\n\nimport \"fmt\"\n\n")
	for i := 0; strings.Count(b.String(), "\n") < 4990; i++ {
		fmt.Fprintf(&b, `// T%[1]d is a type.
type T%[1]d struct {
	a, b int
	name string
}

const c%[1]d = %[1]d

// Sum adds.
func (t *T%[1]d) Sum(x int) int {
	if x > t.a {
		return x + t.b
	}
	for i := 0; i < x; i++ {
		t.a += i
	}
	return t.a
}

func f%[1]d(s string) string {
	return fmt.Sprintf("%%s-%%d", s, c%[1]d)
}

`, i)
	}
	return []byte(b.String())
}

func BenchmarkOutlineGo5000(b *testing.B) {
	src := goSource5000()
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		syms, err := Outline("bench.go", src)
		if err != nil || len(syms) == 0 {
			b.Fatal(syms, err)
		}
	}
}

func BenchmarkIdentifiersGo5000(b *testing.B) {
	src := goSource5000()
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Identifiers("bench.go", src); err != nil {
			b.Fatal(err)
		}
	}
}
