//go:build cgo

package codemap

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// identsNamed renders the identifiers called name as "line:col" (with a "*"
// for definitions), in order.
func identsNamed(ids []Ident, name string) string {
	var out []string
	for _, id := range ids {
		if id.Name == name {
			s := fmt.Sprintf("%d:%d", id.Line, id.Column)
			if id.Definition {
				s += "*"
			}
			out = append(out, s)
		}
	}
	return strings.Join(out, " ")
}

func TestIdentifiers(t *testing.T) {
	tests := []struct {
		path, src string
		want      map[string]string // name -> identsNamed
	}{
		{
			path: "p.go",
			src: `package p

// helper is mentioned in a comment
func helper(x int) int { return x + 1 }

type Box struct{ n int }

func (b *Box) Open() int {
	s := "helper inside a string"
	return helper(len(s)) + b.n
}
`,
			want: map[string]string{
				"helper": "4:6* 10:9",
				"Box":    "6:6* 8:10",
				"Open":   "8:15*",
				"n":      "6:18 10:28",
				"s":      "9:2 10:20",
				"p":      "1:9",
			},
		},
		{
			path: "m.py",
			src: `# greet in a comment
def greet(name):
    """greet in a docstring"""
    return "greet " + name

class Box:
    def open(self):
        return greet(f"{self} greet")
`,
			want: map[string]string{
				"greet": "2:5* 8:16",
				"name":  "2:11 4:23",
				"Box":   "6:7*",
				"open":  "7:9*",
				"self":  "7:14 8:25",
			},
		},
		{
			path: "a.js",
			src: `// greet in a comment
function greet(name) {
  return ` + "`greet ${name}`" + `;
}
class Box {
  open() { return greet("greet"); }
}
const run = () => greet(/* greet */ "x");
`,
			want: map[string]string{
				"greet": "2:10* 6:19 8:19",
				"name":  "2:16 3:19",
				"Box":   "5:7*",
				"open":  "6:3*",
				"run":   "8:7*",
			},
		},
		{
			path: "lib.ex",
			src: `defmodule Foo.Bar do
  def go(x), do: Foo.Bar.go(x)
end
`,
			want: map[string]string{
				"Foo": "1:11 2:18",
				"Bar": "1:15* 2:22",
				"go":  "2:7* 2:26",
			},
		},
		{
			path: "run.sh",
			src: `greet() { echo "greet $1"; }
NAME=x
greet "$NAME" # greet
`,
			want: map[string]string{
				"greet": "1:1* 3:1",
				"NAME":  "2:1 3:9",
				"echo":  "1:11",
			},
		},
	}
	for _, tt := range tests {
		ids, err := Identifiers(tt.path, []byte(tt.src))
		if err != nil {
			t.Fatalf("Identifiers(%s): %v", tt.path, err)
		}
		for name, want := range tt.want {
			if got := identsNamed(ids, name); got != want {
				t.Errorf("Identifiers(%s) for %q = %q, want %q", tt.path, name, got, want)
			}
		}
		for i := 1; i < len(ids); i++ {
			a, b := ids[i-1], ids[i]
			if b.Line < a.Line || b.Line == a.Line && b.Column <= a.Column {
				t.Errorf("Identifiers(%s): %+v follows %+v; want source order without repeats", tt.path, b, a)
			}
		}
	}
}

// notTokens are outlined names that no single identifier spells: a PHP
// namespace path and a C++ destructor (by their characters, above), the
// anonymous default export, Swift's init keyword, and a defimpl named
// Protocol.Type.
var notTokens = map[string]bool{
	"sample.js default":         true,
	"sample.swift init":         true,
	"sample.ex Sample.Size.Map": true,
}

// TestIdentifiersFixtures checks, for every fixture, that each outlined
// symbol's name is among the identifiers flagged as definitions on its line.
func TestIdentifiersFixtures(t *testing.T) {
	for _, f := range fixtureFiles(t) {
		src := readFixture(t, f)
		syms, err := Outline(f, src)
		if err != nil {
			t.Fatal(err)
		}
		ids, err := Identifiers(f, src)
		if err != nil {
			t.Fatal(err)
		}
		defs := map[string]bool{}
		for _, id := range ids {
			if id.Definition {
				defs[fmt.Sprintf("%s@%d", id.Name, id.Line)] = true
			}
		}
		for _, s := range syms {
			name := s.Name
			if i := strings.LastIndexByte(name, '.'); i >= 0 {
				name = name[i+1:]
			}
			if strings.ContainsAny(name, `\~`) || notTokens[filepath.Base(f)+" "+s.Name] {
				continue
			}
			if !defs[fmt.Sprintf("%s@%d", name, s.Line)] {
				t.Errorf("%s: symbol %s (line %d) is not flagged as a definition among the identifiers", f, s.Name, s.Line)
			}
		}
	}
}
