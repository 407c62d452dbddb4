package auth

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestProtectedRefusedInEverySpelling: a protected file inside the roots
// (even with "/" as a root) is refused however it is spelled, and the
// exception beneath a protected directory stays usable.
func TestProtectedRefusedInEverySpelling(t *testing.T) {
	ws := t.TempDir()
	secret := filepath.Join(ws, "conf", "ci.tok")
	state := filepath.Join(ws, "state")
	play := filepath.Join(state, "playground")
	for _, d := range []string{filepath.Dir(secret), play, filepath.Join(ws, "sub")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{secret, filepath.Join(state, "receipt"), filepath.Join(play, "x.txt"), filepath.Join(ws, "conf", "ok.txt")} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(secret, filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(ws, "conf"), filepath.Join(ws, "confdir")); err != nil {
		t.Fatal(err)
	}
	prot, err := NewProtected([]string{secret, state}, []string{play})
	if err != nil {
		t.Fatal(err)
	}
	for _, extra := range [][]string{nil, {"/"}} {
		base, err := NewPathPolicy(ws, extra)
		if err != nil {
			t.Fatal(err)
		}
		p := base.WithProtected(prot)
		for _, spelling := range []string{secret, "conf/ci.tok", "sub/../conf/ci.tok", "./conf//ci.tok", "link", "confdir/ci.tok",
			state, "state/receipt", "state/new-file", "state/playground/../receipt"} {
			_, err := p.Resolve(spelling)
			var pe *PathError
			if !errors.Is(err, ErrPathProtected) || !errors.Is(err, ErrPathDenied) || !errors.As(err, &pe) {
				t.Errorf("roots %v: Resolve(%q) = %v, want a *PathError wrapping ErrPathProtected", extra, spelling, err)
			}
		}
		for _, fine := range []string{"conf/ok.txt", "state/playground/x.txt", "sub"} {
			if _, err := p.Resolve(fine); err != nil {
				t.Errorf("roots %v: Resolve(%q) = %v, want allowed", extra, fine, err)
			}
		}
		// The policy without the deny list is unchanged.
		if _, err := base.Resolve("conf/ci.tok"); err != nil {
			t.Errorf("WithProtected changed the original policy: %v", err)
		}
	}
	// Recheck refuses a protected path too (a path resolved before the
	// file became one is not at stake: the list is fixed at start).
	p, _ := NewPathPolicy(ws, nil)
	if err := p.WithProtected(prot).Recheck(secret); !errors.Is(err, ErrPathProtected) {
		t.Errorf("Recheck(secret) = %v, want ErrPathProtected", err)
	}
	var nilProt *Protected
	if nilProt.Contains(secret) {
		t.Error("a nil deny list protects something")
	}
	if _, err := NewProtected([]string{"relative/path"}, nil); !errors.Is(err, ErrPathInvalid) {
		t.Errorf("relative entry: %v, want ErrPathInvalid", err)
	}
}

// TestCredentialFileOwnership: a token file or principal config that
// another user owns, or whose directory others may write, is refused.
func TestCredentialFileOwnership(t *testing.T) {
	token := "ownership-token-0123456789abcdefghijklmnopq"
	dir := t.TempDir()
	path := filepath.Join(dir, "tok")
	if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadTokenFile(path); err != nil {
		t.Fatalf("a private token file: %v", err)
	}
	for _, mode := range []os.FileMode{0o770, 0o777, 0o1777, 0o720, 0o702} {
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadTokenFile(path); !errors.Is(err, ErrFileDirWritable) {
			t.Errorf("directory mode %v: %v, want ErrFileDirWritable", mode, err)
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadTokenFile(path); err != nil {
		t.Errorf("directory 0755: %v", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("changing a file's owner needs root")
	}
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadTokenFile(path); !errors.Is(err, ErrFileOwner) {
		t.Errorf("token file owned by another user: %v, want ErrFileOwner", err)
	}
	cfg := filepath.Join(dir, "principals.toml")
	if err := os.WriteFile(cfg, []byte("[[principals]]\nname = \"a\"\ntoken_env = \"X\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(cfg, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	_, err := LoadPrincipals(cfg, PrincipalOptions{Getenv: func(string) string { return token }, Profiles: map[string][]string{"full": {"A"}}})
	if !errors.Is(err, ErrFileOwner) {
		t.Errorf("principal config owned by another user: %v, want ErrFileOwner", err)
	}
}

// TestCredentialSources lists what a principal file points at.
func TestCredentialSources(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "p.toml")
	body := "[[principals]]\nname = \"a\"\ntoken_env = \"A_TOKEN\"\n\n[[principals]]\nname = \"b\"\ntoken_file = \"b.tok\"\n\n" +
		"[[principals]]\nname = \"c\"\ntoken_file = \"/etc/c.tok\"\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	envs, files, err := CredentialSources(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(envs) != 1 || envs[0] != "A_TOKEN" {
		t.Errorf("env names = %q", envs)
	}
	if len(files) != 2 || files[0] != filepath.Join(dir, "b.tok") || files[1] != "/etc/c.tok" {
		t.Errorf("token files = %q", files)
	}
}
