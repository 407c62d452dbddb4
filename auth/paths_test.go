package auth

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// tree is a real workspace and a real "outside" directory:
//
//	ws/file.txt
//	ws/a/b/
//	ws/a/inner.txt
//	ws/link-in      -> a            (relative, stays inside)
//	ws/link-abs-in  -> <ws>/a       (absolute, stays inside)
//	ws/link-out     -> <out>        (escapes)
//	ws/link-file    -> <out>/secret (escapes, to a file)
//	ws/link-etc     -> /etc
//	ws/link-up      -> ..           (escapes by "..")
//	ws/a/link-parent -> ../..       (escapes from a subdirectory)
//	ws/dangling-out -> <out>/new    (escapes, target does not exist)
//	ws/dangling-in  -> a/new        (inside, target does not exist)
//	ws/link-loop    -> link-loop
//	out/secret
//	out/d/
type tree struct {
	ws, out string // canonical
}

func newTree(t testing.TB) tree {
	t.Helper()
	ws := canonicalDir(t, t.TempDir())
	out := canonicalDir(t, t.TempDir())
	mkdir(t, filepath.Join(ws, "a", "b"))
	mkdir(t, filepath.Join(out, "d"))
	writeFile(t, filepath.Join(ws, "file.txt"), "inside\n")
	writeFile(t, filepath.Join(ws, "a", "inner.txt"), "inner\n")
	writeFile(t, filepath.Join(out, "secret"), "secret\n")
	for link, target := range map[string]string{
		"link-in":          "a",
		"link-abs-in":      filepath.Join(ws, "a"),
		"link-out":         out,
		"link-file":        filepath.Join(out, "secret"),
		"link-etc":         "/etc",
		"link-up":          "..",
		"a/link-parent":    "../..",
		"dangling-out":     filepath.Join(out, "new"),
		"dangling-in":      "a/new",
		"link-loop":        "link-loop",
		"a/b/link-sibling": "../inner.txt",
	} {
		symlink(t, target, filepath.Join(ws, link))
	}
	return tree{ws: ws, out: out}
}

func canonicalDir(t testing.TB, dir string) string {
	t.Helper()
	c, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mkdir(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t testing.TB, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func mustPolicy(t testing.TB, workspace string, extra []string) *PathPolicy {
	t.Helper()
	p, err := NewPathPolicy(workspace, extra)
	if err != nil {
		t.Fatalf("NewPathPolicy(%q, %q) = %v", workspace, extra, err)
	}
	return p
}

// checkErr reports a mismatch between err and the wanted sentinel (nil for
// success) and checks the error's shape.
func checkErr(t *testing.T, call string, err, want error) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Errorf("%s = %v, want success", call, err)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Errorf("%s = %v, want %v", call, err, want)
		return
	}
	var pe *PathError
	if !errors.As(err, &pe) {
		t.Errorf("%s = %T, want *PathError", call, err)
	}
}

