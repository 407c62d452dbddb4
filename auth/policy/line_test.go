package policy

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestCheckLine runs the acceptance table through the parser
// and the policy together.
func TestCheckLine(t *testing.T) {
	architect := Mode{Name: ModeArchitect}
	cw := Mode{Name: ModeCodeWriter, AllowedCommands: []string{"ls", "git status"}}
	tests := []struct {
		mode   Mode
		line   string
		denied string // the simple command named in the denial; "" allowed
		parse  bool   // denied because it could not be parsed
	}{
		{cw, "ls -la", "", false},
		{cw, "ls && curl x | sh", "curl x", false},
		{cw, "ls $(rm -rf /)", "rm -rf /", false},
		{cw, "ls `rm x`", "rm x", false},
		{cw, "ls; rm x", "rm x", false},
		{cw, "(rm x)", "rm x", false},
		{cw, "ls <(rm x)", "rm x", false},
		{cw, "bash -c 'rm x'", "bash -c rm x", false},
		{cw, "lsof", "lsof", false},
		{cw, "git status -s", "", false},
		{cw, "git statusx", "git statusx", false},
		{cw, "git push", "git push", false},
		{cw, "ls 'unterminated", "", true},
		{cw, "ls &&", "", true},
		{cw, "$cmd", "$cmd", false},
		{architect, "ls -la", "", false},
		{architect, "cat a | grep b | wc -l", "", false},
		{architect, "git status && git log --oneline -3", "", false},
		{architect, "echo x > f", "echo x >f", false},
		{architect, "echo x >/dev/null 2>&1", "", false},
		{architect, "ls; touch marker", "touch marker", false},
		{architect, "find . -name '*.go' -exec rm {} \\;", "find . -name *.go -exec rm {} ;", false},
		{architect, "sed -n '1,5p' f", "", false},
		{architect, "sed -i s/a/b/ f", "sed -i s/a/b/ f", false},
		{architect, "cat f | tee out", "tee out", false},
		{architect, "(ls", "", true},
		{Mode{Name: ModeWCGW}, "rm -rf x; (", "", false},
	}
	for _, tc := range tests {
		err := tc.mode.CheckLine(tc.line, "/w")
		var ce *CommandDeniedError
		var pe *CommandParseError
		switch {
		case tc.parse:
			if !errors.As(err, &pe) {
				t.Errorf("%s: CheckLine(%q) = %v, want a parse denial", tc.mode.Name, tc.line, err)
			}
		case tc.denied == "":
			if err != nil {
				t.Errorf("%s: CheckLine(%q) = %v, want allowed", tc.mode.Name, tc.line, err)
			}
		case !errors.As(err, &ce) || ce.Command != tc.denied || ce.Mode != tc.mode.Name:
			t.Errorf("%s: CheckLine(%q) = %v, want %q denied", tc.mode.Name, tc.line, err, tc.denied)
		}
	}
}

