package atomicfile

// Cross-process locks. An in-process mutex cannot stop another process
// (a second adapter on the same workspace) from replacing a file between
// this process's last check of it and its rename, so the check and the
// rename are held under a kernel lock (flock(2)) that every process
// respects. The lock is never taken on the target itself: the rename
// replaces its inode, and a lock on an inode that is no longer the file's
// protects nothing.

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrLockTimeout: the lock was held by another writer for longer than the
// caller was willing to wait.
var ErrLockTimeout = errors.New("atomicfile: lock busy")

// Lock is a held cross-process lock. Unlock releases it; a process that
// dies releases it too (the kernel drops flocks with the last descriptor).
type Lock struct {
	f    *os.File
	dir  dirRef // where name lives; zero for a directory lock
	name string // "" for a directory lock
	// dirLock: f is the Dir's own descriptor, unlocked but not closed.
	dirLock bool
}

// LockFile takes an exclusive lock named name in the directory lockDir,
// waiting at most wait. The lock file is created 0600 and removed again by
// the holder before it unlocks, so the directory does not fill up; a
// waiter that got the lock on a file that was removed or replaced in the
// meantime starts over, so two holders can never hold different files of
// one name.
func LockFile(lockDir, name string, wait time.Duration) (*Lock, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	ref := dirRef{path: lockDir}
	deadline := time.Now().Add(wait)
	for {
		f, err := ref.openFile(name, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, err
		}
		if err := pollFlock(f, deadline); err != nil {
			f.Close()
			return nil, err
		}
		if ref.sameFile(f, name) {
			return &Lock{f: f, dir: ref, name: name}, nil
		}
		f.Close() // the holder before us removed it: try the new one
		if time.Now().After(deadline) {
			return nil, ErrLockTimeout
		}
	}
}

// Lock takes an exclusive flock on the directory itself, waiting at most
// wait. It serialises every writer of the directory that uses it; the
// directory's inode outlives renames of the files in it. The lock belongs
// to this Dir's open descriptor: another Dir of the same directory, in
// this process or another, waits for it.
func (d *Dir) Lock(wait time.Duration) (*Lock, error) {
	if err := pollFlock(d.ref.f, time.Now().Add(wait)); err != nil {
		return nil, err
	}
	return &Lock{f: d.ref.f, dirLock: true}, nil
}

// Unlock releases the lock, removing its lock file first (while the lock
// is still held, so no one else can have taken the name's lock).
func (l *Lock) Unlock() {
	if l.dirLock {
		flock(l.f, syscall.LOCK_UN)
		return
	}
	fd, name := l.dir.at(l.name)
	unix.Unlinkat(fd, name, 0)
	l.f.Close()
}

// pollFlock takes an exclusive flock on f, polling until deadline: a
// blocking flock cannot be given up on, and a writer that holds a lock
// forever (a stopped process) must cost its waiters an error, not a hang.
func pollFlock(f *os.File, deadline time.Time) error {
	delay := time.Millisecond
	for {
		err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return &fs.PathError{Op: "flock", Path: f.Name(), Err: err}
		}
		if time.Now().After(deadline) {
			return ErrLockTimeout
		}
		time.Sleep(delay)
		delay = min(2*delay, 20*time.Millisecond)
	}
}

// LockName is a lock file name for key (a canonical path): fixed length,
// one path component, whatever the key holds.
func LockName(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:16]) + ".lock"
}
