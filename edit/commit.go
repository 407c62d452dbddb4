package edit

// The commit stage: per file, an atomic same-directory replacement.
//
// Temp files are named ".winx-tmp-<16 hex>" in the target's directory and
// are held under an exclusive flock(2) by their writer from creation until
// the rename. The kernel drops the lock when the writer dies, so a temp file
// whose lock can be taken belongs to a dead writer (SIGKILL, power loss):
// the engine removes such files from a directory the first time it writes
// there, and again when its last sweep of that directory is over a minute
// old. A live writer's temp file is never removed.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"winx/evidence"
)

const (
	// TempPrefix starts the name of every temp file the engine creates.
	TempPrefix = ".winx-tmp-"
	// sweepEvery is how often one engine sweeps one directory.
	sweepEvery = time.Minute
)

// Result is a committed (or replayed) batch, one entry per file in order.
type Result struct {
	Files []FileResult
}

// FileResult reports one replaced file.
type FileResult struct {
	Path        string            `json:"path"` // canonical
	Mode        Mode              `json:"mode"`
	OldRevision evidence.Revision `json:"old_revision,omitempty"` // "" when created
	NewRevision evidence.Revision `json:"new_revision,omitempty"` // "" when removed (undo of a creation)
	Diff        string            `json:"diff,omitempty"`         // compact unified diff, at most MaxDiffBytes
	UndoID      string            `json:"undo_id,omitempty"`      // "" without a StateDir
	Created     bool              `json:"created,omitempty"`
	Removed     bool              `json:"removed,omitempty"`
	Replayed    bool              `json:"replayed,omitempty"` // from a receipt: nothing was written
	Tolerances  []string          `json:"tolerances,omitempty"`
}

// PathLocks serializes commits per canonical path within one process. The
// zero value is ready to use.
type PathLocks struct {
	mu    sync.Mutex
	held  map[string]bool // guarded by mu
	freed *sync.Cond      // signalled on every unlock; created lazily under mu
}

// lock takes every path in paths (in sorted order, so two batches never
// deadlock) and returns the function that releases them.
func (l *PathLocks) lock(paths []string) func() {
	sorted := slices.Clone(paths)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	l.mu.Lock()
	if l.held == nil {
		l.held = make(map[string]bool)
		l.freed = sync.NewCond(&l.mu)
	}
	for _, p := range sorted {
		for l.held[p] {
			l.freed.Wait()
		}
		l.held[p] = true
	}
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		for _, p := range sorted {
			delete(l.held, p)
		}
		l.freed.Broadcast()
		l.mu.Unlock()
	}
}

// Commit writes a plan's files in order. Each file: re-check the path with
// the PathChecker, write the new bytes to a temp file in the same directory
// (mode bits of the original, or 0644 less the umask for a new file), fsync
// it, re-check the path and re-read the target (it must still be a regular
// file with the planned original bytes, or still absent for a new file),
// store the undo record, rename (link for a new file, so nothing is
// clobbered), fsync the directory.
//
// An identical batch that already succeeded in this session within
// ReceiptTTL, whose targets still hold its new bytes, is replayed from its
// receipt without writing (FileResult.Replayed).
//
// The first failure stops the batch with a *CommitError: the files before it
// stay committed and are reported, it and the rest are untouched (parent
// directories created for a new file may remain). Any other error means
// nothing was written. ctx is checked between files. Only a fully committed
// batch leaves a receipt.
//
// After each file the session's ledger moves to the new revision: replace
// records the whole file as shown (the model wrote every byte); line_patch
// and search_replace carry the lines shown before and left unchanged to
// their new positions, and line_patch also records its replacement lines
// (the model wrote them verbatim; search_replace's may have been
// re-indented, so they need a read); undo forgets the file.
func (e *Engine) Commit(ctx context.Context, p *Plan) (*Result, error) {
	paths := make([]string, len(p.Files))
	for i, f := range p.Files {
		paths[i] = f.Path
	}
	unlock := e.locks.lock(paths)
	defer unlock()

	if r := p.replay; r != nil || p.key != "" {
		if r == nil {
			r = e.loadReceipt(p.key)
		}
		if r != nil {
			if err := r.check(); err == nil {
				return r.result(), nil
			} else if p.replay != nil {
				return nil, err
			}
		}
	}

	res := &Result{Files: make([]FileResult, 0, len(p.Files))}
	for i := range p.Files {
		pf := &p.Files[i]
		err := ctx.Err()
		var fr FileResult
		if err == nil {
			fr, err = e.commitFile(pf)
		}
		if err != nil {
			return nil, &CommitError{Committed: res.Files, Failed: pf.Path, Untouched: paths[i+1:], Err: err}
		}
		res.Files = append(res.Files, fr)
	}
	e.mu.Lock()
	for _, f := range p.Files {
		delete(e.conflicts, f.Path)
	}
	e.mu.Unlock()
	e.storeReceipt(p.key, res)
	return res, nil
}

