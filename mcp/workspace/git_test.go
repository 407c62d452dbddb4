package workspace

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"winx/evidence/redact"
)

// hostileRepo builds a work tree whose repository and user configuration
// name a program for every hook git has: clean/smudge/process filters,
// fsmonitor, hooks, pager, textconv and external diff drivers, credential
// helpers, ssh and askpass, submodule summaries. Each program is a script
// that leaves a marker file named for its role in the returned directory.
// The work tree has an unstaged change, a same-size change with a new
// mtime (git must compare contents) and a staged change, so status and
// both diffs have work to do.
func hostileRepo(t *testing.T) (root, markers string) {
	t.Helper()
	needGit(t)
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, markers = filepath.Join(base, "ws"), filepath.Join(base, "markers")
	home := filepath.Join(base, "home")
	for _, d := range []string{root, markers, home, filepath.Join(home, ".config", "git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	evil := filepath.Join(base, "evil.sh")
	script := "#!/bin/sh\n: > '" + markers + "'/\"$1\"\ncat\n"
	if err := os.WriteFile(evil, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		".gitattributes": "*.txt filter=evil diff=evil\n*.dat filter=evilp diff=evil\n*.usr filter=userevil\n*.md filter=we=ird.name\n",
		"a.txt":          "one\n",
		"b.txt":          "same\n",
		"c.txt":          "staged\n",
		"d.dat":          "data\n",
		"e.usr":          "user\n",
		"f.md":           "mark\n",
	}
	for name, content := range files {
		writeFile(t, filepath.Join(root, name), content)
	}
	git(t, root, "init", "-q")
	git(t, root, "add", ".")
	git(t, root, "commit", "-q", "-m", "init")
	writeFile(t, filepath.Join(root, "c.txt"), "staged, changed\n")
	git(t, root, "add", "c.txt")

	// Only now the hostile configuration: the setup's own git calls above
	// must not trip it.
	prog := func(role string) string { return evil + " " + role }
	config := fmt.Sprintf(`[core]
	fsmonitor = %s
	pager = %s
	hooksPath = %s
	sshCommand = %s
	askPass = %s
	editor = %s
[filter "evil"]
	clean = %s
	smudge = %s
	required = true
[filter "we=ird.name"]
	clean = %s
[filter "evilp"]
	process = %s
	required = true
[diff "evil"]
	textconv = %s
	command = %s
[diff]
	external = %s
[pager]
	status = %s
	diff = %s
[credential]
	helper = !%s
[status]
	submoduleSummary = true
[gpg]
	program = %s
`, prog("fsmonitor"), prog("pager"), filepath.Join(base, "hooks"), prog("ssh"), prog("askpass"), prog("editor"),
		prog("clean"), prog("smudge"), prog("weird"), prog("process"), prog("textconv"), prog("diffcommand"), prog("external"),
		prog("pagerstatus"), prog("pagerdiff"), prog("credential"), prog("gpg"))
	f, err := os.OpenFile(filepath.Join(root, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(config); err != nil {
		t.Fatal(err)
	}
	f.Close()
	hooks := filepath.Join(base, "hooks")
	if err := os.Mkdir(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"post-index-change", "pre-commit", "post-checkout", "reference-transaction", "pre-auto-gc", "fsmonitor-watchman"} {
		writeFile(t, filepath.Join(hooks, h), "#!/bin/sh\n: > '"+markers+"'/hook-"+h+"\n")
		os.Chmod(filepath.Join(hooks, h), 0o755)
	}
	// The same through the user's configuration, which the server's git
	// must not read either.
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	user := fmt.Sprintf("[filter \"userevil\"]\n\tclean = %s\n[core]\n\tpager = %s\n", prog("userclean"), prog("userpager"))
	writeFile(t, filepath.Join(home, ".gitconfig"), user)
	writeFile(t, filepath.Join(home, ".config", "git", "config"), user)

	// The work tree changes: a longer a.txt, a same-size b.txt whose mtime
	// moves (only a content comparison can tell), a changed d.dat and
	// e.usr and f.md (whose driver's name holds "=" and ".").
	writeFile(t, filepath.Join(root, "a.txt"), "one, changed\n")
	writeFile(t, filepath.Join(root, "b.txt"), "SAME\n")
	touch(t, filepath.Join(root, "b.txt"), -2*time.Second)
	writeFile(t, filepath.Join(root, "d.dat"), "DATA\n")
	writeFile(t, filepath.Join(root, "e.usr"), "USER\n")
	writeFile(t, filepath.Join(root, "f.md"), "MARK\n")
	return root, markers
}

func assertNoMarkers(t *testing.T, markers string) {
	t.Helper()
	ents, err := os.ReadDir(markers)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("git ran a configured program: %s", e.Name())
	}
}

// TestGitRunsNoConfiguredProgram: Initialize's overview (rev-parse,
// ls-files, status) and ContextSave's diffs run no program that the
// repository or the user's configuration names, and still see the changes.
func TestGitRunsNoConfiguredProgram(t *testing.T) {
	root, markers := hostileRepo(t)
	ov, err := NewOverview(context.Background(), root, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !ov.Git {
		t.Fatalf("Git = false for a git work tree")
	}
	for _, want := range []string{" M a.txt", "M  c.txt"} {
		if !strings.Contains(ov.GitStatus, want) {
			t.Errorf("GitStatus = %q, want a line %q", ov.GitStatus, want)
		}
	}
	assertNoMarkers(t, markers)

	s := &Saver{Redactor: redact.New(false)}
	var doc bytes.Buffer
	s.writeWorkspace(context.Background(), &doc, root)
	for _, want := range []string{"+one, changed", "+staged, changed"} {
		if !strings.Contains(doc.String(), want) {
			t.Errorf("saved workspace lacks %q:\n%s", want, doc.String())
		}
	}
	assertNoMarkers(t, markers)
}

// TestGitHonoursUserIgnoreFile: the overview's git runs without the user's
// configuration, but still hides what the user's global ignore file
// (git's default location, or core.excludesFile) hides.
func TestGitHonoursUserIgnoreFile(t *testing.T) {
	needGit(t)
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, home := filepath.Join(base, "ws"), filepath.Join(base, "home")
	writeFile(t, filepath.Join(root, "main.go"), "package main\n")
	writeFile(t, filepath.Join(root, "x.secret"), "hidden\n")
	writeFile(t, filepath.Join(root, "y.private"), "hidden\n")
	git(t, root, "init", "-q")
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	writeFile(t, filepath.Join(home, ".config", "git", "ignore"), "*.secret\n")
	ov, err := NewOverview(context.Background(), root, Limits{})
	if err != nil || !ov.Git {
		t.Fatalf("NewOverview = git %v, %v", ov.Git, err)
	}
	if slices.Contains(ov.Entries, "x.secret") || !slices.Contains(ov.Entries, "main.go") {
		t.Errorf("Entries = %q, want main.go without x.secret", ov.Entries)
	}
	writeFile(t, filepath.Join(home, ".gitconfig"), "[core]\n\texcludesFile = ~/private-ignore\n")
	writeFile(t, filepath.Join(home, "private-ignore"), "*.private\n")
	ov, err = NewOverview(context.Background(), root, Limits{})
	if err != nil || slices.Contains(ov.Entries, "y.private") || !slices.Contains(ov.Entries, "x.secret") {
		t.Errorf("with core.excludesFile: Entries = %q, %v; want y.private hidden, x.secret shown", ov.Entries, err)
	}
}
