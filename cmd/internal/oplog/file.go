package oplog

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// File is a log file capped in size: a write that would take it past its
// cap first renames it to path+".1" (replacing the previous one) and starts
// a new file, so the log never holds more than about twice the cap.
// It is safe for concurrent use.
type File struct {
	path string
	max  int64

	mu   sync.Mutex // guards f and size
	f    *os.File
	size int64
}

// OpenFile opens (creating 0600, appending) the log file path capped at
// maxBytes. A missing directory is created 0700; an existing one keeps its
// mode (the operator chose it).
func OpenFile(path string, maxBytes int64) (*File, error) {
	if maxBytes <= 0 {
		return nil, fmt.Errorf("oplog: cap %d is not positive", maxBytes)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	l := &File{path: path, max: maxBytes}
	if err := l.openLocked(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *File) openLocked() error {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		f.Chmod(0o600)
	}
	l.f, l.size = f, fi.Size()
	return nil
}

// Write appends p, rotating first when p would pass the cap.
func (l *File) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return 0, os.ErrClosed
	}
	if l.size > 0 && l.size+int64(len(p)) > l.max {
		if err := l.rotateLocked(); err != nil {
			return 0, err
		}
	}
	n, err := l.f.Write(p)
	l.size += int64(n)
	return n, err
}

func (l *File) rotateLocked() error {
	l.f.Close()
	l.f = nil
	if err := os.Rename(l.path, l.path+".1"); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("oplog: rotate: %w", err)
	}
	return l.openLocked()
}

// Close closes the file.
func (l *File) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