// commitFile replaces one file. On error the target is untouched.
func (e *Engine) commitFile(pf *PlannedFile) (FileResult, error) {
	if err := e.paths.Recheck(pf.Path); err != nil {
		return FileResult{}, &DeniedError{Path: pf.Path, Err: err}
	}
	dir := filepath.Dir(pf.Path)
	if !pf.Exists && !pf.remove {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return FileResult{}, err
		}
	}
	e.maybeSweep(dir)

	var tmp *os.File
	var tmpName string
	if !pf.remove {
		perm := fs.FileMode(0o644)
		if pf.Exists {
			perm = pf.OldMode & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
		}
		var err error
		tmp, tmpName, err = writeTemp(dir, pf.new, perm, pf.Exists, true)
		if err != nil {
			return FileResult{}, err
		}
		defer func() {
			if tmp != nil {
				os.Remove(tmpName)
				tmp.Close()
			}
		}()
	}

	// The last checks, as close to the replacement as the API allows.
	if err := e.paths.Recheck(pf.Path); err != nil {
		return FileResult{}, &DeniedError{Path: pf.Path, Err: err}
	}
	if err := verifyTarget(pf); err != nil {
		return FileResult{}, err
	}
	undoID, err := e.storeUndo(pf)
	if err != nil {
		return FileResult{}, err
	}
	switch {
	case pf.remove:
		err = os.Remove(pf.Path)
	case pf.Exists:
		err = os.Rename(tmpName, pf.Path)
	default:
		// link(2) fails if the name appeared since verifyTarget.
		if err = os.Link(tmpName, pf.Path); err == nil {
			os.Remove(tmpName)
		} else if errors.Is(err, fs.ErrExist) {
			err = &ConflictError{Path: pf.Path, Want: "", Got: "", Reason: ReasonChangedAfterRead}
		}
	}
	if err != nil {
		e.dropUndo(undoID)
		return FileResult{}, err
	}
	if tmp != nil {
		tmp.Close() // releases the flock; the name is gone
		tmp = nil
	}
	// The rename happened, so the file is committed on the live system
	// whatever fsync of the directory says; an error here only weakens
	// durability across a power loss, and reporting the file as failed
	// would be false.
	_ = syncDir(dir)
	return e.finish(pf, undoID), nil
}

// verifyTarget checks that the target is still what Plan saw.
func verifyTarget(pf *PlannedFile) error {
	fi, err := os.Lstat(pf.Path)
	if errors.Is(err, fs.ErrNotExist) {
		if pf.Exists {
			return &ConflictError{Path: pf.Path, Want: pf.OldRev, Reason: ReasonChangedAfterRead}
		}
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return &DeniedError{Path: pf.Path, Err: errors.New("target is a symbolic link")}
	}
	if !fi.Mode().IsRegular() {
		return &InvalidError{Path: pf.Path, Msg: "target is not a regular file"}
	}
	snap, err := evidence.ReadSnapshot(pf.Path, int64(len(pf.old))+1)
	var got evidence.Revision
	switch {
	case errors.Is(err, evidence.ErrTooLarge):
		got = "" // grown past the original: certainly changed
	case err != nil:
		return err
	default:
		if snap.Path != pf.Path {
			return &DeniedError{Path: pf.Path, Err: errors.New("path changed before the write")}
		}
		got = snap.Revision
	}
	if !pf.Exists || got != pf.OldRev {
		return &ConflictError{Path: pf.Path, Want: pf.OldRev, Got: got, Reason: ReasonChangedAfterRead}
	}
	return nil
}

