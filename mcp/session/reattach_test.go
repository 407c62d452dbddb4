package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"winx/auth/policy"
	"winx/guardian/runtime"
	"winx/mcp/session"
	"winx/mcp/session/sessiontest"
)

// durableShell is a ProcShell that outlives its registry, as a guardian of
// the daemon runtime does: releasing it detaches, and its record stays.
type durableShell struct {
	*sessiontest.ProcShell
	mu     sync.Mutex
	meta   json.RawMessage
	writes int // SetMeta calls
}

func (d *durableShell) Release(context.Context) error { return nil }
func (d *durableShell) Meta(context.Context) json.RawMessage {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.meta
}
func (d *durableShell) SetMeta(_ context.Context, m json.RawMessage) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.meta = m
	d.writes++
	return nil
}

// durableFactory keeps one durableShell per session key across registries,
// like winxd: Existing reaches a running one and never starts one.
type durableFactory struct {
	mu     sync.Mutex
	shells map[[3]string]*durableShell // principal, workspace, scope
	starts int
}

func (f *durableFactory) start(ctx context.Context, spec runtime.Spec) (*runtime.Started, error) {
	id := [3]string{spec.Principal, spec.Workspace, spec.Scope}
	f.mu.Lock()
	defer f.mu.Unlock()
	if sh, ok := f.shells[id]; ok && sh.Healthy(ctx) {
		return &runtime.Started{Terminal: sh, Resumed: true}, nil
	}
	if spec.Existing {
		return nil, runtime.ErrNoSession
	}
	p, err := sessiontest.StartProcShell(ctx, spec.Dir, spec.Env)
	if err != nil {
		return nil, err
	}
	f.starts++
	sh := &durableShell{ProcShell: p}
	f.shells[id] = sh
	return &runtime.Started{Terminal: sh}, nil
}

// TestResolveReattachesRunningSession: a registry that never saw a session
// (a new adapter process) attaches a session-bound call to the session's
// running shell, with its mode, and binds the thread; a workspace with no
// running session stays ErrNotInitialized and starts nothing.
func TestResolveReattachesRunningSession(t *testing.T) {
	f := &durableFactory{shells: make(map[[3]string]*durableShell)}
	t.Cleanup(func() {
		for _, sh := range f.shells {
			sh.Close()
		}
	})
	root := sessiontest.Canon(t, t.TempDir())
	ctx := context.Background()

	first := session.NewSessions(f.start, nil)
	a, _, err := first.Attach(ctx, "p", root, policy.Mode{Name: policy.ModeArchitect}, "t1", false)
	if err != nil {
		t.Fatal(err)
	}
	pid := a.Shell().PID(ctx)
	first.Close()

	second := session.NewSessions(f.start, nil)
	defer second.Close()
	if _, err := second.Lookup("p", "t1", root); !errors.Is(err, session.ErrNotInitialized) {
		t.Fatalf("Lookup in a new registry = %v, want ErrNotInitialized", err)
	}
	b, err := second.Resolve(ctx, "p", "", "t1", root)
	if err != nil {
		t.Fatalf("Resolve of a running session = %v", err)
	}
	if b.Shell().PID(ctx) != pid || !b.Resumed() || b.Mode().Name != policy.ModeArchitect {
		t.Errorf("reattached pid %d resumed %v mode %q; want %d, true, architect", b.Shell().PID(ctx), b.Resumed(), b.Mode().Name, pid)
	}
	if again, err := second.Lookup("p", "t1", root); err != nil || again != b {
		t.Errorf("the thread is not bound after Resolve: %v", err)
	}
	// Another principal's call never reaches it.
	if _, err := second.Resolve(ctx, "q", "", "t1", root); !errors.Is(err, session.ErrNotInitialized) {
		t.Errorf("Resolve by another principal = %v, want ErrNotInitialized", err)
	}
	other := sessiontest.Canon(t, t.TempDir())
	if _, err := second.Resolve(ctx, "p", "", "t2", other); !errors.Is(err, session.ErrNotInitialized) {
		t.Errorf("Resolve of a workspace without a session = %v, want ErrNotInitialized", err)
	}
	if f.starts != 1 {
		t.Errorf("the factory started %d shells, want 1", f.starts)
	}
	// A thread bound elsewhere is still a mismatch, never a reattach.
	if _, err := second.Resolve(ctx, "p", "", "t1", other); !errors.Is(err, session.ErrWorkspaceThreadMismatch) {
		t.Errorf("Resolve of a bound thread with another root = %v, want ErrWorkspaceThreadMismatch", err)
	}
}

