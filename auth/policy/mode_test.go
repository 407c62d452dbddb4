package policy

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"winx/auth/policy/shellparse"
)

func TestParseMode(t *testing.T) {
	tests := []struct {
		name    string
		mode    string
		cfg     *CodeWriterConfig
		want    Mode
		wantErr bool
	}{
		{name: "wcgw", mode: ModeWCGW, want: Mode{Name: ModeWCGW}},
		{name: "architect", mode: ModeArchitect, want: Mode{Name: ModeArchitect}},
		{name: "code_writer joins relative globs", mode: ModeCodeWriter,
			cfg:  &CodeWriterConfig{AllowedGlobs: []string{"src/**", "/abs/*.go"}, AllowedCommands: []string{" go  test ", "ls"}},
			want: Mode{Name: ModeCodeWriter, AllowedGlobs: []string{"/w/src/**", "/abs/*.go"}, AllowedCommands: []string{"go test", "ls"}}},
		{name: "code_writer all", mode: ModeCodeWriter, cfg: &CodeWriterConfig{AllGlobs: true, AllCommands: true},
			want: Mode{Name: ModeCodeWriter, AllGlobs: true, AllCommands: true}},
		{name: "unknown", mode: "root", wantErr: true},
		{name: "empty", mode: "", wantErr: true},
		{name: "code_writer without config", mode: ModeCodeWriter, wantErr: true},
		{name: "bad glob", mode: ModeCodeWriter, cfg: &CodeWriterConfig{AllowedGlobs: []string{"[a"}}, wantErr: true},
		{name: "glob escaping root", mode: ModeCodeWriter, cfg: &CodeWriterConfig{AllowedGlobs: []string{"/w/../etc/*"}}, wantErr: true},
		{name: "empty glob", mode: ModeCodeWriter, cfg: &CodeWriterConfig{AllowedGlobs: []string{""}}, wantErr: true},
		{name: "empty command", mode: ModeCodeWriter, cfg: &CodeWriterConfig{AllowedCommands: []string{"  "}}, wantErr: true},
		{name: "all as entry", mode: ModeCodeWriter, cfg: &CodeWriterConfig{AllowedCommands: []string{"all"}}, wantErr: true},
		{name: "shell syntax in entry", mode: ModeCodeWriter, cfg: &CodeWriterConfig{AllowedCommands: []string{"ls; rm"}}, wantErr: true},
		{name: "substitution in entry", mode: ModeCodeWriter, cfg: &CodeWriterConfig{AllowedCommands: []string{"echo $(id)"}}, wantErr: true},
		{name: "too many entries", mode: ModeCodeWriter, cfg: &CodeWriterConfig{AllowedCommands: slices.Repeat([]string{"ls"}, MaxModeEntries+1)}, wantErr: true},
		{name: "architect with malformed config", mode: ModeArchitect, cfg: &CodeWriterConfig{AllowedGlobs: []string{"[a"}}, wantErr: true},
		{name: "architect with config", mode: ModeArchitect, cfg: &CodeWriterConfig{AllGlobs: true}, want: Mode{Name: ModeArchitect}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseMode(tc.mode, tc.cfg, "/w")
			if tc.wantErr {
				var ce *ModeConfigError
				if !errors.As(err, &ce) || !errors.Is(err, ErrInvalidMode) {
					t.Errorf("ParseMode(%q) = %+v, %v; want a *ModeConfigError", tc.mode, got, err)
				}
				return
			}
			if err != nil || got.Name != tc.want.Name || got.AllGlobs != tc.want.AllGlobs || got.AllCommands != tc.want.AllCommands ||
				!slices.Equal(got.AllowedGlobs, tc.want.AllowedGlobs) || !slices.Equal(got.AllowedCommands, tc.want.AllowedCommands) {
				t.Errorf("ParseMode(%q) = %+v, %v; want %+v", tc.mode, got, err, tc.want)
			}
		})
	}
}

