// Package atomicfile owns replacing a file so that a reader sees the old
// bytes or the new ones, never a part: a temp file in the target's
// directory, written, optionally fsynced, renamed (or linked) into place,
// the directory optionally fsynced. It also owns the private 0700 state
// directories those files live in and the sweep of temp files left by
// writers that died. It does not decide what is written or how durable it
// must be: every caller states its Durability, because a user's file and a
// convenience record deserve different costs.
//
// A writer that must not be redirected by a swapped directory (the edit
// engine, writing users' files) opens the target's directory as a Dir,
// walked without following symbolic links, and does everything by that
// descriptor (dir.go).
//
// Temp files are named TempPrefix + 16 hex digits and are held under an
// exclusive flock(2) by their writer from creation until the rename. The
// kernel drops the lock when the writer dies, so a temp file whose lock can
// be taken belongs to a dead writer (SIGKILL, power loss) and Sweep removes
// it. A live writer's temp file is never removed.
package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// TempPrefix starts the name of every temp file this package creates.
const TempPrefix = ".winx-tmp-"

// PrivateDirPerm is the mode of a directory made by MkdirPrivate.
const PrivateDirPerm fs.FileMode = 0o700

// ErrNoTempName: sixteen random names in a row were taken or swept away.
var ErrNoTempName = errors.New("atomicfile: could not create a temp file")

// Durability says which fsyncs a write pays for. The zero value is atomic
// on a live system (readers never see a part) but may lose the new file, or
// leave the old one, across a power loss.
type Durability struct {
	// SyncFile fsyncs the temp file's data before the rename, so the new
	// name never points at data the disk does not hold.
	SyncFile bool
	// SyncDir fsyncs the directory after the rename, so the new name
	// itself survives a power loss.
	SyncDir bool
}

// WriteFile replaces path with data: a temp file in path's directory with
// exactly perm (the umask does not apply), fsynced if d.SyncFile, renamed
// over path, the directory fsynced if d.SyncDir. The directory must exist.
// On any failure before the rename the temp file is removed and path is
// untouched; an error of the directory's fsync comes after the rename, when
// path already holds data.
func WriteFile(path string, data []byte, perm fs.FileMode, d Durability) error {
	dir := filepath.Dir(path)
	t, err := CreateTemp(dir, data, TempOptions{Perm: perm, Sync: d.SyncFile})
	if err != nil {
		return err
	}
	if err := t.Rename(path); err != nil {
		t.Discard()
		return err
	}
	if d.SyncDir {
		return SyncDir(dir)
	}
	return nil
}

// TempOptions shape a temp file made by CreateTemp.
type TempOptions struct {
	// Perm is the temp file's mode, set exactly (setuid, setgid and sticky
	// included) unless Umask is set.
	Perm fs.FileMode
	// Umask applies the process umask to Perm, as creating a new file with
	// Perm would: for a file that did not exist before.
	Umask bool
	// Sync fsyncs the data before CreateTemp returns.
	Sync bool
}

// Temp is a written temp file, locked, not yet in place. Exactly one of
// Rename, Link, RenameAt, LinkAt or Discard ends it.
type Temp struct {
	f    *os.File // holds the flock until the temp is renamed or removed
	dir  dirRef   // the directory the temp file is in
	base string   // the temp file's name in dir
}

// CreateTemp writes data to a new locked temp file in dir: the first half
// of WriteFile, for a caller that must check something between the write
// and the replacement (the edit engine re-reads its target there). On error
// nothing is left behind. dir is resolved by path, following symbolic
// links; Dir.CreateTemp is the variant pinned to an open directory.
func CreateTemp(dir string, data []byte, opts TempOptions) (*Temp, error) {
	return createTemp(dirRef{path: dir}, data, opts)
}

