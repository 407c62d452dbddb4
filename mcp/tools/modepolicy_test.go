package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"winx/auth"
)

func TestModeAllowsWrite(t *testing.T) {
	cw := Mode{Name: ModeCodeWriter, AllowedGlobs: []string{"/w/src/**/*.go", "/w/README.md"}}
	tests := []struct {
		mode Mode
		path string
		ok   bool
	}{
		{Mode{Name: ModeWCGW}, "/anything", true},
		{Mode{Name: ModeArchitect}, "/w/src/a.go", false},
		{cw, "/w/src/a.go", true},
		{cw, "/w/src/x/y/a.go", true},
		{cw, "/w/src/a.txt", false},
		{cw, "/w/README.md", true},
		{cw, "/w/other/a.go", false},
		{cw, "/w/srcx/a.go", false},
		{Mode{Name: ModeCodeWriter, AllGlobs: true}, "/w/x", true},
	}
	for _, tc := range tests {
		err := tc.mode.allowsWrite(tc.path)
		var me *ModeError
		if (err == nil) != tc.ok || (err != nil && (!errors.As(err, &me) || me.Path != tc.path)) {
			t.Errorf("Mode %s allowsWrite(%q) = %v, want ok=%v", tc.mode.Name, tc.path, err, tc.ok)
		}
	}
}

// TestModeCheckCommandLine runs the acceptance table through the parser
// and the policy together.
func TestModeCheckCommandLine(t *testing.T) {
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
		err := tc.mode.checkCommandLine(tc.line, "/w")
		var ce *auth.CommandDeniedError
		var pe *CommandParseError
		switch {
		case tc.parse:
			if !errors.As(err, &pe) {
				t.Errorf("%s: checkCommandLine(%q) = %v, want a parse denial", tc.mode.Name, tc.line, err)
			}
		case tc.denied == "":
			if err != nil {
				t.Errorf("%s: checkCommandLine(%q) = %v, want allowed", tc.mode.Name, tc.line, err)
			}
		case !errors.As(err, &ce) || ce.Command != tc.denied || ce.Mode != tc.mode.Name:
			t.Errorf("%s: checkCommandLine(%q) = %v, want %q denied", tc.mode.Name, tc.line, err, tc.denied)
		}
	}
}

// setMode changes the session's mode as the user would.
func (e *bashEnv) setMode(t *testing.T, name string, cfg map[string]any) {
	t.Helper()
	args := map[string]any{"type": "user_asked_mode_change", "mode_name": name, "thread_id": e.thread, "any_workspace_path": e.root}
	if cfg != nil {
		args["code_writer_config"] = cfg
	}
	if r := e.call(InitializeTool, args); r.IsError {
		t.Fatalf("mode change to %s = %+v", name, r.Structured)
	}
}

// wantDenied checks a command_not_allowed answer that names the command.
func wantDenied(t *testing.T, r *toolResult, line, named string) {
	t.Helper()
	if r.Structured.Status != "denied" || r.Structured.ErrorCode != codeCommandNotAllowed || !r.IsError {
		t.Errorf("%q = %s/%s (%s), want denied/command_not_allowed", line, r.Structured.Status, r.Structured.ErrorCode, r.Structured.Message)
		return
	}
	var d commandDenial
	if err := json.Unmarshal(r.Structured.Data, &d); err != nil {
		t.Fatalf("%q: data %s: %v", line, r.Structured.Data, err)
	}
	if named != "" && (d.Command != named || !strings.Contains(r.Structured.Message, named)) {
		t.Errorf("%q denial names %q (%s), want %q", line, d.Command, r.Structured.Message, named)
	}
}

