package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"winx/guardian"
)

// EnvTag names the variable every process of a guardian's session inherits
// (the shell, its commands, their children, setsid'd ones included, unless
// they clear their environment). Its value is the guardian's Record.Tag, by
// which the processes a dead guardian left are found.
const EnvTag = "WINX_SESSION_TAG"

// shellDirPrefix is how a session's private directory is named
// (guardian.PrivateDirPrefix); a record's ShellDir is removed only if it
// carries it.
const shellDirPrefix = guardian.PrivateDirPrefix

// maxRecordBytes bounds a record read back.
const maxRecordBytes = 64 << 10

// Record is what a guardian leaves beside its socket (RecordPath, mode
// 0600 in the private socket directory) so that what it started can be
// cleaned up when it dies without doing so itself (SIGKILL, a crash): its
// descendants by their EnvTag, and its shell directory. winxd also finds
// its guardians' pids here, to tell a caller from inside one of their
// sessions. A guardian that
// ends normally removes it with its socket.
type Record struct {
	PID      int    `json:"pid"`
	Key      string `json:"key"`
	Tag      string `json:"tag"`
	ShellDir string `json:"shell_dir,omitempty"`
	// Workspace is the session's workspace root (Config.Workspace, else
	// Config.Dir): winxd's sweep ends a session whose workspace was removed.
	Workspace string `json:"workspace,omitempty"`
	// Sandbox: the guardian confines its session (-sandbox), whatever its
	// key says; winxd refuses every caller from inside such a session.
	Sandbox bool `json:"sandbox,omitempty"`
}

// RecordPath is the record of the guardian on socket.
func RecordPath(socket string) string { return socket + ".json" }

// writeRecord replaces the record of socket atomically.
func writeRecord(socket string, r Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := replaceFile(RecordPath(socket), b); err != nil {
		return fmt.Errorf("remote: write the guardian record: %w", err)
	}
	return nil
}

// ReadRecord reads the record of the guardian on socket.
func ReadRecord(socket string) (Record, error) {
	b, err := readBounded(RecordPath(socket), maxRecordBytes)
	if over := (*overLimitError)(nil); errors.As(err, &over) {
		return Record{}, fmt.Errorf("remote: guardian record %w", err)
	}
	if err != nil {
		return Record{}, err
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return Record{}, fmt.Errorf("remote: guardian record %s: %w", RecordPath(socket), err)
	}
	return r, nil
}

// CleanupDead removes what the dead guardian of socket left: it kills every
// process carrying its tag and removes its record and the socket. It keeps
// the evidence of the lost session: the shell directory (the journals) and
// the jobs record (see JobsRecord) stay, and a LostRecord saying how the
// session was lost (loss) is written beside where the socket was, for the
// adapter to tell the model; ExpireLost removes them later. The caller has
// made sure nothing listens on socket (and keeps another guardian from
// taking it meanwhile).
func CleanupDead(socket string, loss Loss) error {
	r, err := ReadRecord(socket)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var errs []error
	if r.Tag != "" {
		KillTagged(r.Tag)
	}
	if r.PID > 0 {
		if loss.Time.IsZero() {
			loss.Time = time.Now()
		}
		if err := writeLost(socket, LostRecord{
			Key: r.Key, PID: r.PID, Tag: r.Tag, ShellDir: r.ShellDir, Workspace: r.Workspace, Sandbox: r.Sandbox, Loss: loss,
		}); err != nil {
			// Nothing would name the shell directory: it goes now rather
			// than never.
			errs = append(errs, err, removeShellDir(r.ShellDir))
		}
	}
	for _, p := range []string{RecordPath(socket), socket} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removeShellDir removes a session's private directory named by a record,
// if it is an absolute path named like one (shellDirPrefix): a record is
// never trusted to name anything else.
func removeShellDir(dir string) error {
	if dir == "" || !filepath.IsAbs(dir) || !strings.HasPrefix(filepath.Base(dir), shellDirPrefix) {
		return nil
	}
	return os.RemoveAll(dir)
}

// tagPasses bounds the rounds of KillTagged; a process forked during one
// is caught by the next.
const tagPasses = 3

// KillTagged sends SIGKILL to every process whose environment carries
// EnvTag=tag (on Linux; elsewhere it finds none) and returns how many it
// signalled.
func KillTagged(tag string) int {
	want := []byte("\x00" + EnvTag + "=" + tag + "\x00")
	self := strconv.Itoa(os.Getpid())
	n := 0
	for pass := 0; pass < tagPasses; pass++ {
		entries, err := os.ReadDir("/proc")
		if err != nil {
			return n
		}
		hit := 0
		for _, e := range entries {
			if e.Name() == self || e.Name()[0] < '0' || e.Name()[0] > '9' {
				continue
			}
			b, err := os.ReadFile("/proc/" + e.Name() + "/environ")
			if err != nil || !bytes.Contains(append(append([]byte{0}, b...), 0), want) {
				continue
			}
			if pid, err := strconv.Atoi(e.Name()); err == nil && syscall.Kill(pid, syscall.SIGKILL) == nil {
				hit++
			}
		}
		n += hit
		if hit == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return n
}
