package walk

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func writeFiles(t *testing.T, root string, rels ...string) {
	t.Helper()
	for _, rel := range rels {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// collect walks root and returns every entry shown, directories with a
// trailing slash, links with a trailing "@".
func collect(t *testing.T, root, dir string, opts Options, fn func(Entry) error) []string {
	t.Helper()
	var got []string
	err := Walk(context.Background(), root, dir, opts, func(e Entry) error {
		name := e.Rel
		switch {
		case e.IsDir():
			name += "/"
		case e.Type&fs.ModeSymlink != 0:
			name += "@"
		}
		got = append(got, name)
		if e.Path != filepath.Join(root, filepath.FromSlash(e.Rel)) {
			t.Errorf("entry %q has Path %q", e.Rel, e.Path)
		}
		if fn != nil {
			return fn(e)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Walk(%q, %+v) = %v", dir, opts, err)
	}
	return got
}

func TestWalkOptions(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, ".git/config", ".hg/x", "node_modules/m.js", ".venv/lib.py", "build/out.bin",
		"src/a.go", "src/gen.log", ".gitignore", "z.txt")
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("*.log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	writeFiles(t, outside, "o.go")
	if err := os.Symlink(outside, filepath.Join(root, "linkdir")); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		opts Options
		want []string
	}{
		{"everything", Options{}, []string{".git/", ".git/config", ".gitignore", ".hg/", ".hg/x", ".venv/", ".venv/lib.py",
			"build/", "build/out.bin", "linkdir@", "node_modules/", "node_modules/m.js", "src/", "src/a.go", "src/gen.log", "z.txt"}},
		{"state", Options{Skip: SkipState}, []string{".gitignore", ".venv/", ".venv/lib.py",
			"build/", "build/out.bin", "linkdir@", "node_modules/", "node_modules/m.js", "src/", "src/a.go", "src/gen.log", "z.txt"}},
		{"state and deps, ignore files", Options{Skip: SkipState | SkipDeps, Ignore: true}, []string{".gitignore",
			"build/", "build/out.bin", "linkdir@", "src/", "src/a.go", "z.txt"}},
		{"all classes", Options{Skip: SkipState | SkipDeps | SkipBuild}, []string{".gitignore", "linkdir@", "src/", "src/a.go", "src/gen.log", "z.txt"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := collect(t, root, "", tc.opts, nil); !slices.Equal(got, tc.want) {
				t.Errorf("Walk = %q\nwant %q", got, tc.want)
			}
		})
	}

	// SkipDir keeps the walk out of a directory; SkipAll ends it quietly.
	got := collect(t, root, "", Options{Skip: SkipState | SkipDeps | SkipBuild}, func(e Entry) error {
		if e.Rel == "src" {
			return fs.SkipDir
		}
		return nil
	})
	if want := []string{".gitignore", "linkdir@", "src/", "z.txt"}; !slices.Equal(got, want) {
		t.Errorf("Walk with SkipDir on src = %q, want %q", got, want)
	}
	got = collect(t, root, "", Options{}, func(Entry) error { return fs.SkipAll })
	if len(got) != 1 {
		t.Errorf("Walk with SkipAll showed %q, want one entry", got)
	}
	stop := errors.New("stop")
	if err := Walk(context.Background(), root, "", Options{}, func(Entry) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("Walk = %v, want the function's error", err)
	}

	// A sub-directory, a file by name, a skipped name.
	if got := collect(t, root, "src", Options{Ignore: true}, nil); !slices.Equal(got, []string{"src/a.go"}) {
		t.Errorf("Walk(src) = %q", got)
	}
	if got := collect(t, root, "src/gen.log", Options{Ignore: true}, nil); !slices.Equal(got, []string{"src/gen.log"}) {
		t.Errorf("Walk(src/gen.log) = %q, want the ignored file asked for by name", got)
	}
	if got := collect(t, root, "node_modules", Options{Skip: SkipDeps}, nil); len(got) != 0 {
		t.Errorf("Walk(node_modules) = %q, want nothing", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Walk(ctx, root, "", Options{}, func(Entry) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("Walk(cancelled) = %v, want context.Canceled", err)
	}
}

func TestSkippedPath(t *testing.T) {
	tests := []struct {
		skip Skip
		rel  string
		want bool
	}{
		{SkipState, ".git/config", true},
		{SkipState, "a/.winx/tmp", true},
		{SkipState, "vendor/x.go", false},
		{SkipState | SkipDeps, "a/vendor/x.go", true},
		{SkipDeps, "a/build/x", false},
		{SkipBuild, "a/build/x", true},
		{SkipState | SkipDeps | SkipBuild, "src/main.go", false},
	}
	for _, tc := range tests {
		if got := tc.skip.SkippedPath(tc.rel); got != tc.want {
			t.Errorf("Skip(%b).SkippedPath(%q) = %v, want %v", tc.skip, tc.rel, got, tc.want)
		}
	}
}