func TestValidateRejectsListsOutsideCodeWriter(t *testing.T) {
	for _, m := range []Mode{{Name: ModeArchitect, AllCommands: true}, {Name: ModeWCGW, AllowedGlobs: []string{"/x"}}} {
		if err := m.Validate(); !errors.Is(err, ErrInvalidMode) {
			t.Errorf("Validate(%+v) = %v, want ErrInvalidMode", m, err)
		}
	}
}

func TestAllowsWrite(t *testing.T) {
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
		{Mode{Name: "bogus"}, "/w/x", false},
		// .git runs programs (hooks, core.fsmonitor): wildcards never reach it.
		{Mode{Name: ModeCodeWriter, AllowedGlobs: []string{"/w/**"}}, "/w/.git/config", false},
		{Mode{Name: ModeCodeWriter, AllowedGlobs: []string{"/w/**"}}, "/w/.git/hooks/pre-commit", false},
		{Mode{Name: ModeCodeWriter, AllowedGlobs: []string{"/w/*/config"}}, "/w/.git/config", false},
		{Mode{Name: ModeCodeWriter, AllowedGlobs: []string{"/w/**"}}, "/w/src/.gitignore", true},
		{Mode{Name: ModeCodeWriter, AllowedGlobs: []string{"/w/.git/info/**"}}, "/w/.git/info/exclude", true},
	}
	for _, tc := range tests {
		err := tc.mode.AllowsWrite(tc.path)
		var we *WriteDeniedError
		if (err == nil) != tc.ok || (err != nil && (!errors.As(err, &we) || we.Mode != tc.mode.Name || we.Path != tc.path)) {
			t.Errorf("Mode %s AllowsWrite(%q) = %v, want ok=%v", tc.mode.Name, tc.path, err, tc.ok)
		}
	}
}

func TestGlobMatchManyStars(t *testing.T) {
	pattern := "/" + strings.Repeat("**/", 30) + "x"
	path := "/" + strings.Repeat("a/", 30) + "y"
	if GlobMatch(pattern, path) {
		t.Errorf("GlobMatch(%q, %q) = true", pattern, path)
	}
}

// inv builds a simple command from words; a word holding "$" or "*" is
// dynamic, as the parser would report it.
func inv(words ...string) shellparse.Command {
	var in shellparse.Command
	for _, w := range words {
		switch {
		case strings.Contains(w, "=") && len(in.Args) == 0 && !strings.HasPrefix(w, "-"):
			in.Assignments = append(in.Assignments, w)
		case strings.HasPrefix(w, ">") || strings.HasPrefix(w, "2>") || strings.HasPrefix(w, "<"):
			op := strings.TrimRight(w, "abcdefghijklmnopqrstuvwxyz0123456789/._$-~")
			target := w[len(op):]
			in.Redirects = append(in.Redirects, shellparse.Redirect{Op: op, Target: target, Dynamic: strings.ContainsAny(target, "$~")})
		default:
			in.Args = append(in.Args, w)
			in.ArgDynamic = append(in.ArgDynamic, strings.ContainsAny(w, "$*"))
		}
	}
	return in
}

