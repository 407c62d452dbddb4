package artifacts

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Walk limits of Scan. A session within its budget holds 128 files, so a
// workspace needs thousands of entries only when something is wrong; the
// walk stops there instead of spending its time on a runaway tree.
const (
	// MaxScanEntries bounds the entries (files and directories) one scan
	// visits; beyond it the Usage is Truncated.
	MaxScanEntries = 16384
	// MaxScanDepth bounds how deep below .winx/tmp a scan descends.
	MaxScanDepth = 64
	// readBatch is how many directory entries are read at once.
	readBatch = 256
)

// SessionPrefix starts the name of every session directory; the session id
// (16 lower-case hex digits) follows it.
const SessionPrefix = "session-"

// sessionIDLen is the length of a session id in hex digits.
const sessionIDLen = 16

// ErrUnsafeDir: .winx or .winx/tmp is a symlink or not a directory, so it is
// neither counted nor cleaned through.
var ErrUnsafeDir = errors.New("artifacts: temporary artifact directory is not a plain directory")

// ScanError is a scan that could not finish; Err wraps ErrUnsafeDir or the
// file system error.
type ScanError struct {
	Path string
	Err  error
}

func (e *ScanError) Error() string { return fmt.Sprintf("artifacts: scan %s: %v", e.Path, e.Err) }
func (e *ScanError) Unwrap() error { return e.Err }

// Dir is a workspace's temporary artifact directory, <root>/.winx/tmp.
func Dir(root string) string { return filepath.Join(root, ".winx", "tmp") }

// SessionDir is the directory of session id in the workspace at root.
func SessionDir(root, id string) string { return filepath.Join(Dir(root), SessionPrefix+id) }

// SessionID returns the id a session directory name carries, and whether
// name is one (session- followed by 16 lower-case hex digits).
func SessionID(name string) (string, bool) {
	id, ok := strings.CutPrefix(name, SessionPrefix)
	if !ok || len(id) != sessionIDLen || strings.ToLower(id) != id {
		return "", false
	}
	if _, err := hex.DecodeString(id); err != nil {
		return "", false
	}
	return id, true
}

// Tally is the size of a tree: apparent bytes, non-directory entries, and
// the newest modification time of anything in it.
type Tally struct {
	Bytes  int64
	Files  int
	Newest time.Time
}

func (t *Tally) add(fi fs.FileInfo) {
	if !fi.IsDir() {
		t.Bytes += fi.Size()
		t.Files++
	}
	if m := fi.ModTime(); m.After(t.Newest) {
		t.Newest = m
	}
}

func (t *Tally) merge(o Tally) {
	t.Bytes += o.Bytes
	t.Files += o.Files
	if o.Newest.After(t.Newest) {
		t.Newest = o.Newest
	}
}

// Helper is one helper directory of a session.
type Helper struct {
	Name string // the directory's name in the session directory
	Tally
}

// Session is one session directory.
type Session struct {
	ID  string
	Dir string // absolute
	Tally
	// Helpers by name; their tallies are included in the session's.
	Helpers map[string]*Helper
	// Largest is the top-level entry (helper or file) of the most bytes,
	// "" for an empty session; the tool layer suggests removing it.
	Largest      string
	LargestBytes int64
}

// Usage is one scan of a workspace's .winx/tmp.
type Usage struct {
	Dir string // <root>/.winx/tmp
	// Tally covers everything under Dir, sessions and the rest.
	Tally
	// Entries counts every entry visited, directories included.
	Entries int
	// Truncated is set when the walk stopped at MaxScanEntries or
	// MaxScanDepth; the totals are then lower bounds.
	Truncated bool
	// Sessions by id.
	Sessions map[string]*Session
}

// Session returns the usage of session id; a session with nothing on disk
// has a zero usage.
func (u *Usage) Session(id string) *Session {
	if s, ok := u.Sessions[id]; ok {
		return s
	}
	return &Session{ID: id, Dir: filepath.Join(u.Dir, SessionPrefix+id), Helpers: map[string]*Helper{}}
}

