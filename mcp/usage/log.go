package usage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Rotation periods for Options.Rotation.
const (
	RotateDaily  = "daily"
	RotateHourly = "hourly"
	RotateNever  = "never"
)

// DefaultRetentionDays is the retention when Options.RetentionDays is zero.
const DefaultRetentionDays = 7

// KeepForever as Options.RetentionDays disables deletion of rotated files.
const KeepForever = -1

// fileMode is the mode a new log is created with; an existing log must have
// no bits outside it for group or other.
const fileMode = 0o600

// dirMode is the mode of the directories Open makes for the log.
const dirMode = 0o700

// openFlags: append-only, never through a symlink (ELOOP), never inherited by
// children, and O_NONBLOCK so a FIFO planted at the path cannot block Open
// before fstat refuses it (it is a no-op for regular files).
const openFlags = os.O_WRONLY | os.O_APPEND | os.O_CREATE |
	syscall.O_NOFOLLOW | syscall.O_CLOEXEC | syscall.O_NONBLOCK

// Options configures a Log. The zero value means daily rotation, 7 days of
// retention, time.Now and no build identity.
type Options struct {
	Rotation string // RotateDaily (default), RotateHourly or RotateNever
	// RetentionDays is how long rotated files are kept: 0 means
	// DefaultRetentionDays, KeepForever (any negative value) keeps them all.
	RetentionDays int
	Now           func() time.Time // nil means time.Now
	Build         string           // build identity written on every line
}

// Log appends Records to a private JSON Lines file and rotates it. Its
// methods are safe for concurrent use.
type Log struct {
	path      string
	rotation  string
	retention time.Duration // 0 keeps rotated files forever
	now       func() time.Time
	build     string

	mu sync.Mutex
	f  *os.File // guarded by mu; nil after Close
	// period is the start (UTC) of the rotation period f holds, guarded by mu.
	// Invariant: zero iff rotation is RotateNever.
	period time.Time
}

// Open opens or creates the log at path with mode 0600, making its missing
// directories with mode 0700. It refuses a symbolic
// link, a file that is not regular, and a file with group or other
// permission bits (*FileError wrapping ErrInsecureFile). Rotated files older
// than the retention are deleted.
func Open(path string, opts Options) (*Log, error) {
	l := &Log{path: path, rotation: opts.Rotation, now: opts.Now, build: opts.Build}
	switch l.rotation {
	case "":
		l.rotation = RotateDaily
	case RotateDaily, RotateHourly, RotateNever:
	default:
		return nil, fmt.Errorf("%w: %q", ErrBadRotation, opts.Rotation)
	}
	switch days := opts.RetentionDays; {
	case days == 0:
		l.retention = DefaultRetentionDays * 24 * time.Hour
	case days > 0:
		l.retention = time.Duration(days) * 24 * time.Hour
	}
	if l.now == nil {
		l.now = time.Now
	}
	// A directory that does not exist yet is made private (0700), as Winx
	// does: a log path in a fresh state directory is the common case.
	// Directories that exist are left as they are.
	if err := os.MkdirAll(filepath.Dir(path), dirMode); err != nil {
		return nil, fmt.Errorf("usage: %w", err)
	}
	f, fi, err := openPrivate(path)
	if err != nil {
		return nil, err
	}
	l.f = f
	// A non-empty file left by an earlier run belongs to the period of its
	// last write, so a restart in a later period rotates it on first write.
	born := l.now()
	if fi.Size() > 0 {
		born = fi.ModTime()
	}
	l.period = periodStart(born, l.rotation)
	if err := l.prune(); err != nil {
		f.Close()
		return nil, err
	}
	return l, nil
}