func TestAllowsCommandArchitect(t *testing.T) {
	m := Mode{Name: ModeArchitect}
	tests := []struct {
		words []string
		ok    bool
	}{
		{[]string{"ls", "-la"}, true},
		{[]string{"lsof"}, false},
		{[]string{"cat", "f"}, true},
		{[]string{"cat", "$f"}, true},
		{[]string{"rm", "x"}, false},
		{[]string{"curl", "x"}, false},
		{[]string{"sh"}, false},
		{[]string{"$cmd"}, false},
		{[]string{"echo", "x", ">f"}, false},
		{[]string{"echo", "x", ">>f"}, false},
		{[]string{"echo", "x", ">/dev/null"}, true},
		{[]string{"echo", "x", "2>/dev/stderr"}, true},
		{[]string{"ls", "2>&1"}, true},
		{[]string{"ls", ">&2"}, true},
		{[]string{"cat", "<f"}, true},
		{[]string{"cat", "<>f"}, false},
		{[]string{"echo", ">$f"}, false},
		{[]string{"find", ".", "-name", "x"}, true},
		{[]string{"find", ".", "-delete"}, false},
		{[]string{"find", ".", "-exec", "rm", "{}", ";"}, false},
		{[]string{"find", "*"}, false},
		{[]string{"sed", "-n", "10,20p", "f"}, true},
		{[]string{"sed", "-i", "s/a/b/", "f"}, false},
		{[]string{"sed", "-ni", "1p", "f"}, false},
		{[]string{"sed", "s/a/b/w out", "f"}, false},
		{[]string{"sed", "-e", "1e rm x"}, false},
		{[]string{"sort", "-o", "out", "f"}, false},
		{[]string{"sort", "-uo", "out"}, false},
		{[]string{"sort", "-k2", "f"}, true},
		{[]string{"tee", "out"}, false},
		{[]string{"tee", "/dev/null"}, true},
		{[]string{"uniq", "a", "b"}, false},
		{[]string{"uniq", "-c", "a"}, true},
		{[]string{"git", "status"}, true},
		// -C points git at another repository, which may be a bare one whose
		// configuration runs a program: refused (the issue asks for it).
		{[]string{"git", "-C", "/w", "log", "--oneline"}, false},
		{[]string{"git", "log", "--oneline"}, true},
		{[]string{"git", "diff", "--output=x"}, false},
		{[]string{"git", "push"}, false},
		{[]string{"git", "commit", "-m", "x"}, false},
		{[]string{"git", "-c", "core.pager=rm", "log"}, false},
		{[]string{"git", "branch"}, true},
		{[]string{"git", "branch", "-a", "-v"}, true},
		{[]string{"git", "branch", "new"}, false},
		{[]string{"git", "branch", "-D", "old"}, false},
		{[]string{"git", "tag", "-l", "v1*"}, false}, // a glob argument is dynamic
		{[]string{"git", "tag", "-l", "v1"}, true},
		{[]string{"git", "tag", "v2"}, false},
		{[]string{"git", "config", "--get", "user.name"}, true},
		{[]string{"git", "config", "user.name", "x"}, false},
		{[]string{"git", "stash"}, false},
		{[]string{"git", "stash", "list"}, true},
		{[]string{"git", "grep", "-Ovim", "x"}, false},
		{[]string{"go", "version"}, true},
		{[]string{"go", "env", "-w", "X=1"}, false},
		{[]string{"go", "build"}, false},
		{[]string{"rg", "--pre", "sh", "x"}, false},
		{[]string{"rg", "x"}, true},
		{[]string{"printf", "-v", "x", "%s", "y"}, false},
		{[]string{"date", "+%s"}, true},
		{[]string{"date", "-s", "now"}, false},
		{[]string{"hostname"}, true},
		{[]string{"hostname", "evil"}, false},
		{[]string{"xargs", "grep", "x"}, true},
		{[]string{"xargs", "-0", "-n", "1", "cat"}, true},
		{[]string{"xargs", "rm"}, false},
		{[]string{"xargs", "find"}, false},
		{[]string{"xargs"}, true},
		{[]string{"[[", "-f", "a", "]]"}, true},
		{[]string{"[[", "$x", "-eq", "1", "]]"}, false},
		{[]string{"((", "x++", "))"}, false},
		{[]string{"echo", "$((x))"}, false},
		{[]string{"echo", "${a[$i]}"}, false},
		{[]string{"echo", "${x:0:2}"}, false},
		{[]string{"echo", "${x:-y}"}, true},
		{[]string{"LC_ALL=C", "sort", "f"}, true},
		{[]string{"PATH=/tmp", "ls"}, false},
		{[]string{"x=1"}, false},
		{[]string{"PROMPT_COMMAND=rm"}, false},
		{[]string{"cd", "/tmp"}, true},
		{[]string{"env", "ls"}, false},
		{[]string{"export", "A=1"}, false},
	}
	for _, tc := range tests {
		err := m.AllowsCommand(inv(tc.words...), "/w")
		var ce *CommandDeniedError
		if (err == nil) != tc.ok || (err != nil && (!errors.As(err, &ce) || ce.Mode != ModeArchitect || ce.Reason == "")) {
			t.Errorf("architect %q = %v, want ok=%v", tc.words, err, tc.ok)
		}
	}
}