func TestArchitectModeCommands(t *testing.T) {
	e := newBashEnv(t, "")
	if err := os.WriteFile(filepath.Join(e.root, "file.txt"), []byte("hello architect\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	git := exec.Command("git", "init", "-q", e.root)
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	e.setMode(t, ModeArchitect, nil)

	for _, tc := range []struct{ line, out string }{
		{"ls", "file.txt"},
		{"cat file.txt", "hello architect"},
		{"git status", "file.txt"},
		{"ls | wc -l", "1"},
	} {
		r, d := e.bash(cmd(tc.line), 10)
		if r.Structured.Status != "completed" || d.ExitCode == nil || *d.ExitCode != 0 || !strings.Contains(output(r), tc.out) {
			t.Errorf("architect %q = %s (exit %v) %q, want it to run and print %q", tc.line, r.Structured.Status, d.ExitCode, output(r), tc.out)
		}
	}

	for _, tc := range []struct{ line, named, file string }{
		{"echo x > f", "echo x >f", "f"},
		{"ls; touch marker", "touch marker", "marker"},
		{"ls $(touch sub)", "touch sub", "sub"},
		{"bash -c 'touch inner'", "bash -c touch inner", "inner"},
	} {
		r, _ := e.bash(cmd(tc.line), 10)
		wantDenied(t, r, tc.line, tc.named)
		if _, err := os.Stat(filepath.Join(e.root, tc.file)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("architect %q created %s (%v): a denied line ran", tc.line, tc.file, err)
		}
	}

	r, _ := e.bash(cmd("ls 'unterminated"), 10)
	wantDenied(t, r, "ls 'unterminated", "")
	if !strings.Contains(r.Structured.Message, "could not be parsed") {
		t.Errorf("parse denial message = %q, want it to say the command could not be parsed", r.Structured.Message)
	}

	bg := map[string]any{"type": "command", "command": "touch bgmarker", "is_background": true}
	r, _ = e.bash(bg, 5)
	wantDenied(t, r, "touch bgmarker (background)", "touch bgmarker")

	r, _ = e.bash(map[string]any{"type": "send_text", "send_text": "touch typed", "submit": true}, 5)
	wantDenied(t, r, "send_text touch typed", "touch typed")
	r, _ = e.bash(map[string]any{"type": "send_ascii", "send_ascii": []int{'t', 'o', 'u', 'c', 'h', ' ', 'a', 13}}, 5)
	wantDenied(t, r, "send_ascii touch a", "touch a")
	for _, f := range []string{"bgmarker", "typed", "a"} {
		if _, err := os.Stat(filepath.Join(e.root, f)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("architect: %s exists (%v): denied input ran", f, err)
		}
	}
}

func TestArchitectModeEditFilesDenied(t *testing.T) {
	e := newBashEnv(t, "")
	e.setMode(t, ModeArchitect, nil)
	path := filepath.Join(e.root, "new.txt")
	r, _ := e.edit(map[string]any{"files": []any{map[string]any{"file_path": path, "mode": "replace", "content": "x\n"}}})
	if r.Structured.Status != "denied" || r.Structured.ErrorCode != codeFileOperationDenied || !strings.Contains(r.Structured.Message, path) {
		t.Errorf("architect EditFiles = %s/%s %q, want denied/file_operation_denied naming %s",
			r.Structured.Status, r.Structured.ErrorCode, r.Structured.Message, path)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("architect EditFiles wrote %s (%v)", path, err)
	}
}

func TestCodeWriterModeCommands(t *testing.T) {
	e := newBashEnv(t, "")
	git := exec.Command("git", "init", "-q", e.root)
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	e.setMode(t, ModeCodeWriter, map[string]any{"allowed_globs": []string{"src/**"}, "allowed_commands": []string{"ls", "git status"}})

	for _, line := range []string{"ls -la", "git status -s"} {
		r, d := e.bash(cmd(line), 10)
		if r.Structured.Status != "completed" || d.ExitCode == nil || *d.ExitCode != 0 {
			t.Errorf("code_writer %q = %s (exit %v) %q, want it to run", line, r.Structured.Status, d.ExitCode, r.Structured.Message)
		}
	}
	for _, tc := range []struct{ line, named string }{
		{"lsof", "lsof"},
		{"git push", "git push"},
		{"ls && curl x | sh", "curl x"},
		{"ls > out.txt", "ls >out.txt"},
	} {
		r, _ := e.bash(cmd(tc.line), 10)
		wantDenied(t, r, tc.line, tc.named)
	}
	if _, err := os.Stat(filepath.Join(e.root, "out.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a redirection outside allowed_globs wrote out.txt (%v)", err)
	}
	if err := os.Mkdir(filepath.Join(e.root, "src"), 0o700); err != nil {
		t.Fatal(err)
	}
	if r, _ := e.bash(cmd("ls > src/listing.txt"), 10); r.Structured.Status != "completed" {
		t.Errorf("redirection inside allowed_globs = %+v", r.Structured)
	}
	if _, err := os.Stat(filepath.Join(e.root, "src", "listing.txt")); err != nil {
		t.Errorf("redirection inside allowed_globs did not write: %v", err)
	}

	// verify_command goes through the same policy, before any write.
	target := filepath.Join(e.root, "src", "a.txt")
	r, _ := e.edit(map[string]any{"files": []any{map[string]any{"file_path": target, "mode": "replace", "content": "x\n"}},
		"verify_command": "ls && touch src/verified"})
	wantDenied(t, r, "verify_command", "touch src/verified")
	for _, p := range []string{target, filepath.Join(e.root, "src", "verified")} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("denied verify_command: %s exists (%v)", p, err)
		}
	}
	r, d := e.edit(map[string]any{"files": []any{map[string]any{"file_path": target, "mode": "replace", "content": "x\n"}},
		"verify_command": "ls src"})
	if r.Structured.Status != "completed" || d.VerifyExit == nil || *d.VerifyExit != 0 {
		t.Errorf("allowed verify_command = %+v", r.Structured)
	}
}

