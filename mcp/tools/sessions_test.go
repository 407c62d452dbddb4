package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"winx/guardian"
	"winx/guardian/runtime"
)

// procShell is a real process standing in for a shell: sessions only need
// its PID, cwd, health, record and teardown, and a real process makes PIDs
// and kills real. The terminal methods sessions never call are left to the
// nil embedded interface.
type procShell struct {
	guardian.Terminal
	cmd  *exec.Cmd
	dir  string
	env  []string
	done chan struct{} // closed when the process was reaped
	once sync.Once
}

var _ guardian.Terminal = (*procShell)(nil)

func startProcShell(ctx context.Context, dir string, env []string) (*procShell, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cmd := exec.Command("sleep", "1000") // not CommandContext: a shell outlives its start
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &procShell{cmd: cmd, dir: dir, env: env, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func (p *procShell) PID(context.Context) int    { return p.cmd.Process.Pid }
func (p *procShell) Cwd(context.Context) string { return p.dir }

func (p *procShell) Meta(context.Context) json.RawMessage           { return nil }
func (p *procShell) SetMeta(context.Context, json.RawMessage) error { return nil }
func (p *procShell) Release(context.Context) error                  { return p.Close() }

func (p *procShell) Close() error {
	p.once.Do(func() { p.cmd.Process.Kill() })
	<-p.done
	return nil
}

func (p *procShell) Healthy(context.Context) bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// testClock is a settable clock for the reset interval.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// countingFactory starts procShells and counts the starts.
type countingFactory struct {
	starts atomic.Int64
	fail   atomic.Bool
}

var errFactory = errors.New("test: shell start refused")

func (f *countingFactory) start(ctx context.Context, spec runtime.Spec) (*runtime.Started, error) {
	if f.fail.Load() {
		return nil, errFactory
	}
	f.starts.Add(1)
	p, err := startProcShell(ctx, spec.Dir, spec.Env)
	if err != nil {
		return nil, err
	}
	return &runtime.Started{Terminal: p}, nil
}

func newTestSessions(t *testing.T) (*Sessions, *countingFactory, *testClock) {
	t.Helper()
	f := &countingFactory{}
	clock := &testClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	s := NewSessions(f.start, clock.now)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s, f, clock
}

func TestAttachSameKeySharesShell(t *testing.T) {
	s, f, _ := newTestSessions(t)
	root := canon(t, t.TempDir())
	a, created, err := s.Attach(context.Background(), "alice", root, Mode{}, "", false)
	if err != nil || !created {
		t.Fatalf("first Attach = %v, created %v; want a new session", err, created)
	}
	b, created, err := s.Attach(context.Background(), "alice", root, Mode{}, "", false)
	if err != nil || created {
		t.Fatalf("second Attach = %v, created %v; want the same session", err, created)
	}
	if a != b || a.Shell().PID(t.Context()) != b.Shell().PID(t.Context()) || f.starts.Load() != 1 {
		t.Errorf("same key gave sessions %p/%p, PIDs %d/%d, %d shell starts; want one", a, b, a.Shell().PID(t.Context()), b.Shell().PID(t.Context()), f.starts.Load())
	}
	if a.Key != sessionKey("alice", root) || a.ExternalID != ExternalSessionID("alice", root) ||
		a.TempDir != TempArtifactDir(root, a.Key) || a.Mode().Name != ModeWCGW {
		t.Errorf("session fields = %+v, mode %q", a, a.Mode().Name)
	}
	sh := a.Shell().(*procShell)
	if sh.dir != root || !slices.Contains(sh.env, "WINX_WORKSPACE_ROOT="+root) || !slices.Contains(sh.env, "WINX_TEMP_DIR="+a.TempDir) {
		t.Errorf("shell started in %q with env %q", sh.dir, sh.env)
	}
}

func TestAttachConcurrentStartsOneShell(t *testing.T) {
	s, f, _ := newTestSessions(t)
	root := canon(t, t.TempDir())
	const n = 8
	var wg sync.WaitGroup
	got := make([]*Session, n)
	created := make([]bool, n)
	for i := range n {
		wg.Go(func() {
			var err error
			got[i], created[i], err = s.Attach(context.Background(), "", root, Mode{}, "", false)
			if err != nil {
				t.Errorf("Attach: %v", err)
			}
		})
	}
	wg.Wait()
	if f.starts.Load() != 1 {
		t.Errorf("%d concurrent Attach calls started %d shells, want 1", n, f.starts.Load())
	}
	news := 0
	for i := range n {
		if got[i] != got[0] {
			t.Errorf("Attach %d returned another session", i)
		}
		if created[i] {
			news++
		}
	}
	if news != 1 {
		t.Errorf("%d calls report created, want 1", news)
	}
}

func TestAttachPrincipalsAndThreads(t *testing.T) {
	s, _, _ := newTestSessions(t)
	rootA, rootB := canon(t, t.TempDir()), canon(t, t.TempDir())
	ctx := context.Background()

	alice, _, err := s.Attach(ctx, "alice", rootA, Mode{}, "conv-1", false)
	if err != nil {
		t.Fatal(err)
	}
	bob, _, err := s.Attach(ctx, "bob", rootA, Mode{}, "conv-1", false)
	if err != nil {
		t.Fatal(err)
	}
	if alice == bob || alice.Shell().PID(t.Context()) == bob.Shell().PID(t.Context()) || alice.TempDir == bob.TempDir {
		t.Fatal("two principals share a session for one workspace and thread id")
	}
	if got, err := s.ByThread("alice", "conv-1"); err != nil || got != alice {
		t.Errorf(`ByThread("alice", "conv-1") = %v, %v; want alice's session`, got, err)
	}
	if got, err := s.ByThread("bob", "conv-1"); err != nil || got != bob {
		t.Errorf(`ByThread("bob", "conv-1") = %v, %v; want bob's session`, got, err)
	}
	if _, err := s.ByThread("alice", "conv1"); !errors.Is(err, ErrNotInitialized) {
		t.Errorf(`ByThread("alice", "conv1") error = %v; "conv1" is not "conv-1"`, err)
	}
	if _, err := s.ByThread("carol", "conv-1"); !errors.Is(err, ErrNotInitialized) {
		t.Errorf(`ByThread("carol", "conv-1") error = %v, want ErrNotInitialized`, err)
	}

	// The bound thread cannot silently move to another workspace.
	_, _, err = s.Attach(ctx, "alice", rootB, Mode{}, "conv-1", false)
	var be *ThreadBindingError
	if !errors.Is(err, ErrWorkspaceAlreadyBound) || !errors.As(err, &be) || be.Bound != rootA || be.Given != rootB {
		t.Fatalf("Attach of a bound thread elsewhere = %v, want ErrWorkspaceAlreadyBound from %s", err, rootA)
	}
	moved, created, err := s.ChangeWorkspace(ctx, "alice", rootB, Mode{}, "conv-1", false)
	if err != nil || !created || moved.Root != rootB {
		t.Fatalf("ChangeWorkspace = %v, %v, %v; want a new session in %s", moved, created, err, rootB)
	}
	if got, _ := s.ByThread("alice", "conv-1"); got != moved {
		t.Error("the thread did not move to the new workspace")
	}
	if !alice.Shell().(*procShell).Healthy(t.Context()) {
		t.Error("the old workspace's shell was stopped by a thread moving away")
	}
}

func TestLookup(t *testing.T) {
	s, _, _ := newTestSessions(t)
	base := canon(t, t.TempDir())
	root, other := filepath.Join(base, "proj"), filepath.Join(base, "other")
	for _, d := range []string{root, other} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	named, _, err := s.Attach(ctx, "", root, Mode{}, "user-1", false)
	if err != nil {
		t.Fatal(err)
	}
	defaulted, _, err := s.Attach(ctx, "", other, Mode{}, "", false)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		thread  string
		root    string
		want    *Session
		wantErr error
	}{
		{name: "exact", thread: "user-1", root: root, want: named},
		{name: "normalized form", thread: NormalizeThreadID("user-1"), root: root, want: named},
		{name: "trailing slash", thread: "user-1", root: root + "/", want: named},
		{name: "symlink spelling", thread: "user-1", root: link, want: named},
		{name: "default thread", thread: "", root: other, want: defaulted},
		{name: "external id as thread", thread: defaulted.ExternalID, root: other, want: defaulted},
		{name: "no workspace", thread: "user-1", root: "", wantErr: ErrWorkspaceBindingRequired},
		{name: "unknown thread", thread: "user_1", root: root, wantErr: ErrNotInitialized},
		{name: "default thread not bound", thread: "", root: root, wantErr: ErrNotInitialized},
		{name: "other principal's thread", thread: "user-1", root: root, wantErr: ErrNotInitialized},
		{name: "mismatch", thread: "user-1", root: other, wantErr: ErrWorkspaceThreadMismatch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			principal := ""
			if tc.name == "other principal's thread" {
				principal = "mallory"
			}
			got, err := s.Lookup(principal, tc.thread, tc.root)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Lookup(%q, %q) = %v, %v; want %v", tc.thread, tc.root, got, err, tc.wantErr)
				}
				var be *ThreadBindingError
				if errors.Is(err, ErrWorkspaceThreadMismatch) && (!errors.As(err, &be) || be.Bound != root || be.Given != other) {
					t.Errorf("mismatch error %v does not name the bound and given roots", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("Lookup(%q, %q) = %v, %v; want %v", tc.thread, tc.root, got, err, tc.want)
			}
		})
	}
}