func TestAllowsCommandCodeWriter(t *testing.T) {
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	if err := os.MkdirAll(filepath.Join(root, "src"), 0o700); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "src", "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "nothing"), filepath.Join(root, "src", "dangling")); err != nil {
		t.Fatal(err)
	}
	m, err := ParseMode(ModeCodeWriter, &CodeWriterConfig{AllowedGlobs: []string{"src/**"},
		AllowedCommands: []string{"ls", "git status", "go test"}}, root)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		words []string
		cwd   string
		ok    bool
	}{
		{[]string{"ls", "-la"}, root, true},
		{[]string{"ls"}, root, true},
		{[]string{"lsof"}, root, false},
		{[]string{"git", "status", "-s"}, root, true},
		{[]string{"git", "statusx"}, root, false},
		{[]string{"git"}, root, false},
		{[]string{"git", "push"}, root, false},
		{[]string{"git", "$sub"}, root, false},
		{[]string{"go", "test", "./..."}, root, true},
		{[]string{"curl", "x"}, root, false},
		{[]string{"$cmd"}, root, false},
		{[]string{"/bin/ls"}, root, false},
		{[]string{"cd", "src"}, root, true},
		{[]string{"ls", ">src/out.txt"}, root, true},
		{[]string{"ls", ">out.txt"}, filepath.Join(root, "src"), true},
		{[]string{"ls", ">out.txt"}, root, false},
		{[]string{"ls", ">src/../out.txt"}, root, false},
		{[]string{"ls", ">src/escape/x"}, root, false},
		{[]string{"ls", ">src/dangling"}, root, false},
		{[]string{"ls", ">out.txt"}, "", false},
		{[]string{"ls", ">$f"}, root, false},
		{[]string{"ls", ">/dev/null"}, root, true},
		{[]string{"ls", "2>&1"}, root, true},
		{[]string{"A=1", "ls"}, root, true},
		{[]string{"PATH=.", "ls"}, root, false},
		{[]string{"LD_PRELOAD=x.so", "ls"}, root, false},
		{[]string{"GIT_CONFIG_PARAMETERS=x", "git", "status"}, root, false},
	}
	for _, tc := range tests {
		err := m.AllowsCommand(inv(tc.words...), tc.cwd)
		var ce *CommandDeniedError
		if (err == nil) != tc.ok || (err != nil && !errors.As(err, &ce)) {
			t.Errorf("code_writer %q in %q = %v, want ok=%v", tc.words, tc.cwd, err, tc.ok)
		}
	}
	all := Mode{Name: ModeCodeWriter, AllCommands: true}
	if err := all.AllowsCommand(inv("curl", "x"), root); err != nil {
		t.Errorf("code_writer all commands: curl = %v", err)
	}
	if err := all.AllowsCommand(inv("$cmd"), root); err == nil {
		t.Errorf("code_writer all commands: a dynamic name was allowed")
	}
	if err := all.AllowsCommand(inv("ls", ">x"), root); err == nil {
		t.Errorf("code_writer all commands, no globs: a redirection was allowed")
	}
}

func TestAllowsCommandWCGW(t *testing.T) {
	m := Mode{Name: ModeWCGW}
	for _, words := range [][]string{{"rm", "-rf", "x"}, {"$cmd"}, {"echo", ">f"}, {"PATH=.", "ls"}} {
		if err := m.AllowsCommand(inv(words...), ""); err != nil {
			t.Errorf("wcgw %q = %v, want allowed", words, err)
		}
	}
}

