package auth

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestLoadPrincipalsAllowedRoots(t *testing.T) {
	f := newFixture(t)
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(base, "proj")
	if err := os.Mkdir(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(proj, filepath.Join(base, "alias")); err != nil {
		t.Fatal(err)
	}
	path := f.config(t, `[[principals]]
name = "alice"
token_file = "alice"
allowed_roots = ["`+filepath.Join(base, "alias")+`", "`+proj+`", "/"]

[[principals]]
name = "bob"
token_file = "bob"
`)
	set, err := LoadPrincipals(path, testOptions(nil))
	if err != nil {
		t.Fatalf("LoadPrincipals: %v", err)
	}
	alice, _ := set.Authenticate("Bearer " + tokenAlice)
	if want := []string{proj, "/"}; !slices.Equal(alice.AllowedRoots, want) {
		t.Errorf("alice's roots = %q, want %q (canonical, once each)", alice.AllowedRoots, want)
	}
	if bob, _ := set.Authenticate("Bearer " + tokenBob); bob.AllowedRoots != nil {
		t.Errorf("bob's roots = %q, want nil (unrestricted)", bob.AllowedRoots)
	}

	for name, tc := range map[string]struct {
		roots string
		want  error
	}{
		"empty":     {``, ErrEmptyAllowedRoots},
		"relative":  {`"proj"`, ErrAllowedRoot},
		"dot dot":   {`"` + proj + `/../proj"`, ErrAllowedRoot},
		"missing":   {`"` + filepath.Join(base, "nope") + `"`, ErrAllowedRoot},
		"file":      {`"` + filepath.Join(f.dir, "alice") + `"`, ErrAllowedRoot},
		"empty str": {`""`, ErrAllowedRoot},
		"not array": {``, ErrValueType}, // written below
	} {
		path := f.config(t, "[[principals]]\nname = \"carol\"\ntoken_file = \"alice\"\nallowed_roots = ["+tc.roots+"]\n")
		if name == "not array" {
			path = f.config(t, "[[principals]]\nname = \"carol\"\ntoken_file = \"alice\"\nallowed_roots = \""+proj+"\"\n")
		}
		_, err := LoadPrincipals(path, testOptions(nil))
		var pe *PrincipalError
		if !errors.As(err, &pe) || pe.Name != "carol" || pe.Line != 4 || !errors.Is(err, tc.want) {
			t.Errorf("%s: LoadPrincipals = %v, want a *PrincipalError for carol at line 4 wrapping %v", name, err, tc.want)
		}
	}
}

func TestWithinRoots(t *testing.T) {
	for _, tc := range []struct {
		roots []string
		path  string
		want  bool
	}{
		{nil, "/anything", true},
		{[]string{}, "/anything", false},
		{[]string{"/srv/a"}, "/srv/a", true},
		{[]string{"/srv/a"}, "/srv/a/b", true},
		{[]string{"/srv/a"}, "/srv/ab", false},
		{[]string{"/srv/a"}, "/srv", false},
		{[]string{"/srv/b", "/"}, "/etc", true},
	} {
		if got := WithinRoots(tc.roots, tc.path); got != tc.want {
			t.Errorf("WithinRoots(%q, %q) = %v, want %v", tc.roots, tc.path, got, tc.want)
		}
	}
}

func TestConfineRoots(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a, ab, other := filepath.Join(base, "a"), filepath.Join(base, "a", "b"), filepath.Join(base, "other")
	for _, d := range []string{a, ab, other} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		extra, roots, want []string
	}{
		{[]string{other}, nil, []string{other}},                 // unrestricted: unchanged
		{[]string{other}, []string{a}, nil},                     // outside: dropped
		{[]string{ab}, []string{a}, []string{ab}},               // inside: kept
		{[]string{"/"}, []string{a, other}, []string{a, other}}, // wider: narrowed to the roots
		{[]string{"rel"}, []string{a}, []string{"rel"}},         // malformed: left for NewPathPolicy to refuse
	} {
		if got := ConfineRoots(tc.extra, tc.roots); !slices.Equal(got, tc.want) {
			t.Errorf("ConfineRoots(%q, %q) = %q, want %q", tc.extra, tc.roots, got, tc.want)
		}
	}
}

func TestCanonicalPlanned(t *testing.T) {
	real, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, "file"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, want string
		err              error
	}{
		{"existing", real, real, nil},
		{"missing tail", filepath.Join(real, "a", "b"), filepath.Join(real, "a", "b"), nil},
		{"through a link", filepath.Join(link, "a", "b"), filepath.Join(real, "a", "b"), nil},
		{"relative", "a/b", "", ErrPathInvalid},
		{"dot-dot in the missing tail", filepath.Join(link, "a") + "/../../etc", "", ErrPathDenied},
		{"through a file", filepath.Join(real, "file", "a"), "", ErrPathInvalid},
	} {
		got, err := CanonicalPlanned(tc.path)
		if got != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("%s: CanonicalPlanned(%q) = %q, %v; want %q, %v", tc.name, tc.path, got, err, tc.want, tc.err)
		}
	}
}