func TestResetShell(t *testing.T) {
	s, f, clock := newTestSessions(t)
	root := canon(t, t.TempDir())
	ctx := context.Background()
	sess, _, err := s.Attach(ctx, "", root, Mode{Name: ModeArchitect}, "", false)
	if err != nil {
		t.Fatal(err)
	}
	first := sess.Shell().(*procShell)

	reset, err := s.ResetShell(ctx, sess)
	if err != nil || !reset {
		t.Fatalf("first ResetShell = %v, %v; want a reset", reset, err)
	}
	second := sess.Shell().(*procShell)
	if second.PID(t.Context()) == first.PID(t.Context()) || first.Healthy(t.Context()) || second.dir != root || sess.Mode().Name != ModeArchitect {
		t.Errorf("after reset: PID %d (was %d), old alive %v, dir %q, mode %q; want a new shell in %s, the old one killed, mode kept",
			second.PID(t.Context()), first.PID(t.Context()), first.Healthy(t.Context()), second.dir, sess.Mode().Name, root)
	}

	clock.advance(ResetInterval - time.Second)
	reset, err = s.ResetShell(ctx, sess)
	if err != nil || reset || sess.Shell() != guardian.Terminal(second) || !second.Healthy(t.Context()) {
		t.Fatalf("second ResetShell within the interval = %v, %v; want it skipped and the shell kept", reset, err)
	}

	clock.advance(time.Second)
	if reset, err = s.ResetShell(ctx, sess); err != nil || !reset {
		t.Fatalf("ResetShell after the interval = %v, %v; want a reset", reset, err)
	}

	// A failed shell is reset at once.
	third := sess.Shell().(*procShell)
	third.Close()
	if reset, err = s.ResetShell(ctx, sess); err != nil || !reset {
		t.Fatalf("ResetShell of a dead shell within the interval = %v, %v; want a reset", reset, err)
	}

	// A shell that cannot start keeps the old one.
	clock.advance(ResetInterval)
	kept := sess.Shell()
	f.fail.Store(true)
	if reset, err = s.ResetShell(ctx, sess); !errors.Is(err, errFactory) || reset || sess.Shell() != kept {
		t.Fatalf("ResetShell with a failing factory = %v, %v; want the error and the old shell kept", reset, err)
	}
}

