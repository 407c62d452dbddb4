package remote

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"winx/guardian"
	"winx/guardian/wire"
	"winx/guardian/wire/hermetic"
	"winx/jsonrpc"
)

func TestRunAndAttachAfterRestart(t *testing.T) {
	p, _ := spawn(t)
	ctx := ctxT(t)
	r1, err := Attach(ctx, p.Socket, &ClientOptions{Secret: testSecret, Meta: []byte(`{"mode":"wcgw"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if peer := r1.Peer(); peer.Role != wire.RoleGuardian || peer.PID != p.PID || peer.Epoch == "" || !peer.Has(MethodRun) {
		t.Fatalf("guardian hello = %+v", peer)
	}
	o, err := r1.Run(ctx, "cd /tmp && echo hi", 10*time.Second)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if o.Running || o.ExitCode != 0 || o.Output.Text != "hi" || o.Cwd != "/tmp" {
		t.Fatalf("Run(echo hi) = %+v", o)
	}
	o, err = r1.Run(ctx, "printf 'one\\n'; sleep 0.5; printf 'two\\n'; sleep 30", 300*time.Millisecond)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	gen := o.Generation
	if !o.Running || !strings.Contains(o.Output.Text, "one") || strings.Contains(o.Output.Text, "two") {
		t.Fatalf("first look = %+v, want running with only 'one'", o)
	}

	// The adapter "restarts": a new client attaches and learns everything
	// from the guardian.
	var snap Snapshot
	ok := eventually(10*time.Second, func() bool {
		r2 := attach(t, p.Socket)
		snap = r2.Snapshot()
		return snap.Foreground != nil && strings.Contains(snap.Foreground.Output.Text, "two")
	})
	if !ok {
		t.Fatalf("snapshot never showed the unread output: %+v", snap)
	}
	fg := snap.Foreground
	if snap.Cwd != "/tmp" || !snap.Running || snap.Generation != gen || fg.Generation != gen ||
		!strings.Contains(snap.Command, "sleep 30") || strings.Contains(fg.Output.Text, "one") {
		t.Fatalf("snapshot = %+v, foreground %+v", snap, fg)
	}
	if !snap.EverRanCommand || snap.LastCommand.IsZero() || snap.LastActivity.Before(snap.Created) {
		t.Errorf("clocks = created %v activity %v command %v ran %v", snap.Created, snap.LastActivity, snap.LastCommand, snap.EverRanCommand)
	}
	r2, err := Attach(ctx, p.Socket, &ClientOptions{Secret: testSecret, Meta: []byte(`{"mode":"architect"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if m := string(r2.Snapshot().Meta); m != `{"mode":"wcgw"}` {
		t.Errorf("meta = %s, want the first attach's", m)
	}
	if r2.Generation() != gen {
		t.Fatalf("attached client knows generation %d, want %d", r2.Generation(), gen)
	}
	// The snapshot's text stays pending until a poll delivers it.
	o, err = r2.Poll(ctx, 0, 0)
	if err != nil || !strings.Contains(o.Output.Text, "two") {
		t.Fatalf("Poll after attach = %+v, %v; want 'two'", o, err)
	}
	o, err = r2.Poll(ctx, 0, 0)
	if err != nil || o.Output.Text != "" {
		t.Fatalf("second Poll = %+v, %v; want nothing new", o, err)
	}
	o, err = r2.Cancel(ctx, gen, 5*time.Second)
	if err != nil || o.Running || o.ExitCode != 130 {
		t.Fatalf("Cancel = %+v, %v; want exit 130", o, err)
	}
	if !r2.Healthy(t.Context()) || r2.Cwd(t.Context()) != "/tmp" || r2.PID(t.Context()) == 0 {
		t.Errorf("Healthy %v Cwd %q PID %d", r2.Healthy(t.Context()), r2.Cwd(t.Context()), r2.PID(t.Context()))
	}
}

// An answer the client never acknowledged is delivered again.
func TestUnacknowledgedOutputIsRedelivered(t *testing.T) {
	p, _ := spawn(t)
	ctx := ctxT(t)
	r := attach(t, p.Socket)
	// After the typed line the command reads again: a foreground read of
	// the terminal answers at once, so the waits below are bounds, not
	// the clock the test relies on.
	o, err := r.Run(ctx, "echo first; read x; echo got:$x; read y; sleep 30", 500*time.Millisecond)
	if err != nil || !o.Running {
		t.Fatalf("Run = %+v, %v", o, err)
	}
	if _, err := r.Run(ctx, "echo x", 0); !errors.Is(err, guardian.ErrCommandRunning) {
		t.Fatalf("second Run = %v, want ErrCommandRunning", err)
	}
	// A client that reads an answer and dies before acknowledging it.
	c, err := wire.Dial(ctx, p.Socket, wire.NewHello(wire.RoleAdapter, wire.Build{}, nil).WithSecret(testSecret))
	if err != nil {
		t.Fatal(err)
	}
	var lost Outcome
	err = c.Call(ctx, MethodSendText, &sendTextParams{Generation: o.Generation, Text: "typed", Submit: true, WaitMS: 20000}, &lost)
	c.Close()
	if err != nil || !strings.Contains(lost.Output.Text, "got:typed") || lost.Seq == 0 {
		t.Fatalf("send_text = %+v, %v", lost, err)
	}
	o, err = r.Poll(ctx, 0, 0)
	if err != nil || !strings.Contains(o.Output.Text, "got:typed") || strings.Contains(o.Output.Text, "first") {
		t.Fatalf("Poll = %+v, %v; want the unacknowledged text again, and only it", o, err)
	}
	o, err = r.Poll(ctx, 0, 0)
	if err != nil || strings.Contains(o.Output.Text, "got:typed") {
		t.Fatalf("Poll after ack = %+v, %v; want it delivered once more only", o, err)
	}
}

func TestGuardianKilled(t *testing.T) {
	p, _ := spawn(t)
	ctx := ctxT(t)
	r, other := attach(t, p.Socket), attach(t, p.Socket)
	shell := r.PID(t.Context())
	if !r.Healthy(t.Context()) {
		t.Fatal("a fresh guardian is not healthy")
	}
	syscall.Kill(p.PID, syscall.SIGKILL)
	<-p.Done()
	_, err := r.Run(ctx, "echo hi", time.Second)
	var gone *GuardianGoneError
	if !errors.As(err, &gone) || !errors.Is(err, ErrGuardianGone) {
		t.Fatalf("Run after SIGKILL = %v, want *GuardianGoneError", err)
	}
	var lost *guardian.ShellLostError
	if !errors.As(err, &lost) || !errors.Is(err, guardian.ErrShellLost) {
		t.Fatalf("Run after SIGKILL = %v, want a *guardian.ShellLostError", err)
	}
	if r.Healthy(t.Context()) {
		t.Error("Healthy after SIGKILL = true")
	}
	if _, err := r.Poll(ctx, 0, 0); !errors.Is(err, ErrGuardianGone) {
		t.Errorf("Poll after SIGKILL = %v, want ErrGuardianGone", err)
	}
	if !eventually(10*time.Second, func() bool { return !processAlive(shell) }) {
		t.Errorf("shell %d outlived its guardian", shell)
	}
	if _, err = Attach(ctx, p.Socket, &ClientOptions{Secret: testSecret}); !errors.Is(err, ErrGuardianGone) {
		t.Errorf("Attach to the dead guardian's socket = %v, want ErrGuardianGone", err)
	}
	// A new guardian takes the stale socket over; a client of the dead
	// one does not mistake it for its session.
	p2, err := Spawn(ctx, guardianBin, Config{Secret: testSecret, Key: "again", Socket: p.Socket, Dir: t.TempDir()}, testEnv(t))
	if err != nil {
		t.Fatalf("Spawn over the stale socket: %v", err)
	}
	defer func() { syscall.Kill(p2.PID, syscall.SIGTERM); <-p2.Done() }()
	if _, err := other.Run(ctx, "echo hi", time.Second); !errors.As(err, &gone) || !gone.Replaced {
		t.Errorf("old client on a new guardian = %v, want *GuardianGoneError{Replaced: true}", err)
	}
	if o, err := attach(t, p.Socket).Run(ctx, "echo new", 10*time.Second); err != nil || o.Output.Text != "new" {
		t.Errorf("new guardian: Run = %+v, %v", o, err)
	}
}

func TestStaleGenerationCancel(t *testing.T) {
	p, _ := spawn(t)
	ctx := ctxT(t)
	r := attach(t, p.Socket)
	o, err := r.Run(ctx, "sleep 1; echo a", 10*time.Second)
	if err != nil || o.Running || o.Output.Text != "a" {
		t.Fatalf("gen N = %+v, %v", o, err)
	}
	genN := o.Generation
	o, err = r.Run(ctx, "sleep 2; echo b", 0)
	if err != nil || !o.Running || o.Generation != genN+1 {
		t.Fatalf("gen N+1 = %+v, %v", o, err)
	}
	for _, call := range []func() error{
		func() error { _, err := r.Cancel(ctx, genN, time.Second); return err },
		func() error {
			_, err := r.outcomeCall(ctx, MethodSendText, &sendTextParams{Generation: genN, Text: "x"})
			return err
		},
		func() error {
			_, err := r.outcomeCall(ctx, MethodSendKeys, &sendKeysParams{Generation: genN, Keys: []guardian.Key{"Ctrl-c"}})
			return err
		},
		func() error { _, err := r.Poll(ctx, genN, 0); return err },
	} {
		if err := call(); !errors.Is(err, ErrStaleGeneration) || !errors.Is(err, guardian.ErrNotRunning) {
			t.Fatalf("action for stale generation %d = %v, want ErrStaleGeneration", genN, err)
		}
	}
	o, err = r.Poll(ctx, genN+1, 20*time.Second)
	if err != nil || o.Running || o.ExitCode != 0 || o.Output.Text != "b" {
		t.Fatalf("gen N+1 after a stale cancel = %+v, %v; want b, exit 0", o, err)
	}
}

func TestTwoClientsRunAtOnce(t *testing.T) {
	p, _ := spawn(t)
	ctx := ctxT(t)
	a, b := attach(t, p.Socket), attach(t, p.Socket)
	for round := range 3 {
		start := make(chan struct{})
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i, c := range []*RemoteShell{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, errs[i] = c.Run(ctx, "sleep 0.5; echo x", 10*time.Second)
			}()
		}
		close(start)
		wg.Wait()
		ok, busy := 0, 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case errors.Is(err, guardian.ErrCommandRunning):
				busy++
			default:
				t.Fatalf("round %d: Run = %v", round, err)
			}
		}
		if ok != 1 || busy != 1 {
			t.Fatalf("round %d: %d successes, %d command_already_running; want 1 and 1 (%v)", round, ok, busy, errs)
		}
	}
}

func TestCancelRacingLaunch(t *testing.T) {
	p, _ := spawn(t)
	ctx := ctxT(t)
	a, b := attach(t, p.Socket), attach(t, p.Socket)
	interrupted, refused := 0, 0
	defer func() { t.Logf("%d launches interrupted, %d refused before starting", interrupted, refused) }()
	for round := range 8 {
		marker := "winx-race-" + NewLaunchID()
		id := NewLaunchID()
		delay := time.Duration(round) * 3 * time.Millisecond
		var (
			launchOut *guardian.Outcome
			launchErr error
			wg        sync.WaitGroup
		)
		wg.Add(1)
		go func() {
			defer wg.Done()
			launchOut, launchErr = a.Launch(ctx, "(exec -a "+marker+" sleep 30)", 0, id)
		}()
		time.Sleep(delay)
		co, cerr := b.CancelLaunch(ctx, id, 5*time.Second)
		wg.Wait()
		switch {
		case cerr == nil:
			if launchErr != nil || launchOut.Generation != co.Generation || co.Running {
				t.Fatalf("round %d: cancel %+v but launch %+v, %v", round, co, launchOut, launchErr)
			}
			interrupted++
		case errors.Is(cerr, ErrNoLaunch):
			if launchErr == nil {
				t.Fatalf("round %d: cancel says nothing started, launch started %+v", round, launchOut)
			}
			refused++
		default:
			t.Fatalf("round %d: CancelLaunch = %v", round, cerr)
		}
		if !eventually(3*time.Second, func() bool { return len(hermetic.Processes(marker)) == 0 }) {
			t.Fatalf("round %d: processes left running: %v", round, hermetic.Processes(marker))
		}
	}
}

// writeRaw sends one length-prefixed frame.
func writeRaw(w io.Writer, p []byte) {
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(p)))
	w.Write(append(hdr[:], p...))
}

