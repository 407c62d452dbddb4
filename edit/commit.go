package edit

// The commit stage: per file, an atomic same-directory replacement through
// edit/atomicfile, durable (file and directory fsynced).
//
// Temp files (atomicfile.TempPrefix) of writers that died are removed from a
// directory the first time the engine writes there, and again when its last
// sweep of that directory is over a minute old. A live writer's temp file is
// never removed.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"winx/edit/atomicfile"
	"winx/evidence"
)

const (
	// TempPrefix starts the name of every temp file the engine creates.
	TempPrefix = atomicfile.TempPrefix
	// sweepEvery is how often one engine sweeps one directory.
	sweepEvery = time.Minute
)

// Result is a committed (or replayed) batch, one entry per file in order.
type Result struct {
	Files []FileResult
	// Recovered: the batch was interrupted (its writer died mid-commit)
	// and this identical call finished it (intent.go).
	Recovered bool
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
	// Wrote are the lines of the new revision the edit changed (a
	// deletion marks none), for the session's record of its work; the
	// answer shows the diff instead.
	Wrote []evidence.Range `json:"-"`
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

	if p.recovered != nil {
		e.storeReceipt(p.key, p.recovered)
		return p.recovered, nil
	}

	endIntent, err := e.beginIntent(p)
	if err != nil {
		return nil, &CommitError{Failed: paths[0], Untouched: paths[1:], Err: err}
	}
	defer endIntent()
	undoIDs := make([]string, 0, len(p.Files))
	for i := range p.Files {
		pf := &p.Files[i]
		err := ctx.Err()
		var undoID string
		if err == nil {
			undoID, err = e.replace(pf, true)
		}
		if err != nil {
			return nil, e.stopped(p, undoIDs, i, err)
		}
		undoIDs = append(undoIDs, undoID)
	}
	res := &Result{Files: make([]FileResult, len(p.Files))}
	for i := range p.Files {
		res.Files[i] = e.finish(&p.Files[i], undoIDs[i])
	}
	e.mu.Lock()
	for _, f := range p.Files {
		delete(e.conflicts, f.Path)
	}
	e.mu.Unlock()
	e.storeReceipt(p.key, res)
	return res, nil
}

// stopped is the error of a batch that stopped at file i with cause: the
// files before it are restored when the batch has an intent (several
// files), and the error names the prefix that stayed only if a restore
// failed.
// The files before it were written with the undo records undoIDs.
func (e *Engine) stopped(p *Plan, undoIDs []string, i int, cause error) error {
	paths := make([]string, len(p.Files))
	for j, f := range p.Files {
		paths[j] = f.Path
	}
	ce := &CommitError{Failed: paths[i], Untouched: paths[i+1:], Err: cause}
	done := make([]intentTarget, len(undoIDs))
	for j := range undoIDs {
		pf := &p.Files[j]
		done[j] = intentTarget{Path: pf.Path, Exists: pf.Exists, OldRev: pf.OldRev, NewRev: pf.NewRev, OldMode: pf.OldMode, Old: pf.old, New: pf.new}
	}
	var left []string
	var err error
	if len(done) > 0 && e.stateDir != "" && p.key != "" && len(p.Files) > 1 {
		ce.RolledBack, left, err = e.rollBack(done)
		if err != nil {
			ce.RestoreErr = fmt.Errorf("restoring %s: %w", strings.Join(left, ", "), err)
		}
	} else {
		left = paths[:len(done)]
	}
	// What stays written is reported, with its undo record; what was
	// restored needs none.
	for j, id := range undoIDs {
		if slices.Contains(left, paths[j]) {
			ce.Committed = append(ce.Committed, e.finish(&p.Files[j], id))
		} else {
			e.dropUndo(id)
		}
	}
	return ce
}