func TestAttachFactoryFailure(t *testing.T) {
	s, f, _ := newTestSessions(t)
	root := canon(t, t.TempDir())
	f.fail.Store(true)
	if _, _, err := s.Attach(context.Background(), "", root, Mode{}, "t1", false); !errors.Is(err, errFactory) {
		t.Fatalf("Attach with a failing factory = %v, want its error", err)
	}
	if _, err := s.ByThread("", "t1"); !errors.Is(err, ErrNotInitialized) {
		t.Errorf("a failed start bound its thread: %v", err)
	}
	f.fail.Store(false)
	if _, created, err := s.Attach(context.Background(), "", root, Mode{}, "t1", false); err != nil || !created {
		t.Errorf("Attach after a failed start = %v, created %v; want a new session", err, created)
	}
}

func TestAttachRejectsBadInput(t *testing.T) {
	s, _, _ := newTestSessions(t)
	root := canon(t, t.TempDir())
	if _, _, err := s.Attach(context.Background(), "", "relative/path", Mode{}, "", false); !errors.Is(err, ErrWorkspaceRelative) {
		t.Errorf("Attach(relative root) = %v, want ErrWorkspaceRelative", err)
	}
	if _, _, err := s.Attach(context.Background(), "", root, Mode{Name: "root"}, "", false); !errors.Is(err, ErrInvalidMode) {
		t.Errorf("Attach(mode root) = %v, want ErrInvalidMode", err)
	}
}

func TestModeValidate(t *testing.T) {
	tests := []struct {
		name string
		mode Mode
		ok   bool
	}{
		{"wcgw", Mode{Name: ModeWCGW}, true},
		{"architect", Mode{Name: ModeArchitect}, true},
		{"code_writer all", Mode{Name: ModeCodeWriter, AllGlobs: true, AllCommands: true}, true},
		{"code_writer lists", Mode{Name: ModeCodeWriter, AllowedGlobs: []string{"/w/src/**/*.go"}, AllowedCommands: []string{"go test"}}, true},
		{"code_writer nothing allowed", Mode{Name: ModeCodeWriter}, true},
		{"unknown", Mode{Name: "admin"}, false},
		{"empty name", Mode{}, false},
		{"relative glob", Mode{Name: ModeCodeWriter, AllowedGlobs: []string{"src/*.go"}}, false},
		{"bad glob", Mode{Name: ModeCodeWriter, AllowedGlobs: []string{"/w/[a"}}, false},
		{"empty command", Mode{Name: ModeCodeWriter, AllowedCommands: []string{""}}, false},
	}
	for _, tc := range tests {
		err := tc.mode.Validate()
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrInvalidMode)) {
			t.Errorf("%s: Validate() = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

func TestSessionsClose(t *testing.T) {
	f := &countingFactory{}
	s := NewSessions(f.start, nil)
	var shells []*procShell
	for range 3 {
		sess, _, err := s.Attach(context.Background(), "", canon(t, t.TempDir()), Mode{}, "", false)
		if err != nil {
			t.Fatal(err)
		}
		shells = append(shells, sess.Shell().(*procShell))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, sh := range shells {
		if sh.Healthy(t.Context()) {
			t.Errorf("shell %d still runs after Close", sh.PID(t.Context()))
		}
	}
	if _, _, err := s.Attach(context.Background(), "", canon(t, t.TempDir()), Mode{}, "", false); !errors.Is(err, ErrSessionsClosed) {
		t.Errorf("Attach after Close = %v, want ErrSessionsClosed", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}
