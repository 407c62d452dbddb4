package shellparse

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// render shows a command compactly: its words joined by single spaces, a
// leading "?" when the name is dynamic, redirections after " ; ", and
// assignments before " : ".
func render(c Command) string {
	var b strings.Builder
	if len(c.Assignments) > 0 {
		b.WriteString(strings.Join(c.Assignments, " ") + " : ")
	}
	if c.Dynamic {
		b.WriteString("?")
	}
	b.WriteString(strings.Join(c.Args, " "))
	for _, r := range c.Redirects {
		b.WriteString(" ; " + r.Op + r.Target)
		if r.Dynamic {
			b.WriteString("?")
		}
	}
	return b.String()
}

func renderAll(cmds []Command) []string {
	out := make([]string, len(cmds))
	for i, c := range cmds {
		out[i] = render(c)
	}
	return out
}

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		line string
		want []string
	}{
		// The acceptance list.
		{"and and pipe", "ls && curl x | sh", []string{"ls", "curl x", "sh"}},
		{"command substitution", "ls $(rm -rf /)", []string{"rm -rf /", "ls $(rm -rf /)"}},
		{"backticks", "ls `rm x`", []string{"rm x", "ls `rm x`"}},
		{"semicolon", "ls; rm x", []string{"ls", "rm x"}},
		{"subshell", "(rm x)", []string{"rm x"}},
		{"process substitution in", "ls <(rm x)", []string{"rm x", "ls <(rm x)"}},
		{"process substitution out", "ls > >(rm x)", []string{"rm x", "ls ; >>(rm x)?"}},
		{"bash -c", "bash -c 'rm x'", []string{"bash -c rm x", "rm x"}},
		{"prefix is not a word", "lsof", []string{"lsof"}},

		// Lists and pipelines.
		{"or", "false || rm x", []string{"false", "rm x"}},
		{"background", "sleep 1 & rm x", []string{"sleep 1", "rm x"}},
		{"trailing background", "ls &", []string{"ls"}},
		{"pipe stderr", "ls |& grep x", []string{"ls", "grep x"}},
		{"newlines", "ls\nrm x\n\n", []string{"ls", "rm x"}},
		{"continuation after and", "ls &&\n rm x", []string{"ls", "rm x"}},
		{"negation", "! grep -q x f", []string{"grep -q x f"}},
		{"group", "{ ls; rm x; }", []string{"ls", "rm x"}},
		{"group redirect", "{ ls; } > out", []string{"ls", " ; >out"}},
		{"nested subshells", "( (rm x) )", []string{"rm x"}},

		// Quoting and escapes.
		{"single quotes", "echo 'a; rm x'", []string{"echo a; rm x"}},
		{"double quotes", `echo "a; rm x"`, []string{"echo a; rm x"}},
		{"substitution in double quotes", `echo "$(rm x)"`, []string{"rm x", "echo $(rm x)"}},
		{"escaped dollar", `echo "\$(rm x)"`, []string{"echo $(rm x)"}},
		{"escaped semicolon", `echo a\; rm x`, []string{"echo a; rm x"}},
		{"ansi c name", `$'\x72\155' x`, []string{"rm x"}},
		{"ansi c nul cuts", `find . $'-delete\0junk'`, []string{"find . -delete"}},
		{"ansi c unicode", `echo $'\u00e9'`, []string{"echo é"}},
		{"quoted name", `'r'"m" x`, []string{"rm x"}},
		{"backslash name", `\rm x`, []string{"rm x"}},
		{"locale string", `echo $"hi $(rm x)"`, []string{"rm x", "echo hi $(rm x)"}},
		{"line continuation", "ec\\\nho a", []string{"echo a"}},

		// Comments.
		{"comment", "ls # ; rm x", []string{"ls"}},
		{"comment after operator", "ls;# rm x", []string{"ls"}},
		{"hash inside word", "echo a#b", []string{"echo a#b"}},
		{"comment line", "# only a comment", nil},

		// Expansions.
		{"arithmetic is no substitution", "echo $((1 + 2))", []string{"echo $((1 + 2))"}},
		{"substitution inside arithmetic", "echo $(( $(rm x) + 1 ))", []string{"rm x", "echo $(( $(rm x) + 1 ))"}},
		{"subshell in substitution", "echo $( (rm x) )", []string{"rm x", "echo $( (rm x) )"}},
		{"parameter default", "echo ${x:-$(rm y)}", []string{"rm y", "echo ${x:-$(rm y)}"}},
		{"nested parameter", "echo ${a:-${b:-`rm z`}}", []string{"rm z", "echo ${a:-${b:-`rm z`}}"}},
		{"old arithmetic", "echo $[ $(rm x) ]", []string{"rm x", "echo $[ $(rm x) ]"}},
		{"nested backticks", "echo `echo \\`rm x\\``", []string{"rm x", "echo `rm x`", "echo `echo \\`rm x\\``"}},
		{"dynamic name", "$cmd x", []string{"?$cmd x"}},
		{"dynamic name from substitution", "$(echo rm) x", []string{"echo rm", "?$(echo rm) x"}},
		{"glob name", "/bin/l? x", []string{"?/bin/l? x"}},

		// Assignments.
		{"assignment only", "x=1", []string{"x=1 : "}},
		{"assignments and command", "A=1 B=2 ls", []string{"A=1 B=2 : ls"}},
		{"assignment substitution", "x=$(rm y)", []string{"rm y", "x=$(rm y) : "}},
		{"array assignment", "a=(1 $(rm y) 3)", []string{"rm y", "a=(1 $(rm y) 3) : "}},
		{"subscript assignment", "a[$(rm q)]=1", []string{"rm q", "a[$(rm q)]=1 : "}},
		{"assignment after name is an argument", "echo x=1", []string{"echo x=1"}},
		{"redirect only", "> f", []string{" ; >f"}},

		// Redirections.
		{"redirections", "ls 2>&1 >/dev/null", []string{"ls ; 2>&1 ; >/dev/null"}},
		{"append and clobber", "echo a >>f >|g &>h &>>i", []string{"echo a ; >>f ; >|g ; &>h ; &>>i"}},
		{"input and rw", "cat <f 3<>g", []string{"cat ; <f ; 3<>g"}},
		{"fd variable", "exec {fd}>f", []string{"exec ; {fd}>f"}},
		{"dynamic target", "echo a > $f", []string{"echo a ; >$f?"}},
		{"tilde target", "echo a > ~/f", []string{"echo a ; >~/f?"}},
		{"here string", "cat <<< $(rm x)", []string{"rm x", "cat ; <<<$(rm x)?"}},

		// Heredocs.
		{"heredoc body is data", "cat <<EOF\nrm x\nEOF\nls", []string{"cat ; <<EOF", "ls"}},
		{"heredoc expansions run", "cat <<EOF\n$(rm x)\nEOF", []string{"cat ; <<EOF", "rm x"}},
		{"quoted heredoc is literal", "cat <<'EOF'\n$(rm x)\nEOF\nls", []string{"cat ; <<EOF", "ls"}},
		{"heredoc strip tabs", "cat <<-EOF\n\trm x\n\tEOF\nls", []string{"cat ; <<-EOF", "ls"}},
		{"two heredocs", "cat <<A <<B; ls\na\nA\nb\nB\nrm x", []string{"cat ; <<A ; <<B", "ls", "rm x"}},
		{"heredoc then pipe", "cat <<EOF | grep a\nx\nEOF", []string{"cat ; <<EOF", "grep a"}},

		// Compound commands.
		{"if", "if test -f x; then rm x; elif ls; then :; else echo no; fi",
			[]string{"test -f x", "rm x", "ls", ":", "echo no"}},
		{"while", "while read l; do rm \"$l\"; done < list", []string{"read l", "rm $l", " ; <list"}},
		{"until", "until false; do break; done", []string{"false", "break"}},
		{"for", "for f in *.go $(rm y); do echo $f; done", []string{"rm y", "for f in *.go $(rm y)", "echo $f"}},
		{"for without in", "for f; do echo $f; done", []string{"echo $f"}},
		{"arithmetic for", "for ((i=0; i<$(rm n); i++)); do echo $i; done", []string{"rm n", "(( i=0; i<$(rm n); i++ ))", "echo $i"}},
		{"case", "case $x in a) rm a;; b|c) ls;& (d) pwd;;& *) ;; esac", []string{"rm a", "ls", "pwd", "case $x in a b c d *"}},
		{"static for list is not reported", "for f in a b; do ls; done", []string{"ls"}},
		{"select list", "select x in ${!v}; do ls; done", []string{"select x in ${!v}", "ls"}},
		{"static case is not reported", "case a in b) ls;; esac", []string{"ls"}},
		{"case last item", "case x in x) rm x\nesac", []string{"rm x"}},
		{"case in substitution", "echo $(case x in x) rm x;; esac)", []string{"rm x", "echo $(case x in x) rm x;; esac)"}},
		{"function", "f() { rm x; }", []string{"rm x"}},
		{"function keyword", "function f { rm x; }", []string{"rm x"}},
		{"arithmetic command", "((x++))", []string{"(( x++ ))"}},
		{"conditional", "[[ -f a && $(rm b) < c ]]", []string{"rm b", "[[ -f a && $(rm b) < c ]]"}},
		{"time keyword", "time { rm x; }", []string{"rm x"}},
		{"time wrapper", "time -p rm x", []string{"time -p rm x", "rm x"}},
		{"reserved word as argument", "echo if then }", []string{"echo if then }"}},

		// Wrappers.
		{"sudo env nice", "sudo -u root env A=1 nice -n 5 rm x",
			[]string{"sudo -u root env A=1 nice -n 5 rm x", "env A=1 nice -n 5 rm x", "A=1 : nice -n 5 rm x", "rm x"}},
		{"timeout", "timeout -s KILL 5 rm x", []string{"timeout -s KILL 5 rm x", "rm x"}},
		{"xargs", "find . | xargs -0 -n 1 rm", []string{"find .", "xargs -0 -n 1 rm", "rm"}},
		{"xargs optional value", "xargs -iX rm X", []string{"xargs -iX rm X", "rm X"}},
		{"xargs abbreviated option", "xargs --process-slot cat sh -c x", []string{"xargs --process-slot cat sh -c x", "sh -c x", "x"}},
		{"xargs optional long value", "xargs --max-lines sh", []string{"xargs --max-lines sh", "sh"}},
		{"xargs attached long value", "xargs --max-lines=2 --arg-file=f rm", []string{"xargs --max-lines=2 --arg-file=f rm", "rm"}},
		{"timeout abbreviated", "timeout --sig KILL 5 rm x", []string{"timeout --sig KILL 5 rm x", "rm x"}},
		{"nice old form", "nice -10 rm x", []string{"nice -10 rm x", "rm x"}},
		{"env abbreviated split-string", "env --split='rm x' ls", []string{"env --split=rm x ls", "rm x ls"}},
		{"env abbreviated unset", "env --uns X rm y", []string{"env --uns X rm y", "rm y"}},
		{"trap action", "trap 'rm x' DEBUG", []string{"trap rm x DEBUG", "rm x"}},
		{"trap reset", "trap - INT; trap INT; trap -p", []string{"trap - INT", "trap INT", "trap -p"}},
		{"trap dynamic action", "trap \"$a\" EXIT", []string{"trap $a EXIT", "?$a"}},
		{"loop over a capital name", "for PS1 in x; do ls; done", []string{"for PS1 in x", "ls"}},
		{"loop without in over a capital name", "for PS1; do ls; done", []string{"for PS1", "ls"}},
		{"command builtin exec", "command rm x; builtin cd; exec -a n rm y",
			[]string{"command rm x", "rm x", "builtin cd", "cd", "exec -a n rm y", "rm y"}},
		{"stdbuf ionice nohup", "stdbuf -o0 ionice -c3 nohup rm x",
			[]string{"stdbuf -o0 ionice -c3 nohup rm x", "ionice -c3 nohup rm x", "nohup rm x", "rm x"}},
		{"ionice pid", "ionice -c3 -p 42", []string{"ionice -c3 -p 42"}},
		{"watch string", "watch -n 2 'ls; rm x'", []string{"watch -n 2 ls; rm x", "ls", "rm x"}},
		{"watch exec", "watch -x rm x", []string{"watch -x rm x", "rm x"}},
		{"env split string", "env -S 'rm x'", []string{"env -S rm x", "rm x"}},
		{"dynamic wrapped", "sudo $cmd", []string{"sudo $cmd", "?$cmd"}},
		{"wrapper path", "/usr/bin/env rm x", []string{"/usr/bin/env rm x", "rm x"}},
		{"find exec", "find . -name '*.go' -exec rm {} + -execdir cat {} \\;",
			[]string{"find . -name *.go -exec rm {} + -execdir cat {} ;", "rm {}", "cat {}"}},

		// Shell strings and eval.
		{"sh -c grouped", "sh -ec 'ls && rm x'", []string{"sh -ec ls && rm x", "ls", "rm x"}},
		{"bash -o then -c", "bash -o pipefail -c 'rm x'", []string{"bash -o pipefail -c rm x", "rm x"}},
		{"bash script is not a string", "bash script.sh 'rm x'", []string{"bash script.sh rm x"}},
		{"dynamic shell string", `bash -c "$x"`, []string{"bash -c $x", "?$x"}},
		{"nested shells", `sh -c "bash -c 'rm x'"`, []string{"sh -c bash -c 'rm x'", "bash -c rm x", "rm x"}},
		{"eval joined", "eval 'ls;' rm x", []string{"eval ls; rm x", "ls", "rm x"}},
		{"eval dynamic", "eval \"$x\"", []string{"eval $x", "?$x"}},
		{"su -c", "su -c 'rm x' root", []string{"su -c rm x root", "rm x"}},
		{"zsh dash", "zsh -c 'rm a'; dash -c 'rm b'", []string{"zsh -c rm a", "rm a", "dash -c rm b", "rm b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmds, err := Parse(tc.line)
			if err != nil {
				t.Fatalf("Parse(%q) error %v", tc.line, err)
			}
			if got := renderAll(cmds); !slices.Equal(got, tc.want) {
				t.Errorf("Parse(%q) =\n  %q\nwant\n  %q", tc.line, got, tc.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []string{
		// Where the command of a wrapper starts depends on an option
		// the program itself would refuse: ambiguous or unknown.
		"xargs --max sh",
		"xargs --bogus sh",
		"xargs -Z sh",
		"timeout --bogus 5 sh",
		"env --d sh",
		"env -Z sh",
		"ls 'a",
		`ls "a`,
		"ls $'a",
		"ls `rm x",
		"ls $(rm x",
		"ls )",
		"(ls",
		"( )",
		"ls &&",
		"ls ||",
		"ls |",
		"| ls",
		"&& ls",
		"; ls",
		"ls ;;",
		"ls & ;",
		"ls > ",
		"ls >",
		"ls > ; rm x",
		"cat <<EOF\nno end",
		"cat <<EOF",
		"{ ls",
		"{ }",
		"if true; then ls",
		"if true; fi",
		"while true; do ls",
		"for 1x in a; do ls; done",
		"case x in a) ls",
		"echo ${x",
		"echo $((1 + 2)",
		"echo <(ls",
		"a=(1 2",
		"f() ls",
		"echo a (b)",
		"bash -c 'rm \"x'",
		"eval 'ls )'",
		"[[ -f x",
		"ls !(x)",
		"then ls",
		"done",
		// Line continuations that bash joins into other tokens.
		"echo \"A $\\\n(touch p)\"",
		"echo $\\\n{!x}",
		"ls > $\\\nx",
		"echo $(\\\n(x))",
		"(\\\n(x))",
		"ls >\\\n| f",
		"cat <<EOF\nEO\\\nF\nrm x\nEOF",
		"cat <<EOF\n$\\\n(rm x)\nEOF",
		// Programs named like the syntax reported under that name.
		"'[[' x ]]",
		"\\for x",
		"command '((' 1 '))'",
		"nice case x",
	}
	for _, line := range tests {
		cmds, err := Parse(line)
		var pe *ParseError
		if !errors.As(err, &pe) || cmds != nil {
			t.Errorf("Parse(%q) = %q, %v; want no commands and a *ParseError", line, renderAll(cmds), err)
		}
	}
}

func TestHeredocBody(t *testing.T) {
	cmds, err := Parse("cat <<A <<'B' <<-C; ls\n${!x}\nA\n$(q)\nB\n\t$((y))\n\tC")
	if err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for _, r := range cmds[0].Redirects {
		bodies = append(bodies, r.Body)
	}
	if want := []string{"${!x}\n", "", "\t$((y))\n"}; !slices.Equal(bodies, want) {
		t.Errorf("heredoc bodies = %q, want %q", bodies, want)
	}
	if cmds, err := Parse("cat <<EOF\n$(rm x)\nEOF"); err != nil || len(cmds) != 2 || cmds[1].Args[0] != "rm" {
		t.Errorf("expansions of a heredoc body = %q, %v; want rm reported", renderAll(cmds), err)
	}
}

func TestParseLimits(t *testing.T) {
	long := strings.Repeat("a", MaxLineBytes+1)
	if _, err := Parse(long); err == nil {
		t.Errorf("Parse(%d bytes) succeeded, want a ParseError", len(long))
	}
	deep := strings.Repeat("$(", MaxDepth+1) + "ls" + strings.Repeat(")", MaxDepth+1)
	if _, err := Parse(deep); err == nil {
		t.Errorf("Parse(%d nested substitutions) succeeded, want a ParseError", MaxDepth+1)
	}
	shallow := strings.Repeat("$(", 10) + "ls" + strings.Repeat(")", 10)
	if cmds, err := Parse(shallow); err != nil || len(cmds) != 11 {
		t.Errorf("Parse(10 nested substitutions) = %d commands, %v; want 11 (ls, then each dynamic name)", len(cmds), err)
	}
	wrappers := strings.Repeat("nice ", MaxDepth+2) + "ls"
	if _, err := Parse(wrappers); err == nil {
		t.Errorf("Parse(%d nested wrappers) succeeded, want a ParseError", MaxDepth+2)
	}
	evals := strings.Repeat("eval ", MaxDepth+1) + "ls"
	if _, err := Parse(evals); err == nil {
		t.Errorf("Parse(%d nested eval) succeeded, want a ParseError", MaxDepth+1)
	}
	tenEvals := strings.Repeat("eval ", 10) + "ls"
	if cmds, err := Parse(tenEvals); err != nil || len(cmds) != 11 {
		t.Errorf("Parse(10 nested eval) = %d commands, %v; want 11", len(cmds), err)
	}
}

func TestParseErrorMessage(t *testing.T) {
	_, err := Parse("ls &&")
	if got, want := err.Error(), `shell: parse error at byte 5: "&&" at the end of the line`; got != want {
		t.Errorf("Parse(%q) error = %q, want %q", "ls &&", got, want)
	}
}

func TestArgDynamic(t *testing.T) {
	cmds, err := Parse(`find . -name '*.go' $x *.c ~/a "b"`)
	if err != nil {
		t.Fatal(err)
	}
	got := cmds[0].ArgDynamic
	want := []bool{false, false, false, false, true, true, true, false}
	if !slices.Equal(got, want) {
		t.Errorf("ArgDynamic = %v, want %v", got, want)
	}
}