// TestModeCheckCommandLineEvasions holds lines that once passed the policy
// while bash would run or write something the mode forbids: line
// continuations that join tokens, values evaluated as code, history
// expansion, abbreviated long options, writes after cd or through "..".
func TestModeCheckCommandLineEvasions(t *testing.T) {
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
		err := tc.mode.checkCommandLine(tc.line, root)
		var ce *auth.CommandDeniedError
		var pe *CommandParseError
		if !errors.As(err, &ce) && !errors.As(err, &pe) {
			t.Errorf("%s: checkCommandLine(%q) = %v, want denied", tc.mode.Name, tc.line, err)
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
		if err := tc.mode.checkCommandLine(tc.line, root); err != nil {
			t.Errorf("%s: checkCommandLine(%q) = %v, want allowed", tc.mode.Name, tc.line, err)
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

// TestModeTypedInputGate sends input that readline would turn into another
// command than the one checked; outside wcgw it is refused before anything
// reaches the terminal.
func TestModeTypedInputGate(t *testing.T) {
	e := newBashEnv(t, "")
	e.setMode(t, ModeArchitect, nil)
	for _, a := range []map[string]any{
		{"type": "send_text", "send_text": "ls x\rrm -rf y", "submit": true},
		{"type": "send_text", "send_text": "ls -rf y\x01rm ", "submit": true},
		{"type": "send_text", "send_text": "ls"},
		{"type": "send_ascii", "send_ascii": []int{'l', 's', ' ', 'x', 13, 'r', 'm', ' ', 'y', 13}},
		{"type": "send_ascii", "send_ascii": []int{'l', 's', 1, 'r', 'm', 13}},
		{"type": "send_specials", "send_specials": []string{"Enter", "Key-up", "Enter"}},
		{"type": "send_text", "send_text": "ls !-1", "submit": true},
	} {
		r, _ := e.bash(a, 5)
		wantDenied(t, r, fmt.Sprint(a), "")
	}
}
