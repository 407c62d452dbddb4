package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"winx/guardian"
	"winx/guardian/remote"
	"winx/guardian/wire"
)

// A session is lost when the guardian that served it dies (SIGKILL, a
// crash, `winx kill`, an idle sweep, a reclaim at the quota): its shell,
// cwd and running command go with it. What it leaves is found here, so an
// adapter that replaces the session can say what was lost instead of
// calling a dead session "reattached".

// Bounds of what a lost session's report carries.
const (
	// MaxLostLines is how many of the journal's last lines a Lost holds.
	MaxLostLines = 20
	// maxLostLineBytes cuts one of those lines.
	maxLostLineBytes = 512
	// maxLostJournalBytes bounds the bytes kept of a lost journal (its
	// file and its screen sidecar): a journal is never larger
	// (guardian.JournalCommandBudget).
	maxLostJournalBytes = guardian.JournalCommandBudget
	// maxLostDirEntries bounds the entries of a private directory looked at.
	maxLostDirEntries = 4096
	// LostDirName is the directory of the state directory where the
	// journals of lost sessions are kept for their principals to read.
	LostDirName = "lost"
	// maxKeptJournals is how many kept journals one session key keeps;
	// the oldest go first.
	maxKeptJournals = 8
	// LostJournalTTL is how long a kept journal is kept at most: older
	// ones of any session go when a journal is kept.
	LostJournalTTL = 7 * 24 * time.Hour
)

// Lost is what is known of a session whose guardian died.
type Lost struct {
	// Command is the foreground command that was running, "" when the
	// guardian's files do not say (the adapter may know it).
	Command string
	// Generation is the command generation of Journal (its output-N.txt),
	// 0 when there is no journal.
	Generation uint64
	// Journal is where the output of the session's last foreground
	// command is kept (its journal, with the lines still on its screen),
	// "" when none was left.
	Journal string
	// Lines counts the lines Journal holds.
	Lines int
	// Last are its last lines (at most MaxLostLines), raw: the caller
	// redacts them before they leave the process.
	Last []string
	// Jobs are the session's background commands; those that ran are lost.
	Jobs []guardian.Job
}

// LostInfo finds what the dead guardian of a session left; false when
// nothing of it is found. It may keep files for the report (Lost.Journal),
// which it does before the leftovers are cleaned up.
type LostInfo func(ctx context.Context, spec Spec) (Lost, bool)

// LostRecordFunc reads the record winxd leaves of a guardian on socket that
// died after removing its socket and Record: the session's private
// directory (remote.Record.ShellDir), false when there is none. The daemon
// runtime plugs the lost-session record reader in here (DaemonOptions.ReadLost).
type LostRecordFunc func(socket string) (shellDir string, ok bool)

// LostFinder is the default LostInfo of the daemon runtime, for guardians
// whose sockets are in dir. It looks beside the session's socket for the
// guardian Record (its ShellDir), else asks readLost (nil: none), and
// keeps the newest foreground journal of that directory, with its screen
// sidecar, under keepDir (the state directory's LostDirName; "" keeps
// nothing and reports the journal where it is). The jobs come from the
// guardian's jobs record.
type LostFinder struct {
	Dir       string // the socket directory (filepath.Dir of winxd's socket)
	Sandboxed bool   // the runtime's guardians are confined (see guardianKey)
	// DenyNetwork: confined without IP networking (see guardianKey).
	DenyNetwork bool
	KeepDir     string
	ReadLost    LostRecordFunc
}

var _ LostInfo = (&LostFinder{}).Find

// Find is the LostInfo of f.
func (f *LostFinder) Find(_ context.Context, spec Spec) (Lost, bool) {
	key := guardianKey(&spec, f.Sandboxed, f.DenyNetwork).String()
	return findLost(f.socket(key), key, f.ReadLost, f.keepDir(key))
}

func (f *LostFinder) socket(key string) string { return wire.GuardianSocket(f.Dir, key) }

// keepDir is where the journals of key's lost sessions are kept: one
// directory per session key, so nothing of one session is named after
// another's.
func (f *LostFinder) keepDir(key string) string {
	if f.KeepDir == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(f.KeepDir, hex.EncodeToString(sum[:16]))
}

// findLost is what the dead guardian of key on socket left. It is called
// only once nothing answers on socket.
func findLost(socket, key string, readLost LostRecordFunc, keep string) (Lost, bool) {
	var lost Lost
	found := false
	dir := ""
	if r, err := remote.ReadRecord(socket); err == nil && r.Key == key {
		dir, found = r.ShellDir, true
	} else if readLost != nil {
		dir, found = readLost(socket)
	}
	if r, err := remote.ReadJobsRecord(socket); err == nil && r.Key == key && found {
		lost.Jobs = r.LostJobs()
	}
	if !found {
		return Lost{}, false
	}
	if dir != "" && filepath.IsAbs(dir) && strings.HasPrefix(filepath.Base(dir), guardian.PrivateDirPrefix) {
		lost.readJournal(dir, keep)
	}
	return lost, true
}

// readJournal fills the journal fields from the newest foreground journal
// in the private directory dir, keeping a copy under keep.
func (l *Lost) readJournal(dir, keep string) {
	name, gen := newestJournal(dir)
	if name == "" {
		return
	}
	src := filepath.Join(dir, name)
	l.Generation, l.Journal = gen, src
	if script, err := readSmall(filepath.Join(dir, "cmd-"+strconv.FormatUint(gen, 10)+".sh"), 4096); err == nil {
		// A long command ran from a script: its text is known.
		l.Command = strings.TrimRight(script, "\n")
	}
	var out io.Writer = io.Discard
	if keep != "" {
		if f, path, err := createKept(keep, gen); err == nil {
			defer f.Close()
			out, l.Journal = f, path
		}
	}
	c := lineCounter{w: out}
	budget := int64(maxLostJournalBytes)
	for _, p := range []string{src, src + guardian.ScreenSuffix} {
		n, _ := copyBounded(&c, p, budget)
		budget -= n
		if c.partial.Len() > 0 {
			// The sidecar's lines start on a line of their own.
			c.Write([]byte("\n"))
		}
	}
	l.Lines, l.Last = c.lines, c.last
}

