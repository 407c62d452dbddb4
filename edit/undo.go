package edit

// Undo records. Every committed file (with a StateDir) gets one: the bytes
// before the edit (or their absence) and the revision the edit wrote, as a
// 0600 JSON file StateDir/undo/<undo id>.json, kept UndoTTL. An undo entry
// restores those bytes only while the file still holds exactly that
// revision, through the same plan/commit path as every other edit, so an
// undo has its own undo record.

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"winx/evidence"
)

// undoRecord is the persisted form of one undo.
type undoRecord struct {
	Path      string            `json:"path"`
	OldExists bool              `json:"old_exists"`
	Old       []byte            `json:"old,omitempty"`
	OldMode   fs.FileMode       `json:"old_mode,omitempty"`
	NewRev    evidence.Revision `json:"new_revision,omitempty"` // "" when the edit removed the file
	Created   time.Time         `json:"created"`
}

// undoIDLen is the length of an undo id: 16 random bytes in hex.
const undoIDLen = 32

func (e *Engine) undoPath(id string) string {
	return filepath.Join(e.stateDir, undoDir, id+".json")
}

func validUndoID(id string) bool {
	if len(id) != undoIDLen {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}

// storeUndo persists pf's undo record and returns its id ("" without a
// StateDir).
func (e *Engine) storeUndo(pf *PlannedFile) (string, error) {
	if e.stateDir == "" {
		return "", nil
	}
	var rnd [undoIDLen / 2]byte
	rand.Read(rnd[:])
	id := hex.EncodeToString(rnd[:])
	rec := undoRecord{Path: pf.Path, OldExists: pf.Exists, Old: pf.old, OldMode: pf.OldMode, Created: e.now()}
	if !pf.remove {
		rec.NewRev = pf.NewRev
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return "", err
	}
	if err := writeStateFile(e.undoPath(id), b); err != nil {
		return "", fmt.Errorf("edit: undo record: %w", err)
	}
	return id, nil
}

func (e *Engine) dropUndo(id string) {
	if id != "" {
		os.Remove(e.undoPath(id))
	}
}

// planUndo plans the sole entry of an undo batch.
func (e *Engine) planUndo(ed FileEdit) (*PlannedFile, error) {
	if len(ed.Patches) > 0 || ed.Content != "" {
		return nil, &InvalidError{Path: ed.Path, Msg: "undo takes undo_id only"}
	}
	if !validUndoID(ed.UndoID) || e.stateDir == "" {
		return nil, &NotFoundError{UndoID: ed.UndoID}
	}
	// Base64 inflates by 4/3; the record's other fields are small.
	b, err := readBounded(e.undoPath(ed.UndoID), e.maxBytes*4/3+4096)
	if err != nil {
		return nil, &NotFoundError{UndoID: ed.UndoID}
	}
	var rec undoRecord
	if err := json.Unmarshal(b, &rec); err != nil || e.now().Sub(rec.Created) > UndoTTL {
		return nil, &NotFoundError{UndoID: ed.UndoID}
	}
	canon, err := e.paths.Resolve(rec.Path)
	if err != nil {
		return nil, &DeniedError{Path: rec.Path, Err: err}
	}
	if canon != rec.Path {
		return nil, &DeniedError{Path: rec.Path, Err: errors.New("path resolves elsewhere since the edit")}
	}
	if ed.Path != "" {
		if c, err := e.paths.Resolve(ed.Path); err != nil || c != canon {
			return nil, &InvalidError{Path: ed.Path, Msg: "undo_id belongs to another file"}
		}
	}
	pf := &PlannedFile{Path: canon, Mode: ModeUndo}
	snap, err := evidence.ReadSnapshot(canon, e.maxBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if rec.NewRev != "" {
			return nil, &ConflictError{Path: canon, Want: rec.NewRev, Reason: ReasonChangedSinceEdit}
		}
	case err != nil:
		return nil, &InvalidError{Path: canon, Msg: err.Error()}
	default:
		if snap.Path != canon {
			return nil, &DeniedError{Path: canon, Err: errors.New("path changed while it was read")}
		}
		if snap.Revision != rec.NewRev {
			return nil, &ConflictError{Path: canon, Want: rec.NewRev, Got: snap.Revision, Reason: ReasonChangedSinceEdit}
		}
		pf.Exists, pf.old, pf.OldRev, pf.OldMode = true, snap.Bytes, snap.Revision, snap.Mode
	}
	if rec.OldExists {
		pf.new, pf.NewRev = rec.Old, evidence.RevisionOf(rec.Old)
		if !pf.Exists {
			pf.OldMode = rec.OldMode
		}
		// Lines the model knew and the undo leaves alone stay known;
		// the restored lines count as shown when the answer's diff
		// shows them whole.
		pf.known = knowledge{carry: true, restored: true}
	} else {
		pf.remove = true
	}
	return pf, nil
}