// TestResolveEmbeddedStaysNotInitialized: without durable shells nothing is
// reattached and nothing is started.
func TestResolveEmbeddedStaysNotInitialized(t *testing.T) {
	s, f, _ := sessiontest.NewSessions(t)
	root := sessiontest.Canon(t, t.TempDir())
	if _, err := s.Resolve(context.Background(), "p", "", "t1", root); !errors.Is(err, session.ErrNotInitialized) {
		t.Errorf("Resolve = %v, want ErrNotInitialized", err)
	}
	if n := f.Starts.Load(); n != 0 {
		t.Errorf("Resolve started %d shells", n)
	}
}

func TestThreadBook(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	root := sessiontest.Canon(t, t.TempDir())
	if _, ok := session.RecallThread(dir, "t"); ok {
		t.Fatal("an empty book recalled a thread")
	}
	session.RememberThreads(dir, session.ThreadRecord{Root: root, Used: time.Unix(1, 0)}, "user-1", "")
	rec, ok := session.RecallThread(dir, "user-1")
	if !ok || rec.Root != root {
		t.Errorf("RecallThread = %+v, %v; want %s", rec, ok, root)
	}
	if _, ok := session.RecallThread(dir, "user1"); ok {
		t.Error("a lookalike thread id was recalled")
	}
	fi, err := os.Stat(filepath.Join(dir, "threads.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("thread book = %v, %v; want a 0600 file", fi, err)
	}
	// Bounded: the least recently bound threads go first.
	for i := range session.MaxRememberedThreads + 10 {
		session.RememberThreads(dir, session.ThreadRecord{Root: root, Used: time.Unix(int64(100+i), 0)}, "x"+string(rune('a'+i%26))+time.Unix(int64(i), 0).Format("150405"))
	}
	if _, ok := session.RecallThread(dir, "user-1"); ok {
		t.Error("the oldest thread survived past the bound")
	}
	// A malformed book is empty, never an error.
	os.WriteFile(filepath.Join(dir, "threads.json"), []byte("{bad"), 0o600)
	if _, ok := session.RecallThread(dir, "user-1"); ok {
		t.Error("a malformed book recalled a thread")
	}
}

// TestTempDirExistsAndWinxIgnoresItself: WINX_TEMP_DIR exists when the
// shell starts, and a .winx Winx creates carries a .gitignore of "*"; an
// existing .gitignore is kept, and a .winx that is a link is not followed.
func TestTempDirExistsAndWinxIgnoresItself(t *testing.T) {
	s, _, _ := sessiontest.NewSessions(t)
	ctx := context.Background()
	root := sessiontest.Canon(t, t.TempDir())
	sess, _, err := s.Attach(ctx, "", root, policy.Mode{}, "", false)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(sess.TempDir); err != nil || !fi.IsDir() {
		t.Errorf("WINX_TEMP_DIR %s after the start: %v", sess.TempDir, err)
	}
	if b, err := os.ReadFile(filepath.Join(root, ".winx", ".gitignore")); err != nil || string(b) != "*\n" {
		t.Errorf(".winx/.gitignore = %q, %v; want \"*\\n\"", b, err)
	}

	kept := sessiontest.Canon(t, t.TempDir())
	os.Mkdir(filepath.Join(kept, ".winx"), 0o755)
	os.WriteFile(filepath.Join(kept, ".winx", ".gitignore"), []byte("mine\n"), 0o644)
	if _, _, err := s.Attach(ctx, "", kept, policy.Mode{}, "", false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(kept, ".winx", ".gitignore")); string(b) != "mine\n" {
		t.Errorf("an existing .winx/.gitignore was replaced: %q", b)
	}

	linked := sessiontest.Canon(t, t.TempDir())
	elsewhere := t.TempDir()
	os.Symlink(elsewhere, filepath.Join(linked, ".winx"))
	if _, _, err := s.Attach(ctx, "", linked, policy.Mode{}, "", false); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("the session wrote %d entries through a .winx link", len(entries))
	}
}

func TestScratchWorkspacePerPrincipal(t *testing.T) {
	root := filepath.Join(t.TempDir(), "playground")
	a, err := session.ScratchWorkspace(root, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := session.ScratchWorkspace(root, "alice"); again != a {
		t.Errorf("alice's playground moved: %s, then %s", a, again)
	}
	if b, _ := session.ScratchWorkspace(root, "bob"); b == a {
		t.Error("two principals share a playground")
	}
	if _, err := os.Stat(a); err == nil {
		t.Error("ScratchWorkspace created the playground before the call was valid")
	}
	if err := session.MakeScratch(a); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(a); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("playground %v, %v; want a 0700 directory", fi, err)
	}
}
