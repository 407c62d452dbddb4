package edit

// Batch intents: a batch of several files is all-or-nothing, also when the
// process committing it dies half-way.
//
// Before the first replacement of a batch of two or more files, Commit
// writes an intent record, StateDir/intents/<batch key>.json (0600, synced):
// every target with its original bytes (or their absence) and its new
// bytes, and it holds the intent's cross-process lock (a flock, which the
// kernel drops when the process dies) until the batch is over. Then:
//
//   - An I/O failure mid-commit restores the files already replaced, each
//     re-verified to hold exactly the bytes this batch wrote, and the
//     answer says nothing changed (CommitError.RolledBack). Only a restore
//     that itself fails leaves a committed prefix, named as before.
//   - A crash leaves the record. The identical call, planned again by any
//     engine of the same state directory (a new adapter of the same
//     session), takes the lock (so never while the batch's own writer is
//     alive) and finishes the batch: the model meant it. The answer is a
//     normal result with Result.Recovered set.
//   - Any other batch that names one of an interrupted batch's files first
//     rolls the interrupted batch back, then is planned as usual.
//
// A batch of one file needs no record: its replacement is one rename.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"winx/edit/atomicfile"
	"winx/evidence"
)

const (
	intentDir = "intents"
	// maxIntentBytes bounds an intent record read back: a batch of
	// MaxBatchFiles files, each twice (old and new), base64 in JSON.
	maxIntentBytes = 2 * MaxBatchFiles * (DefaultMaxFileBytes*4/3 + 4096)
	// maxIntents bounds the records one plan looks at.
	maxIntents = 256
)

// intentRecord is the persisted form of a batch in progress.
type intentRecord struct {
	Key     string         `json:"key"`
	Created time.Time      `json:"created"`
	PID     int            `json:"pid"`
	Files   []intentTarget `json:"files"`
}

// intentTarget is one file of an intent.
type intentTarget struct {
	Path    string            `json:"path"`
	Exists  bool              `json:"exists"` // false: the batch creates it
	OldRev  evidence.Revision `json:"old_revision,omitempty"`
	NewRev  evidence.Revision `json:"new_revision"`
	OldMode fs.FileMode       `json:"old_mode,omitempty"`
	Old     []byte            `json:"old,omitempty"`
	New     []byte            `json:"new"`
}

// planned is t as a PlannedFile that writes its new bytes over its old.
func (t intentTarget) planned() *PlannedFile {
	return &PlannedFile{Path: t.Path, Mode: ModeReplace, Exists: t.Exists, OldRev: t.OldRev, OldMode: t.OldMode, old: t.Old, new: t.New, NewRev: t.NewRev}
}

// inverse is the PlannedFile that puts t's old bytes back over its new
// ones (removes a file the batch created).
func (t intentTarget) inverse() *PlannedFile {
	mode := t.OldMode
	if !t.Exists {
		mode = 0o644
	}
	return &PlannedFile{Path: t.Path, Mode: ModeReplace, Exists: true, OldRev: t.NewRev, OldMode: mode, old: t.New, new: t.Old, NewRev: t.OldRev, remove: !t.Exists}
}

func (e *Engine) intentPath(key string) string {
	return filepath.Join(e.stateDir, intentDir, key+".json")
}

// intentLock takes the cross-process lock of the intent key.
func (e *Engine) intentLock(key string) (*atomicfile.Lock, error) {
	lk, err := atomicfile.LockFile(filepath.Join(e.stateDir, intentDir), key+".lock", e.lockWait)
	if errors.Is(err, atomicfile.ErrLockTimeout) {
		return nil, &ConflictError{Reason: ReasonBusy, Path: "(a batch being committed by another writer)"}
	}
	return lk, err
}

