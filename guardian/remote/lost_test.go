package remote

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// lostFixture leaves in a fresh socket directory what a guardian killed
// before anyone cleaned up leaves: its record (naming a shell directory
// made in root), a stale socket file and a jobs record.
func lostFixture(t *testing.T, root, name string) (socket, shellDir string) {
	t.Helper()
	socket = filepath.Join(shortDir(t), "g-"+name+".sock")
	shellDir, err := os.MkdirTemp(root, shellDirPrefix)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shellDir, "output-1.txt"), []byte("last words\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := writeRecord(socket, Record{PID: 1 << 22, Key: name, Tag: NewLaunchID(), ShellDir: shellDir, Workspace: "/w"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{socket, JobsRecordPath(socket)} {
		if err := os.WriteFile(p, []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return socket, shellDir
}

func exists(path string) bool { _, err := os.Lstat(path); return err == nil }

// CleanupDead keeps the evidence of the lost session: the shell directory
// and the jobs record stay, and the lost record names them and how the
// guardian died. A second loss of the same key replaces the record and
// removes the first loss's shell directory.
func TestCleanupDeadKeepsLostSession(t *testing.T) {
	root := t.TempDir()
	socket, shellDir := lostFixture(t, root, "k")
	code := 3
	died := time.Now().Add(-time.Minute).UTC().Truncate(time.Second)
	if err := CleanupDead(socket, Loss{Reason: LostGuardianDied, Time: died, ExitCode: &code}); err != nil {
		t.Fatalf("CleanupDead: %v", err)
	}
	if exists(socket) || exists(RecordPath(socket)) {
		t.Errorf("socket %v, record %v; want both removed", exists(socket), exists(RecordPath(socket)))
	}
	if !exists(shellDir) || !exists(JobsRecordPath(socket)) {
		t.Errorf("shell dir %v, jobs record %v; want both kept", exists(shellDir), exists(JobsRecordPath(socket)))
	}
	lost, err := ReadLost(socket)
	if err != nil || lost.Key != "k" || lost.PID != 1<<22 || lost.ShellDir != shellDir || lost.Workspace != "/w" ||
		lost.Reason != LostGuardianDied || !lost.Time.Equal(died) || lost.ExitCode == nil || *lost.ExitCode != 3 || lost.Tag == "" {
		t.Fatalf("ReadLost = %+v, %v", lost, err)
	}
	if fi, err := os.Stat(LostRecordPath(socket)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("lost record: %v, %v; want a 0600 file", fi, err)
	}

	// The next guardian of the key dies too.
	next, err := os.MkdirTemp(root, shellDirPrefix)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeRecord(socket, Record{PID: 1<<22 + 1, Key: "k", Tag: NewLaunchID(), ShellDir: next}); err != nil {
		t.Fatal(err)
	}
	if err := CleanupDead(socket, Loss{Reason: LostGuardianDied, Signal: "SIGKILL"}); err != nil {
		t.Fatalf("CleanupDead again: %v", err)
	}
	if lost, err := ReadLost(socket); err != nil || lost.ShellDir != next || lost.Signal != "SIGKILL" || lost.Time.IsZero() {
		t.Errorf("ReadLost after the second loss = %+v, %v", lost, err)
	}
	if exists(shellDir) || !exists(next) {
		t.Errorf("first shell dir %v, second %v; want only the second kept", exists(shellDir), exists(next))
	}

	// Nothing more to clean up: no record, no lost record written.
	if err := CleanupDead(socket, Loss{Reason: LostGuardianDied}); err != nil {
		t.Errorf("CleanupDead with nothing left: %v", err)
	}
	if lost, _ := ReadLost(socket); lost.ShellDir != next {
		t.Errorf("a clean-up with no record replaced the lost record: %+v", lost)
	}
}

// A lost record is read within its bound, and never trusted to name a
// directory that is not a session's.
func TestReadLostBoundsAndExpireLost(t *testing.T) {
	for _, tt := range []struct {
		name string
		body string
		want error
	}{
		{"over the limit", `{"key":"` + strings.Repeat("k", MaxLostRecordBytes) + `"}`, ErrLostRecord},
		{"not JSON", "{", ErrLostRecord},
		{"missing", "", fs.ErrNotExist},
	} {
		t.Run(tt.name, func(t *testing.T) {
			socket := filepath.Join(t.TempDir(), "g-x.sock")
			if tt.body != "" {
				if err := os.WriteFile(LostRecordPath(socket), []byte(tt.body), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := ReadLost(socket); !errors.Is(err, tt.want) {
				t.Errorf("ReadLost = %v, want %v", err, tt.want)
			}
		})
	}

	dir := t.TempDir()
	other := t.TempDir() // not named like a session's directory
	now := time.Now()
	write := func(name, shellDir string, died time.Time) string {
		socket := filepath.Join(dir, "g-"+name+".sock")
		if err := writeLost(socket, LostRecord{Key: name, ShellDir: shellDir, Loss: Loss{Reason: LostGuardianDied, Time: died}}); err != nil {
			t.Fatal(err)
		}
		return socket
	}
	oldDir, _ := os.MkdirTemp(t.TempDir(), shellDirPrefix)
	old := write("old", oldDir, now.Add(-LostTTL-time.Minute))
	young := write("young", "", now.Add(-time.Minute))
	foreign := write("foreign", other, now.Add(-2*LostTTL))
	garbled := filepath.Join(dir, "g-garbled.sock")
	os.WriteFile(LostRecordPath(garbled), []byte("{"), 0o600)
	os.Chtimes(LostRecordPath(garbled), now.Add(-2*LostTTL), now.Add(-2*LostTTL))

	done, err := ExpireLost(dir, now)
	if err != nil || len(done) != 3 {
		t.Errorf("ExpireLost = %v, %v; want old, foreign and garbled", done, err)
	}
	for _, s := range []string{old, foreign, garbled} {
		if exists(LostRecordPath(s)) {
			t.Errorf("%s: expired lost record kept", s)
		}
	}
	if !exists(LostRecordPath(young)) || exists(oldDir) || !exists(other) {
		t.Errorf("young record %v, old shell dir %v, foreign dir %v; want kept, removed, kept",
			exists(LostRecordPath(young)), exists(oldDir), exists(other))
	}
}