func TestGuardianSurvivesBadPeers(t *testing.T) {
	p, _ := spawn(t)
	ctx := ctxT(t)

	// A frame announced over the limit ends that connection only.
	c, err := net.Dial("unix", p.Socket)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], jsonrpc.MaxFrameSize+1)
	c.Write(hdr[:])
	c.Write(bytes.Repeat([]byte("{"), 4096))
	if b, err := io.ReadAll(c); len(b) != 0 || (err != nil && !errors.Is(err, syscall.ECONNRESET)) {
		t.Fatalf("oversize frame: read %q, %v; want the connection closed", b, err)
	}
	c.Close()

	// Bad JSON is answered with a parse error.
	c, err = net.Dial("unix", p.Socket)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	writeRaw(c, []byte(`{"jsonrpc":"2.0","id":1,"method":"hello","params":`))
	b, err := jsonrpc.NewLengthReader(c, 0).ReadFrame()
	if err != nil || !bytes.Contains(b, []byte("-32700")) {
		t.Fatalf("malformed frame answer = %s, %v; want a parse error", b, err)
	}
	// A call before hello is refused.
	writeRaw(c, []byte(`{"jsonrpc":"2.0","id":2,"method":"session.status"}`))
	b, err = jsonrpc.NewLengthReader(c, 0).ReadFrame()
	if err != nil || !bytes.Contains(b, []byte("-32001")) {
		t.Fatalf("call before hello = %s, %v; want hello required", b, err)
	}
	c.Close()

	// Another major version is refused at hello.
	h := wire.NewHello(wire.RoleAdapter, wire.Build{}, nil).WithSecret(testSecret)
	h.Protocol.Major++
	if _, err := wire.Dial(ctx, p.Socket, h); !errors.Is(err, wire.ErrVersionMismatch) {
		t.Fatalf("hello with major %d = %v, want ErrVersionMismatch", h.Protocol.Major, err)
	}

	// The terminal or adapter that spawned it hangs up.
	syscall.Kill(p.PID, syscall.SIGHUP)

	r := attach(t, p.Socket)
	if o, err := r.Run(ctx, "echo still here", 10*time.Second); err != nil || o.Output.Text != "still here" {
		t.Fatalf("Run after bad peers = %+v, %v", o, err)
	}
}

