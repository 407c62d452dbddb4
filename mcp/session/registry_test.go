package session_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"winx/auth/policy"
	"winx/guardian"
	"winx/mcp/session"
	"winx/mcp/session/sessiontest"
)

func TestAttachSameKeySharesShell(t *testing.T) {
	s, f, _ := sessiontest.NewSessions(t)
	root := sessiontest.Canon(t, t.TempDir())
	a, created, err := s.Attach(context.Background(), "alice", root, policy.Mode{}, "", false)
	if err != nil || !created {
		t.Fatalf("first Attach = %v, created %v; want a new session", err, created)
	}
	b, created, err := s.Attach(context.Background(), "alice", root, policy.Mode{}, "", false)
	if err != nil || created {
		t.Fatalf("second Attach = %v, created %v; want the same session", err, created)
	}
	if a != b || a.Shell().PID(t.Context()) != b.Shell().PID(t.Context()) || f.Starts.Load() != 1 {
		t.Errorf("same key gave sessions %p/%p, PIDs %d/%d, %d shell starts; want one", a, b, a.Shell().PID(t.Context()), b.Shell().PID(t.Context()), f.Starts.Load())
	}
	if a.Key != (session.Key{Principal: "alice", Root: root}) || a.ExternalID != session.ExternalSessionID("alice", root) ||
		a.TempDir != session.TempArtifactDir(a.Key) || a.Mode().Name != policy.ModeWCGW {
		t.Errorf("session fields = %+v, mode %q", a, a.Mode().Name)
	}
	sh := a.Shell().(*sessiontest.ProcShell)
	if sh.Dir != root || !slices.Contains(sh.Env, "WINX_WORKSPACE_ROOT="+root) || !slices.Contains(sh.Env, "WINX_TEMP_DIR="+a.TempDir) {
		t.Errorf("shell started in %q with env %q", sh.Dir, sh.Env)
	}
}