// newestJournal is the output-N.txt of dir with the largest N.
func newestJournal(dir string) (string, uint64) {
	d, err := os.Open(dir)
	if err != nil {
		return "", 0
	}
	defer d.Close()
	names, _ := d.Readdirnames(maxLostDirEntries)
	best, gen := "", uint64(0)
	for _, n := range names {
		num, ok := strings.CutPrefix(n, "output-")
		if num, ok = strings.CutSuffix(num, ".txt"); !ok {
			continue
		}
		if g, err := strconv.ParseUint(num, 10, 64); err == nil && g > gen {
			best, gen = n, g
		}
	}
	return best, gen
}

// createKept creates the file a lost journal is kept in: 0600, new, in a
// 0700 directory.
func createKept(keep string, gen uint64) (*os.File, string, error) {
	if err := os.MkdirAll(keep, 0o700); err != nil {
		return nil, "", err
	}
	if fi, err := os.Lstat(keep); err != nil || !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 {
		return nil, "", errors.New("runtime: unsafe directory for lost journals")
	}
	// The path is reported and later read back by exactly this name: the
	// canonical one.
	keep, err := filepath.EvalSymlinks(keep)
	if err != nil {
		return nil, "", err
	}
	path := filepath.Join(keep, fmt.Sprintf("%s-output-%d.txt", time.Now().UTC().Format("20060102T150405.000000000Z"), gen))
	fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, "", &os.PathError{Op: "open", Path: path, Err: err}
	}
	pruneKept(keep, path)
	return os.NewFile(uintptr(fd), path), path, nil
}

// pruneKept bounds the kept journals: in keep (one session key's) the
// newest maxKeptJournals stay, and in its parent every key's journals older
// than LostJournalTTL go. The file just created (fresh) stays.
func pruneKept(keep, fresh string) {
	names := dirNames(keep)
	slices.Sort(names) // the names start with their UTC time
	for i, n := range names {
		if p := filepath.Join(keep, n); p != fresh && i < len(names)-maxKeptJournals {
			os.Remove(p)
		}
	}
	cutoff := time.Now().Add(-LostJournalTTL)
	root := filepath.Dir(keep)
	for _, k := range dirNames(root) {
		dir := filepath.Join(root, k)
		for _, n := range dirNames(dir) {
			p := filepath.Join(dir, n)
			if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && fi.ModTime().Before(cutoff) && p != fresh {
				os.Remove(p)
			}
		}
		os.Remove(dir) // only if empty
	}
}

// dirNames lists at most maxLostDirEntries names of dir.
func dirNames(dir string) []string {
	d, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(maxLostDirEntries)
	return names
}

// copyBounded copies at most limit bytes of the regular file at path to w.
func copyBounded(w io.Writer, path string, limit int64) (int64, error) {
	if limit <= 0 {
		return 0, nil
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return 0, fs.ErrInvalid
	}
	return io.Copy(w, io.LimitReader(f, limit))
}

// readSmall reads a regular file of at most limit bytes.
func readSmall(path string, limit int64) (string, error) {
	var b strings.Builder
	n, err := copyBounded(&b, path, limit+1)
	if err != nil {
		return "", err
	}
	if n > limit {
		return "", fs.ErrInvalid
	}
	return b.String(), nil
}

// lineCounter passes bytes on to w, counting lines and keeping the last
// MaxLostLines of them.
type lineCounter struct {
	w       io.Writer
	lines   int
	last    []string
	partial strings.Builder // the line not ended yet, cut to maxLostLineBytes
}

func (c *lineCounter) Write(p []byte) (int, error) {
	n := len(p)
	if _, err := c.w.Write(p); err != nil {
		c.w = io.Discard // the copy failed; the count goes on
	}
	for len(p) > 0 {
		i := strings.IndexByte(string(p), '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if room := maxLostLineBytes - c.partial.Len(); room > 0 {
			c.partial.Write(chunk[:min(len(chunk), room)])
		}
		if i < 0 {
			break
		}
		c.endLine()
		p = p[i+1:]
	}
	return n, nil
}

func (c *lineCounter) endLine() {
	c.lines++
	c.last = append(c.last, c.partial.String())
	if len(c.last) > MaxLostLines {
		c.last = c.last[1:]
	}
	c.partial.Reset()
}

var _ io.Writer = (*lineCounter)(nil)

// probeBudget bounds Gone's status call on a terminal.
const probeBudget = 5 * time.Second

// Gone reports whether t's session is known to be lost: its guardian does
// not listen any more, another incarnation serves its socket, or it closed
// its session. A guardian that does not answer in time is not gone (it may
// be stopped and continued); an embedded session is never gone while its
// adapter runs. It costs one status round trip on t's connection, and a
// second on a fresh one when the first found the connection ended.
func Gone(ctx context.Context, t guardian.Terminal) bool {
	rs, ok := t.(*remote.RemoteShell)
	if !ok {
		return false
	}
	for range 2 {
		cctx, cancel := context.WithTimeout(ctx, probeBudget)
		st, err := rs.Status(cctx)
		cancel()
		switch {
		case err == nil:
			return st.Closed
		case !errors.Is(err, remote.ErrGuardianGone):
			return false
		}
		// A connection that ended is dialed again once: only a socket
		// nobody answers on, or another incarnation, is final.
	}
	return true
}