func TestCloseEndsGuardian(t *testing.T) {
	p, _ := spawn(t)
	ctx := ctxT(t)
	r := attach(t, p.Socket)
	id, err := r.StartBackground(ctx, "echo bg-out; sleep 30")
	if err != nil {
		t.Fatalf("StartBackground: %v", err)
	}
	o, err := r.PollBackground(ctx, id, 2*time.Second)
	if err != nil || !strings.Contains(o.Output.Text, "bg-out") {
		t.Fatalf("PollBackground = %+v, %v", o, err)
	}
	st, err := r.Status(ctx)
	if err != nil || st.BackgroundRunning != 1 || len(st.Background) != 1 {
		t.Fatalf("Status = %+v, %v; want one background command running", st, err)
	}
	shell := r.PID(t.Context())
	if err := r.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the guardian did not exit after session.close")
	}
	if !p.ExitState().Success() {
		t.Errorf("guardian exit = %v, want success", p.ExitState())
	}
	if processAlive(shell) {
		t.Errorf("shell %d survived session.close", shell)
	}
	if _, err := r.Run(ctx, "true", 0); !errors.Is(err, ErrGuardianGone) {
		t.Errorf("Run after Close = %v, want ErrGuardianGone", err)
	}
}

func TestSecondGuardianForKeyRefused(t *testing.T) {
	p, _ := spawn(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := Spawn(ctx, guardianBin, Config{Secret: testSecret, Key: "dup", Socket: p.Socket, Dir: t.TempDir()}, testEnv(t))
	if !errors.Is(err, ErrSpawn) {
		t.Fatalf("second Spawn on a live socket = %v, want ErrSpawn", err)
	}
	r := attach(t, p.Socket)
	if r.Peer().PID != p.PID {
		t.Errorf("socket now served by pid %d, want %d", r.Peer().PID, p.PID)
	}
}

// TestKeyNotInCommandLine: the session key and the paths reach the guardian
// through its environment, never its arguments (readable by every local
// user), and the shell does not inherit them.
func TestKeyNotInCommandLine(t *testing.T) {
	p, work := spawn(t)
	cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.PID), "cmdline"))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"test-" + t.Name(), work, testSecret} {
		if strings.Contains(string(cmdline), secret) {
			t.Errorf("guardian command line %q shows %q", cmdline, secret)
		}
	}
	r := attach(t, p.Socket)
	o, err := r.Run(ctxT(t), "env | grep -c '^WINX_GUARDIAN_' || true", 10*time.Second)
	if err != nil || o.Running {
		t.Fatalf("run: %+v %v", o, err)
	}
	if got := strings.TrimSpace(o.Output.Text); got != "0" {
		t.Errorf("the shell inherited %s WINX_GUARDIAN_* variables", got)
	}
	// Nor the wire secret, which is not in the guardian's environment
	// block either (a confined shell could read it through /proc).
	if environ, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.PID), "environ")); err != nil || strings.Contains(string(environ), testSecret) {
		t.Errorf("guardian environment (%v) holds the wire secret", err)
	}
	o, err = r.Run(ctxT(t), "env | grep -c -e "+testSecret+" || true", 10*time.Second)
	if err != nil || o.Running {
		t.Fatalf("run: %+v %v", o, err)
	}
	if got := strings.TrimSpace(o.Output.Text); got != "0" {
		t.Errorf("the shell inherited the wire secret (%s matching variables)", got)
	}
}

// TestGuardianRequiresSecret: a guardian answers nobody whose hello lacks
// the wire secret, and does not start without one.
func TestGuardianRequiresSecret(t *testing.T) {
	p, _ := spawn(t)
	ctx := ctxT(t)
	for _, secret := range []string{"", wire.NewSecret()} {
		if _, err := wire.Dial(ctx, p.Socket, wire.NewHello(wire.RoleAdapter, wire.Build{}, nil).WithSecret(secret)); !errors.Is(err, wire.ErrUnauthenticated) {
			t.Errorf("hello with secret %q = %v, want ErrUnauthenticated", secret, err)
		}
		if _, err := Attach(ctx, p.Socket, &ClientOptions{Secret: secret}); !errors.Is(err, wire.ErrUnauthenticated) {
			t.Errorf("Attach with secret %q = %v, want ErrUnauthenticated", secret, err)
		}
	}
	_, err := Spawn(ctx, guardianBin, Config{Key: "nosecret", Socket: wire.GuardianSocket(shortDir(t), "nosecret"), Dir: t.TempDir()}, testEnv(t))
	if !errors.Is(err, ErrSpawn) {
		t.Errorf("Spawn without a secret = %v, want ErrSpawn", err)
	}
	attach(t, p.Socket)
}