func createTemp(dir dirRef, data []byte, opts TempOptions) (*Temp, error) {
	f, base, err := createLocked(dir, opts.Perm)
	if err != nil {
		return nil, err
	}
	t := &Temp{f: f, dir: dir, base: base}
	fail := func(err error) (*Temp, error) {
		t.Discard()
		return nil, err
	}
	if !opts.Umask {
		if err := f.Chmod(opts.Perm); err != nil {
			return fail(err)
		}
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if opts.Sync {
		if err := f.Sync(); err != nil {
			return fail(err)
		}
	}
	return t, nil
}

// Name is the temp file's path.
func (t *Temp) Name() string { return filepath.Join(t.dir.path, t.base) }

// Rename moves the temp file over target (replacing it if it exists) and
// releases the lock. On error the temp file is still there for Discard.
func (t *Temp) Rename(target string) error {
	if err := os.Rename(t.Name(), target); err != nil {
		return err
	}
	t.close()
	return nil
}

// Link gives the temp file the name target only if target does not exist
// (link(2) never clobbers: the error then wraps fs.ErrExist), removes the
// temp name and releases the lock. On error the temp file is still there
// for Discard.
func (t *Temp) Link(target string) error {
	if err := os.Link(t.Name(), target); err != nil {
		return err
	}
	t.removeName()
	t.close()
	return nil
}

// RenameAt is Rename to the file name in the temp's own directory, by
// directory descriptor for a temp made by Dir.CreateTemp: the new name is
// in the directory that was opened, whatever its path names now.
func (t *Temp) RenameAt(name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	fd, from := t.dir.at(t.base)
	_, to := t.dir.at(name)
	if err := unix.Renameat(fd, from, fd, to); err != nil {
		return &os.LinkError{Op: "renameat", Old: t.Name(), New: filepath.Join(t.dir.path, name), Err: err}
	}
	t.close()
	return nil
}

// LinkAt is Link to the file name in the temp's own directory (see
// RenameAt). An existing name gives an error wrapping fs.ErrExist.
func (t *Temp) LinkAt(name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	fd, from := t.dir.at(t.base)
	_, to := t.dir.at(name)
	if err := unix.Linkat(fd, from, fd, to, 0); err != nil {
		return &os.LinkError{Op: "linkat", Old: t.Name(), New: filepath.Join(t.dir.path, name), Err: err}
	}
	t.removeName()
	t.close()
	return nil
}

// Discard removes the temp file. It does nothing after Rename or Link, so
// it may be deferred.
func (t *Temp) Discard() {
	if t.f == nil {
		return
	}
	t.removeName()
	t.close()
}

func (t *Temp) removeName() {
	fd, name := t.dir.at(t.base)
	unix.Unlinkat(fd, name, 0)
}

func (t *Temp) close() {
	t.f.Close() // releases the flock
	t.f = nil
}

// createLocked creates and flocks a new temp file in dir and returns it
// with its name. The name is checked again after the lock, since a sweeper
// may have taken the lock between open and flock and removed the name.
func createLocked(dir dirRef, perm fs.FileMode) (*os.File, string, error) {
	for range 16 {
		var rnd [8]byte
		rand.Read(rnd[:]) // never fails (crypto/rand)
		base := TempPrefix + hex.EncodeToString(rnd[:])
		f, err := dir.openFile(base, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		if err := flock(f, syscall.LOCK_EX); err != nil {
			f.Close()
			fd, name := dir.at(base)
			unix.Unlinkat(fd, name, 0)
			return nil, "", err
		}
		if dir.sameFile(f, base) {
			return f, base, nil
		}
		f.Close()
	}
	return nil, "", ErrNoTempName
}

func flock(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = syscall.Flock(int(fd), how)
			if ferr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return ferr
}

// Sweep removes the temp files in dir whose writer is gone (no flock held).
// It is best effort: what cannot be read or locked is left. dir is resolved
// by path; Dir.Sweep is the variant pinned to an open directory.
func Sweep(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	defer d.Close()
	sweep(dirRef{f: d, path: dir})
}

func sweep(dir dirRef) {
	// A descriptor of its own, so that reading the entries does not move
	// the offset of a descriptor the caller holds.
	fd, name := dir.at(".")
	lfd, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	list := os.NewFile(uintptr(lfd), dir.path)
	entries, err := list.ReadDir(-1)
	list.Close()
	if err != nil {
		return
	}
	for _, ent := range entries {
		if !strings.HasPrefix(ent.Name(), TempPrefix) || !ent.Type().IsRegular() {
			continue
		}
		f, err := dir.openFile(ent.Name(), os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			continue
		}
		if flock(f, syscall.LOCK_EX|syscall.LOCK_NB) == nil && dir.sameFile(f, ent.Name()) {
			fd, name := dir.at(ent.Name())
			unix.Unlinkat(fd, name, 0)
		}
		f.Close()
	}
}

// SyncDir fsyncs a directory so that a rename, link or removal in it
// survives a power loss.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// MkdirPrivate makes dir and its missing parents with mode 0700 and
// ensures dir itself is a private directory: a symbolic link or a file in
// its place is refused (a *fs.PathError wrapping syscall.ENOTDIR), and an
// existing directory with other permission bits is chmodded to 0700, so a
// directory someone left open is made private again.
func MkdirPrivate(dir string) error {
	if err := os.MkdirAll(dir, PrivateDirPerm); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
	}
	if fi.Mode().Perm() != PrivateDirPerm {
		return os.Chmod(dir, PrivateDirPerm)
	}
	return nil
}