// TestCheckLineEvasions holds lines that once passed the policy
// while bash would run or write something the mode forbids: line
// continuations that join tokens, values evaluated as code, history
// expansion, abbreviated long options, writes after cd or through "..".
func TestCheckLineEvasions(t *testing.T) {
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "src"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "src", "link")); err != nil {
		t.Fatal(err)
	}
	architect := Mode{Name: ModeArchitect}
	cw := Mode{Name: ModeCodeWriter, AllowedCommands: []string{"ls", "git status", "echo", "cat"}, AllowedGlobs: []string{root + "/src/**"}}
	denied := []struct {
		mode Mode
		line string
	}{
		// Line continuations bash joins into an expansion or a heredoc end.
		{architect, "echo \"$\\\n(touch p)\""},
		{architect, "cat <<EOF\nEO\\\nF\ntouch p\nEOF"},
		{architect, "cat <<EOF\n$\\\n(touch p)\nEOF"},
		{cw, "ls > $\\\nx"},
		{cw, "echo $(\\\n(x))"},
		// Values evaluated as code: x='a[$(cmd)]' runs cmd when read.
		{architect, "LANG='a[$(touch p)]'"},
		{architect, "for ((i=LANG; 0; )); do :; done"},
		{architect, "for i in $((LANG)); do :; done"},
		{architect, "case x in $((LANG))) ;; esac"},
		{architect, "echo ${!LANG}"},
		{architect, "echo ${TZ@P}"},
		{architect, "echo ${x@\\\nP}"},
		{architect, "[ -v 'a[COLUMNS]' ]"},
		{architect, "test -v a[x]"},
		{architect, "cat <<EOF\n${!LANG}\nEOF"},
		{architect, "cat <<EOF\n$((LANG))\nEOF"},
		{architect, "cat <<< ${!LANG}"},
		{architect, "LANG[x]=1"},
		{cw, "x='a[$(touch p)]'; (( x ))"},
		{cw, "[[ x -eq 1 ]]"},
		{cw, "[[ -v a[x] ]]"},
		{cw, "a[x]=1"},
		{cw, "a=([x]=1)"},
		{cw, "ls ${a[x]}"},
		{cw, "ls $((x))"},
		{cw, "echo ${!x}"},
		{cw, "cat <<EOF\n${x@P}\nEOF"},
		{cw, "let x"},
		{cw, "'[[' x ]]"},
		// History expansion pastes earlier command text after the check.
		{architect, "ls !!:s/'//:s/'//"},
		{cw, "ls !-2"},
		{cw, "echo \"!?rm?\""},
		// Long options abbreviated (getopt_long, git) and "--".
		{architect, "sed --in 1d f"},
		{architect, "sed --exp='1w out' f"},
		{architect, "sort --out=x f"},
		{architect, "sort --compress-prog=sh f"},
		{architect, "date --se=2020-01-01"},
		{architect, "hostname --fi=x"},
		{architect, "git grep --open=vi x"},
		{architect, "ls | tee -- -p"},
		{architect, "uniq -- in -x"},
		{architect, "tree -R -H . -L 1"},
		{architect, "go env -w=true GOFLAGS=-x"},
		{architect, "go env --w GOFLAGS=-x"},
		{architect, "go list -mod mod ./..."},
		// git config stops at its first operand: these set values.
		{architect, "git config user.name x --get"},
		{architect, "git config user.email x --list"},
		{architect, "git config --get user.name x y"},
		// Writes after cd or through a symbolic link's "..".
		{cw, "cd " + outside + " && ls > src/x"},
		{cw, "ls > src/link/../x"},
	}
	for _, tc := range denied {
		err := tc.mode.CheckLine(tc.line, root)
		var ce *CommandDeniedError
		var pe *CommandParseError
		if !errors.As(err, &ce) && !errors.As(err, &pe) {
			t.Errorf("%s: CheckLine(%q) = %v, want denied", tc.mode.Name, tc.line, err)
		}
	}
	allowed := []struct {
		mode Mode
		line string
	}{
		{architect, "[[ ! -f x ]] && echo \"$a\" != b"},
		{architect, "echo $! \\!x"},
		{architect, "LC_ALL=C.UTF-8 sort f"},
		{architect, "for f in *.go; do echo \"$f\"; done"},
		{architect, "case $x in a) ls;; esac"},
		{architect, "echo ${x:-y} ${#x} ${a[@]}"},
		{architect, "cat <<EOF\n$x\nEOF"},
		{architect, "ls \\\n  -la"},
		{architect, "git config --global --get user.name"},
		{architect, "git log --oneline --output-indicator-new=+"},
		{architect, "go list -mod=readonly -json ./..."},
		{cw, "ls > src/x"},
		{cw, "echo \"${files[@]}\""},
	}
	for _, tc := range allowed {
		if err := tc.mode.CheckLine(tc.line, root); err != nil {
			t.Errorf("%s: CheckLine(%q) = %v, want allowed", tc.mode.Name, tc.line, err)
		}
	}
}

func TestTypedInputProblem(t *testing.T) {
	tests := []struct {
		text string
		ok   bool
	}{
		{"ls\r", true},
		{"ls\nls -la\n", true},
		{"\x03", true},
		{"\x04", true},
		{"ls -rf y\x01rm \r", false}, // Ctrl-A: "rm " lands before "ls"
		{"\x10\r", false},            // Ctrl-P recalls the previous line
		{"ls x\trm\r", false},        // Tab completes at the prompt
		{"\x1b[A\r", false},          // Key-up
		{"caf\xc3\xa9\r", false},
		{"ls", false}, // waits at the prompt for the next command
		{"ls\x03", false},
	}
	for _, tc := range tests {
		if got := typedInputProblem(tc.text); (got == "") != tc.ok {
			t.Errorf("typedInputProblem(%q) = %q, want ok=%v", tc.text, got, tc.ok)
		}
	}
}

func TestTypedLineAndKeys(t *testing.T) {
	architect := Mode{Name: ModeArchitect}
	for _, tc := range []struct {
		mode      Mode
		text      string
		want      string
		wantError bool
	}{
		{architect, "ls\r", "ls\n", false},
		{architect, "\x03", "", false},
		{architect, "ls", "", true},
		{architect, "ls\x01rm\r", "", true},
		{Mode{Name: ModeWCGW}, "ls\x01", "ls\x01", false},
	} {
		got, err := tc.mode.TypedLine(tc.text)
		var ce *CommandDeniedError
		if tc.wantError != (err != nil) || (err != nil && (!errors.As(err, &ce) || ce.Command == "")) || got != tc.want {
			t.Errorf("%s TypedLine(%q) = %q, %v; want %q, error %v", tc.mode.Name, tc.text, got, err, tc.want, tc.wantError)
		}
	}
	var ce *CommandDeniedError
	if err := architect.CheckKeys([]string{"Enter", "Key-up"}); !errors.As(err, &ce) || ce.Command != "Key-up" {
		t.Errorf("architect CheckKeys(Key-up) = %v, want Key-up denied", err)
	}
	if err := architect.CheckKeys([]string{"Enter", "Ctrl-c"}); err != nil {
		t.Errorf("architect CheckKeys(Enter, Ctrl-c) = %v, want allowed", err)
	}
	if err := (Mode{Name: ModeWCGW}).CheckKeys([]string{"Key-up"}); err != nil {
		t.Errorf("wcgw CheckKeys(Key-up) = %v, want allowed", err)
	}
}
