package workspace

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// An overview of a directory no .git entry covers runs no git at all; one
// under a .git entry still asks git.
func TestOverviewOutsideRepositoryRunsNoGit(t *testing.T) {
	bin := t.TempDir()
	calls := filepath.Join(t.TempDir(), "calls")
	fake := "#!/bin/sh\necho \"$@\" >> '" + calls + "'\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(fake), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	plain := t.TempDir()
	if err := os.WriteFile(filepath.Join(plain, "a.txt"), []byte("a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ov, err := NewOverview(context.Background(), plain, Limits{})
	if err != nil || ov.Git {
		t.Fatalf("NewOverview(plain) = Git %v, %v", ov.Git, err)
	}
	if b, err := os.ReadFile(calls); err == nil {
		t.Fatalf("git ran for a directory outside any repository: %q", b)
	}

	repo := t.TempDir()
	sub := filepath.Join(repo, "sub")
	for _, d := range []string{filepath.Join(repo, ".git"), sub} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := NewOverview(context.Background(), sub, Limits{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(calls); err != nil {
		t.Fatalf("git did not run below a .git entry: %v", err)
	}
}
