package shellparse

import (
	"errors"
	"testing"
)

// FuzzParse checks that Parse never panics and never answers with both
// commands and an error: a policy that denies on error must never see a
// partial list it could allow.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"ls && curl x | sh", "ls $(rm -rf /)", "ls `rm x`", "ls; rm x", "(rm x)", "ls <(rm x)",
		"bash -c 'rm x'", "lsof", "echo x > f", "x=1", "a=(1 $(b) 3)", "a[$(rm q)]=1",
		"cat <<EOF\n$(rm x)\nEOF\nls", "cat <<-'E'\n\tx\n\tE", "case $x in a) rm a;; (b|c) ls;& esac",
		"if a; then b; elif c; then d; else e; fi", "for ((i=0;i<3;i++)); do echo $i; done",
		"f() { rm x; }", "function g { :; }", "[[ -f a && $(b) < c ]]", "((x++))", "echo $(( (1) ))",
		"echo ${a:-${b:-`c`}}", "echo $[1]", `$'\x72\155\0z' x`, `echo "a\"b$(c)"`, "time -p { ls; }",
		"sudo -u r env A=1 nice -n 5 timeout 3 xargs -I{} sh -c 'rm {}'", "find . -exec rm {} +",
		"watch -x ls", "eval 'eval ls'", "su -c 'x'", "exec {fd}>f 2>&1 &>>g <<<s", "ls |& cat &",
		"ls &&", "ls 'a", "$(", "`", "${", "<<", "((", "[[", "'", "\"", "\\", "$'\\", "a=(", "f()",
		"echo \"$\\\n(x)\"", "cat <<E\nE\\\nx\nE", "for i in ${!x}; do :; done", "'[[' x", "case $y in $z) ;; esac",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		cmds, err := Parse(line)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) error %T %v, want *ParseError", line, err, err)
			}
			if cmds != nil {
				t.Fatalf("Parse(%q) returned %d commands with error %v", line, len(cmds), err)
			}
			if pe.Offset < 0 || pe.Offset > len(line) {
				t.Fatalf("Parse(%q) error offset %d outside the line", line, pe.Offset)
			}
			return
		}
		if len(cmds) > MaxCommands {
			t.Fatalf("Parse(%q) returned %d commands, over MaxCommands", line, len(cmds))
		}
		for _, c := range cmds {
			if len(c.ArgDynamic) != len(c.Args) {
				t.Fatalf("Parse(%q): command %q has %d ArgDynamic for %d Args", line, c.Args, len(c.ArgDynamic), len(c.Args))
			}
			if len(c.Args) > 0 && c.Dynamic != c.ArgDynamic[0] {
				t.Fatalf("Parse(%q): command %q Dynamic %v but ArgDynamic[0] %v", line, c.Args, c.Dynamic, c.ArgDynamic[0])
			}
		}
		again, err := Parse(line)
		if err != nil || len(again) != len(cmds) {
			t.Fatalf("Parse(%q) is not deterministic: %d commands then %d, %v", line, len(cmds), len(again), err)
		}
	})
}