// replace replaces one file, with an undo record when keepUndo. On error
// the target is untouched. It leaves the ledger alone: a batch records
// what the model knows of its files (finish) once all of them are
// written, so a batch that is rolled back leaves the model's knowledge of
// the original bytes as it was.
//
// The target's directory is opened once, by descriptor, without following
// a symbolic link in any component (atomicfile.OpenDir): the canonical path
// has none, so a component swapped for one since the path was checked is
// refused by the kernel, and the temp file, the re-read, the rename or link
// and the fsync all happen in the directory that was opened, never in one
// a swapped name points at.
func (e *Engine) replace(pf *PlannedFile, keepUndo bool) (undoID string, err error) {
	if err := e.paths.Recheck(pf.Path); err != nil {
		return "", &DeniedError{Path: pf.Path, Err: err}
	}
	base := filepath.Base(pf.Path)
	d, err := atomicfile.OpenDir(filepath.Dir(pf.Path), atomicfile.DirOptions{Create: !pf.Exists && !pf.remove, Perm: 0o755})
	switch {
	case errors.Is(err, atomicfile.ErrSymlink):
		return "", &DeniedError{Path: pf.Path, Err: err}
	case errors.Is(err, fs.ErrNotExist) && pf.Exists:
		// The directory went away with the file in it.
		return "", &ConflictError{Path: pf.Path, Want: pf.OldRev, Reason: ReasonChangedAfterRead}
	case err != nil:
		return "", err
	}
	defer d.Close()
	e.maybeSweep(d)

	var tmp *atomicfile.Temp
	if !pf.remove {
		opts := atomicfile.TempOptions{Perm: 0o644, Umask: true, Sync: true}
		if pf.Exists {
			opts = atomicfile.TempOptions{Perm: pf.OldMode & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky), Sync: true}
		}
		if tmp, err = d.CreateTemp(pf.new, opts); err != nil {
			return "", err
		}
		defer tmp.Discard() // nothing once renamed or linked
	}

	// From the last check through the replacement, hold the target's
	// cross-process lock: another process's commit of the same file
	// between our check and our rename would otherwise be overwritten
	// unseen (a lost update). Its commit, taken under the same lock,
	// shows up in our check instead, as a conflict.
	lk, err := e.lockTarget(d, pf.Path)
	if err != nil {
		return "", err
	}
	defer lk.Unlock()

	// The last checks, as close to the replacement as the API allows.
	if err := e.paths.Recheck(pf.Path); err != nil {
		return "", &DeniedError{Path: pf.Path, Err: err}
	}
	if err := verifyTarget(d, pf, e.maxBytes); err != nil {
		return "", err
	}
	if keepUndo {
		if undoID, err = e.storeUndo(pf); err != nil {
			return "", err
		}
	}
	switch {
	case pf.remove:
		err = d.Remove(base)
	case pf.Exists:
		err = tmp.RenameAt(base)
	default:
		// link(2) fails if the name appeared since verifyTarget.
		if err = tmp.LinkAt(base); errors.Is(err, fs.ErrExist) {
			err = &ConflictError{Path: pf.Path, Want: "", Got: "", Reason: ReasonChangedAfterRead}
		}
	}
	if err != nil {
		e.dropUndo(undoID)
		return "", err
	}
	// The rename happened, so the file is committed on the live system
	// whatever fsync of the directory says; an error here only weakens
	// durability across a power loss, and reporting the file as failed
	// would be false. That is why the engine syncs the directory itself
	// rather than through atomicfile.WriteFile, and why a removal (undo of
	// a creation) is synced the same way.
	_ = d.Sync()
	return undoID, nil
}

// DefaultLockWait is how long a commit waits for another writer's lock on
// the same target before it answers a conflict (ReasonBusy).
const DefaultLockWait = 10 * time.Second

// lockTarget takes the cross-process lock of path: its lock file in the
// engine's lock directory, or without one the flock of its directory d.
func (e *Engine) lockTarget(d *atomicfile.Dir, path string) (*atomicfile.Lock, error) {
	var (
		lk  *atomicfile.Lock
		err error
	)
	if e.lockDir != "" {
		lk, err = atomicfile.LockFile(e.lockDir, atomicfile.LockName(path), e.lockWait)
	} else {
		lk, err = d.Lock(e.lockWait)
	}
	if errors.Is(err, atomicfile.ErrLockTimeout) {
		return nil, &ConflictError{Path: path, Reason: ReasonBusy}
	}
	return lk, err
}