// beginIntent writes p's intent record under its lock and returns the
// function that ends it (removes the record, then unlocks). It does
// nothing for a batch of one file, a replay or an engine without state.
func (e *Engine) beginIntent(p *Plan) (end func(), err error) {
	if e.stateDir == "" || p.key == "" || len(p.Files) < 2 {
		return func() {}, nil
	}
	lk, err := e.intentLock(p.key)
	if err != nil {
		return nil, err
	}
	rec := intentRecord{Key: p.key, Created: e.now(), PID: os.Getpid()}
	for i := range p.Files {
		pf := &p.Files[i]
		rec.Files = append(rec.Files, intentTarget{Path: pf.Path, Exists: pf.Exists, OldRev: pf.OldRev, NewRev: pf.NewRev,
			OldMode: pf.OldMode, Old: pf.old, New: pf.new})
	}
	b, err := json.Marshal(rec)
	if err != nil {
		lk.Unlock()
		return nil, err
	}
	// Synced: the replacements it guards are.
	if err := atomicfile.WriteFile(e.intentPath(p.key), b, 0o600, atomicfile.Durability{SyncFile: true, SyncDir: true}); err != nil {
		lk.Unlock()
		return nil, fmt.Errorf("edit: intent record: %w", err)
	}
	return func() {
		os.Remove(e.intentPath(p.key))
		lk.Unlock()
	}, nil
}

// rollBack restores, in reverse order, the files of done (replaced by this
// batch) to their original bytes. It returns the paths it restored and
// those it could not (with the first error).
func (e *Engine) rollBack(done []intentTarget) (restored, left []string, err error) {
	for i := len(done) - 1; i >= 0; i-- {
		t := done[i]
		if _, rerr := e.replace(t.inverse(), false); rerr != nil {
			left = append(left, t.Path)
			if err == nil {
				err = rerr
			}
			continue
		}
		// The model's knowledge of the original bytes holds again; any
		// other revision the ledger names is gone.
		if _, known, rev := e.ledger.Missing(t.Path, "", evidence.Range{}); known && rev != t.OldRev {
			e.ledger.Forget(t.Path)
		}
		restored = append(restored, t.Path)
	}
	slices.Reverse(restored)
	slices.Reverse(left)
	return restored, left, err
}

// targetState is what a file of an interrupted batch holds now.
type targetState int

const (
	holdsOld targetState = iota
	holdsNew
	holdsOther
)

func (e *Engine) stateOf(t intentTarget) targetState {
	snap, err := evidence.ReadSnapshot(t.Path, max(e.maxBytes, int64(len(t.Old)), int64(len(t.New))))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if !t.Exists {
			return holdsOld
		}
		return holdsOther
	case err != nil:
		return holdsOther
	case snap.Revision == t.NewRev:
		return holdsNew
	case t.Exists && snap.Revision == t.OldRev:
		return holdsOld
	}
	return holdsOther
}

// recoverIntents settles every interrupted batch that names one of paths or
// has key: the one with key is finished (its result returned), the others
// are rolled back. A batch whose writer is alive is waited for (its lock);
// one that cannot be settled is an error, and nothing of the new batch is
// planned.
func (e *Engine) recoverIntents(key string, paths []string) (*Result, error) {
	if e.stateDir == "" {
		return nil, nil
	}
	dir := filepath.Join(e.stateDir, intentDir)
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) == 0 {
		return nil, nil
	}
	// A writer killed while it wrote a record leaves its temp file.
	atomicfile.Sweep(dir)
	var finished *Result
	seen := 0
	for _, ent := range ents {
		name, ok := strings.CutSuffix(ent.Name(), ".json")
		if !ok || strings.HasPrefix(name, ".") {
			continue
		}
		if seen++; seen > maxIntents {
			break
		}
		res, err := e.settleIntent(name, key, paths)
		if err != nil {
			return nil, err
		}
		if res != nil {
			finished = res
		}
	}
	return finished, nil
}

