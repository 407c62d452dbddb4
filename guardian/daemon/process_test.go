package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"winx/guardian/remote"
	"winx/guardian/wire"
	"winx/guardian/wire/hermetic"
)

// bins holds winxd and winx-guardian, built once by TestMain.
var bins string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("/tmp", "wxdt") // short and outside any TMPDIR: socket paths must fit a sockaddr_un
	if err != nil {
		panic(err)
	}
	if err := hermetic.Setup(dir); err != nil {
		panic(err)
	}
	if out, err := exec.Command("go", "build", "-o", dir+"/", "winx/cmd/winxd", "winx/cmd/winx-guardian").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	bins = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// socketDir returns a private, short socket directory and registers a
// cleanup that kills every guardian and winxd answering in it.
func socketDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "wxd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		hello := wire.NewHello(wire.RoleAdapter, wire.Build{}, nil).WithSecret(testSecret)
		f := &Fleet{Dir: dir, Hello: hello}
		live, _, _ := f.Discover(ctx)
		for _, g := range live {
			f.Close(ctx, g)
			hermetic.Kill(g.PID, false)
			hermetic.Kill(g.Status.ShellPID, true)
		}
		c := &Client{Socket: filepath.Join(dir, wire.DaemonSocketName), Hello: hello}
		// The in-process server of serve has stopped by now (its cleanup
		// runs first); a winxd a test started answers with its own pid.
		if peer, err := c.Ping(ctx); err == nil {
			hermetic.Kill(peer.PID, false)
		}
		os.RemoveAll(dir)
	})
	return dir
}

// testSecret is the wire secret of every winxd and guardian of the tests.
var testSecret = wire.NewSecret()

// writeSecret stores testSecret as the wire secret of the installation
// whose XDG_STATE_HOME is state, so a winxd started there uses it.
func writeSecret(t *testing.T, state string) {
	t.Helper()
	dir := filepath.Join(state, "winx")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, wire.SecretFileName), []byte(testSecret), 0o600); err != nil {
		t.Fatal(err)
	}
}

func testEnv(t *testing.T) []string {
	return []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8"}
}

// serve runs a Server on a real socket in dir until the test ends.
func serve(t *testing.T, dir string, p Policy) (*Server, <-chan string) {
	t.Helper()
	srv, reasons, _ := serveStoppable(t, dir, p)
	return srv, reasons
}

// serveStoppable is serve that also returns a stop: it ends the server
// (as a planned stop of winxd does; guardians keep running) and returns
// once it stopped listening.
func serveStoppable(t *testing.T, dir string, p Policy) (*Server, <-chan string, func()) {
	t.Helper()
	srv := NewServer(Options{Dir: dir, GuardianBin: filepath.Join(bins, "winx-guardian"), Policy: p, Secret: testSecret})
	ln, err := wire.Listen(filepath.Join(dir, wire.DaemonSocketName))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	reasons := make(chan string, 1)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		r, _ := srv.Run(ctx, ln)
		reasons <- r
	}()
	stop := func() {
		cancel()
		<-stopped
	}
	// The server runs in this process: until it has stopped listening, a
	// cleanup that pings the socket would find this process's own pid.
	t.Cleanup(stop)
	return srv, reasons, stop
}