func TestResolve(t *testing.T) {
	tr := newTree(t)
	p := mustPolicy(t, tr.ws, nil)
	ws, out := tr.ws, tr.out
	long := strings.Repeat("x/", MaxPathBytes/2+1)

	tests := []struct {
		name string
		path string
		want string // canonical result; "" when an error is expected
		err  error
	}{
		{"relative file", "file.txt", ws + "/file.txt", nil},
		{"workspace itself", ".", ws, nil},
		{"dot segments", "./a/./b/", ws + "/a/b", nil},
		{"dotdot staying inside", "a/b/../inner.txt", ws + "/a/inner.txt", nil},
		{"absolute inside", ws + "/a/inner.txt", ws + "/a/inner.txt", nil},
		{"absolute with dotdot back inside", ws + "/a/../file.txt", ws + "/file.txt", nil},
		{"symlink inside to inside", "link-in/inner.txt", ws + "/a/inner.txt", nil},
		{"symlink inside itself", "link-in", ws + "/a", nil},
		{"absolute symlink to inside", "link-abs-in/b", ws + "/a/b", nil},
		{"relative symlink to sibling", "a/b/link-sibling", ws + "/a/inner.txt", nil},
		{"dangling symlink to inside", "dangling-in", ws + "/a/new", nil},
		{"new file in existing dir", "a/new.txt", ws + "/a/new.txt", nil},
		{"new file in new dirs", "new/dir/new.txt", ws + "/new/dir/new.txt", nil},
		{"new file through inside symlink", "link-in/b/new.txt", ws + "/a/b/new.txt", nil},
		{"new absolute file", ws + "/new.txt", ws + "/new.txt", nil},

		{"dotdot", "..", "", ErrPathDenied},
		{"dotdot to outside", "../" + filepath.Base(out) + "/secret", "", ErrPathDenied},
		{"deep dotdot", "a/b/../../../x", "", ErrPathDenied},
		{"absolute outside", out + "/secret", "", ErrPathDenied},
		{"absolute outside new", out + "/new.txt", "", ErrPathDenied},
		{"absolute etc", "/etc/passwd", "", ErrPathDenied},
		{"absolute root", "/", "", ErrPathDenied},
		{"symlink to outside dir", "link-out", "", ErrPathDenied},
		{"through symlink to outside", "link-out/secret", "", ErrPathDenied},
		{"symlink to outside file", "link-file", "", ErrPathDenied},
		{"symlink to etc", "link-etc/passwd", "", ErrPathDenied},
		{"symlink up", "link-up", "", ErrPathDenied},
		{"symlinked parent up", "a/link-parent/x", "", ErrPathDenied},
		{"new file under symlinked parent", "link-out/new.txt", "", ErrPathDenied},
		{"new dirs under symlinked parent", "link-out/n1/n2/f", "", ErrPathDenied},
		{"dangling symlink to outside", "dangling-out", "", ErrPathDenied},
		{"dotdot after missing component", "new/../../x", "", ErrPathDenied},
		{"dotdot after missing component inside", "new/../file.txt", "", ErrPathDenied},

		{"empty", "", "", ErrPathInvalid},
		{"nul", "a/\x00b", "", ErrPathInvalid},
		{"too long", long, "", ErrPathInvalid},
		{"file as directory", "file.txt/x", "", ErrPathInvalid},
		{"symlink loop", "link-loop", "", ErrPathInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := p.Resolve(tt.path)
			checkErr(t, "Resolve("+tt.path+")", err, tt.err)
			if got != tt.want {
				t.Errorf("Resolve(%q) = %q, want %q", tt.path, got, tt.want)
			}
		})
	}
}

// TestResolveErrorsLeakNothing: a denied path's message names only what the
// client sent, never where a symlink pointed.
func TestResolveErrorsLeakNothing(t *testing.T) {
	tr := newTree(t)
	p := mustPolicy(t, tr.ws, nil)
	for _, path := range []string{"link-out/secret", "link-file", "dangling-out", "link-out/n/x", "a/link-parent"} {
		_, err := p.Resolve(path)
		if err == nil {
			t.Fatalf("Resolve(%q) succeeded, want denied", path)
		}
		if msg := err.Error(); strings.Contains(msg, tr.out) || strings.Contains(msg, "secret\n") {
			t.Errorf("Resolve(%q) error %q names the symlink target", path, msg)
		}
		var pe *PathError
		if errors.As(err, &pe) && pe.Path != path {
			t.Errorf("Resolve(%q) PathError.Path = %q, want the client path", path, pe.Path)
		}
	}
	// Outside the roots, a missing path and an existing one fail alike.
	_, errMissing := p.Resolve(tr.out + "/missing/x")
	_, errFile := p.Resolve(tr.out + "/secret/x")
	_, errExists := p.Resolve(tr.out + "/d/x")
	var a, b, c *PathError
	if !errors.As(errMissing, &a) || !errors.As(errFile, &b) || !errors.As(errExists, &c) ||
		a.Reason != b.Reason || b.Reason != c.Reason || a.Err != b.Err || b.Err != c.Err {
		t.Errorf("outside errors differ: %v / %v / %v", errMissing, errFile, errExists)
	}
}

