//go:build !linux

package session

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// openStateFile opens path for readStateFile where the standard library
// has no openat: the directory must not be a link when looked at, and the
// file is opened without following a link and without blocking on a FIFO.
// (The Linux build pins the directory by descriptor instead.)
func openStateFile(path string) (*os.File, error) {
	fi, err := os.Lstat(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, errors.New("session: state directory is not a directory")
	}
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}