func TestAttachConcurrentStartsOneShell(t *testing.T) {
	s, f, _ := sessiontest.NewSessions(t)
	root := sessiontest.Canon(t, t.TempDir())
	const n = 8
	var wg sync.WaitGroup
	got := make([]*session.Session, n)
	created := make([]bool, n)
	for i := range n {
		wg.Go(func() {
			var err error
			got[i], created[i], err = s.Attach(context.Background(), "", root, policy.Mode{}, "", false)
			if err != nil {
				t.Errorf("Attach: %v", err)
			}
		})
	}
	wg.Wait()
	if f.Starts.Load() != 1 {
		t.Errorf("%d concurrent Attach calls started %d shells, want 1", n, f.Starts.Load())
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
	s, _, _ := sessiontest.NewSessions(t)
	rootA, rootB := sessiontest.Canon(t, t.TempDir()), sessiontest.Canon(t, t.TempDir())
	ctx := context.Background()

	alice, _, err := s.Attach(ctx, "alice", rootA, policy.Mode{}, "conv-1", false)
	if err != nil {
		t.Fatal(err)
	}
	bob, _, err := s.Attach(ctx, "bob", rootA, policy.Mode{}, "conv-1", false)
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
	if _, err := s.ByThread("alice", "conv1"); !errors.Is(err, session.ErrNotInitialized) {
		t.Errorf(`ByThread("alice", "conv1") error = %v; "conv1" is not "conv-1"`, err)
	}
	if _, err := s.ByThread("carol", "conv-1"); !errors.Is(err, session.ErrNotInitialized) {
		t.Errorf(`ByThread("carol", "conv-1") error = %v, want session.ErrNotInitialized`, err)
	}

	// The bound thread cannot silently move to another workspace.
	_, _, err = s.Attach(ctx, "alice", rootB, policy.Mode{}, "conv-1", false)
	var be *session.ThreadBindingError
	if !errors.Is(err, session.ErrWorkspaceAlreadyBound) || !errors.As(err, &be) || be.Bound != rootA || be.Given != rootB {
		t.Fatalf("Attach of a bound thread elsewhere = %v, want session.ErrWorkspaceAlreadyBound from %s", err, rootA)
	}
	moved, created, err := s.ChangeWorkspace(ctx, "alice", rootB, policy.Mode{}, "conv-1", false)
	if err != nil || !created || moved.Root != rootB {
		t.Fatalf("ChangeWorkspace = %v, %v, %v; want a new session in %s", moved, created, err, rootB)
	}
	if got, _ := s.ByThread("alice", "conv-1"); got != moved {
		t.Error("the thread did not move to the new workspace")
	}
	if !alice.Shell().(*sessiontest.ProcShell).Healthy(t.Context()) {
		t.Error("the old workspace's shell was stopped by a thread moving away")
	}
}

func TestLookup(t *testing.T) {
	s, _, _ := sessiontest.NewSessions(t)
	base := sessiontest.Canon(t, t.TempDir())
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
	named, _, err := s.Attach(ctx, "", root, policy.Mode{}, "user-1", false)
	if err != nil {
		t.Fatal(err)
	}
	defaulted, _, err := s.Attach(ctx, "", other, policy.Mode{}, "", false)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		thread  string
		root    string
		want    *session.Session
		wantErr error
	}{
		{name: "exact", thread: "user-1", root: root, want: named},
		{name: "normalized form", thread: session.NormalizeThreadID("user-1"), root: root, want: named},
		{name: "trailing slash", thread: "user-1", root: root + "/", want: named},
		{name: "symlink spelling", thread: "user-1", root: link, want: named},
		{name: "default thread", thread: "", root: other, want: defaulted},
		{name: "external id as thread", thread: defaulted.ExternalID, root: other, want: defaulted},
		{name: "no workspace", thread: "user-1", root: "", wantErr: session.ErrWorkspaceBindingRequired},
		{name: "unknown thread", thread: "user_1", root: root, wantErr: session.ErrNotInitialized},
		{name: "default thread not bound", thread: "", root: root, wantErr: session.ErrNotInitialized},
		{name: "other principal's thread", thread: "user-1", root: root, wantErr: session.ErrNotInitialized},
		{name: "mismatch", thread: "user-1", root: other, wantErr: session.ErrWorkspaceThreadMismatch},
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
				var be *session.ThreadBindingError
				if errors.Is(err, session.ErrWorkspaceThreadMismatch) && (!errors.As(err, &be) || be.Bound != root || be.Given != other) {
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
	s, f, clock := sessiontest.NewSessions(t)
	root := sessiontest.Canon(t, t.TempDir())
	ctx := context.Background()
	sess, _, err := s.Attach(ctx, "", root, policy.Mode{Name: policy.ModeArchitect}, "", false)
	if err != nil {
		t.Fatal(err)
	}
	first := sess.Shell().(*sessiontest.ProcShell)

	reset, err := s.ResetShell(ctx, sess)
	if err != nil || !reset {
		t.Fatalf("first ResetShell = %v, %v; want a reset", reset, err)
	}
	second := sess.Shell().(*sessiontest.ProcShell)
	if second.PID(t.Context()) == first.PID(t.Context()) || first.Healthy(t.Context()) || second.Dir != root || sess.Mode().Name != policy.ModeArchitect {
		t.Errorf("after reset: PID %d (was %d), old alive %v, dir %q, mode %q; want a new shell in %s, the old one killed, mode kept",
			second.PID(t.Context()), first.PID(t.Context()), first.Healthy(t.Context()), second.Dir, sess.Mode().Name, root)
	}

	clock.Advance(session.ResetInterval - time.Second)
	reset, err = s.ResetShell(ctx, sess)
	if err != nil || reset || sess.Shell() != guardian.Terminal(second) || !second.Healthy(t.Context()) {
		t.Fatalf("second ResetShell within the interval = %v, %v; want it skipped and the shell kept", reset, err)
	}

	clock.Advance(time.Second)
	if reset, err = s.ResetShell(ctx, sess); err != nil || !reset {
		t.Fatalf("ResetShell after the interval = %v, %v; want a reset", reset, err)
	}

	// A failed shell is reset at once.
	third := sess.Shell().(*sessiontest.ProcShell)
	third.Close()
	if reset, err = s.ResetShell(ctx, sess); err != nil || !reset {
		t.Fatalf("ResetShell of a dead shell within the interval = %v, %v; want a reset", reset, err)
	}

	// A shell that cannot start keeps the old one.
	clock.Advance(session.ResetInterval)
	kept := sess.Shell()
	f.Fail.Store(true)
	if reset, err = s.ResetShell(ctx, sess); !errors.Is(err, sessiontest.ErrFactory) || reset || sess.Shell() != kept {
		t.Fatalf("ResetShell with a failing factory = %v, %v; want the error and the old shell kept", reset, err)
	}
}

func TestAttachFactoryFailure(t *testing.T) {
	s, f, _ := sessiontest.NewSessions(t)
	root := sessiontest.Canon(t, t.TempDir())
	f.Fail.Store(true)
	if _, _, err := s.Attach(context.Background(), "", root, policy.Mode{}, "t1", false); !errors.Is(err, sessiontest.ErrFactory) {
		t.Fatalf("Attach with a failing factory = %v, want its error", err)
	}
	if _, err := s.ByThread("", "t1"); !errors.Is(err, session.ErrNotInitialized) {
		t.Errorf("a failed start bound its thread: %v", err)
	}
	f.Fail.Store(false)
	if _, created, err := s.Attach(context.Background(), "", root, policy.Mode{}, "t1", false); err != nil || !created {
		t.Errorf("Attach after a failed start = %v, created %v; want a new session", err, created)
	}
}

func TestAttachRejectsBadInput(t *testing.T) {
	s, _, _ := sessiontest.NewSessions(t)
	root := sessiontest.Canon(t, t.TempDir())
	if _, _, err := s.Attach(context.Background(), "", "relative/path", policy.Mode{}, "", false); !errors.Is(err, session.ErrWorkspaceRelative) {
		t.Errorf("Attach(relative root) = %v, want session.ErrWorkspaceRelative", err)
	}
	if _, _, err := s.Attach(context.Background(), "", root, policy.Mode{Name: "root"}, "", false); !errors.Is(err, session.ErrInvalidMode) {
		t.Errorf("Attach(mode root) = %v, want session.ErrInvalidMode", err)
	}
}

func TestModeValidate(t *testing.T) {
	tests := []struct {
		name string
		mode policy.Mode
		ok   bool
	}{
		{"wcgw", policy.Mode{Name: policy.ModeWCGW}, true},
		{"architect", policy.Mode{Name: policy.ModeArchitect}, true},
		{"code_writer all", policy.Mode{Name: policy.ModeCodeWriter, AllGlobs: true, AllCommands: true}, true},
		{"code_writer lists", policy.Mode{Name: policy.ModeCodeWriter, AllowedGlobs: []string{"/w/src/**/*.go"}, AllowedCommands: []string{"go test"}}, true},
		{"code_writer nothing allowed", policy.Mode{Name: policy.ModeCodeWriter}, true},
		{"unknown", policy.Mode{Name: "admin"}, false},
		{"empty name", policy.Mode{}, false},
		{"relative glob", policy.Mode{Name: policy.ModeCodeWriter, AllowedGlobs: []string{"src/*.go"}}, false},
		{"bad glob", policy.Mode{Name: policy.ModeCodeWriter, AllowedGlobs: []string{"/w/[a"}}, false},
		{"empty command", policy.Mode{Name: policy.ModeCodeWriter, AllowedCommands: []string{""}}, false},
	}
	for _, tc := range tests {
		err := session.ValidateMode(tc.mode)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, session.ErrInvalidMode)) {
			t.Errorf("%s: session.ValidateMode() = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

func TestSessionsClose(t *testing.T) {
	f := &sessiontest.CountingFactory{}
	s := session.NewSessions(f.Start, nil)
	var shells []*sessiontest.ProcShell
	for range 3 {
		sess, _, err := s.Attach(context.Background(), "", sessiontest.Canon(t, t.TempDir()), policy.Mode{}, "", false)
		if err != nil {
			t.Fatal(err)
		}
		shells = append(shells, sess.Shell().(*sessiontest.ProcShell))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, sh := range shells {
		if sh.Healthy(t.Context()) {
			t.Errorf("shell %d still runs after Close", sh.PID(t.Context()))
		}
	}
	if _, _, err := s.Attach(context.Background(), "", sessiontest.Canon(t, t.TempDir()), policy.Mode{}, "", false); !errors.Is(err, session.ErrSessionsClosed) {
		t.Errorf("Attach after Close = %v, want session.ErrSessionsClosed", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

// TestSetModeRespawnsOnProfileChange: a mode change whose shell profile
// differs starts a fresh shell; one that keeps it does not.
func TestSetModeRespawnsOnProfileChange(t *testing.T) {
	s, _, _ := sessiontest.NewSessions(t)
	root := sessiontest.Canon(t, t.TempDir())
	sess, _, err := s.Attach(t.Context(), "p", root, policy.Mode{}, "", false)
	if err != nil {
		t.Fatal(err)
	}
	sh := sess.Shell().(*sessiontest.ProcShell)
	steps := []struct {
		mode     string
		respawns int32
	}{
		{policy.ModeWCGW, 0},
		{policy.ModeArchitect, 1},
		{policy.ModeArchitect, 1},
		{policy.ModeWCGW, 2},
	}
	for _, st := range steps {
		if err := sess.SetMode(t.Context(), policy.Mode{Name: st.mode}); err != nil {
			t.Fatalf("SetMode(%s): %v", st.mode, err)
		}
		if got := sh.Respawns.Load(); got != st.respawns {
			t.Errorf("after SetMode(%s): %d respawns, want %d", st.mode, got, st.respawns)
		}
	}
}
