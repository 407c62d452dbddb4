package session

import (
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"winx/edit/atomicfile"
	"winx/evidence"
)

// A session's work record: the files it read and edited, with the lines
// the model was shown and the lines its edits wrote. It is what a saved
// context (ContextSave) lists as the session's active files, and it must
// not depend on which adapter process served the calls: an adapter killed
// after the reads and edits, and a new one that reattached, must report
// the same files. So the record is kept in the session's state directory
// as it changes (after each ReadFiles and EditFiles call), and every
// reader merges what is on disk with what this process noted. The read
// ledger (Ledger) is not the record: it forgets a file an edit replaced
// with lines the model did not see, and it is sized for edit safety, not
// for a summary.

// Bounds of a session's work record.
const (
	// MaxWorkFiles bounds the files a work record names; the least
	// recently touched go first.
	MaxWorkFiles = 64
	// maxWorkRanges bounds the line ranges kept per file and kind; past
	// it the last range absorbs the rest (a wider range, never a lost
	// file).
	maxWorkRanges = 16
	// MaxWorkFileBytes bounds the encoded record: a writer drops the
	// least recently touched files until it fits, a reader refuses a
	// larger file.
	MaxWorkFileBytes = 128 << 10
)

// workVersion is the encoding's version; a file of another version is
// ignored.
const workVersion = 1

// FileWork is what a session did with one file. Ranges are [first, last]
// line numbers as the model saw them (Read) or as an edit left the file
// (Wrote); a last of 0 means to the end of the file.
type FileWork struct {
	Path   string   `json:"path"` // canonical
	Read   [][2]int `json:"read,omitempty"`
	Edited bool     `json:"edited,omitempty"` // an edit changed the file
	// Wrote are the lines edits wrote; an edit that only removed lines
	// adds none.
	Wrote [][2]int  `json:"wrote,omitempty"`
	At    time.Time `json:"at"` // when the session last read or edited it
}

// workFile is the record as kept on disk.
type workFile struct {
	Version int        `json:"version"`
	Files   []FileWork `json:"files"` // most recently touched first
}

// workStore is a session's work record and where it is kept.
type workStore struct {
	mu sync.Mutex // guards the fields below and serializes saves
	// files: most recently touched first, at most MaxWorkFiles, at most
	// one entry per path.
	files []FileWork
	set   bool   // UseWorkDir ran
	path  string // "" when persistence is off
	dirty bool   // files changed since the last save
	// written identifies the file this process wrote last (inode, size,
	// modification time): while the file on disk is still that one, no
	// other adapter wrote since, and a save need not read it back.
	written os.FileInfo
}

// UseWorkDir keeps the session's work record in dir (a principal's state
// directory, as UseLedgerDir); later calls do nothing. An empty dir keeps
// the record in this process only.
func (s *Session) UseWorkDir(dir string) {
	w := &s.work
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.set {
		return
	}
	w.set = true
	if dir != "" {
		w.path = s.stateFile(dir, "work")
	}
}

// NoteRead records that the model was shown the lines shown of path (a
// zero shown: the file, without any line).
func (s *Session) NoteRead(path string, shown evidence.Range) {
	s.noteWork(path, func(f *FileWork) {
		if !shown.IsZero() {
			f.Read = addWorkRange(f.Read, [2]int{shown.Start, shown.End})
		}
	})
}

// NoteEdit records that an edit of path wrote the lines changed (of the
// file as the edit left it); none: the edit only removed lines.
func (s *Session) NoteEdit(path string, changed []evidence.Range) {
	s.noteWork(path, func(f *FileWork) {
		f.Edited = true
		for _, r := range changed {
			f.Wrote = addWorkRange(f.Wrote, [2]int{r.Start, r.End})
		}
	})
}

func (s *Session) noteWork(path string, change func(*FileWork)) {
	w := &s.work
	w.mu.Lock()
	defer w.mu.Unlock()
	i := slices.IndexFunc(w.files, func(f FileWork) bool { return f.Path == path })
	f := FileWork{Path: path}
	if i >= 0 {
		f = w.files[i]
		w.files = slices.Delete(w.files, i, i+1)
	}
	before := f
	before.Read, before.Wrote = slices.Clone(f.Read), slices.Clone(f.Wrote)
	change(&f)
	f.At = time.Now()
	w.files = slices.Insert(w.files, 0, f)
	if len(w.files) > MaxWorkFiles {
		w.files = w.files[:MaxWorkFiles]
	}
	// The same lines of the file read again, while it is the most recent
	// one already, change nothing worth a write (its time moves only in
	// memory).
	same := i == 0 && f.Edited == before.Edited && slices.Equal(f.Read, before.Read) && slices.Equal(f.Wrote, before.Wrote)
	w.dirty = w.dirty || !same
}

// SaveWork writes the session's work record where UseWorkDir set: what is
// on disk (another adapter of the session may have written it since)
// merged with what this process noted, 0600 in a 0700 directory, replaced
// atomically. It is best effort: an unsaved record costs a later adapter
// lines of a summary, never safety.
func (s *Session) SaveWork() {
	w := &s.work
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.path == "" || !w.dirty {
		return
	}
	if fi, err := os.Lstat(w.path); err == nil && !sameFile(fi, w.written) {
		w.files = mergeWork(w.files, loadWork(w.path))
	}
	b := encodeWork(w.files)
	if atomicfile.MkdirPrivate(filepath.Dir(w.path)) != nil {
		return
	}
	if atomicfile.WriteFile(w.path, b, 0o600, atomicfile.Durability{}) == nil {
		w.dirty = false
		w.written, _ = os.Lstat(w.path)
	}
}

