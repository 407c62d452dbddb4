package guardian

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"winx/pty/sandbox"
)

// A session keeps everything of its own (the rc file, long command scripts,
// the output journals, and a confined shell's temporary directory) in one
// private directory:
//
//	<Options.PrivateRoot>/winx-shell-<random>/      0700
//	<Options.PrivateRoot>/winx-shell-<random>/tmp/  0700, TMPDIR of a confined shell
//
// It never lives in the shared temporary directory: every session's shell
// may write there (a confined one too, before), and a neighbour that can
// create a FIFO or a symbolic link under a name the guardian is about to
// write swallows or redirects what it writes; a long command sourced from
// there runs whatever the neighbour fed it, in this session's unconfined
// shell. The root is the caller's (the state directory, which the sandbox
// hides with the home directory and the read-only profile hides
// explicitly, HiddenDirs), so no confined shell can list, read or create
// anything in another session's directory, and the guardian's own files
// are created with O_EXCL|O_NOFOLLOW all the same.

// PrivateDirPrefix names a session's private directory in its root;
// records (guardian/remote) name it and clean-ups check the prefix before
// they remove anything.
const PrivateDirPrefix = "winx-shell-"

// ErrPrivateRoot reports a private root that cannot hold sessions' files
// safely: missing in Options, relative, a symbolic link, not a directory,
// or writable by other users.
var ErrPrivateRoot = errors.New("guardian: unsafe private root for session files")

// OwnDirs are a session's own directories, which a sandbox wrapper
// (Options.WrapArgv) grants to the session's processes: Dir readable (the
// rc file and command scripts the shell reads), Tmp writable (TMPDIR).
type OwnDirs struct {
	Dir string
	Tmp string
}

// Grant is p with the session's own directories granted: its private
// directory readable (the rc file, long commands), its tmp/ writable (the
// shell's TMPDIR; the sandbox grants no shared temporary directory).
func (o OwnDirs) Grant(p sandbox.Policy) sandbox.Policy {
	if o.Dir != "" {
		p.RO = append(append([]string(nil), p.RO...), o.Dir)
	}
	if o.Tmp != "" {
		p.RW = append(append([]string(nil), p.RW...), o.Tmp)
	}
	return p
}

// makePrivateDir creates a session's private directory and its tmp/ in
// root, which it first makes (0700) or checks.
func makePrivateDir(root string) (OwnDirs, error) {
	if root == "" || !filepath.IsAbs(root) {
		return OwnDirs{}, fmt.Errorf("%w: %q is not an absolute path", ErrPrivateRoot, root)
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return OwnDirs{}, fmt.Errorf("guardian: private root: %w", err)
	}
	if err := checkPrivateRoot(root); err != nil {
		return OwnDirs{}, err
	}
	dir, err := os.MkdirTemp(root, PrivateDirPrefix)
	if err != nil {
		return OwnDirs{}, fmt.Errorf("guardian: private directory: %w", err)
	}
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		os.RemoveAll(dir)
		return OwnDirs{}, fmt.Errorf("guardian: private directory: %w", err)
	}
	return OwnDirs{Dir: dir, Tmp: tmp}, nil
}

// checkPrivateRoot accepts a real directory (not a symbolic link) owned by
// this user that no other user may write to: nobody else can then remove,
// rename or replace a session's directory in it (each is 0700 itself).
func checkPrivateRoot(root string) error {
	fi, err := os.Lstat(root)
	if err != nil {
		return fmt.Errorf("guardian: private root: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w: %s is not a directory (a symbolic link is refused)", ErrPrivateRoot, root)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%w: %s belongs to uid %d, not to this user", ErrPrivateRoot, root, st.Uid)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%w: %s has mode %#o: others may write to it; want 0700", ErrPrivateRoot, root, fi.Mode().Perm())
	}
	return nil
}

// writePrivateFile creates path anew with data, mode 0600: what was there
// is removed first, and the new file is opened with O_EXCL|O_NOFOLLOW, so
// a symbolic link or FIFO someone left under the name is never followed or
// opened. The directory is the session's own.
func writePrivateFile(path string, data []byte) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return &os.PathError{Op: "create", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
