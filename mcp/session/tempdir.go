package session

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// The temporary-artifact directory is exported to the session's shell as
// WINX_TEMP_DIR, so it must exist when the shell starts: a command that
// writes there at once (`cp x "$WINX_TEMP_DIR"/`) would otherwise fail or
// create a file of that name. And the .winx directory that holds it is
// Winx's, never the project's: when Winx creates it, it ignores itself.

// winxDirName is the directory of a workspace Winx reserves.
const winxDirName = ".winx"

// winxGitignore is the content of the .gitignore Winx puts in a .winx it
// creates: everything in it, the file itself included.
const winxGitignore = "*\n"

// ensureTempDir creates the session's temporary-artifact directory dir
// inside root, one component at a time and never through a symbolic link
// (a repository could plant .winx as a link to elsewhere). When it creates
// root/.winx it writes .winx/.gitignore; an existing one is kept. It is
// best effort: a read-only workspace still gets its session, and the
// directory is then created by its first writer as before.
func ensureTempDir(root, dir string) error {
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") || filepath.IsAbs(rel) {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: fs.ErrInvalid}
	}
	p := root
	for i, part := range strings.Split(rel, string(filepath.Separator)) {
		p = filepath.Join(p, part)
		created, err := mkdirNoFollow(p)
		if err != nil {
			return err
		}
		if i == 0 && created && part == winxDirName {
			writeWinxGitignore(p)
		}
	}
	return nil
}

// mkdirNoFollow creates p (0700) unless a directory is there already; a
// symbolic link or a file there is refused.
func mkdirNoFollow(p string) (created bool, err error) {
	err = os.Mkdir(p, 0o700)
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return false, err
	}
	fi, lerr := os.Lstat(p)
	if lerr != nil {
		return false, lerr
	}
	if !fi.IsDir() {
		return false, &fs.PathError{Op: "mkdir", Path: p, Err: syscall.ENOTDIR}
	}
	return false, nil
}

// writeWinxGitignore writes dir/.gitignore unless something is there.
func writeWinxGitignore(dir string) {
	f, err := os.OpenFile(filepath.Join(dir, ".gitignore"), os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	f.WriteString(winxGitignore)
}
