package wire

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"winx/jsonrpc"
)

// childEnv switches the test binary into the foreign-uid client of
// TestForeignUIDRejected.
const childEnv = "WINX_WIRE_TEST_CHILD_DIAL"

func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		os.Exit(childDial(path))
	}
	if mode := os.Getenv(admitChildEnv); mode != "" {
		os.Exit(admitChild(mode))
	}
	os.Exit(m.Run())
}

// childDial connects as whatever uid it runs as, sends a hello frame and
// reports what came back: exit 0 when the server closed without answering.
func childDial(path string) int {
	c, err := net.Dial("unix", path)
	if err != nil {
		os.Stderr.WriteString("dial: " + err.Error() + "\n")
		return 3
	}
	defer c.Close()
	writeFrame(c, []byte(`{"jsonrpc":"2.0","id":1,"method":"hello","params":{"protocol":{"major":1,"minor":0},"role":"adapter"}}`))
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	// Closed unread, the connection may end in a reset rather than EOF.
	b, err := io.ReadAll(c)
	if len(b) > 0 || (err != nil && !errors.Is(err, syscall.ECONNRESET)) {
		fmt.Fprintf(os.Stderr, "server answered a foreign uid: %q, %v\n", b, err)
		return 4
	}
	return 0
}

func writeFrame(w io.Writer, p []byte) error {
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(p)))
	_, err := w.Write(append(hdr[:], p...))
	return err
}

func readFrame(t *testing.T, r io.Reader) []byte {
	t.Helper()
	b, err := jsonrpc.NewLengthReader(r, 0).ReadFrame()
	if err != nil {
		t.Fatalf("read frame: %v", err)
	}
	return b
}

// shortDir is a private directory with a path short enough for sockets.
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "wxw")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

type testServer struct {
	path    string
	mu      sync.Mutex
	rejects []error
}

func (s *testServer) onReject(err error) {
	s.mu.Lock()
	s.rejects = append(s.rejects, err)
	s.mu.Unlock()
}

func (s *testServer) rejected() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]error(nil), s.rejects...)
}

// waitRejects waits (bounded) until n rejections were reported.
func (s *testServer) waitRejects(t *testing.T, n int) []error {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if r := s.rejected(); len(r) >= n {
			return r
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("got %d rejections, want %d", len(s.rejected()), n)
	return nil
}

// startServer serves an echo method in dir until the test ends.
func startServer(t *testing.T, dir string) *testServer {
	t.Helper()
	return startAdmitServer(t, dir, nil)
}

// startAdmitServer is startServer judging its callers with admit.
func startAdmitServer(t *testing.T, dir string, admit AdmitFunc) *testServer {
	t.Helper()
	ts := &testServer{path: filepath.Join(dir, "s.sock")}
	ln, err := Listen(ts.path)
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	h := jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (json.RawMessage, error) {
		if req.Method != "echo" {
			return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "no")
		}
		p, _ := PeerFrom(ctx)
		if p.Hello.Role == "" || p.Cred.UID != os.Getuid() {
			return nil, errors.New("handler ran without a peer")
		}
		return req.Params, nil
	})
	go func() {
		Serve(ctx, ln, NewHello(RoleGuardian, Build{Module: "winx"}, []string{"echo"}), h, &ServeOptions{OnReject: ts.onReject, Secret: testSecret, Admit: admit})
		close(done)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return ts
}

// echo dials, says hello and calls echo, proving the server still serves.
func echo(t *testing.T, path string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Dial(ctx, path, NewHello(RoleAdapter, Build{}, nil).WithSecret(testSecret))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	var got []int
	if err := c.Call(ctx, "echo", []int{1, 2}, &got); err != nil || len(got) != 2 {
		t.Fatalf("echo = %v, %v; want [1 2]", got, err)
	}
	if !c.Peer().Has("echo") || c.Peer().Role != RoleGuardian {
		t.Errorf("peer hello = %+v", c.Peer())
	}
}

