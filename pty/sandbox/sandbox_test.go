package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"winx/pty/testenv"
)

// realTempDir is t.TempDir with its symbolic links resolved, as
// PolicyFromEnv reports paths.
func realTempDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func envFunc(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// homeOutsideTmp is a fresh directory for HOME that is not under /tmp or
// $TMPDIR, so that the tests tell the home directory's hole from theirs.
func homeOutsideTmp(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "winx-sandbox-home-")
	if err != nil {
		testenv.Missing(t, "no /var/tmp for a home directory outside /tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

func TestPolicyFromEnv(t *testing.T) {
	base := realTempDir(t)
	home := homeOutsideTmp(t)
	ws := filepath.Join(home, "ws")
	rw := filepath.Join(base, "rw")
	ro := filepath.Join(home, ".config", "tool")
	for _, d := range []string{ws, rw, ro} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(rw, link); err != nil {
		t.Fatal(err)
	}
	tmp := resolveIfExists("/tmp")

	p, err := PolicyFromEnv(ws, envFunc(map[string]string{
		"HOME":     home,
		"TMPDIR":   base,
		EnvRWPaths: link + "::" + rw, // a symbolic link, an empty entry, the same path again
		EnvROPaths: ro,
	}))
	if err != nil {
		t.Fatalf("PolicyFromEnv = %v", err)
	}
	// The temporary directories are hidden, not granted; an RW entry
	// inside one (a session's own) is granted.
	shm := resolveIfExists("/dev/shm")
	want := Policy{RW: []string{ws, rw}, RO: []string{ro}, Home: home, Hidden: []string{tmp, shm, base}}
	if !slices.Equal(p.RW, want.RW) || !slices.Equal(p.RO, want.RO) || p.Home != want.Home || !slices.Equal(p.Hidden, want.Hidden) || p.DenyNetwork {
		t.Errorf("PolicyFromEnv = %+v, want %+v", p, want)
	}

	// No workspace: the command validates the environment at start-up.
	p, err = PolicyFromEnv("", envFunc(map[string]string{"HOME": home}))
	if err != nil || len(p.RW) != 0 || len(p.RO) != 0 || !slices.Equal(p.Hidden, []string{tmp, shm}) {
		t.Errorf("PolicyFromEnv(no workspace) = %+v, %v; want no grant, /tmp and /dev/shm hidden", p, err)
	}

	// HOME under /tmp is hidden twice over: nothing grants /tmp any more.
	if p, err := PolicyFromEnv(ws, envFunc(map[string]string{"HOME": base})); err != nil || p.Home != base {
		t.Errorf("PolicyFromEnv(HOME under /tmp) = %+v, %v; want it accepted", p, err)
	}

	for value, deny := range map[string]bool{"": false, NetworkAllow: false, NetworkDeny: true} {
		p, err := PolicyFromEnv(ws, envFunc(map[string]string{"HOME": home, EnvNetwork: value}))
		if err != nil || p.DenyNetwork != deny {
			t.Errorf("PolicyFromEnv(%s=%q) = %+v, %v; want DenyNetwork %v", EnvNetwork, value, p, err, deny)
		}
	}
	_, err = PolicyFromEnv(ws, envFunc(map[string]string{"HOME": home, EnvNetwork: "off"}))
	if !errors.Is(err, ErrInvalidPolicy) || !strings.Contains(err.Error(), EnvNetwork) || !strings.Contains(err.Error(), NetworkDeny) {
		t.Errorf("PolicyFromEnv(%s=off) = %v; want ErrInvalidPolicy naming the variable and its values", EnvNetwork, err)
	}

	bad := []struct {
		name      string
		workspace string
		env       map[string]string
	}{
		{"no HOME", ws, map[string]string{}},
		{"relative HOME", ws, map[string]string{"HOME": "home"}},
		{"HOME is root", ws, map[string]string{"HOME": "/"}},
		{"missing workspace", filepath.Join(base, "nope"), map[string]string{"HOME": home}},
		{"relative rw", ws, map[string]string{"HOME": home, EnvRWPaths: "rw"}},
		{"missing rw", ws, map[string]string{"HOME": home, EnvRWPaths: filepath.Join(base, "nope")}},
		{"relative ro", ws, map[string]string{"HOME": home, EnvROPaths: rw + ":relative"}},
		{"missing ro", ws, map[string]string{"HOME": home, EnvROPaths: filepath.Join(home, "nope")}},
		// Grants that would expose the home directory.
		{"workspace is HOME", home, map[string]string{"HOME": home}},
		{"workspace holds HOME", filepath.Dir(home), map[string]string{"HOME": home}},
		{"HOME under an RW entry in /tmp", ws, map[string]string{"HOME": rw, EnvRWPaths: base}},
		{"TMPDIR is /", ws, map[string]string{"HOME": home, "TMPDIR": "/"}},
		{"rw holds HOME", ws, map[string]string{"HOME": home, EnvRWPaths: filepath.Dir(home)}},
		{"ro is HOME", ws, map[string]string{"HOME": home, EnvROPaths: home}},
		{"HOME a link into an RW entry", ws, map[string]string{"HOME": link, EnvRWPaths: base}},
	}
	for _, tc := range bad {
		if p, err := PolicyFromEnv(tc.workspace, envFunc(tc.env)); !errors.Is(err, ErrInvalidPolicy) {
			t.Errorf("%s: PolicyFromEnv = %+v, %v; want ErrInvalidPolicy", tc.name, p, err)
		}
	}
}

func TestLauncher(t *testing.T) {
	p := Policy{RW: []string{"/w", "/tmp/s"}, RO: []string{"/h/.gitconfig"}, Home: "/h", Hidden: []string{"/tmp"}, DenyNetwork: true}
	got := Launcher("/bin/winx", p, []string{"/bin/bash", "--rw", "-i"})
	want := []string{"/bin/winx", LauncherArg, policyFlag, "--home", "/h", "--hidden", "/tmp", "--rw", "/w", "--rw", "/tmp/s",
		"--ro", "/h/.gitconfig", "--deny-network", "--", "/bin/bash", "--rw", "-i"}
	if !slices.Equal(got, want) {
		t.Errorf("Launcher = %q, want %q", got, want)
	}
}

// fakeTree lists directories of a made-up file system; a missing directory
// is an error, as it would be from os.ReadDir.
type fakeTree map[string][]string

func (f fakeTree) list(dir string) ([]string, error) {
	names, ok := f[dir]
	if !ok {
		return nil, os.ErrNotExist
	}
	return names, nil
}

func TestReadableTrees(t *testing.T) {
	fs := fakeTree{
		"/":              {".dockerenv", "dev", "etc", "home", "proc", "usr", "var"},
		"/home":          {"alice", "bob"},
		"/var":           {"lib", "tmp"},
		"/var/tmp":       {"h", "other"},
		"/var/tmp/h/sub": {"x"},
	}
	tests := []struct {
		name  string
		holes []string
		want  []string
	}{
		{
			name:  "home under /home",
			holes: []string{"/dev", "/home/alice"},
			want:  []string{"/.dockerenv", "/etc", "/home/bob", "/proc", "/usr", "/var"},
		},
		{
			name:  "home two levels down",
			holes: []string{"/dev", "/var/tmp/h"},
			want:  []string{"/.dockerenv", "/etc", "/home", "/proc", "/usr", "/var/lib", "/var/tmp/other"},
		},
		{
			name:  "home missing from its parent",
			holes: []string{"/home/carol"},
			want:  []string{"/.dockerenv", "/dev", "/etc", "/home/alice", "/home/bob", "/proc", "/usr", "/var"},
		},
		{
			name:  "no holes",
			holes: nil,
			want:  []string{"/"},
		},
	}
	for _, tc := range tests {
		got := readableTrees("/", tc.holes, fs.list)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: readableTrees(%q) = %q, want %q", tc.name, tc.holes, got, tc.want)
		}
		for _, g := range got {
			for _, h := range tc.holes {
				if g == h || within(h, g) || within(g, h) {
					t.Errorf("%s: grant %s reaches hole %s", tc.name, g, h)
				}
			}
		}
	}
	// An ancestor of the home directory that cannot be listed gets nothing
	// beneath it: the sandbox narrows rather than fails.
	unlistable := fakeTree{"/": {"etc", "srv"}}
	if got, want := readableTrees("/", []string{"/srv/home/alice"}, unlistable.list), []string{"/etc"}; !slices.Equal(got, want) {
		t.Errorf("readableTrees(unlistable ancestor) = %q, want %q", got, want)
	}
}

func TestWithin(t *testing.T) {
	tests := []struct {
		path, dir string
		want      bool
	}{
		{"/a/b", "/a", true},
		{"/a", "/a", false},
		{"/ab", "/a", false},
		{"/a", "/", true},
		{"/", "/", false},
	}
	for _, tc := range tests {
		if got := within(tc.path, tc.dir); got != tc.want {
			t.Errorf("within(%q, %q) = %v, want %v", tc.path, tc.dir, got, tc.want)
		}
	}
}

func TestUnavailableError(t *testing.T) {
	cause := errors.New("cause")
	var err error = &UnavailableError{Reason: "because", Err: cause}
	var ue *UnavailableError
	if !errors.As(err, &ue) || !errors.Is(err, cause) || !strings.Contains(err.Error(), "because") {
		t.Errorf("UnavailableError = %v, want errors.As, errors.Is its cause and the reason in the text", err)
	}
}

func TestMustHide(t *testing.T) {
	root := realTempDir(t)
	home := filepath.Join(root, "home")
	ws := filepath.Join(home, "ws")
	ro := filepath.Join(home, "ro")
	for _, d := range []string{ws, ro, filepath.Join(home, ".local", "state")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(ws, "state-link")
	if err := os.Symlink(filepath.Join(home, ".local", "state"), link); err != nil {
		t.Fatal(err)
	}
	p := Policy{Home: home, RW: []string{ws}, RO: []string{ro}}
	for path, hidden := range map[string]bool{
		filepath.Join(home, ".local", "state", "winx", "wire-secret"): true, // not created yet: still hidden
		filepath.Join(link, "winx", "wire-secret"):                    true, // resolved through the link
		filepath.Join(ws, "winx", "wire-secret"):                      false,
		filepath.Join(ro, "wire-secret"):                              false,
		ro:                                                            false,
		"/var/lib/winx/wire-secret":                                   false, // outside the home directory
		"relative/wire-secret":                                        false,
	} {
		err := p.MustHide(path)
		if hidden != (err == nil) {
			t.Errorf("MustHide(%s) = %v, want hidden %v", path, err, hidden)
		}
		if err != nil && !errors.Is(err, ErrInvalidPolicy) {
			t.Errorf("MustHide(%s) = %v, want ErrInvalidPolicy", path, err)
		}
	}
}

func TestMustNotWrite(t *testing.T) {
	root := realTempDir(t)
	ws := filepath.Join(root, "ws")
	run := filepath.Join(root, "run")
	for _, d := range []string{ws, run} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	p := Policy{Home: filepath.Join(root, "home"), RW: []string{ws}}
	for dir, ok := range map[string]bool{
		run:                        true,
		filepath.Join(run, "winx"): true, // not created yet
		ws:                         false,
		filepath.Join(ws, "winx"):  false,
		root:                       false, // holds a writable grant
		"relative/winx":            false,
	} {
		if err := p.MustNotWrite(dir); ok != (err == nil) || (err != nil && !errors.Is(err, ErrInvalidPolicy)) {
			t.Errorf("MustNotWrite(%s) = %v, want ok %v", dir, err, ok)
		}
	}
}