// settleIntent settles the interrupted batch name if it concerns key or
// paths (see recoverIntents).
func (e *Engine) settleIntent(name, key string, paths []string) (*Result, error) {
	rec, err := e.readIntent(name)
	if err != nil || !rec.concerns(key, paths) {
		return nil, nil
	}
	// The order Commit takes them in: this process's path locks, then
	// the intent's cross-process lock.
	unlock := e.locks.lock(rec.paths())
	defer unlock()
	lk, err := e.intentLock(name)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	// Under the lock: the writer finished (the record is gone), or died.
	if rec, err = e.readIntent(name); err != nil {
		return nil, nil
	}
	if name == key {
		res, err := e.finishIntent(rec)
		if err != nil {
			return nil, err
		}
		os.Remove(e.intentPath(name))
		return res, nil
	}
	var done []intentTarget
	for _, t := range rec.Files {
		switch e.stateOf(t) {
		case holdsNew:
			done = append(done, t)
		case holdsOther:
			// Changed by someone else since: theirs now, not ours to undo.
		}
	}
	if _, left, err := e.rollBack(done); err != nil {
		return nil, fmt.Errorf("edit: an interrupted batch on %s could not be rolled back: %w", strings.Join(left, ", "), err)
	}
	os.Remove(e.intentPath(name))
	return nil, nil
}

// finishIntent writes the files of an interrupted batch that still hold
// their original bytes. If one changed to something else since, the batch
// cannot be finished as the model meant it: it is rolled back and the
// change is a conflict.
func (e *Engine) finishIntent(rec *intentRecord) (*Result, error) {
	res := &Result{Recovered: true}
	var done []intentTarget
	for _, t := range rec.Files {
		st := e.stateOf(t)
		if st == holdsNew {
			done = append(done, t)
			// Written by the dead writer, with its own undo record.
			res.Files = append(res.Files, e.finish(t.planned(), ""))
			continue
		}
		var err error
		if st == holdsOld {
			var undoID string
			if undoID, err = e.replace(t.planned(), true); err == nil {
				done = append(done, t)
				res.Files = append(res.Files, e.finish(t.planned(), undoID))
				continue
			}
		} else {
			err = &ConflictError{Path: t.Path, Want: t.OldRev, Reason: ReasonChangedAfterRead}
		}
		if _, left, rerr := e.rollBack(done); rerr != nil {
			return nil, fmt.Errorf("edit: an interrupted batch could neither be finished (%v) nor rolled back on %s: %w", err, strings.Join(left, ", "), rerr)
		}
		os.Remove(e.intentPath(rec.Key))
		return nil, err
	}
	return res, nil
}

func (e *Engine) readIntent(name string) (*intentRecord, error) {
	b, err := readBounded(e.intentPath(name), maxIntentBytes)
	if err != nil {
		return nil, err
	}
	var rec intentRecord
	if err := json.Unmarshal(b, &rec); err != nil || rec.Key != name {
		return nil, fmt.Errorf("edit: intent record %s is damaged", name)
	}
	return &rec, nil
}

func (r *intentRecord) paths() []string {
	out := make([]string, len(r.Files))
	for i, t := range r.Files {
		out[i] = t.Path
	}
	return out
}

// concerns reports whether the interrupted batch is the one with key or
// names one of paths.
func (r *intentRecord) concerns(key string, paths []string) bool {
	if r.Key == key {
		return true
	}
	for _, t := range r.Files {
		if slices.Contains(paths, t.Path) {
			return true
		}
	}
	return false
}

// Interrupted reports whether the state directory stateDir (an engine's
// EngineOptions.StateDir) holds an interrupted batch: one directory read,
// cheap enough for every file access to ask first.
func Interrupted(stateDir string) bool {
	if stateDir == "" {
		return false
	}
	ents, err := os.ReadDir(filepath.Join(stateDir, intentDir))
	if err != nil {
		return false
	}
	for _, ent := range ents {
		if strings.HasSuffix(ent.Name(), ".json") && !strings.HasPrefix(ent.Name(), ".") {
			return true
		}
	}
	return false
}

// Settle rolls back every interrupted batch that names one of paths
// (canonical), so that an access other than the batch's own replay (a read)
// never sees it half done. A batch whose writer is alive is waited for.
func (e *Engine) Settle(paths []string) error {
	_, err := e.recoverIntents("", paths)
	return err
}
