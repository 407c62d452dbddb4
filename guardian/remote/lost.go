package remote

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A guardian that dies without ending its session (SIGKILL, the kernel's
// OOM killer, which sends SIGKILL, a crash) loses it. What the session left
// running is killed and the socket and Record go (CleanupDead), but the
// evidence stays: the session's private directory (its output journals
// output-N.txt, with the .screen sidecar of the lines still on the
// command's screen) and its jobs record, and a LostRecord beside where the
// socket was says how and when the session was lost. The adapter reads it
// (ReadLost) to tell the model that the session was lost, with the last
// command and its journal (the newest output-N.txt in ShellDir).
//
// A lost record lives until it is LostTTL old: winxd's sweep and `winx
// prune` then remove it with the private directory it names and, when no
// guardian serves the socket again, the jobs record (ExpireLost). A later
// loss of the same key replaces it and removes the private directory the
// earlier one named, so a key keeps the evidence of one lost session at
// most. A new guardian of the key leaves it alone: the adapter learns of the
// loss when its next call starts that guardian, and must still find the
// journal then; the directory is the dead session's, which the new one
// never uses.

// LostRecordSuffix ends the name of a lost record: socket + suffix.
const LostRecordSuffix = ".lost.json"

// lostGlob matches the lost records in a socket directory (guardian
// sockets are g-*.sock).
const lostGlob = "g-*.sock" + LostRecordSuffix

// LostTTL is how long a lost record, and the evidence it names, is kept.
const LostTTL = 24 * time.Hour

// MaxLostRecordBytes bounds a lost record read back.
const MaxLostRecordBytes = 64 << 10

// Why a session was lost (Loss.Reason).
const (
	// LostGuardianDied: its guardian process ended without ending the
	// session (killed, crashed).
	LostGuardianDied = "guardian died"
	// LostWorkspaceRemoved: winxd ended the session because its workspace
	// directory no longer exists.
	LostWorkspaceRemoved = "workspace removed"
)

// Loss is how a session was lost.
type Loss struct {
	// Reason is LostGuardianDied or LostWorkspaceRemoved.
	Reason string `json:"reason"`
	// Time is when winxd saw the guardian end, or found it gone.
	Time time.Time `json:"died"`
	// Signal names the signal that ended the guardian ("SIGKILL", which an
	// OOM kill is too; "SIGSEGV", "SIGABRT"... for a crash), ExitCode the
	// status it exited with; both are empty when it is not known: winxd
	// sees them for the guardians it spawned, not for one it found after a
	// restart or found already dead.
	Signal     string `json:"signal,omitempty"`
	ExitCode   *int   `json:"exit_code,omitempty"`
	CoreDumped bool   `json:"core_dumped,omitempty"`
}

// LostRecord is what is left of a lost session (LostRecordPath, mode 0600
// in the private socket directory).
type LostRecord struct {
	Key string `json:"key"` // the session key
	PID int    `json:"pid"` // the guardian that died
	// Tag is the EnvTag value its session's processes carried.
	Tag string `json:"tag"`
	// ShellDir is the session's private directory, kept: the journals
	// output-N.txt (and output-bg-N.txt for jobs), each with its .screen
	// sidecar. "" when the guardian died before its shell started.
	ShellDir  string `json:"shell_dir,omitempty"`
	Workspace string `json:"workspace,omitempty"`
	Sandbox   bool   `json:"sandbox,omitempty"`
	Loss
}

// LostRecordPath is the lost record of the session whose guardian was on
// socket.
func LostRecordPath(socket string) string { return socket + LostRecordSuffix }

// ErrLostRecord: a lost record is over MaxLostRecordBytes or not JSON.
var ErrLostRecord = errors.New("remote: bad lost-session record")

// ReadLost reads the lost record of the session whose guardian was on
// socket; a missing one gives an error wrapping fs.ErrNotExist.
func ReadLost(socket string) (LostRecord, error) {
	b, err := readBounded(LostRecordPath(socket), MaxLostRecordBytes)
	if over := (*overLimitError)(nil); errors.As(err, &over) {
		return LostRecord{}, fmt.Errorf("%w: %v", ErrLostRecord, err)
	}
	if err != nil {
		return LostRecord{}, err
	}
	var r LostRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return LostRecord{}, fmt.Errorf("%w: %s: %v", ErrLostRecord, LostRecordPath(socket), err)
	}
	return r, nil
}

// writeLost replaces the lost record of socket with r; the private
// directory of the record it replaces goes, unless r names the same.
func writeLost(socket string, r LostRecord) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	old, oerr := ReadLost(socket)
	if err := replaceFile(LostRecordPath(socket), b); err != nil {
		return fmt.Errorf("remote: write the lost-session record: %w", err)
	}
	if oerr == nil && old.ShellDir != r.ShellDir {
		return removeShellDir(old.ShellDir)
	}
	return nil
}

// ExpireLost removes the lost records of dir (a socket directory) that are
// at least LostTTL old at now, with the private directories they name, and
// the jobs record of each whose socket no guardian took again. A record
// that cannot be read is dated by its file. It returns the sockets whose
// records it removed.
func ExpireLost(dir string, now time.Time) ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, lostGlob))
	if err != nil {
		return nil, err
	}
	var (
		done []string
		errs []error
	)
	for _, path := range paths {
		socket := strings.TrimSuffix(path, LostRecordSuffix)
		r, err := ReadLost(socket)
		died := r.Time
		if err != nil {
			fi, serr := os.Lstat(path)
			if serr != nil {
				continue // removed meanwhile
			}
			died = fi.ModTime()
		}
		if now.Sub(died) < LostTTL {
			continue
		}
		if err := removeShellDir(r.ShellDir); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		if _, err := os.Lstat(socket); errors.Is(err, fs.ErrNotExist) {
			if err := RemoveJobsRecord(socket); err != nil {
				errs = append(errs, err)
			}
		}
		done = append(done, socket)
	}
	return done, errors.Join(errs...)
}
