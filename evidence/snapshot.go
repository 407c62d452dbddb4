package evidence

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// DefaultMaxBytes bounds a snapshot when the caller passes maxBytes <= 0.
const DefaultMaxBytes = 16 << 20

// maxRetries is how many times ReadSnapshot reads again after seeing the
// file replaced or changed during a read, so a read makes at most
// maxRetries+1 attempts before ErrUnstable.
const maxRetries = 3

var (
	// ErrNotRegular: the path is a directory, FIFO, socket or device.
	ErrNotRegular = errors.New("evidence: not a regular file")
	// ErrTooLarge: the file is larger than the caller's limit.
	ErrTooLarge = errors.New("evidence: file too large")
	// ErrUnstable: the file kept changing or being replaced while it was read.
	ErrUnstable = errors.New("evidence: file changed during read")
)

// ReadError is the error of ReadSnapshot. Err wraps the cause: one of the
// sentinels above, or an *fs.PathError, so errors.Is(err, fs.ErrNotExist)
// and errors.Is(err, fs.ErrPermission) work.
type ReadError struct {
	Path string // the path as the caller gave it
	Err  error
}

func (e *ReadError) Error() string { return "evidence: read " + e.Path + ": " + e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

// Snapshot is the bytes of one regular file as they were at one moment, with
// the metadata that proved it. It is never changed after ReadSnapshot returns.
type Snapshot struct {
	Path     string // canonical: absolute, symlinks resolved (filepath.EvalSymlinks)
	Bytes    []byte
	Revision Revision
	Mode     fs.FileMode
	ModTime  time.Time
	Size     int64 // == len(Bytes)
	Dev, Ino uint64
}

// ReadSnapshot reads the regular file at path, at most maxBytes bytes
// (DefaultMaxBytes if maxBytes <= 0), as a stable snapshot:
//
//  1. resolve path to its canonical form (absolute, symlinks followed);
//  2. open it read-only with O_NONBLOCK and O_NOCTTY, so a FIFO or a
//     terminal never blocks or becomes a controlling terminal;
//  3. fstat the descriptor and refuse anything but a regular file
//     (ErrNotRegular) or a file over the limit (ErrTooLarge);
//  4. read from the descriptor through a reader bounded at the size plus
//     one byte (no mmap, so a truncation can not fault the process);
//  5. lstat the canonical path again: it must still name the same file
//     (device, inode) with the same size and mtime, and the read must have
//     returned exactly that size.
//
// If step 5 fails the file was replaced or changed while it was read; the
// whole sequence is retried up to 3 times, then the error is ErrUnstable.
//
// ReadSnapshot follows symlinks: deciding whether the canonical path is
// allowed is the caller's job (auth's path policy), done on Snapshot.Path.
// Every error is a *ReadError.
func ReadSnapshot(path string, maxBytes int64) (*Snapshot, error) {
	r := snapshotReader{maxBytes: maxBytes}
	return r.read(path)
}

// snapshotReader carries one ReadSnapshot call's settings.
type snapshotReader struct {
	maxBytes int64
	// afterRead, if set (only by tests), runs after the bytes are read and
	// before the path is checked again, with the 0-based attempt number.
	afterRead func(attempt int)
}

// errChanged is internal: the attempt saw the file change; retry.
var errChanged = errors.New("evidence: changed")

func (r *snapshotReader) read(path string) (*Snapshot, error) {
	limit := r.maxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	for attempt := 0; attempt <= maxRetries; attempt++ {
		s, err := r.attempt(path, limit, attempt)
		if err == nil {
			return s, nil
		}
		if !errors.Is(err, errChanged) {
			return nil, &ReadError{Path: path, Err: err}
		}
	}
	return nil, &ReadError{Path: path, Err: fmt.Errorf("%w (%d attempts)", ErrUnstable, maxRetries+1)}
}

func (r *snapshotReader) attempt(path string, limit int64, attempt int) (*Snapshot, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	canon, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(canon, os.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOCTTY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	before, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !before.Mode().IsRegular() {
		return nil, fmt.Errorf("%w (%s)", ErrNotRegular, fileKind(before.Mode()))
	}
	size := before.Size()
	if size > limit {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, size, limit)
	}
	// One byte more than the size, so a file that grew is noticed.
	buf := make([]byte, size+1)
	n, err := io.ReadFull(io.LimitReader(f, size+1), buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, err
	}
	if r.afterRead != nil {
		r.afterRead(attempt)
	}
	if int64(n) != size {
		return nil, errChanged
	}
	after, err := os.Lstat(canon)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errChanged // renamed away or deleted mid-read
		}
		return nil, err
	}
	dev, ino := devIno(before)
	dev2, ino2 := devIno(after)
	if dev != dev2 || ino != ino2 || after.Size() != size ||
		!after.ModTime().Equal(before.ModTime()) || after.Mode() != before.Mode() {
		return nil, errChanged
	}
	b := buf[:n:n]
	return &Snapshot{
		Path:     canon,
		Bytes:    b,
		Revision: RevisionOf(b),
		Mode:     before.Mode(),
		ModTime:  before.ModTime(),
		Size:     size,
		Dev:      dev,
		Ino:      ino,
	}, nil
}

func devIno(fi fs.FileInfo) (dev, ino uint64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		panic("evidence: FileInfo.Sys is not *syscall.Stat_t on a unix system")
	}
	return uint64(st.Dev), uint64(st.Ino)
}

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	default:
		return "irregular file"
	}
}
