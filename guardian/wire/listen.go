package wire

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// probeTimeout bounds the dial that tells a live socket from a stale one.
const probeTimeout = time.Second

// lockName is the file in a socket directory that serialises Listen, so two
// processes can never both decide a socket is stale and unlink each other's.
const lockName = ".lock"

// Listen creates the Unix socket path (mode 0600) in a directory that
// passes CheckDir. When the path already exists it is dialed first: a live
// server makes Listen fail with ErrInUse; a socket nobody answers on is
// stale and is replaced; anything that is not a socket is left alone
// (ErrNotSocket). The listener unlinks the socket when closed.
func Listen(path string) (*net.UnixListener, error) {
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("%w: %d bytes, at most %d: %s", ErrPathTooLong, len(path), maxSocketPath, path)
	}
	dir := filepath.Dir(path)
	if err := CheckDir(dir); err != nil {
		return nil, err
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()

	ln, err := listenUnix(path)
	if errors.Is(err, syscall.EADDRINUSE) {
		if err := clearStale(path); err != nil {
			return nil, err
		}
		ln, err = listenUnix(path)
	}
	if err != nil {
		return nil, fmt.Errorf("wire: listen %s: %w", path, err)
	}
	// The directory is private, so the moment between bind and chmod
	// exposes nothing; fchmod on a socket fd does not change the file.
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("wire: chmod socket: %w", err)
	}
	return ln, nil
}

func listenUnix(path string) (*net.UnixListener, error) {
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	ln.SetUnlinkOnClose(true)
	return ln, nil
}

// clearStale removes path if it is a socket that no server answers on.
func clearStale(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("wire: inspect %s: %w", path, err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("%w: %s", ErrNotSocket, path)
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	alive, err := Probe(ctx, path)
	if err != nil {
		return err
	}
	if alive {
		return fmt.Errorf("%w: %s", ErrInUse, path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("wire: remove stale socket: %w", err)
	}
	return nil
}

// Probe reports whether something accepts connections on path. A refused
// connection or a missing file means no (a stale socket); other failures,
// such as a timeout from a server too busy to accept, are returned.
func Probe(ctx context.Context, path string) (bool, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err == nil {
		c.Close()
		return true, nil
	}
	if noServer(err) {
		return false, nil
	}
	return false, fmt.Errorf("wire: probe %s: %w", path, err)
}

// noServer reports whether a dial error means nobody listens.
func noServer(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, fs.ErrNotExist)
}

// lockDir takes an exclusive flock on the directory's lock file.
func lockDir(dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("wire: open lock file: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("wire: lock socket directory: %w", err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