// verifyTarget checks that the target, by name in d, is still what Plan
// saw. limit bounds the bytes read to name what it holds instead.
func verifyTarget(d *atomicfile.Dir, pf *PlannedFile, limit int64) error {
	base := filepath.Base(pf.Path)
	mode, err := d.Lstat(base)
	if errors.Is(err, fs.ErrNotExist) {
		if pf.Exists {
			return &ConflictError{Path: pf.Path, Want: pf.OldRev, Reason: ReasonChangedAfterRead}
		}
		return nil
	}
	if err != nil {
		return err
	}
	if mode&fs.ModeSymlink != 0 {
		return &DeniedError{Path: pf.Path, Err: errors.New("target is a symbolic link")}
	}
	if !mode.IsRegular() {
		return &InvalidError{Path: pf.Path, Msg: "target is not a regular file"}
	}
	f, err := d.Open(base)
	if errors.Is(err, atomicfile.ErrSymlink) {
		return &DeniedError{Path: pf.Path, Err: errors.New("target is a symbolic link")}
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return err
	} else if !fi.Mode().IsRegular() {
		return &InvalidError{Path: pf.Path, Msg: "target is not a regular file"}
	}
	// Read it whole (bounded) so a conflict names what the file holds
	// now, a grown file included; "" only past the limit.
	b, err := io.ReadAll(io.LimitReader(f, max(limit, int64(len(pf.old)))+1))
	if err != nil {
		return err
	}
	var got evidence.Revision
	if int64(len(b)) <= max(limit, int64(len(pf.old))) {
		got = evidence.RevisionOf(b)
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
	fr.Diff = e.diffText(pf, a, b, hs)
	for _, h := range hs {
		if h.newCount > 0 {
			fr.Wrote = append(fr.Wrote, evidence.Range{Start: h.newStart, End: h.newStart + h.newCount - 1})
		}
	}

	e.remember(pf, a.Count(), hs)

	switch k := pf.known; {
	case k.whole:
		e.ledger.Record(pf.Path, pf.NewRev, evidence.All)
	case k.carry:
		covered := coveredRanges(e.ledger, pf.Path, pf.OldRev, a.Count())
		ranges := append(carryRanges(covered, hs, a.Count()), k.seen...)
		if k.wrote || (k.restored && !strings.HasSuffix(fr.Diff, diffTruncated)) {
			for _, h := range hs {
				if h.newCount > 0 {
					ranges = append(ranges, evidence.Range{Start: h.newStart, End: h.newStart + h.newCount - 1})
				}
			}
		}
		e.ledger.Record(pf.Path, pf.NewRev, evidence.Range{}) // the new revision is known
		for _, r := range ranges {
			e.ledger.Record(pf.Path, pf.NewRev, r)
		}
	default:
		e.ledger.Forget(pf.Path)
	}
	return fr
}

// diffText is the diff of a file's edit as the model may see it: redacted
// with the rules ReadFiles shows files through, so a secret in a context or
// changed line never reaches the answer. The rendered diff is redacted
// rather than the two revisions: it is bounded (MaxDiffBytes) where files
// are not, and its line numbers stay those of the files, which the next
// line_patch uses. Its lines are whole lines of the files, so a secret
// inside a line is found as in the file; a private key's lines each carry
// a diff prefix, and its rule redacts to the end of the text when its END
// line is not found, which errs towards hiding too much.
func (e *Engine) diffText(pf *PlannedFile, a, b evidence.Lines, hs []hunk) string {
	d := unifiedDiff(pf.Path, a, b, hs)
	if !e.redactor.Disabled() {
		d, _ = e.redactor.String(d)
	}
	return d
}

// maybeSweep sweeps d unless this engine did so within sweepEvery.
func (e *Engine) maybeSweep(d *atomicfile.Dir) {
	dir := d.Path()
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
	d.Sweep()
}

// writeStateFile writes a state file (receipt, undo record) with mode 0600,
// atomically but without fsync: these records are conveniences, and a power
// loss that drops one costs a replay or an undo, never a user file.
// Skipping the fsyncs halves the latency of an edit.
func writeStateFile(path string, b []byte) error {
	return atomicfile.WriteFile(path, b, 0o600, atomicfile.Durability{})
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