// TestResolvePrefixTrick: /x/ab is not inside /x/a.
func TestResolvePrefixTrick(t *testing.T) {
	base := canonicalDir(t, t.TempDir())
	a, ab := filepath.Join(base, "a"), filepath.Join(base, "ab")
	mkdir(t, a)
	mkdir(t, ab)
	writeFile(t, filepath.Join(ab, "f"), "x")
	symlink(t, ab, filepath.Join(a, "to-ab"))
	p := mustPolicy(t, a, nil)
	for _, path := range []string{ab + "/f", ab, "../ab/f", "to-ab/f", a + "b/new"} {
		got, err := p.Resolve(path)
		checkErr(t, "Resolve("+path+")", err, ErrPathDenied)
		if got != "" {
			t.Errorf("Resolve(%q) = %q, want \"\"", path, got)
		}
	}
	if got, err := p.Resolve(a + "/f"); err != nil || got != a+"/f" {
		t.Errorf("Resolve(%q) = %q, %v, want %q", a+"/f", got, err, a+"/f")
	}
}

func TestWithin(t *testing.T) {
	tests := []struct {
		root, path string
		want       bool
	}{
		{"/work/a", "/work/a", true},
		{"/work/a", "/work/a/b", true},
		{"/work/a", "/work/ab", false},
		{"/work/a", "/work/ab/c", false},
		{"/work/a", "/work", false},
		{"/work/a", "/", false},
		{"/", "/", true},
		{"/", "/anything/at/all", true},
	}
	for _, tt := range tests {
		if got := within(tt.root, tt.path); got != tt.want {
			t.Errorf("within(%q, %q) = %v, want %v", tt.root, tt.path, got, tt.want)
		}
	}
}

