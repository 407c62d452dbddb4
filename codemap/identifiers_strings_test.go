//go:build cgo

package codemap

import (
	"strings"
	"testing"
)

// TestIdentifiersNeverInStringsOrComments checks every language: the name
// zork is defined and used in code (the lines in code, once per
// occurrence), and also written in comments and string literals, which
// must give no identifier.
func TestIdentifiersNeverInStringsOrComments(t *testing.T) {
	tests := []struct {
		path string
		src  string
		code []int // the only lines where zork is an identifier
	}{
		{"a.go", "package a\n// zork here\nfunc zork() string { return \"zork\" + `zork` }\nvar _ = zork\n/* zork */\n", []int{3, 4}},
		{"a.py", "# zork\ndef zork():\n    return 'zork' + \"\"\"zork\"\"\"\nzork()\n", []int{2, 4}},
		{"a.js", "// zork\nfunction zork() { return 'zork' + \"zork\" + `zork` }\nzork() /* zork */\n", []int{2, 3}},
		{"a.ts", "// zork\nfunction zork(): string { return 'zork' }\nzork() /* zork */\n", []int{2, 3}},
		{"a.tsx", "// zork\nfunction zork() { return <div title=\"zork\">zork</div> }\nzork()\n", []int{2, 3}},
		{"a.rs", "// zork\nfn zork() -> &'static str { \"zork\" }\nfn main() { zork(); /* zork */ }\n", []int{2, 3}},
		{"a.c", "// zork\nint zork(void) { return 0; }\nconst char *s = \"zork\"; /* zork */\nint m(void) { return zork(); }\n", []int{2, 4}},
		{"a.cpp", "// zork\nint zork() { return 0; }\nauto s = \"zork\"; /* zork */\nint m() { return zork(); }\n", []int{2, 4}},
		{"A.java", "// zork\nclass A { void zork() { String s = \"zork\"; /* zork */ zork(); } }\n", []int{2, 2}},
		{"a.rb", "# zork\ndef zork\n  'zork' + \"zork\"\nend\nzork\n", []int{2, 5}},
		{"a.cs", "// zork\nclass A { void zork() { var s = \"zork\"; /* zork */ zork(); } }\n", []int{2, 2}},
		{"a.php", "<?php\n// zork\nfunction zork() { return 'zork' . \"zork\"; } # zork\nzork();\n", []int{3, 4}},
		{"a.lua", "-- zork\nfunction zork() return 'zork' .. \"zork\" end\nzork() --[[ zork ]]\n", []int{2, 3}},
		{"a.ex", "# zork\ndefmodule A do\n  def zork, do: \"zork\"\nend\nA.zork()\n", []int{3, 5}},
		{"a.kt", "// zork\nfun zork(): String = \"zork\"\nval x = zork() /* zork */\n", []int{2, 3}},
		{"a.swift", "// zork\nfunc zork() -> String { return \"zork\" }\nlet x = zork() /* zork */\n", []int{2, 3}},
		{"a.scala", "// zork\nobject A { def zork(): String = \"zork\"; val x = zork() /* zork */ }\n", []int{2, 2}},
		{"a.sh", "# zork\nzork() { echo 'zork' \"zork\"; }\nzork\n", []int{2, 3}},
	}
	for _, tc := range tests {
		ids, err := Identifiers(tc.path, []byte(tc.src))
		if err != nil {
			t.Errorf("%s: %v", tc.path, err)
			continue
		}
		var got []int
		for _, id := range ids {
			if id.Name == "zork" {
				got = append(got, id.Line)
			}
		}
		lines := strings.Split(tc.src, "\n")
		if len(got) != len(tc.code) {
			t.Errorf("%s: zork found on lines %v, want exactly %v", tc.path, got, tc.code)
		}
		for _, l := range got {
			if !containsInt(tc.code, l) {
				t.Errorf("%s: zork found on line %d (%q), which has it only in a comment or string", tc.path, l, lines[l-1])
			}
		}
		for _, l := range tc.code {
			if !containsInt(got, l) {
				t.Errorf("%s: zork not found on code line %d (%q); found on %v", tc.path, l, lines[l-1], got)
			}
		}
	}
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
