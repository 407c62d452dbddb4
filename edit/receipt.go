package edit

// Receipts let a client that lost a response repeat the call: a batch
// identical to one that succeeded in the same session within ReceiptTTL
// returns the stored result, marked Replayed, without writing, as long as
// every target still holds the bytes that batch wrote. Receipts are JSON
// files (0600) named by the hex SHA-256 of the session key and the
// normalized batch (canonical paths, modes, payloads) under
// StateDir/receipts/. Expired ones are removed when met and at NewEngine.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"winx/edit/atomicfile"
	"winx/evidence"
)

const (
	// ReceiptTTL is how long an identical repeated batch replays.
	ReceiptTTL = 30 * time.Minute
	// UndoTTL is how long an undo record is kept.
	UndoTTL = 24 * time.Hour
	// maxReceiptBytes bounds a receipt file read back (100 diffs of
	// MaxDiffBytes plus their metadata).
	maxReceiptBytes = 4 << 20

	receiptDir = "receipts"
	undoDir    = "undo"
)

type receipt struct {
	Created time.Time    `json:"created"`
	Files   []FileResult `json:"files"`
	e       *Engine
}

// receiptKey hashes the session and the normalized batch. It is "" without
// a state directory (receipts off).
func (e *Engine) receiptKey(edits []FileEdit, p *Plan) string {
	if e.stateDir == "" {
		return ""
	}
	type norm struct {
		Path, Mode, Rev, Content, Undo string
		Patches                        []Patch
	}
	ns := make([]norm, len(edits))
	for i, ed := range edits {
		ns[i] = norm{p.Files[i].Path, string(ed.Mode), string(ed.ExpectedRevision), ed.Content, ed.UndoID, ed.Patches}
	}
	b, err := json.Marshal(struct {
		Session string
		Batch   []norm
	}{e.session, ns})
	if err != nil {
		panic("edit: invariant violated: a batch does not marshal: " + err.Error())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func (e *Engine) receiptPath(key string) string {
	return filepath.Join(e.stateDir, receiptDir, key+".json")
}

// loadReceipt returns the unexpired receipt for key, or nil.
func (e *Engine) loadReceipt(key string) *receipt {
	if key == "" {
		return nil
	}
	b, err := readBounded(e.receiptPath(key), maxReceiptBytes)
	if err != nil {
		return nil
	}
	var r receipt
	if json.Unmarshal(b, &r) != nil || e.now().Sub(r.Created) > ReceiptTTL {
		os.Remove(e.receiptPath(key))
		return nil
	}
	r.e = e
	return &r
}

// check returns nil if every target still holds the receipt's new bytes,
// else a *ConflictError for the first that does not.
func (r *receipt) check() error {
	for _, f := range r.Files {
		snap, err := evidence.ReadSnapshot(f.Path, r.e.maxBytes)
		var got evidence.Revision
		switch {
		case err == nil:
			got = snap.Revision
		case !errors.Is(err, fs.ErrNotExist):
			got = "unreadable"
		}
		if got != f.NewRevision {
			return &ConflictError{Path: f.Path, Want: f.NewRevision, Got: got, Reason: ReasonChangedAfterRead}
		}
	}
	return nil
}

func (r *receipt) stillMatches() bool { return r.check() == nil }

// result is the stored result, marked replayed.
func (r *receipt) result() *Result {
	res := &Result{Files: make([]FileResult, len(r.Files))}
	for i, f := range r.Files {
		f.Replayed = true
		res.Files[i] = f
	}
	return res
}

// storeReceipt persists res under key. A receipt that cannot be stored only
// costs a later replay, so errors are dropped.
func (e *Engine) storeReceipt(key string, res *Result) {
	if key == "" {
		return
	}
	b, err := json.Marshal(receipt{Created: e.now(), Files: res.Files})
	if err != nil || len(b) > maxReceiptBytes {
		return
	}
	_ = writeStateFile(e.receiptPath(key), b)
}

// sweepState removes expired receipts and undo records.
func (e *Engine) sweepState() {
	now := e.now()
	for sub, ttl := range map[string]time.Duration{receiptDir: ReceiptTTL, undoDir: UndoTTL} {
		dir := filepath.Join(e.stateDir, sub)
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, ent := range entries {
			info, err := ent.Info()
			if err == nil && info.Mode().IsRegular() && now.Sub(info.ModTime()) > ttl {
				os.Remove(filepath.Join(dir, ent.Name()))
			}
		}
		atomicfile.Sweep(dir)
	}
}
