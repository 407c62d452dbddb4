package atomicfile

// Directories pinned by descriptor. A writer that resolves a path once and
// then works by name can be redirected: a parent directory swapped for a
// symbolic link between the check and the write moves the write elsewhere.
// A Dir is reached one component at a time, each opened relative to the
// last with O_NOFOLLOW, so the kernel refuses a symbolic link anywhere on
// the way; everything done through it afterwards (temp file, rename, link,
// removal, fsync) happens in that directory, whatever its path names by
// then.

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrSymlink: a component of a path OpenDir walks, or a name a Dir opens,
// is a symbolic link. It is wrapped in an *fs.PathError naming the path up
// to that component.
var ErrSymlink = errors.New("atomicfile: symbolic link in path")

// ErrBadName: a name given to a Dir is not a single path component.
var ErrBadName = errors.New("atomicfile: not a file name")

// dirRef is where the *at system calls of a Temp or a sweep run: an open
// directory, or (f nil) a path resolved by the kernel on every call.
type dirRef struct {
	f    *os.File // nil: resolve path on every call
	path string
}

// at returns the descriptor and name to pass to an *at system call for
// name in the directory.
func (d dirRef) at(name string) (int, string) {
	if d.f == nil {
		return unix.AT_FDCWD, filepath.Join(d.path, name)
	}
	return int(d.f.Fd()), name
}

// openFile opens name in the directory, never following a symbolic link
// in its last component.
func (d dirRef) openFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	fd, rel := d.at(name)
	nfd, err := openat(fd, rel, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			err = ErrSymlink
		}
		return nil, &fs.PathError{Op: "openat", Path: filepath.Join(d.path, name), Err: err}
	}
	return os.NewFile(uintptr(nfd), filepath.Join(d.path, name)), nil
}

// sameFile reports whether name in the directory still refers to f's inode.
func (d dirRef) sameFile(f *os.File, name string) bool {
	var a, b unix.Stat_t
	if unix.Fstat(int(f.Fd()), &a) != nil {
		return false
	}
	fd, rel := d.at(name)
	if unix.Fstatat(fd, rel, &b, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return false
	}
	return a.Dev == b.Dev && a.Ino == b.Ino
}

// openat retries on EINTR, which the kernel may return for a slow file
// system.
func openat(dirfd int, name string, flag int, perm uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flag, perm)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// Dir is a directory opened without following a symbolic link in any
// component of its path. It is safe for concurrent use; Close ends it, and
// every Temp made by it must be ended before that.
type Dir struct {
	ref dirRef
}

// DirOptions shape OpenDir.
type DirOptions struct {
	// Create makes missing components, with Perm less the umask, each
	// made in the descriptor of its parent.
	Create bool
	Perm   fs.FileMode
}

// OpenDir opens the absolute, clean path as a Dir, walking it from the file
// system root one component at a time with O_NOFOLLOW. A component that is
// a symbolic link fails with an *fs.PathError wrapping ErrSymlink (the
// kernel decides, at the moment of each step), one that is not a directory
// with one wrapping syscall.ENOTDIR. Since the path is clean, it contains
// no "..": the directory reached is the one the path names lexically, so a
// path the caller found inside a root stays inside it.
func OpenDir(path string, opts DirOptions) (*Dir, error) {
	if !filepath.IsAbs(path) || filepath.Clean(path) != path {
		return nil, &fs.PathError{Op: "opendir", Path: path, Err: ErrBadName}
	}
	fd, err := openat(unix.AT_FDCWD, "/", searchFlags|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "opendir", Path: "/", Err: err}
	}
	names := strings.Split(strings.TrimPrefix(path, "/"), "/")
	if path == "/" {
		names = nil
	}
	done := "/"
	for i, name := range names {
		flags := searchFlags
		if i == len(names)-1 {
			flags = unix.O_RDONLY // the last one is read (sweep) and fsynced
		}
		next, err := openChild(fd, name, flags, opts)
		unix.Close(fd)
		done = filepath.Join(done, name)
		if err != nil {
			return nil, &fs.PathError{Op: "opendir", Path: done, Err: err}
		}
		fd = next
	}
	if len(names) == 0 { // the root itself: reopen readable
		next, err := openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return nil, &fs.PathError{Op: "opendir", Path: "/", Err: err}
		}
		fd = next
	}
	return &Dir{ref: dirRef{f: os.NewFile(uintptr(fd), path), path: path}}, nil
}

// openChild opens the directory name below dirfd without following a
// symbolic link, making it first if asked.
func openChild(dirfd int, name string, flags int, opts DirOptions) (int, error) {
	for attempt := 0; ; attempt++ {
		fd, err := openat(dirfd, name, flags|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == nil {
			// O_PATH with O_NOFOLLOW may open a symbolic link itself:
			// the descriptor must be a directory.
			var st unix.Stat_t
			if err := unix.Fstat(fd, &st); err != nil {
				unix.Close(fd)
				return -1, err
			}
			switch st.Mode & unix.S_IFMT {
			case unix.S_IFDIR:
				return fd, nil
			case unix.S_IFLNK:
				unix.Close(fd)
				return -1, ErrSymlink
			default:
				unix.Close(fd)
				return -1, syscall.ENOTDIR
			}
		}
		if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.ENOTDIR) {
			var st unix.Stat_t
			if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
				return -1, ErrSymlink
			}
			return -1, err
		}
		if !errors.Is(err, syscall.ENOENT) || !opts.Create || attempt > 0 {
			return -1, err
		}
		if err := unix.Mkdirat(dirfd, name, uint32(opts.Perm.Perm())); err != nil && !errors.Is(err, syscall.EEXIST) {
			return -1, err
		}
	}
}

// Path is the path the Dir was opened by. It may name something else by
// now; the Dir does not follow.
func (d *Dir) Path() string { return d.ref.path }

// Close closes the directory.
func (d *Dir) Close() error { return d.ref.f.Close() }

// Sync fsyncs the directory so that a rename, link or removal in it
// survives a power loss.
func (d *Dir) Sync() error { return d.ref.f.Sync() }

// CreateTemp is the package's CreateTemp in this directory. The Temp's
// RenameAt and LinkAt then put it in place in this directory.
func (d *Dir) CreateTemp(data []byte, opts TempOptions) (*Temp, error) {
	return createTemp(d.ref, data, opts)
}

// Sweep is the package's Sweep in this directory.
func (d *Dir) Sweep() { sweep(d.ref) }

// Lstat returns the type and permission bits of name in the directory,
// without following a symbolic link.
func (d *Dir) Lstat(name string) (fs.FileMode, error) {
	if err := checkName(name); err != nil {
		return 0, err
	}
	var st unix.Stat_t
	if err := unix.Fstatat(int(d.ref.f.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, &fs.PathError{Op: "fstatat", Path: filepath.Join(d.ref.path, name), Err: err}
	}
	mode := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFREG:
	default:
		mode |= fs.ModeIrregular
	}
	return mode, nil
}

// Open opens name in the directory read-only, refusing a symbolic link
// (ErrSymlink) and never blocking on a FIFO.
func (d *Dir) Open(name string) (*os.File, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	return d.ref.openFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// Remove removes the file name from the directory.
func (d *Dir) Remove(name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	if err := unix.Unlinkat(int(d.ref.f.Fd()), name, 0); err != nil {
		return &fs.PathError{Op: "unlinkat", Path: filepath.Join(d.ref.path, name), Err: err}
	}
	return nil
}

// checkName refuses anything but one path component.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') {
		return &fs.PathError{Op: "atomicfile", Path: name, Err: ErrBadName}
	}
	return nil
}
