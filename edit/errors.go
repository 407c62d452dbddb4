package edit

import (
	"errors"
	"fmt"
	"strings"

	"winx/evidence"
)

// Sentinels wrapped by the engine's typed errors, so callers can decide with
// errors.Is without knowing the struct.
var (
	// ErrNeedsRead: the edit touches lines the model has not been shown at
	// the file's current revision.
	ErrNeedsRead = errors.New("edit: read required")
	// ErrConflict: the file is not at the revision the edit was planned
	// against.
	ErrConflict = errors.New("edit: conflict")
	// ErrNotFound: the target (or the undo record) does not exist.
	ErrNotFound = errors.New("edit: not found")
	// ErrDenied: the path checker refused the path, or the target became a
	// symbolic link.
	ErrDenied = errors.New("edit: denied")
	// ErrInvalid: the request is malformed for its mode.
	ErrInvalid = errors.New("edit: invalid input")
	// ErrRecoveryExhausted: too many SEARCH conflicts on one target.
	ErrRecoveryExhausted = errors.New("edit: recovery exhausted")
)

// Reasons carried by ConflictError.Reason; they are the tools layer's error
// codes.
const (
	// ReasonRevisionMismatch: the caller's ExpectedRevision is not the
	// file's current revision.
	ReasonRevisionMismatch = "revision_mismatch"
	// ReasonChangedAfterRead: the model read another revision than the one
	// on disk, or the bytes changed between Plan and Commit.
	ReasonChangedAfterRead = "file_changed_after_read"
	// ReasonChangedSinceEdit: undo of a file that changed after the edit.
	ReasonChangedSinceEdit = "file_changed_since_edit"
	// ReasonBusy: another writer held the target's lock for longer than
	// the engine's lock wait; nothing was written.
	ReasonBusy = "file_busy"
)

// RequiredRead names the ranges of one file the model must read (at its
// current revision) before the edit can be planned. Path is canonical.
type RequiredRead struct {
	Path   string
	Ranges []evidence.Range // concrete where the line count is known; End 0 means "to the end"
}

// NeedsReadError lists every read an edit batch is missing, in batch order.
type NeedsReadError struct {
	Reads []RequiredRead
}

func (e *NeedsReadError) Error() string {
	var b strings.Builder
	b.WriteString("edit: read required:")
	for i, r := range e.Reads {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString(" " + r.Path)
		for j, rg := range r.Ranges {
			sep := ":"
			if j > 0 {
				sep = ","
			}
			b.WriteString(sep + rg.String())
		}
	}
	return b.String()
}

func (e *NeedsReadError) Unwrap() error { return ErrNeedsRead }

// ConflictError refuses an edit whose file is not at the expected revision.
// Want is the revision the edit was made against (the expected or the read
// one), Got what is on disk ("" when the file is gone).
type ConflictError struct {
	Path      string
	Want, Got evidence.Revision
	Reason    string // one of the Reason constants
	// OwnEdit: the session's own later edits made Want into Got; Changed
	// are the lines of Got they changed (every other line the model
	// knew at Want it still knows at Got).
	OwnEdit bool
	Changed []evidence.Range
	// NeverIssued: Want was never read or written in this session (the
	// session has read Got, so it is no read that is missing).
	NeverIssued bool
}

func (e *ConflictError) Error() string {
	got := string(e.Got)
	if got == "" {
		got = "missing"
	}
	return fmt.Sprintf("edit: conflict: %s: %s (want %s, got %s)", e.Path, e.Reason, e.Want, got)
}

func (e *ConflictError) Unwrap() error { return ErrConflict }

// NotFoundError: the file to change, or the undo record, does not exist.
type NotFoundError struct {
	Path   string // canonical path, or "" for an undo id
	UndoID string // set for a missing or expired undo record
}

func (e *NotFoundError) Error() string {
	if e.UndoID != "" {
		return "edit: not found: undo id " + e.UndoID
	}
	return "edit: not found: " + e.Path
}

func (e *NotFoundError) Unwrap() error { return ErrNotFound }

// DeniedError: the path checker refused Path (Err is its error), or the
// target is a symbolic link at commit time.
type DeniedError struct {
	Path string
	Err  error
}

func (e *DeniedError) Error() string { return "edit: denied: " + e.Path + ": " + e.Err.Error() }

// Unwrap returns both ErrDenied and the checker's error.
func (e *DeniedError) Unwrap() []error { return []error{ErrDenied, e.Err} }

// InvalidError: a malformed request or an unusable target. Path may be "" for
// a batch-level problem.
type InvalidError struct {
	Path string
	Msg  string
}

func (e *InvalidError) Error() string {
	if e.Path == "" {
		return "edit: invalid input: " + e.Msg
	}
	return "edit: invalid input: " + e.Path + ": " + e.Msg
}

func (e *InvalidError) Unwrap() error { return ErrInvalid }

// FileError attaches the canonical path of its file to an error of the block
// parser or the matcher (*BlockSyntaxError, *MatchError, ErrTooLarge).
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// RecoveryExhaustedError: the third SEARCH conflict (not found or ambiguous)
// on Path in this engine since its last successful edit. Err is that third
// conflict, a *MatchError. The tools layer answers with a ReadFiles next
// action; the count starts again after this error.
type RecoveryExhaustedError struct {
	Path string
	Err  error
}

func (e *RecoveryExhaustedError) Error() string {
	return "edit: recovery exhausted: " + e.Path + ": " + e.Err.Error()
}

func (e *RecoveryExhaustedError) Unwrap() []error { return []error{ErrRecoveryExhausted, e.Err} }

// CommitError reports a commit that stopped at one file. Committed lists the
// files replaced before it that stay replaced (a restore failed, or the
// batch had one file; see RolledBack),
// Failed names the file that failed (untouched), Untouched the files after
// it, in batch order. Err is the cause (*ConflictError, *DeniedError,
// *InvalidError, or an I/O error).
type CommitError struct {
	Committed []FileResult
	Failed    string
	Untouched []string
	Err       error
	// RolledBack are the files the batch had replaced before it stopped
	// and restored to their original bytes (a batch of several files is
	// all-or-nothing, intent.go); they are not in Committed.
	RolledBack []string
	// RestoreErr says why the files still in Committed could not be
	// restored; nil when nothing was committed or all was restored.
	RestoreErr error
}

func (e *CommitError) Error() string {
	return fmt.Sprintf("edit: commit stopped at %s after %d of %d files (%d untouched): %v",
		e.Failed, len(e.Committed), len(e.Committed)+1+len(e.Untouched), len(e.Untouched), e.Err)
}

func (e *CommitError) Unwrap() error { return e.Err }
