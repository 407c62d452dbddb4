package workspace

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// canon is p with every symlink resolved (t.TempDir may sit behind one).
func canon(t *testing.T, p string) string {
	t.Helper()
	c, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=winx", "-c", "user.email=winx@example.invalid",
		"-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// touch sets a file's modification time to now minus age.
func touch(t *testing.T, path string, age time.Duration) {
	t.Helper()
	when := time.Now().Add(-age)
	if err := os.Chtimes(path, when, when); err != nil {
		t.Fatal(err)
	}
}

// gitWorkspace builds a small repository: committed and untracked files,
// ignored ones, dependency trees and guideline files.
func gitWorkspace(t *testing.T) string {
	t.Helper()
	needGit(t)
	root := canon(t, t.TempDir())
	files := map[string]string{
		"README.md":                       "# demo\n",
		"go.mod":                          "module demo\n",
		"main.go":                         "package main\n",
		"notes.txt":                       "notes\n",
		"old.go":                          "package main\n",
		".gitignore":                      "*.log\nbuild/\n",
		"cmd/tool/main.go":                "package main\n",
		"internal/a/a.go":                 "package a\n",
		"debug.log":                       "ignored\n",
		"build/out.bin":                   "ignored\n",
		"node_modules/x.js":               "dependency\n",
		"vendor/v/v.go":                   "package v\n",
		"AGENTS.md":                       "Run go test before you commit.\n",
		".github/copilot-instructions.md": "Prefer small diffs.\n",
	}
	for name, content := range files {
		writeFile(t, filepath.Join(root, filepath.FromSlash(name)), content)
	}
	touch(t, filepath.Join(root, "old.go"), 48*time.Hour)
	touch(t, filepath.Join(root, "internal", "a", "a.go"), 24*time.Hour) // cmd/ holds newer work
	git(t, root, "init", "-q")
	git(t, root, "add", "README.md", "go.mod", "old.go", ".gitignore", "vendor/v/v.go")
	git(t, root, "commit", "-q", "-m", "init")
	return root
}

func TestWorkspaceContextGit(t *testing.T) {
	root := gitWorkspace(t)
	ov, err := NewOverview(context.Background(), root, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !ov.Git {
		t.Fatal("Git = false for a git work tree")
	}
	for _, absent := range []string{"debug.log", "build/", "build/out.bin", "node_modules/", "node_modules/x.js", "vendor/", "vendor/v/v.go", ".git/"} {
		if slices.Contains(ov.Entries, absent) {
			t.Errorf("Entries list %q, which is ignored: %q", absent, ov.Entries)
		}
	}
	for _, present := range []string{"main.go", "notes.txt", "cmd/", "cmd/tool/", "cmd/tool/main.go", "internal/a/a.go", ".gitignore", "AGENTS.md"} {
		if !slices.Contains(ov.Entries, present) {
			t.Errorf("Entries lack %q (untracked files count): %q", present, ov.Entries)
		}
	}
	// Depth first, then README and go.mod, then directories, then source
	// files newest first, then other files, then hidden entries.
	wantHead := []string{"README.md", "go.mod", "cmd/", "internal/", "main.go", "old.go"}
	if len(ov.Entries) < len(wantHead) || !slices.Equal(ov.Entries[:len(wantHead)], wantHead) {
		t.Errorf("Entries = %q, want them to start %q", ov.Entries, wantHead)
	}
	if i, j := slices.Index(ov.Entries, "notes.txt"), slices.Index(ov.Entries, ".gitignore"); i > j {
		t.Errorf("hidden .gitignore ranks before notes.txt: %q", ov.Entries)
	}
	if !strings.HasPrefix(ov.GitStatus, "## ") || !strings.Contains(ov.GitStatus, "?? main.go") {
		t.Errorf("GitStatus = %q, want a branch line and the untracked main.go", ov.GitStatus)
	}
	var names []string
	for _, g := range ov.Guidelines {
		names = append(names, g.Path)
	}
	if !slices.Equal(names, []string{"AGENTS.md", ".github/copilot-instructions.md"}) {
		t.Errorf("Guidelines = %q, want AGENTS.md and .github/copilot-instructions.md", names)
	}
	text := ov.Text()
	for _, want := range []string{root, "git work tree", "cmd/\n  tool/\n    main.go\n", "## git status", "Run go test before you commit.", "## Guidelines from AGENTS.md"} {
		if !strings.Contains(text, want) {
			t.Errorf("Text() lacks %q:\n%s", want, text)
		}
	}
}

func TestWorkspaceContextSubdirectoryOfRepo(t *testing.T) {
	root := gitWorkspace(t)
	ov, err := NewOverview(context.Background(), filepath.Join(root, "cmd"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !ov.Git || !slices.Equal(ov.Entries, []string{"tool/", "tool/main.go"}) {
		t.Errorf("NewOverview(repo/cmd) = git %v, %q; want git true, [tool/ tool/main.go]", ov.Git, ov.Entries)
	}
}

func TestWorkspaceContextWithoutGit(t *testing.T) {
	root := canon(t, t.TempDir())
	for _, name := range []string{"Makefile", "src/lib.rs", "target/debug/app", "node_modules/m/index.js", ".winx/tmp/x", "docs/guide.md", "CLAUDE.md"} {
		writeFile(t, filepath.Join(root, filepath.FromSlash(name)), "x\n")
	}
	ov, err := NewOverview(context.Background(), root, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Makefile", "docs/", "src/", "CLAUDE.md", "src/lib.rs", "docs/guide.md"}
	if ov.Git || !slices.Equal(ov.Entries, want) {
		t.Errorf("WorkspaceContext = git %v, %q; want git false, %q", ov.Git, ov.Entries, want)
	}
	if ov.GitStatus != "" || strings.Contains(ov.Text(), "## git status") {
		t.Errorf("a directory without git shows a git status: %q", ov.GitStatus)
	}
	if len(ov.Guidelines) != 1 || ov.Guidelines[0].Path != "CLAUDE.md" {
		t.Errorf("Guidelines = %+v, want CLAUDE.md", ov.Guidelines)
	}
}

func TestWorkspaceContextLimits(t *testing.T) {
	root := canon(t, t.TempDir())
	for i := range 30 {
		writeFile(t, filepath.Join(root, "pkg", "f"+string(rune('a'+i%26))+strings.Repeat("x", i/26)+".go"), "package pkg\n")
	}
	for i := range 5 {
		writeFile(t, filepath.Join(root, "top"+string(rune('a'+i))+".txt"), "x\n")
	}
	writeFile(t, filepath.Join(root, "AGENTS.md"), strings.Repeat("guideline line\n", 100))
	outside := filepath.Join(canon(t, t.TempDir()), "secret.md")
	writeFile(t, outside, "secret\n")
	if err := os.Symlink(outside, filepath.Join(root, "CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	ov, err := NewOverview(context.Background(), root, Limits{MaxEntries: 10, MaxGuidelineBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(ov.Entries) != 10 || ov.Total != 38 {
		t.Errorf("shown %d of %d entries, want 10 of 38: %q", len(ov.Entries), ov.Total, ov.Entries)
	}
	for _, e := range ov.Entries {
		if parent := parentOf(strings.TrimSuffix(e, "/")); parent != "" && !slices.Contains(ov.Entries, parent+"/") {
			t.Errorf("entry %q is shown without its directory", e)
		}
	}
	text := ov.Text()
	if !strings.Contains(text, "pkg/ (28 more not shown)") {
		t.Errorf("Text() does not count the hidden entries of pkg/:\n%s", text)
	}
	if len(ov.Guidelines) != 1 || ov.Guidelines[0].Path != "AGENTS.md" || !ov.Guidelines[0].Truncated ||
		len(ov.Guidelines[0].Content) > 100 || !strings.HasSuffix(ov.Guidelines[0].Content, "\n") {
		t.Errorf("Guidelines = %+v; want AGENTS.md cut to whole lines within 100 bytes, and no CLAUDE.md symlink leading outside", ov.Guidelines)
	}
	if strings.Contains(text, "secret") {
		t.Error("a guideline symlink pointing outside the workspace was read")
	}

	scan, err := NewOverview(context.Background(), root, Limits{MaxScan: 5})
	if err != nil {
		t.Fatal(err)
	}
	if !scan.ScanTruncated || !strings.Contains(scan.Text(), "listing stopped early") {
		t.Errorf("MaxScan 5 of 37 files: ScanTruncated = %v", scan.ScanTruncated)
	}
}

func TestWorkspaceContextGitStatusBounded(t *testing.T) {
	root := gitWorkspace(t)
	for i := range 50 {
		writeFile(t, filepath.Join(root, "many", strings.Repeat("n", 20)+string(rune('a'+i%26))+string(rune('a'+i/26))+".txt"), "x\n")
	}
	ov, err := NewOverview(context.Background(), root, Limits{MaxStatusBytes: 64})
	if err != nil {
		t.Fatal(err)
	}
	if len(ov.GitStatus) > 64 || !ov.GitStatusTruncated || !strings.Contains(ov.Text(), "[git status truncated]") {
		t.Errorf("GitStatus has %d bytes (truncated %v), want at most 64 and marked", len(ov.GitStatus), ov.GitStatusTruncated)
	}
}

func TestWorkspaceContextEmpty(t *testing.T) {
	ov, err := NewOverview(context.Background(), canon(t, t.TempDir()), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ov.Entries) != 0 || !strings.Contains(ov.Text(), "(no files)") {
		t.Errorf("empty workspace: entries %q, text %q", ov.Entries, ov.Text())
	}
}

func TestFenced(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a\n", "```\na\n```\n"},
		{"a", "```\na\n```\n"},
		{"x ```` y\n", "`````\nx ```` y\n`````\n"},
	}
	for _, tc := range tests {
		if got := Fenced(tc.in); got != tc.want {
			t.Errorf("Fenced(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
