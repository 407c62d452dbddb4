//go:build cgo

package codemap

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// goSourceRoot returns the Go standard library sources of the toolchain
// running the test, or skips when they are not installed.
func goSourceRoot(tb testing.TB) string {
	tb.Helper()
	src := filepath.Join(runtime.GOROOT(), "src")
	if _, err := os.Stat(filepath.Join(src, "io", "io.go")); err != nil {
		tb.Skipf("Go standard library sources not found under %s", src)
	}
	return src
}

// copyGoTree copies the .go files of the standard library directories dirs
// (testdata left out) into dst and returns how many it copied.
func copyGoTree(tb testing.TB, goSrc, dst string, dirs []string) int {
	tb.Helper()
	n := 0
	for _, d := range dirs {
		err := filepath.WalkDir(filepath.Join(goSrc, d), func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() {
				if e.Name() == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(p, ".go") || !e.Type().IsRegular() {
				return nil
			}
			rel, _ := filepath.Rel(goSrc, p)
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out := filepath.Join(dst, rel)
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				return err
			}
			n++
			return os.WriteFile(out, b, 0o644)
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	return n
}

// TestStandardLibraryRepository is the end-to-end check on a real tree: a
// copy of more than a thousand files of the standard library, one directory
// git-ignored, and a planted file naming the identifier only in a string
// and a comment.
func TestStandardLibraryRepository(t *testing.T) {
	if testing.Short() {
		t.Skip("copies a thousand files")
	}
	goSrc := goSourceRoot(t)
	root := t.TempDir()
	dirs := []string{"archive", "bufio", "bytes", "compress", "crypto", "encoding", "go", "image", "io", "mime", "net/http", "regexp", "strconv", "strings", "text"}
	if n := copyGoTree(t, goSrc, root, dirs); n < 1000 {
		t.Fatalf("copied %d files, want at least 1000", n)
	}
	const name = "ErrUnexpectedEOF"
	writeTree(t, root, map[string]string{
		".gitignore":         "# the MIME packages are left out\n/mime/\n",
		"planted/planted.go": "package planted\n\n// ErrUnexpectedEOF is only named in this comment.\nvar s = \"ErrUnexpectedEOF in a string\"\n",
	})
	// The ignored directory does hold the name, so leaving it out is
	// observable.
	if b, err := os.ReadFile(filepath.Join(root, "mime", "multipart", "multipart.go")); err != nil || !strings.Contains(string(b), name) {
		t.Fatalf("fixture: mime/multipart/multipart.go does not name %s (%v)", name, err)
	}
	ix := newTestIndex(t, root)
	ctx := context.Background()

	m, err := ix.RepoMap(ctx, MapRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Candidates < 1000 || len(m.Files) == 0 || m.Tokens > m.Budget || m.Budget != DefaultMapTokens || m.NextCursor == "" {
		t.Errorf("map: %d candidates, %d files, %d of %d tokens, cursor %q", m.Candidates, len(m.Files), m.Tokens, m.Budget, m.NextCursor)
	}
	qm, err := ix.RepoMap(ctx, MapRequest{Query: "NewReader", Tokens: 2000})
	if err != nil {
		t.Fatal(err)
	}
	if len(qm.Files) == 0 || qm.Files[0].Reason != ReasonQuery || qm.Tokens > qm.Budget {
		t.Fatalf("query map = %+v", qm)
	}
	found := false
	for _, s := range qm.Files[0].Symbols {
		found = found || strings.Contains(strings.ToLower(s.Name), "newreader")
	}
	if !found {
		t.Errorf("first file of the query map, %s, shows no NewReader symbol", qm.Files[0].Path)
	}
	for _, mp := range []*Map{m, qm} {
		for _, f := range mp.Files {
			if strings.HasPrefix(f.Path, "mime/") {
				t.Errorf("ignored file %s is in the map", f.Path)
			}
		}
	}

	var hits []Reference
	req := ReferencesRequest{Name: name}
	for {
		r, err := ix.References(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		hits = append(hits, r.Hits...)
		if r.NextCursor == "" {
			if len(hits) != r.Total {
				t.Errorf("collected %d hits, total %d", len(hits), r.Total)
			}
			break
		}
		req.Cursor = r.NextCursor
	}
	if len(hits) < 20 {
		t.Fatalf("%d hits of %s, want many", len(hits), name)
	}
	if h := hits[0]; !h.Definition || h.Path != "io/io.go" {
		t.Errorf("first hit = %+v, want the definition in io/io.go", h)
	}
	defsDone := false
	for _, h := range hits {
		if !h.Definition {
			defsDone = true
		} else if defsDone {
			t.Errorf("definition %s:%d after a use", h.Path, h.Line)
		}
		if strings.HasPrefix(h.Path, "mime/") || strings.HasPrefix(h.Path, "planted/") {
			t.Errorf("hit in %s, which is ignored or names %s only in a string and a comment", h.Path, name)
		}
	}
	checkHitsAreIdentifiers(t, root, name, hits)
}

// BenchmarkRepoMap maps the whole standard library source tree in place.
func BenchmarkRepoMap(b *testing.B) {
	goSrc := goSourceRoot(b)
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			ix := newTestIndex(b, goSrc)
			if _, err := ix.RepoMap(context.Background(), MapRequest{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("warm", func(b *testing.B) {
		ix := newTestIndex(b, goSrc)
		if _, err := ix.RepoMap(context.Background(), MapRequest{}); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := ix.RepoMap(context.Background(), MapRequest{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("query-cold", func(b *testing.B) {
		for b.Loop() {
			ix := newTestIndex(b, goSrc)
			if _, err := ix.RepoMap(context.Background(), MapRequest{Query: "NewReader"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("query-warm", func(b *testing.B) {
		ix := newTestIndex(b, goSrc)
		if _, err := ix.RepoMap(context.Background(), MapRequest{Query: "NewReader"}); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := ix.RepoMap(context.Background(), MapRequest{Query: "NewReader"}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkReferences finds a common identifier across the standard
// library source tree.
func BenchmarkReferences(b *testing.B) {
	goSrc := goSourceRoot(b)
	req := ReferencesRequest{Name: "Reader"}
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			ix := newTestIndex(b, goSrc)
			r, err := ix.References(context.Background(), req)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(r.Total), "hits")
		}
	})
	b.Run("warm", func(b *testing.B) {
		ix := newTestIndex(b, goSrc)
		if _, err := ix.References(context.Background(), req); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := ix.References(context.Background(), req); err != nil {
				b.Fatal(err)
			}
		}
	})
}