// openPrivate opens path for appending and checks, on the open descriptor,
// that it is a regular file without group or other permission bits.
func openPrivate(path string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, openFlags, fileMode)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, nil, fmt.Errorf("usage: %s is a symbolic link: %w: %w", path, ErrInsecureFile, err)
		}
		return nil, nil, fmt.Errorf("usage: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("usage: %w", err)
	}
	switch {
	case !fi.Mode().IsRegular():
		f.Close()
		return nil, nil, &FileError{Path: path, Mode: fi.Mode(), Reason: "not a regular file"}
	case fi.Mode().Perm()&0o077 != 0:
		f.Close()
		return nil, nil, &FileError{Path: path, Mode: fi.Mode(), Reason: "group or other permission bits"}
	}
	return f, fi, nil
}

// Record writes e as one JSON line, rotating the file first when the
// rotation period has changed. A rotation failure is returned and the entry is
// not written; the next Record tries again.
func (l *Log) Record(e Entry) error {
	switch e.Type {
	case "", EventToolCall:
		e.Type = EventToolCall
		if !validOutcome(e.Outcome) {
			return fmt.Errorf("%w: %q", ErrBadOutcome, e.Outcome)
		}
	case EventHTTPRequest:
	default:
		return fmt.Errorf("%w: %q", ErrBadEvent, e.Type)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return ErrClosed
	}
	now := l.now()
	var pruneErr error
	if p := periodStart(now, l.rotation); !p.Equal(l.period) {
		if err := l.rotateLocked(p); err != nil {
			return err
		}
		pruneErr = l.prune()
	}
	t := e.Time
	if t.IsZero() {
		t = now
	}
	line, err := marshalLine(&Record{
		Time:          t.UTC(),
		Type:          e.Type,
		Schema:        SchemaVersion,
		RequestID:     label(e.RequestID),
		Method:        label(e.Method),
		Path:          pathLabel(e.Path),
		HTTPStatus:    e.HTTPStatus,
		Build:         l.build,
		Tool:          label(e.Tool),
		Outcome:       e.Outcome,
		Status:        label(e.Status),
		ErrorCode:     label(e.ErrorCode),
		DurationMs:    e.DurationMs,
		ResponseBytes: e.ResponseBytes,
		Principal:     hashOrEmpty(e.Principal),
		Correlation:   hashOrEmpty(e.Correlation),
		ArgsDigest:    argsDigest(e.ArgsDigest),
		Action:        label(e.Action),
		Category:      label(e.Category),
		Session:       label(e.Session),
		Batch:         max(e.Batch, 0),
		WorkerLimit:   max(e.WorkerLimit, 0),
		ContextBytes:  max(e.ContextBytes, 0),
		// GuidelinesBytes is part of ContextBytes.
		GuidelinesBytes: max(e.GuidelinesBytes, 0),
		InitialFiles:    max(e.InitialFiles, 0),
		ClientName:      clientLabel(e.ClientName),
		ClientVersion:   clientLabel(e.ClientVersion),
		Protocol:        label(e.Protocol),
	})
	if err != nil {
		panic("usage: Record does not marshal: " + err.Error()) // only strings, numbers and a time
	}
	// One write per line: with O_APPEND, lines from other processes sharing
	// the file do not interleave.
	if _, err := l.f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("usage: %w", err)
	}
	return pruneErr
}

// rotateLocked moves the current file aside as <path>.<stamp of its period>
// and opens a fresh one for period p. If the path no longer names our file
// (another process sharing the log rotated it), it only reopens.
func (l *Log) rotateLocked(p time.Time) error {
	mine, err := l.f.Stat()
	if err != nil {
		return fmt.Errorf("usage: rotate: %w", err)
	}
	if cur, err := os.Lstat(l.path); err == nil && os.SameFile(mine, cur) {
		if err := moveAside(l.path, stamp(l.period, l.rotation)); err != nil {
			return err
		}
	}
	f, _, err := openPrivate(l.path)
	if err != nil {
		return err
	}
	l.f.Close()
	l.f = f
	l.period = p
	return nil
}

// Close closes the file; later Records return ErrClosed.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return ErrClosed
	}
	err := l.f.Close()
	l.f = nil
	return err
}