func TestResolve(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	tests := []struct {
		name       string
		getenv     func(string) string
		wantDir    string
		wantDaemon string
		wantErr    bool
	}{
		{"WINX_SOCKET wins", env("WINX_SOCKET", "/srv/w/d.sock", "XDG_RUNTIME_DIR", "/x"), "/srv/w", "/srv/w/d.sock", false},
		{"WINX_SOCKET relative", env("WINX_SOCKET", "d.sock"), "", "", true},
		{"XDG", env("XDG_RUNTIME_DIR", "/run/x"), "/run/x/winx", "/run/x/winx/winxd.sock", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Resolve(tt.getenv)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Resolve err = %v, want error %v", err, tt.wantErr)
			}
			if p.Dir != tt.wantDir || p.Daemon != tt.wantDaemon {
				t.Errorf("Resolve = %+v, want dir %q daemon %q", p, tt.wantDir, tt.wantDaemon)
			}
		})
	}
	// Without XDG the fallback is /run/user/<uid> when it exists, else a
	// per-uid directory under TMPDIR.
	p, err := Resolve(env("XDG_RUNTIME_DIR", "relative", "TMPDIR", "/var/tmpx"))
	if err != nil {
		t.Fatal(err)
	}
	uid := os.Getuid()
	want := filepath.Join("/var/tmpx", "winx-"+itoa(uid))
	if fi, err := os.Stat(filepath.Join("/run/user", itoa(uid))); err == nil && fi.IsDir() {
		want = filepath.Join("/run/user", itoa(uid), "winx")
	}
	if p.Dir != want {
		t.Errorf("fallback dir = %q, want %q", p.Dir, want)
	}
	if a, b := GuardianSocket("/d", "k1"), GuardianSocket("/d", "k2"); a == b || !strings.HasPrefix(a, "/d/g-") || strings.Contains(a, "k1") {
		t.Errorf("GuardianSocket = %q, %q", a, b)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestCheckDir(t *testing.T) {
	base := shortDir(t)
	mk := func(name string, mode os.FileMode) string {
		p := filepath.Join(base, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	private := mk("private", 0o700)
	reachable := mk("reachable", 0o755)
	groupW := mk("groupw", 0o770)
	worldW := mk("worldw", 0o707)
	link := filepath.Join(base, "link")
	os.Symlink(private, link)
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o600)
	foreign := mk("foreign", 0o700)
	chownErr := os.Chown(foreign, 65534, 65534)

	tests := []struct {
		dir  string
		safe bool
	}{
		{private, true}, {reachable, true}, {groupW, false}, {worldW, false}, {link, false}, {file, false},
		{filepath.Join(base, "missing"), false},
	}
	if chownErr == nil {
		tests = append(tests, struct {
			dir  string
			safe bool
		}{foreign, false})
	}
	for _, tt := range tests {
		err := CheckDir(tt.dir)
		if (err == nil) != tt.safe {
			t.Errorf("CheckDir(%s) = %v, want safe %v", filepath.Base(tt.dir), err, tt.safe)
		}
		if err != nil && !errors.Is(err, ErrUnsafeDir) {
			t.Errorf("CheckDir(%s) = %v, not ErrUnsafeDir", filepath.Base(tt.dir), err)
		}
	}
	if err := EnsureDir(filepath.Join(base, "new")); err != nil {
		t.Fatalf("EnsureDir: %v", err)
	}
	if fi, _ := os.Stat(filepath.Join(base, "new")); fi.Mode().Perm() != 0o700 {
		t.Errorf("EnsureDir mode = %v, want 0700", fi.Mode().Perm())
	}
}

func TestListenStaleAndLive(t *testing.T) {
	dir := shortDir(t)
	path := filepath.Join(dir, "g.sock")

	// A socket file left by a dead process: nobody accepts on it.
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("stale socket missing: %v", err)
	}
	alive, err := Probe(context.Background(), path)
	if err != nil || alive {
		t.Fatalf("Probe(stale) = %v, %v; want false, nil", alive, err)
	}

	live, err := Listen(path)
	if err != nil {
		t.Fatalf("Listen over a stale socket: %v", err)
	}
	defer live.Close()
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	if _, err := Listen(path); !errors.Is(err, ErrInUse) {
		t.Errorf("Listen over a live socket = %v, want ErrInUse", err)
	}
	if _, err := os.Lstat(path); err != nil {
		t.Errorf("the live socket was removed: %v", err)
	}

	file := filepath.Join(dir, "f.sock")
	os.WriteFile(file, []byte("keep"), 0o600)
	if _, err := Listen(file); !errors.Is(err, ErrNotSocket) {
		t.Errorf("Listen over a regular file = %v, want ErrNotSocket", err)
	}
	if b, _ := os.ReadFile(file); string(b) != "keep" {
		t.Errorf("the regular file was touched")
	}

	long := filepath.Join(dir, strings.Repeat("x", 120)+".sock")
	if _, err := Listen(long); !errors.Is(err, ErrPathTooLong) {
		t.Errorf("Listen(long) = %v, want ErrPathTooLong", err)
	}

	bad := filepath.Join(dir, "open")
	os.Mkdir(bad, 0o777)
	os.Chmod(bad, 0o777)
	if _, err := Listen(filepath.Join(bad, "s.sock")); !errors.Is(err, ErrUnsafeDir) {
		t.Errorf("Listen in a world-writable dir = %v, want ErrUnsafeDir", err)
	}
}

func TestDialNoServer(t *testing.T) {
	dir := shortDir(t)
	_, err := Dial(context.Background(), filepath.Join(dir, "none.sock"), NewHello(RoleAdapter, Build{}, nil))
	var de *DialError
	if !errors.As(err, &de) || !errors.Is(err, ErrNoServer) {
		t.Errorf("Dial(missing) = %v, want *DialError wrapping ErrNoServer", err)
	}
}

func TestHelloVersionMismatch(t *testing.T) {
	ts := startServer(t, shortDir(t))
	h := NewHello(RoleAdapter, Build{}, nil).WithSecret(testSecret)
	h.Protocol = Version{Major: ProtocolMajor + 1, Minor: 0}
	_, err := Dial(context.Background(), ts.path, h)
	var ve *VersionError
	if !errors.As(err, &ve) || !errors.Is(err, ErrVersionMismatch) {
		t.Fatalf("Dial with major %d = %v, want *VersionError", h.Protocol.Major, err)
	}
	if ve.Peer.Major != ProtocolMajor {
		t.Errorf("VersionError.Peer = %v, want major %d", ve.Peer, ProtocolMajor)
	}
	// A newer minor is fine: both use the smaller.
	h.Protocol = Version{Major: ProtocolMajor, Minor: ProtocolMinor + 3}
	c, err := Dial(context.Background(), ts.path, h)
	if err != nil {
		t.Fatalf("Dial with a newer minor: %v", err)
	}
	if c.Version() != Current() {
		t.Errorf("negotiated %v, want %v", c.Version(), Current())
	}
	c.Close()
	echo(t, ts.path)
}

// rawConn is a connection that speaks frames by hand.
func rawConn(t *testing.T, path string) net.Conn {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return c
}

func response(t *testing.T, b []byte) *jsonrpc.Response {
	t.Helper()
	m, err := jsonrpc.DecodeMessage(b)
	if err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	r, ok := m.(*jsonrpc.Response)
	if !ok {
		t.Fatalf("got %s, want a response", b)
	}
	return r
}

func TestCallBeforeHello(t *testing.T) {
	ts := startServer(t, shortDir(t))
	c := rawConn(t, ts.path)
	writeFrame(c, []byte(`{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]}`))
	r := response(t, readFrame(t, c))
	if r.Error == nil || r.Error.Code != CodeHelloRequired {
		t.Fatalf("call before hello = %+v, want code %d", r, CodeHelloRequired)
	}
	echo(t, ts.path)
}

// testSecret is the wire secret of every test server.
var testSecret = NewSecret()

var helloFrame = `{"jsonrpc":"2.0","id":"h","method":"hello","params":{"protocol":{"major":1,"minor":0},"role":"adapter","secret":"` + testSecret + `"}}`

func TestMalformedFrame(t *testing.T) {
	ts := startServer(t, shortDir(t))
	c := rawConn(t, ts.path)
	writeFrame(c, []byte(helloFrame))
	if r := response(t, readFrame(t, c)); r.Error != nil {
		t.Fatalf("hello: %v", r.Error)
	}
	writeFrame(c, []byte(`{"jsonrpc":"2.0","id":2,"method":`))
	r := response(t, readFrame(t, c))
	if r.Error == nil || r.Error.Code != jsonrpc.CodeParseError {
		t.Fatalf("malformed frame answer = %+v, want a parse error", r)
	}
	// The same connection still answers.
	writeFrame(c, []byte(`{"jsonrpc":"2.0","id":3,"method":"echo","params":[7]}`))
	if r := response(t, readFrame(t, c)); r.Error != nil || string(r.Result) != "[7]" {
		t.Fatalf("echo after a malformed frame = %+v", r)
	}
	echo(t, ts.path)
}

func TestOversizeFrame(t *testing.T) {
	ts := startServer(t, shortDir(t))
	c := rawConn(t, ts.path)
	writeFrame(c, []byte(helloFrame))
	readFrame(t, c)
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], jsonrpc.MaxFrameSize+1)
	c.Write(hdr[:])
	c.Write(bytes.Repeat([]byte("x"), 1024))
	if b, err := io.ReadAll(c); len(b) != 0 || (err != nil && !errors.Is(err, syscall.ECONNRESET)) {
		t.Fatalf("after an oversize frame read %q, %v; want the connection closed", b, err)
	}
	rej := ts.waitRejects(t, 1)
	if !errors.Is(rej[0], jsonrpc.ErrFrameTooLarge) {
		t.Errorf("rejection = %v, want ErrFrameTooLarge", rej[0])
	}
	echo(t, ts.path)
}

func TestForeignUIDRejected(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to run a client as another uid")
	}
	// A directory another uid can reach, made so on purpose: the uid
	// check is what must stop the peer.
	dir := shortDir(t)
	os.Chmod(dir, 0o711)
	ts := startServer(t, dir)
	os.Chmod(ts.path, 0o666)

	// The test binary lives in a private build directory; the child runs
	// a copy the other uid can execute.
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	child := filepath.Join(dir, "child.test")
	if err := os.WriteFile(child, self, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(child, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+ts.path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("foreign client: %v\n%s", err, out)
	}
	rej := ts.waitRejects(t, 1)
	var pe *PeerError
	if !errors.As(rej[0], &pe) || pe.UID != 65534 {
		t.Fatalf("rejection = %v, want *PeerError for uid 65534", rej[0])
	}
	echo(t, ts.path)
}
