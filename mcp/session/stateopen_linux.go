package session

import (
	"os"
	"path/filepath"
	"syscall"
)

// openStateFile opens path for readStateFile: its directory with
// O_NOFOLLOW, then the file relative to that descriptor, without following
// a link and without blocking on a FIFO.
func openStateFile(path string) (*os.File, error) {
	dir, err := syscall.Open(filepath.Dir(path), syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(dir)
	fd, err := syscall.Openat(dir, filepath.Base(path), syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}