func TestExtraRoots(t *testing.T) {
	tr := newTree(t)
	extra, err := ParseAllowPaths(tr.out)
	if err != nil {
		t.Fatalf("ParseAllowPaths(%q) = %v", tr.out, err)
	}
	p := mustPolicy(t, tr.ws, extra)
	if p.Unconfined() {
		t.Errorf("Unconfined() = true, want false")
	}
	if got := p.Roots(); len(got) != 2 || got[0] != tr.ws || got[1] != tr.out {
		t.Errorf("Roots() = %q, want [%q %q]", got, tr.ws, tr.out)
	}
	tests := []struct {
		path, want string
		err        error
	}{
		{tr.out + "/secret", tr.out + "/secret", nil},
		{"link-out/secret", tr.out + "/secret", nil},
		{"link-file", tr.out + "/secret", nil},
		{"link-out/d/new.txt", tr.out + "/d/new.txt", nil},
		{"dangling-out", tr.out + "/new", nil},
		{"file.txt", tr.ws + "/file.txt", nil},
		{"link-etc/passwd", "", ErrPathDenied},
		{"link-up", "", ErrPathDenied},
	}
	for _, tt := range tests {
		got, err := p.Resolve(tt.path)
		checkErr(t, "Resolve("+tt.path+")", err, tt.err)
		if got != tt.want {
			t.Errorf("Resolve(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
	// Roots() is a copy.
	p.Roots()[0] = "/"
	if got := p.Roots()[0]; got != tr.ws {
		t.Errorf("Roots()[0] after caller's write = %q, want %q", got, tr.ws)
	}
}

func TestUnconfined(t *testing.T) {
	tr := newTree(t)
	extra, err := ParseAllowPaths("/")
	if err != nil {
		t.Fatalf("ParseAllowPaths(\"/\") = %v", err)
	}
	p := mustPolicy(t, tr.ws, extra)
	if !p.Unconfined() {
		t.Fatalf("Unconfined() = false, want true")
	}
	tests := []struct {
		path, want string
		err        error
	}{
		{tr.out + "/secret", tr.out + "/secret", nil},
		{"link-out/secret", tr.out + "/secret", nil},
		{"../" + filepath.Base(tr.out) + "/d", tr.out + "/d", nil},
		{"/", "/", nil},
		{"a/\x00", "", ErrPathInvalid},
		{"", "", ErrPathInvalid},
		{"link-loop", "", ErrPathInvalid},
	}
	for _, tt := range tests {
		got, err := p.Resolve(tt.path)
		checkErr(t, "Resolve("+tt.path+")", err, tt.err)
		if got != tt.want {
			t.Errorf("Resolve(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
	// A new file outside: canonical, and still rechecked.
	got, err := p.Resolve(tr.out + "/d/new")
	if err != nil || got != tr.out+"/d/new" {
		t.Errorf("Resolve(out/d/new) = %q, %v", got, err)
	}
	if err := p.Recheck(got); err != nil {
		t.Errorf("Recheck(%q) = %v, want nil", got, err)
	}
}

func TestParseAllowPaths(t *testing.T) {
	tr := newTree(t)
	linkToOut := filepath.Join(tr.ws, "link-out")
	tests := []struct {
		name  string
		value string
		want  []string
		err   error
	}{
		{"empty", "", nil, nil},
		{"one", tr.out, []string{tr.out}, nil},
		{"two", tr.out + ":" + tr.ws, []string{tr.out, tr.ws}, nil},
		{"trailing slash", tr.out + "/", []string{tr.out}, nil},
		{"duplicates", tr.out + ":" + tr.out + "/", []string{tr.out}, nil},
		{"symlink canonicalized", linkToOut, []string{tr.out}, nil},
		{"root", "/", []string{"/"}, nil},
		{"relative", "a", nil, ErrPathInvalid},
		{"relative second", tr.out + ":a", nil, ErrPathInvalid},
		{"empty entry", tr.out + "::" + tr.ws, nil, ErrPathInvalid},
		{"trailing separator", tr.out + ":", nil, ErrPathInvalid},
		{"nonexistent", tr.out + "/missing", nil, ErrPathInvalid},
		{"file", tr.out + "/secret", nil, ErrPathInvalid},
		{"dotdot", tr.out + "/../x", nil, ErrPathInvalid},
		{"nul", tr.out + "\x00", nil, ErrPathInvalid},
		{"too long", "/" + strings.Repeat("x", MaxPathBytes), nil, ErrPathInvalid},
		{"too many", strings.Repeat(tr.out+":", MaxAllowPaths) + tr.out, nil, ErrPathInvalid},
		{"loop", filepath.Join(tr.ws, "link-loop"), nil, ErrPathInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseAllowPaths(tt.value)
			checkErr(t, "ParseAllowPaths", err, tt.err)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("ParseAllowPaths(%q) = %q, want %q", tt.value, got, tt.want)
			}
		})
	}
}

func TestNewPathPolicy(t *testing.T) {
	tr := newTree(t)
	// A workspace reached through a symlink is canonicalized.
	p := mustPolicy(t, filepath.Join(tr.ws, "link-in"), nil)
	if got := p.Roots(); len(got) != 1 || got[0] != tr.ws+"/a" {
		t.Errorf("Roots() = %q, want [%q]", got, tr.ws+"/a")
	}
	if got, err := p.Resolve("b"); err != nil || got != tr.ws+"/a/b" {
		t.Errorf("Resolve(b) = %q, %v, want %q", got, err, tr.ws+"/a/b")
	}
	for _, bad := range []struct {
		ws    string
		extra []string
	}{
		{"", nil},
		{"relative", nil},
		{tr.ws + "/missing", nil},
		{tr.ws + "/file.txt", nil},
		{tr.ws, []string{"relative"}},
		{tr.ws, []string{tr.out + "/missing"}},
	} {
		if _, err := NewPathPolicy(bad.ws, bad.extra); !errors.Is(err, ErrPathInvalid) {
			t.Errorf("NewPathPolicy(%q, %q) = %v, want %v", bad.ws, bad.extra, err, ErrPathInvalid)
		}
	}
}

func TestRecheck(t *testing.T) {
	tr := newTree(t)
	p := mustPolicy(t, tr.ws, nil)

	t.Run("unchanged", func(t *testing.T) {
		for _, path := range []string{"file.txt", "a/b", "new/dir/new.txt", "link-in/inner.txt"} {
			c, err := p.Resolve(path)
			if err != nil {
				t.Fatalf("Resolve(%q) = %v", path, err)
			}
			if err := p.Recheck(c); err != nil {
				t.Errorf("Recheck(%q) = %v, want nil", c, err)
			}
		}
	})

	t.Run("file replaced by symlink to outside", func(t *testing.T) {
		target := filepath.Join(tr.ws, "victim.txt")
		writeFile(t, target, "mine\n")
		c, err := p.Resolve("victim.txt")
		if err != nil {
			t.Fatalf("Resolve = %v", err)
		}
		if err := os.Remove(target); err != nil {
			t.Fatal(err)
		}
		symlink(t, filepath.Join(tr.out, "secret"), target)
		checkErr(t, "Recheck("+c+")", p.Recheck(c), ErrPathDenied)
	})

	t.Run("new file replaced by dangling symlink", func(t *testing.T) {
		c, err := p.Resolve("planted.txt")
		if err != nil {
			t.Fatalf("Resolve = %v", err)
		}
		symlink(t, filepath.Join(tr.out, "planted"), c)
		checkErr(t, "Recheck("+c+")", p.Recheck(c), ErrPathDenied)
	})

	t.Run("file replaced by symlink inside", func(t *testing.T) {
		// Even a symlink that stays inside means the path no longer names
		// what Resolve saw.
		target := filepath.Join(tr.ws, "swapped.txt")
		writeFile(t, target, "x")
		c, err := p.Resolve("swapped.txt")
		if err != nil {
			t.Fatalf("Resolve = %v", err)
		}
		os.Remove(target)
		symlink(t, "file.txt", target)
		checkErr(t, "Recheck("+c+")", p.Recheck(c), ErrPathDenied)
	})

	t.Run("parent replaced by symlink", func(t *testing.T) {
		dir := filepath.Join(tr.ws, "p")
		mkdir(t, dir)
		writeFile(t, filepath.Join(dir, "f.txt"), "x")
		existing, err := p.Resolve("p/f.txt")
		if err != nil {
			t.Fatalf("Resolve = %v", err)
		}
		created, err := p.Resolve("p/new/g.txt")
		if err != nil {
			t.Fatalf("Resolve = %v", err)
		}
		if err := os.Rename(dir, dir+".old"); err != nil {
			t.Fatal(err)
		}
		symlink(t, filepath.Join(tr.out, "d"), dir)
		writeFile(t, filepath.Join(tr.out, "d", "f.txt"), "outside")
		checkErr(t, "Recheck("+existing+")", p.Recheck(existing), ErrPathDenied)
		checkErr(t, "Recheck("+created+")", p.Recheck(created), ErrPathDenied)
	})

	t.Run("parent replaced by symlink inside", func(t *testing.T) {
		dir := filepath.Join(tr.ws, "q")
		mkdir(t, dir)
		c, err := p.Resolve("q/new.txt")
		if err != nil {
			t.Fatalf("Resolve = %v", err)
		}
		os.Remove(dir)
		symlink(t, "a", dir)
		checkErr(t, "Recheck("+c+")", p.Recheck(c), ErrPathDenied)
	})

	t.Run("bad input", func(t *testing.T) {
		tests := []struct {
			path string
			err  error
		}{
			{"", ErrPathInvalid},
			{"file.txt", ErrPathInvalid},
			{tr.ws + "/a/../file.txt", ErrPathInvalid},
			{tr.ws + "/a/", ErrPathInvalid},
			{tr.ws + "/\x00", ErrPathInvalid},
			{tr.out + "/secret", ErrPathDenied},
			{tr.ws + "/link-in", ErrPathDenied},
			{tr.ws + "/link-out/secret", ErrPathDenied},
		}
		for _, tt := range tests {
			checkErr(t, "Recheck("+tt.path+")", p.Recheck(tt.path), tt.err)
		}
	})

	// Nothing in this test wrote outside.
	if data, err := os.ReadFile(filepath.Join(tr.out, "secret")); err != nil || string(data) != "secret\n" {
		t.Errorf("outside secret = %q, %v", data, err)
	}
}

// TestResolveConcurrent: the policy is immutable; run under -race.
func TestResolveConcurrent(t *testing.T) {
	tr := newTree(t)
	p := mustPolicy(t, tr.ws, nil)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if _, err := p.Resolve("link-in/inner.txt"); err != nil {
					t.Errorf("Resolve = %v", err)
				}
				if _, err := p.Resolve("link-out/secret"); err == nil {
					t.Errorf("Resolve(link-out/secret) succeeded")
				}
				_ = p.Roots()
			}
		})
	}
	wg.Wait()
}