func TestCommandDeniedMessage(t *testing.T) {
	err := Mode{Name: ModeArchitect}.AllowsCommand(inv("curl", "x"), "/w")
	want := `policy: mode architect does not allow "curl x": not on architect's read-only command list`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}

// TestReadmeListsReadOnlyCommands keeps the README's Modes section in step
// with the list architect enforces.
func TestReadmeListsReadOnlyCommands(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, "## Modes")
	if i < 0 {
		t.Fatal("README.md has no Modes section")
	}
	section := text[i+len("## Modes"):]
	if j := strings.Index(section, "\n## "); j >= 0 {
		section = section[:j]
	}
	for _, name := range ReadOnlyCommands() {
		if !strings.Contains(section, "`"+name+"`") {
			t.Errorf("README.md Modes section does not list `%s`", name)
		}
	}
}

// TestEvaluationsRefused covers the words where bash evaluates a value as
// code, in both restricted modes: a value "a[$(cmd)]" runs cmd there.
func TestEvaluationsRefused(t *testing.T) {
	cw := Mode{Name: ModeCodeWriter, AllCommands: true, AllGlobs: true}
	for _, m := range []Mode{{Name: ModeArchitect}, cw} {
		for _, in := range []shellparse.Command{
			inv("echo", "${!x}"),
			inv("echo", "${x@P}"),
			inv("echo", "${x:1}"),
			inv("echo", "${a[i]}"),
			inv("echo", "$((x))"),
			inv("echo", "$[x]"),
			inv("((", "x", "))"),
			inv("let", "x"),
			inv("[[", "x", "-eq", "1", "]]"),
			inv("[[", "-v", "a[x]", "]]"),
			inv("test", "-v", "a[x]"),
			inv("unset", "a[x]"),
			inv("read", "a[x]"),
			inv("printf", "-v", "a[x]", "1"),
			inv("declare", "-i", "n=x"),
			inv("local", "-n", "r=a"),
			inv("a[x]=1"),
			inv("a=([x]=1)"),
			{Args: []string{"cat"}, ArgDynamic: []bool{false}, Redirects: []shellparse.Redirect{{Op: "<<", Target: "EOF", Body: "$((x))\n"}}},
			{Args: []string{"cat"}, ArgDynamic: []bool{false}, Redirects: []shellparse.Redirect{{Op: "<<<", Target: "${!x}", Dynamic: true}}},
		} {
			if err := m.AllowsCommand(in, "/w"); err == nil {
				t.Errorf("%s %q allowed, want denied", m.Name, commandString(in))
			}
		}
	}
	for _, in := range []shellparse.Command{inv("echo", "${x:-y}", "${#x}", "${a[@]}", "${a[*]}"), inv("[[", "-v", "x", "]]")} {
		if err := cw.AllowsCommand(in, "/w"); err != nil {
			t.Errorf("code_writer %q = %v, want allowed", commandString(in), err)
		}
	}
}

func TestArchitectAssignsPlainValues(t *testing.T) {
	m := Mode{Name: ModeArchitect}
	for words, ok := range map[string]bool{"LANG=en_US.UTF-8": true, "TZ=Europe/Paris": true, "LANG=a[x]": false, "TZ=$(id)": false, "LANG[1]=C": false} {
		if err := m.AllowsCommand(inv(words), "/w"); (err == nil) != ok {
			t.Errorf("architect %q = %v, want ok=%v", words, err, ok)
		}
	}
}

func TestLongOption(t *testing.T) {
	for _, tc := range []struct {
		arg, full string
		want      bool
	}{
		{"--in-place", "--in-place", true},
		{"--in", "--in-place", true},
		{"--in-place=.bak", "--in-place", true},
		{"--out=x", "--output", true},
		{"--", "--output", false},
		{"--oneline", "--output", false},
		{"--output-indicator-new=+", "--output", false},
		{"-o", "--output", false},
	} {
		if got := longOption(tc.arg, tc.full); got != tc.want {
			t.Errorf("longOption(%q, %q) = %v, want %v", tc.arg, tc.full, got, tc.want)
		}
	}
}