// finish updates the ledger and builds the file's result.
func (e *Engine) finish(pf *PlannedFile, undoID string) FileResult {
	fr := FileResult{
		Path: pf.Path, Mode: pf.Mode, OldRevision: pf.OldRev, NewRevision: pf.NewRev,
		UndoID: undoID, Created: !pf.Exists, Removed: pf.remove, Tolerances: pf.Tolerances,
	}
	if pf.remove {
		fr.NewRevision = ""
		e.ledger.Forget(pf.Path)
		return fr
	}
	a, b := evidence.IndexLines(pf.old), evidence.IndexLines(pf.new)
	hs := lineHunks(a, b)
	fr.Diff = unifiedDiff(pf.Path, a, b, hs)

	switch k := pf.known; {
	case k.whole:
		e.ledger.Record(pf.Path, pf.NewRev, evidence.All)
	case k.carry:
		covered := coveredRanges(e.ledger, pf.Path, pf.OldRev, a.Count())
		ranges := append(carryRanges(covered, hs, a.Count()), k.seen...)
		e.ledger.Record(pf.Path, pf.NewRev, evidence.Range{}) // the new revision is known
		for _, r := range ranges {
			e.ledger.Record(pf.Path, pf.NewRev, r)
		}
	default:
		e.ledger.Forget(pf.Path)
	}
	return fr
}

// writeTemp creates a locked temp file in dir holding b, with perm, fsynced
// if durable. exact: set perm exactly (an existing file's bits), rather than
// perm less the umask (a new file).
func writeTemp(dir string, b []byte, perm fs.FileMode, exact, durable bool) (*os.File, string, error) {
	f, name, err := createTemp(dir, perm)
	if err != nil {
		return nil, "", err
	}
	fail := func(err error) (*os.File, string, error) {
		os.Remove(name)
		f.Close()
		return nil, "", err
	}
	if exact {
		if err := f.Chmod(perm); err != nil {
			return fail(err)
		}
	}
	if _, err := f.Write(b); err != nil {
		return fail(err)
	}
	if durable {
		if err := f.Sync(); err != nil {
			return fail(err)
		}
	}
	return f, name, nil
}

// createTemp creates and flocks a new temp file in dir. The name is checked
// again after the lock, since a sweeper may have taken the lock between
// open and flock and removed the name.
func createTemp(dir string, perm fs.FileMode) (*os.File, string, error) {
	for range 16 {
		var rnd [8]byte
		rand.Read(rnd[:])
		name := filepath.Join(dir, TempPrefix+hex.EncodeToString(rnd[:]))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		if err := flock(f, syscall.LOCK_EX); err != nil {
			f.Close()
			os.Remove(name)
			return nil, "", err
		}
		if sameFile(f, name) {
			return f, name, nil
		}
		f.Close()
	}
	return nil, "", errors.New("edit: could not create a temp file")
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

// sameFile reports whether name still refers to f's inode.
func sameFile(f *os.File, name string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Lstat(name)
	return err == nil && os.SameFile(a, b)
}

// maybeSweep sweeps dir unless this engine did so within sweepEvery.
func (e *Engine) maybeSweep(dir string) {
	now := e.now()
	e.mu.Lock()
	last, ok := e.swept[dir]
	if ok && now.Sub(last) < sweepEvery && now.Sub(last) >= 0 {
		e.mu.Unlock()
		return
	}
	e.swept[dir] = now
	if len(e.swept) > 4096 { // bounded: forgetting only means an extra sweep
		clear(e.swept)
		e.swept[dir] = now
	}
	e.mu.Unlock()
	sweepTemps(dir)
}

// sweepTemps removes temp files in dir whose writer is gone (no flock held).
func sweepTemps(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, ent := range entries {
		if !strings.HasPrefix(ent.Name(), TempPrefix) || !ent.Type().IsRegular() {
			continue
		}
		name := filepath.Join(dir, ent.Name())
		f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		if flock(f, syscall.LOCK_EX|syscall.LOCK_NB) == nil && sameFile(f, name) {
			os.Remove(name)
		}
		f.Close()
	}
}

// syncDir fsyncs a directory so a rename in it is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// writeFileAtomic writes a state file (receipt, undo record) with mode 0600
// through a temp file and a rename, without fsync: these records are
// conveniences, and a power loss that drops one costs a replay or an undo,
// never a user file. Skipping the fsyncs halves the latency of an edit.
func writeFileAtomic(path string, b []byte) error {
	f, name, err := writeTemp(filepath.Dir(path), b, 0o600, true, false)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return err
	}
	return nil
}

// readBounded reads a state file of at most limit bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > limit {
		return nil, fmt.Errorf("edit: state file %s is not a regular file under %d bytes", path, limit)
	}
	var buf bytes.Buffer
	_, err = buf.ReadFrom(f)
	return buf.Bytes(), err
}
