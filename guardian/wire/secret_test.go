package wire

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"winx/jsonrpc"
)

// TestHelloSecretRequired: a hello without the secret, with an empty one or
// with a wrong one is refused with ErrUnauthenticated, in every spelling a
// peer could send; the right one is accepted.
func TestHelloSecretRequired(t *testing.T) {
	ts := startServer(t, shortDir(t))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for name, secret := range map[string]string{
		"none":      "",
		"wrong":     NewSecret(),
		"prefix":    testSecret[:len(testSecret)-1],
		"longer":    testSecret + "0",
		"uppercase": strings.ToUpper(testSecret),
	} {
		_, err := Dial(ctx, ts.path, NewHello(RoleAdapter, Build{}, nil).WithSecret(secret))
		if !errors.Is(err, ErrUnauthenticated) {
			t.Errorf("Dial with secret %s = %v, want ErrUnauthenticated", name, err)
		}
	}
	echo(t, ts.path)
}

// TestRefusedHelloClosesConnection: after a refused hello, the connection
// answers no call (not even a second hello) and is closed by the server.
func TestRefusedHelloClosesConnection(t *testing.T) {
	ts := startServer(t, shortDir(t))
	c := rawConn(t, ts.path)
	writeFrame(c, []byte(`{"jsonrpc":"2.0","id":1,"method":"hello","params":{"protocol":{"major":1,"minor":0},"role":"adapter","secret":"00"}}`))
	r := response(t, readFrame(t, c))
	if r.Error == nil || r.Error.Code != CodeUnauthenticated {
		t.Fatalf("hello with a wrong secret = %+v, want code %d", r, CodeUnauthenticated)
	}
	// A second try on the same connection, even with the right secret,
	// and a call: refused, then the connection ends.
	writeFrame(c, []byte(helloFrame))
	writeFrame(c, []byte(`{"jsonrpc":"2.0","id":2,"method":"echo","params":[1]}`))
	for {
		var n [4]byte
		if _, err := io.ReadFull(c, n[:]); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatal("the server kept the refused connection open")
			}
			break // closed by the server
		}
		b := make([]byte, int(n[0])<<24|int(n[1])<<16|int(n[2])<<8|int(n[3]))
		if _, err := io.ReadFull(c, b); err != nil {
			break
		}
		if r := response(t, b); r.Error == nil {
			t.Fatalf("refused connection answered %s", b)
		}
	}
	echo(t, ts.path)
}

// TestSecretNeverEchoed: the server's hello answer does not carry its
// secret, and handlers do not see the peer's.
func TestSecretNeverEchoed(t *testing.T) {
	path := filepath.Join(shortDir(t), "s.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var seen sync.Map
	h := jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (json.RawMessage, error) {
		p, _ := PeerFrom(ctx)
		seen.Store("secret", p.Hello.Secret)
		return json.RawMessage(`{}`), nil
	})
	done := make(chan struct{})
	go func() {
		Serve(ctx, ln, NewHello(RoleGuardian, Build{}, nil).WithSecret(testSecret), h, &ServeOptions{Secret: testSecret})
		close(done)
	}()
	t.Cleanup(func() { cancel(); <-done })
	c := rawConn(t, path)
	writeFrame(c, []byte(helloFrame))
	b := readFrame(t, c)
	if strings.Contains(string(b), testSecret) {
		t.Errorf("hello answer carries the secret: %s", b)
	}
	writeFrame(c, []byte(`{"jsonrpc":"2.0","id":2,"method":"x"}`))
	readFrame(t, c)
	if v, _ := seen.Load("secret"); v != "" {
		t.Errorf("handler saw the peer's secret %q", v)
	}
}

