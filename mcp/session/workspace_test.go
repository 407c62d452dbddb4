package session_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"winx/mcp/session"
	"winx/mcp/session/sessiontest"
)

func TestResolveWorkspace(t *testing.T) {
	base := sessiontest.Canon(t, t.TempDir())
	proj := filepath.Join(base, "proj")
	sessiontest.WriteFile(t, filepath.Join(proj, "src", "main.go"), "package main\n")
	link := filepath.Join(base, "link")
	if err := os.Symlink(proj, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		in      string
		want    string
		wantErr error
	}{
		{name: "directory", in: proj, want: proj},
		{name: "trailing slash and dots", in: proj + "/src/../", want: proj},
		{name: "file means its directory", in: filepath.Join(proj, "src", "main.go"), want: filepath.Join(proj, "src")},
		{name: "symlink resolved", in: link, want: proj},
		{name: "file through symlink", in: filepath.Join(link, "src", "main.go"), want: filepath.Join(proj, "src")},
		{name: "missing", in: filepath.Join(base, "nope"), wantErr: session.ErrWorkspaceNotFound},
		{name: "relative", in: "proj", wantErr: session.ErrWorkspaceRelative},
		{name: "dot relative", in: "./proj", wantErr: session.ErrWorkspaceRelative},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, scratch, err := session.ResolveWorkspace(tc.in, "")
			if tc.wantErr != nil {
				var we *session.WorkspaceError
				if !errors.Is(err, tc.wantErr) || !errors.As(err, &we) || we.Path != tc.in {
					t.Fatalf("session.ResolveWorkspace(%q) = %q, %v; want a *session.WorkspaceError for %q wrapping %v", tc.in, got, err, tc.in, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want || scratch {
				t.Errorf("session.ResolveWorkspace(%q) = %q, %v, %v; want %q, false, nil", tc.in, got, scratch, err, tc.want)
			}
		})
	}
}

func TestResolveWorkspaceScratch(t *testing.T) {
	scratchRoot := filepath.Join(t.TempDir(), "state", "winx", "playground")
	a, scratch, err := session.ResolveWorkspace("", scratchRoot)
	if err != nil || !scratch {
		t.Fatalf(`session.ResolveWorkspace("", root) = %q, %v, %v; want a scratch directory`, a, scratch, err)
	}
	b, _, err := session.ResolveWorkspace("", scratchRoot)
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Errorf("two scratch workspaces share %q", a)
	}
	if parent := filepath.Dir(a); parent != sessiontest.Canon(t, scratchRoot) {
		t.Errorf("scratch workspace %q is not directly under %q", a, scratchRoot)
	}
	for _, dir := range []string{a, scratchRoot} {
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			t.Errorf("%s has mode %v, want no group or other access", dir, perm)
		}
	}
	if _, _, err := session.ResolveWorkspace("", ""); !errors.Is(err, session.ErrNoScratchRoot) {
		t.Errorf(`session.ResolveWorkspace("", "") error = %v, want session.ErrNoScratchRoot`, err)
	}
}

func TestDefaultScratchRoot(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/srv/state")
	if got, err := session.DefaultScratchRoot(); err != nil || got != "/srv/state/winx/playground" {
		t.Errorf("session.DefaultScratchRoot() = %q, %v; want /srv/state/winx/playground", got, err)
	}
	t.Setenv("XDG_STATE_HOME", "relative/state") // ignored, as XDG says
	t.Setenv("HOME", "/home/someone")
	if got, err := session.DefaultScratchRoot(); err != nil || got != "/home/someone/.local/state/winx/playground" {
		t.Errorf("session.DefaultScratchRoot() = %q, %v; want the ~/.local/state default", got, err)
	}
}

func TestExternalSessionID(t *testing.T) {
	shape := regexp.MustCompile(`^ws_[A-Za-z0-9_]+_[0-9a-f]{8}$`)
	tests := []struct {
		principal, root, prefix string
	}{
		{"", "/home/u/winx", "ws_winx_"},
		{"alice", "/home/u/my-proj.v2", "ws_my_proj_v2_"},
		{"", "/", "ws_root_"},
		{"", "/srv/" + strings.Repeat("x", 100), "ws_" + strings.Repeat("x", session.MaxProjectNameLen) + "_"},
		{"", "/srv/проект", "ws_root_"},
	}
	for _, tc := range tests {
		got := session.ExternalSessionID(tc.principal, tc.root)
		if !strings.HasPrefix(got, tc.prefix) || !shape.MatchString(got) {
			t.Errorf("session.ExternalSessionID(%q, %q) = %q, want prefix %q and shape %s", tc.principal, tc.root, got, tc.prefix, shape)
		}
		if again := session.ExternalSessionID(tc.principal, tc.root); again != got {
			t.Errorf("session.ExternalSessionID is not stable: %q then %q", got, again)
		}
		if n := session.NormalizeThreadID(got); n != got {
			t.Errorf("session.NormalizeThreadID(%q) = %q; an external id must already be a thread id", got, n)
		}
	}
	if session.ExternalSessionID("alice", "/w") == session.ExternalSessionID("bob", "/w") {
		t.Error("two principals share an external session id for one workspace")
	}
	if session.ExternalSessionID("", "/a/w") == session.ExternalSessionID("", "/b/w") {
		t.Error("two workspaces with one base name share an external session id")
	}
}

func TestTempArtifactDir(t *testing.T) {
	root := "/home/u/proj"
	got := session.TempArtifactDir(session.Key{Principal: "alice", Root: root})
	if !regexp.MustCompile(`^/home/u/proj/\.winx/tmp/session-[0-9a-f]{16}$`).MatchString(got) {
		t.Errorf("session.TempArtifactDir = %q, want <root>/.winx/tmp/session-<16 hex>", got)
	}
	if again := session.TempArtifactDir(session.Key{Principal: "alice", Root: root}); again != got {
		t.Errorf("session.TempArtifactDir is not deterministic: %q then %q", got, again)
	}
	if other := session.TempArtifactDir(session.Key{Principal: "bob", Root: root}); other == got {
		t.Error("two sessions share a temporary artifact directory")
	}
	if _, err := os.Stat(got); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("session.TempArtifactDir created %s; it must only name it", got)
	}
}