// sameFile reports whether fi is the file described by was: the same
// inode, size and modification time.
func sameFile(fi, was os.FileInfo) bool {
	return was != nil && os.SameFile(fi, was) && fi.Size() == was.Size() && fi.ModTime().Equal(was.ModTime())
}

// Work returns the files the session read or edited, the most recently
// touched first: what its state directory holds merged with what this
// process noted and has not saved yet.
func (s *Session) Work() []FileWork {
	w := &s.work
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.path != "" {
		w.files = mergeWork(w.files, loadWork(w.path))
	}
	out := make([]FileWork, len(w.files))
	for i, f := range w.files {
		f.Read, f.Wrote = slices.Clone(f.Read), slices.Clone(f.Wrote)
		out[i] = f
	}
	return out
}

// loadWork reads the work record at path; nil for a missing, oversized,
// malformed or non-regular file (readStateFile opens it without following
// a link or blocking on a FIFO). Everything loaded is checked as if a
// stranger wrote it.
func loadWork(path string) []FileWork {
	b, ok := readStateFile(path, MaxWorkFileBytes)
	if !ok {
		return nil
	}
	var f workFile
	if json.Unmarshal(b, &f) != nil || f.Version != workVersion || len(f.Files) > MaxWorkFiles {
		return nil
	}
	for _, fw := range f.Files {
		if !filepath.IsAbs(fw.Path) || !validWorkRanges(fw.Read) || !validWorkRanges(fw.Wrote) {
			return nil
		}
	}
	return f.Files
}

// validWorkRanges: at most maxWorkRanges ranges of real line numbers.
func validWorkRanges(rs [][2]int) bool {
	if len(rs) > maxWorkRanges {
		return false
	}
	for _, r := range rs {
		if r[0] < 1 || r[0] > evidence.MaxLineNumber || r[1] < 0 || r[1] > evidence.MaxLineNumber || (r[1] != 0 && r[1] < r[0]) {
			return false
		}
	}
	return true
}

// mergeWork joins two records: one entry per path with the union of its
// ranges and the later time, the most recently touched first, at most
// MaxWorkFiles.
func mergeWork(a, b []FileWork) []FileWork {
	if len(b) == 0 {
		return a
	}
	by := make(map[string]int, len(a)+len(b))
	var out []FileWork
	for _, f := range slices.Concat(a, b) {
		i, ok := by[f.Path]
		if !ok {
			by[f.Path] = len(out)
			f.Read, f.Wrote = slices.Clone(f.Read), slices.Clone(f.Wrote)
			out = append(out, f)
			continue
		}
		m := &out[i]
		for _, r := range f.Read {
			m.Read = addWorkRange(m.Read, r)
		}
		for _, r := range f.Wrote {
			m.Wrote = addWorkRange(m.Wrote, r)
		}
		m.Edited = m.Edited || f.Edited
		if f.At.After(m.At) {
			m.At = f.At
		}
	}
	slices.SortStableFunc(out, func(x, y FileWork) int { return y.At.Compare(x.At) })
	if len(out) > MaxWorkFiles {
		out = out[:MaxWorkFiles]
	}
	return out
}

// encodeWork encodes files, leaving out the least recently touched that
// do not fit MaxWorkFileBytes. Each entry is encoded once: the record is
// the envelope around the entries that fit.
func encodeWork(files []FileWork) []byte {
	b := []byte(`{"version":` + strconv.Itoa(workVersion) + `,"files":[`)
	for i, f := range files {
		e, err := json.Marshal(f)
		if err != nil || len(b)+len(e)+len(",]}") > MaxWorkFileBytes {
			break
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e...)
	}
	return append(b, "]}"...)
}

// addWorkRange adds r to the sorted, disjoint ranges rs, merging overlapping
// and adjacent ones (a last of 0 reaches the end of the file). Past
// maxWorkRanges the last two ranges merge.
func addWorkRange(rs [][2]int, r [2]int) [][2]int {
	end := func(x [2]int) int {
		if x[1] == 0 {
			return evidence.MaxLineNumber + 1
		}
		return x[1]
	}
	if r[0] < 1 || (r[1] != 0 && r[1] < r[0]) {
		return rs
	}
	rs = append(slices.Clone(rs), r)
	slices.SortFunc(rs, func(x, y [2]int) int { return cmp.Compare(x[0], y[0]) })
	out := rs[:1]
	for _, x := range rs[1:] {
		last := &out[len(out)-1]
		if x[0] <= end(*last)+1 {
			if end(x) > end(*last) {
				last[1] = x[1]
			}
			continue
		}
		out = append(out, x)
	}
	for len(out) > maxWorkRanges {
		// Sorted and disjoint: the last range ends after the one before.
		n := len(out)
		out[n-2][1] = out[n-1][1]
		out = out[:n-1]
	}
	return out
}
