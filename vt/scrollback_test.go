package vt

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// asLine makes a line of cells holding s, one rune per cell.
func asLine(s string) line {
	l := make(line, len([]rune(s))+3)
	for i, r := range []rune(s) {
		l[i] = cell{r: r}
	}
	return l
}

// TestScrollback compares the scrollback with a plain slice of strings
// over many pushes of lines of random length, so compaction runs often.
func TestScrollback(t *testing.T) {
	for _, max := range []int{1, 2, 3, 10, 100} {
		rng := rand.New(rand.NewPCG(uint64(max), 7))
		s := scrollback{max: max}
		var model []string
		for i := range 2000 {
			text := strings.Repeat(fmt.Sprint(i%10), rng.IntN(40))
			l := asLine(text)
			s.push(l, len(l))
			model = append(model, text)
			if len(model) > max {
				model = model[1:]
			}
			if s.count() != len(model) {
				t.Fatalf("max %d, push %d: count() = %d, want %d", max, i, s.count(), len(model))
			}
			want := strings.Join(model, "\n") + "\n"
			if got := string(s.text()); got != want {
				t.Fatalf("max %d, push %d: text() = %q, want %q", max, i, got, want)
			}
			if len(s.data) > 4*len(want)+64 {
				t.Fatalf("max %d, push %d: %d bytes held for %d live", max, i, len(s.data), len(want))
			}
			if rng.IntN(50) == 0 {
				var got []string
				s.drain(func(l []byte, _ bool) { got = append(got, string(l)) })
				if !slices.Equal(got, model) {
					t.Fatalf("max %d, push %d: drain() = %q, want %q", max, i, got, model)
				}
				model = nil
				if s.count() != 0 || len(s.text()) != 0 {
					t.Fatalf("max %d: drain left %d lines", max, s.count())
				}
			}
		}
	}
}

func TestScrollbackNone(t *testing.T) {
	s := scrollback{}
	s.push(asLine("x"), 1)
	drained := 0
	s.drain(func([]byte, bool) { drained++ })
	if s.count() != 0 || len(s.text()) != 0 || drained != 0 {
		t.Errorf("a scrollback of 0 lines kept %d lines", s.count())
	}
}