func TestServeEnsureDiscoverShutdown(t *testing.T) {
	dir := socketDir(t)
	_, reasons := serve(t, dir, Policy{})
	c := &Client{Socket: filepath.Join(dir, wire.DaemonSocketName), Hello: wire.NewHello(wire.RoleAdapter, wire.Build{}, nil).WithSecret(testSecret)}
	ctx := t.Context()
	work := t.TempDir()
	key := SessionKey{ExternalID: "ws_w_00000001", Principal: "p", Workspace: work}.String()
	params := &EnsureParams{Key: key, Dir: work, Workspace: work, Env: testEnv(t)}
	first, err := c.Ensure(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if !first.Spawned || first.Guardian.PID == 0 || first.Guardian.Status.ShellPID == 0 || first.Guardian.Status.Key != key {
		t.Fatalf("first Ensure = %+v", first)
	}
	again, err := c.Ensure(ctx, params)
	if err != nil || again.Spawned || again.Guardian.PID != first.Guardian.PID {
		t.Fatalf("second Ensure = %+v, %v; want the same guardian", again, err)
	}
	lr, peer, err := c.List(ctx)
	if err != nil || len(lr.Guardians) != 1 || peer.Role != wire.RoleDaemon {
		t.Fatalf("List = %+v (peer %s), %v", lr, peer.Role, err)
	}
	if k, ok := lr.Guardians[0].Session(); !ok || k.Workspace != work {
		t.Errorf("listed session key = %+v, %v", k, ok)
	}
	if _, err := c.Ensure(ctx, &EnsureParams{Key: "k", Dir: "relative"}); err == nil {
		t.Errorf("Ensure with a relative dir succeeded")
	}

	// A planned shutdown stops winxd and leaves the guardian running.
	if _, err := c.Shutdown(ctx, "test"); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-reasons:
		if !strings.Contains(r, "shutdown requested: test") {
			t.Errorf("Run stopped with %q", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("winxd did not stop")
	}
	if _, err := c.Ping(ctx); !errors.Is(err, wire.ErrNoServer) {
		t.Errorf("after shutdown the daemon socket answers: %v", err)
	}
	f := &Fleet{Dir: dir, Hello: c.Hello}
	if g, err := f.Probe(ctx, first.Guardian.Socket); err != nil || g.PID != first.Guardian.PID {
		t.Errorf("after winxd stopped the guardian = %+v, %v; want it still running", g, err)
	}
}

func TestStaleSocketReplaced(t *testing.T) {
	dir := socketDir(t)
	srv, _ := serve(t, dir, Policy{})
	ctx := t.Context()
	work := t.TempDir()
	params := &EnsureParams{Key: "stale-key", Dir: work, Env: testEnv(t)}
	first, err := srv.Ensure(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(first.Guardian.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	f := &Fleet{Dir: dir, Hello: srv.Hello().WithSecret(testSecret)}
	var bad []Unreachable
	for range 200 {
		var live []Guardian
		live, bad, err = f.Discover(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(live) == 0 && len(bad) == 1 && bad[0].Stale {
			break // the kernel closed its listening socket
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(bad) != 1 || !bad[0].Stale || bad[0].Socket != first.Guardian.Socket {
		t.Fatalf("after SIGKILL discovery reports %+v, want the socket stale", bad)
	}
	second, err := srv.Ensure(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if !second.Spawned || second.Guardian.PID == first.Guardian.PID || second.Guardian.Socket != first.Guardian.Socket {
		t.Errorf("Ensure over a stale socket = %+v, want a new guardian on the same socket", second)
	}
}

func TestRealQuotaAndSweep(t *testing.T) {
	dir := socketDir(t)
	srv, _ := serve(t, dir, Policy{Max: 1})
	ctx := t.Context()
	work := t.TempDir()
	a, err := srv.Ensure(ctx, &EnsureParams{Key: "a", Dir: work, Env: testEnv(t)})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := remote.Attach(ctx, a.Guardian.Socket, &remote.ClientOptions{Secret: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Run(ctx, "true", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	_, err = srv.Ensure(ctx, &EnsureParams{Key: "b", Dir: work, Env: testEnv(t)})
	if !errors.Is(err, ErrQuota) {
		t.Fatalf("Ensure past a used guardian at quota 1 = %v, want ErrQuota", err)
	}
	// Nothing is expired yet: the real sweep leaves the used guardian.
	ended, err := srv.Sweep(ctx)
	if err != nil || len(ended) != 0 {
		t.Fatalf("Sweep = %v, %v; want nothing ended", ended, err)
	}
	zero := time.Duration(0)
	ended, err = Prune(ctx, &Fleet{Dir: dir, Hello: srv.Hello().WithSecret(testSecret)}, Policy{}, time.Now(), &zero)
	if err != nil || len(ended) != 1 {
		t.Fatalf("Prune(0) = %v, %v; want the idle guardian ended", ended, err)
	}
	if _, err := srv.Ensure(ctx, &EnsureParams{Key: "b", Dir: work, Env: testEnv(t)}); err != nil {
		t.Errorf("Ensure after the prune: %v", err)
	}
}

func TestConnectStartsWinxd(t *testing.T) {
	dir := socketDir(t)
	state := t.TempDir()
	writeSecret(t, state)
	socket := filepath.Join(dir, wire.DaemonSocketName)
	hello := wire.NewHello(wire.RoleAdapter, wire.Build{}, nil).WithSecret(testSecret)
	env := append(testEnv(t), "XDG_STATE_HOME="+state, "WINX_GUARDIAN_BIN="+filepath.Join(bins, "winx-guardian"))
	so := &StartOptions{Bin: filepath.Join(bins, "winxd"), Env: env}
	c, peer, err := Connect(t.Context(), socket, hello, so)
	if err != nil {
		t.Fatal(err)
	}
	if peer.Role != wire.RoleDaemon || peer.PID == 0 {
		t.Fatalf("Connect peer = %+v", peer)
	}
	// A second Connect finds the running one.
	_, peer2, err := Connect(t.Context(), socket, hello, so)
	if err != nil || peer2.PID != peer.PID {
		t.Errorf("second Connect = pid %d, %v; want pid %d", peer2.PID, err, peer.PID)
	}
	rec, err := ReadExitRecord(filepath.Join(state, "winx"))
	if err != nil || rec.State != StateRunning || rec.PID != peer.PID {
		t.Errorf("exit record while running = %+v, %v", rec, err)
	}
	if _, err := c.Shutdown(t.Context(), "test over"); err != nil {
		t.Fatal(err)
	}
	for range 500 {
		if rec, err = ReadExitRecord(filepath.Join(state, "winx")); err == nil && rec.State == StateExited {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if rec.State != StateExited || !strings.Contains(rec.Reason, "test over") {
		t.Errorf("exit record after shutdown = %+v", rec)
	}
	if fi, err := os.Stat(filepath.Join(state, "winx", ExitFileName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("exit record file: %v, %v; want mode 0600", fi.Mode(), err)
	}
	if fi, err := os.Stat(filepath.Join(state, "winx", LogFileName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("log file: %v; want mode 0600", err)
	}
}

// TestRealPrincipalShare is the starvation attack with real guardians: at
// WINX_MAX_GUARDIANS=3 one principal opens and uses sessions until refused;
// another principal must still get one.
func TestRealPrincipalShare(t *testing.T) {
	dir := socketDir(t)
	srv, _ := serve(t, dir, Policy{Max: 3})
	ctx := t.Context()
	key := func(principal, name string) string {
		return SessionKey{ExternalID: name, Principal: principal, Workspace: "/w/" + name}.String()
	}
	work := t.TempDir()
	held := 0
	for i := range 3 {
		res, err := srv.Ensure(ctx, &EnsureParams{Key: key("alice", fmt.Sprint("a", i)), Dir: work, Env: testEnv(t)})
		if err != nil {
			var qe *QuotaError
			if !errors.As(err, &qe) || qe.Share != 2 {
				t.Fatalf("alice's session %d = %v, want a refusal at her share of 2", i, err)
			}
			break
		}
		held++
		rs, err := remote.Attach(ctx, res.Guardian.Socket, &remote.ClientOptions{Secret: testSecret})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rs.Run(ctx, "true", 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if held != 2 {
		t.Fatalf("alice holds %d used guardians at quota 3, want her share of 2", held)
	}
	if _, err := srv.Ensure(ctx, &EnsureParams{Key: key("bob", "b0"), Dir: work, Env: testEnv(t)}); err != nil {
		t.Errorf("bob's first session with alice at her share = %v, want it started", err)
	}
}