// fuzzSegments are the path components FuzzResolve builds paths from.
var fuzzSegments = []string{
	"..", ".", "", "a", "b", "file.txt", "inner.txt", "new",
	"link-in", "link-abs-in", "link-out", "link-file", "link-etc", "link-up",
	"link-parent", "dangling-out", "dangling-in", "link-loop", "link-sibling",
	"secret", "d", "etc", "passwd",
}

// FuzzResolve builds relative paths from fuzzSegments (one byte picks one
// segment) and checks: no panic, and a successful Resolve returns a clean,
// absolute path inside a canonical root which, if it exists, is its own
// canonical form.
func FuzzResolve(f *testing.F) {
	for _, seed := range [][]byte{
		{}, {0}, {0, 0, 0}, {10, 19}, {8, 3}, {3, 14}, {5, 0, 0, 10},
		{1, 2, 1}, {17}, {15, 0}, {7, 0, 0}, {7, 6}, {13, 0, 10, 19},
	} {
		f.Add(seed)
	}
	tr := newTree(f)
	plain := mustPolicy(f, tr.ws, nil)
	extra := mustPolicy(f, tr.ws, []string{tr.out})
	f.Fuzz(func(t *testing.T, data []byte) {
		parts := make([]string, 0, len(data))
		for _, b := range data {
			parts = append(parts, fuzzSegments[int(b)%len(fuzzSegments)])
		}
		path := strings.Join(parts, "/")
		for _, p := range []*PathPolicy{plain, extra} {
			got, err := p.Resolve(path)
			if err != nil {
				var pe *PathError
				if !errors.As(err, &pe) || !(errors.Is(err, ErrPathDenied) || errors.Is(err, ErrPathInvalid)) {
					t.Fatalf("Resolve(%q) error %v is not a *PathError with a sentinel", path, err)
				}
				continue
			}
			if !filepath.IsAbs(got) || filepath.Clean(got) != got {
				t.Fatalf("Resolve(%q) = %q, not clean and absolute", path, got)
			}
			inside := false
			for _, root := range p.Roots() {
				rel, err := filepath.Rel(root, got)
				if err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel) {
					inside = true
				}
			}
			if !inside {
				t.Fatalf("Resolve(%q) = %q, outside roots %q", path, got, p.Roots())
			}
			if real, err := filepath.EvalSymlinks(got); err == nil && real != got {
				t.Fatalf("Resolve(%q) = %q, but it resolves to %q", path, got, real)
			}
			if err := p.Recheck(got); err != nil {
				t.Fatalf("Recheck(Resolve(%q) = %q) = %v", path, got, err)
			}
		}
	})
}