// TestServeRequiresSecret: a server without a secret does not serve.
func TestServeRequiresSecret(t *testing.T) {
	path := filepath.Join(shortDir(t), "s.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	err = Serve(context.Background(), ln, NewHello(RoleGuardian, Build{}, nil), jsonrpc.HandlerFunc(nil), nil)
	if !errors.Is(err, ErrNoSecret) {
		t.Fatalf("Serve without a secret = %v, want ErrNoSecret", err)
	}
	if _, err := net.Dial("unix", path); err == nil {
		t.Errorf("the socket still accepts connections")
	}
}

func TestEnsureSecret(t *testing.T) {
	state := t.TempDir()
	path, err := SecretPath(func(k string) string { return map[string]string{"XDG_STATE_HOME": state}[k] })
	if err != nil || path != filepath.Join(state, "winx", SecretFileName) {
		t.Fatalf("SecretPath = %q, %v", path, err)
	}
	if _, err := LoadSecret(path); !errors.Is(err, ErrNoSecret) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadSecret(missing) = %v, want ErrNoSecret and ErrNotExist", err)
	}
	var (
		wg      sync.WaitGroup
		secrets [8]string
		errs    [8]error
	)
	for i := range secrets {
		wg.Go(func() { secrets[i], errs[i] = EnsureSecret(path) })
	}
	wg.Wait()
	for i := range secrets {
		if errs[i] != nil || secrets[i] != secrets[0] || !ValidSecret(secrets[i]) {
			t.Fatalf("EnsureSecret #%d = %q, %v; want the one secret %q", i, secrets[i], errs[i], secrets[0])
		}
	}
	fi, _ := os.Stat(path)
	di, _ := os.Stat(filepath.Dir(path))
	if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Errorf("secret mode %v in a directory of mode %v, want 0600 in 0700", fi.Mode(), di.Mode())
	}
	if again, err := LoadSecret(path); err != nil || again != secrets[0] {
		t.Errorf("LoadSecret = %q, %v; want %q", again, err, secrets[0])
	}
	// The directory holds the secret and nothing else: no temporary file
	// of the eight writers is left, whatever its name.
	if ents, err := os.ReadDir(filepath.Dir(path)); err != nil || len(ents) != 1 || ents[0].Name() != SecretFileName {
		t.Errorf("the secret's directory holds %v (%v), want only %s", ents, err, SecretFileName)
	}
	if _, err := SecretPath(func(string) string { return "" }); !errors.Is(err, ErrNoSecret) {
		t.Errorf("SecretPath without HOME = %v, want ErrNoSecret", err)
	}
}

// TestLoadSecretRefuses: a secret file others could read, a symbolic link
// or a file of the wrong form is a *SecretError, never a secret.
func TestLoadSecretRefuses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "winx")
	os.Mkdir(dir, 0o700)
	good := NewSecret()
	cases := map[string]func(path string){
		"readable by others": func(p string) { os.WriteFile(p, []byte(good), 0o644) },
		"symbolic link": func(p string) {
			target := filepath.Join(dir, "target")
			os.WriteFile(target, []byte(good), 0o600)
			os.Symlink(target, p)
		},
		"not a secret": func(p string) { os.WriteFile(p, []byte("short"), 0o600) },
		"a directory":  func(p string) { os.Mkdir(p, 0o700) },
	}
	for name, make := range cases {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		make(path)
		s, err := LoadSecret(path)
		var se *SecretError
		if !errors.As(err, &se) || !errors.Is(err, ErrNoSecret) || s != "" {
			t.Errorf("LoadSecret(%s) = %q, %v; want a *SecretError", name, s, err)
		}
	}
	// A directory others may enter is tightened to 0700.
	os.Chmod(dir, 0o755)
	path := filepath.Join(dir, SecretFileName)
	os.WriteFile(path, []byte(good), 0o600)
	if s, err := LoadSecret(path); err != nil || s != good {
		t.Errorf("LoadSecret in a 0755 directory = %q, %v", s, err)
	}
	if di, _ := os.Stat(dir); di.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v, want 0700", di.Mode())
	}
}