// Scan measures the temporary artifacts of the workspace at root. A missing
// .winx/tmp is an empty usage. Errors are *ScanError values; one wraps
// ErrUnsafeDir when .winx or .winx/tmp is a symlink or not a directory.
func Scan(root string) (*Usage, error) {
	dir := Dir(root)
	u := &Usage{Dir: dir, Sessions: map[string]*Session{}}
	for _, p := range []string{filepath.Dir(dir), dir} {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return u, nil
		}
		if err != nil {
			return nil, &ScanError{Path: p, Err: err}
		}
		if !fi.IsDir() {
			return nil, &ScanError{Path: p, Err: ErrUnsafeDir}
		}
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return u, nil
		}
		return nil, &ScanError{Path: dir, Err: err}
	}
	defer r.Close()
	w := &walker{u: u}
	err = w.entries(r, dir, func(fi fs.FileInfo) error {
		name := fi.Name()
		id, ok := SessionID(name)
		if !ok || !fi.IsDir() {
			u.add(fi)
			if fi.IsDir() {
				t, err := w.tree(r, name, filepath.Join(dir, name), 1)
				u.Tally.merge(t)
				return err
			}
			return nil
		}
		s, err := w.session(r, name, id, filepath.Join(dir, name), fi)
		if s != nil {
			u.Sessions[id] = s
			u.Tally.merge(s.Tally)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}

// walker holds a scan's entry count against its caps.
type walker struct {
	u *Usage
}

// visit counts an entry against MaxScanEntries and reports whether the walk
// may go on.
func (w *walker) visit() bool {
	if w.u.Entries >= MaxScanEntries {
		w.u.Truncated = true
		return false
	}
	w.u.Entries++
	return true
}

// entries calls fn with the lstat information of each entry of the
// directory r, in batches, until the entry cap. Entries that vanish between
// the listing and the lstat are skipped.
func (w *walker) entries(r *os.Root, path string, fn func(fs.FileInfo) error) error {
	f, err := r.Open(".")
	if err != nil {
		return &ScanError{Path: path, Err: err}
	}
	defer f.Close()
	for {
		batch, err := f.ReadDir(readBatch)
		for _, de := range batch {
			if !w.visit() {
				return nil
			}
			fi, err := de.Info() // lstat: a symlink is itself, never its target
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return &ScanError{Path: filepath.Join(path, de.Name()), Err: err}
			}
			if err := fn(fi); err != nil {
				return err
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return &ScanError{Path: path, Err: err}
		}
	}
}

// tree tallies everything below the directory name of parent, not the
// directory itself. depth is the directory's depth below .winx/tmp.
func (w *walker) tree(parent *os.Root, name, path string, depth int) (Tally, error) {
	var t Tally
	if depth > MaxScanDepth {
		w.u.Truncated = true
		return t, nil
	}
	r, err := parent.OpenRoot(name)
	if errors.Is(err, fs.ErrNotExist) {
		return t, nil
	}
	if err != nil {
		return t, &ScanError{Path: path, Err: err}
	}
	defer r.Close()
	err = w.entries(r, path, func(fi fs.FileInfo) error {
		t.add(fi)
		if !fi.IsDir() {
			return nil
		}
		sub, err := w.tree(r, fi.Name(), filepath.Join(path, fi.Name()), depth+1)
		t.merge(sub)
		return err
	})
	return t, err
}

// session tallies one session directory and its helpers.
func (w *walker) session(parent *os.Root, name, id, path string, self fs.FileInfo) (*Session, error) {
	s := &Session{ID: id, Dir: path, Helpers: map[string]*Helper{}}
	s.add(self)
	r, err := parent.OpenRoot(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &ScanError{Path: path, Err: err}
	}
	defer r.Close()
	err = w.entries(r, path, func(fi fs.FileInfo) error {
		var top Tally
		top.add(fi)
		var err error
		if fi.IsDir() {
			sub, serr := w.tree(r, fi.Name(), filepath.Join(path, fi.Name()), 2)
			top.merge(sub)
			s.Helpers[fi.Name()] = &Helper{Name: fi.Name(), Tally: top}
			err = serr
		}
		s.merge(top)
		if top.Bytes > s.LargestBytes || s.Largest == "" {
			s.Largest, s.LargestBytes = fi.Name(), top.Bytes
		}
		return err
	})
	return s, err
}
