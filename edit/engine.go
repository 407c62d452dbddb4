package edit

// The plan/commit engine. Every mutation of EditFiles goes through
// Engine.Plan, which validates the whole batch and computes the new bytes in
// memory without writing anything, then Engine.Commit, which replaces the
// files one by one (commit.go). Contracts (docs/design.md, "Contracts
// that must hold"): an edit touches only lines the model was shown at the
// current revision; a failed plan writes nothing; each file is replaced
// atomically; a batch that stops mid-commit reports the committed prefix
// and the untouched rest and never claims a rollback.

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"winx/edit/atomicfile"
	"winx/evidence"
	"winx/evidence/redact"
)

// Limits on one batch.
const (
	// MaxBatchFiles is the most targets one batch may name.
	MaxBatchFiles = 100
	// MaxPatches is the most patches one line_patch entry may carry.
	MaxPatches = 256
	// DefaultMaxFileBytes bounds the original and the new bytes of a file
	// when EngineOptions.MaxFileBytes is 0.
	DefaultMaxFileBytes = evidence.DefaultMaxBytes
)

// Mode is an EditFiles file mode.
type Mode string

const (
	ModeLinePatch     Mode = "line_patch"
	ModeSearchReplace Mode = "search_replace"
	ModeReplace       Mode = "replace"
	ModeUndo          Mode = "undo"
)

// Patch replaces DeleteLines lines starting at StartLine (1-based, in the
// coordinates of the original revision) with Replacement. DeleteLines 0 is a
// pure insertion before StartLine; StartLine == total+1 appends. A non-empty
// Replacement that does not end in a newline gets the file's line ending
// (the one of the first line, "\n" for a file without one), except when it
// becomes the file's last line and the original's last line had none.
type Patch struct {
	StartLine   int
	DeleteLines int
	Replacement string
}

// FileEdit is one entry of a batch.
type FileEdit struct {
	Path string // as the client gave it; the PathChecker canonicalizes it
	Mode Mode
	// ExpectedRevision is required for line_patch and optional otherwise;
	// when set it must equal the file's current revision.
	ExpectedRevision evidence.Revision
	Patches          []Patch // line_patch
	Content          string  // search_replace (blocks), replace (the new bytes)
	UndoID           string  // undo; Path may then be empty
}

// PathChecker is the path policy the engine consults (auth.PathPolicy
// implements it). Resolve canonicalizes a client path or refuses it;
// Recheck re-validates a canonical path just before a write.
type PathChecker interface {
	Resolve(path string) (string, error)
	Recheck(canonical string) error
}

// EngineOptions configures NewEngine. Ledger and Paths are required.
type EngineOptions struct {
	Ledger *evidence.Ledger // the session's read ledger
	Paths  PathChecker
	// StateDir holds receipts/ and undo/ (directories 0700, files 0600).
	// Empty disables receipts and undo records.
	StateDir string
	// Session keys receipts: the caller's principal and session, so an
	// identical batch from another session never replays this one's.
	Session string
	// Locks serializes writers of one path. Engines of one process that
	// may edit the same files should share one; nil gives a private set.
	Locks *PathLocks
	// LockDir holds the cross-process lock files of targets (directory
	// 0700, files 0600, removed by their holder): every process that may
	// edit the same files (any adapter of any principal) should name the
	// same directory. Empty locks the target's directory instead.
	LockDir string
	// LockWait bounds the wait for another writer's lock on a target
	// (0 means DefaultLockWait); past it the edit is a conflict
	// (ReasonBusy) and nothing is written.
	LockWait time.Duration
	// Redactor is the one ReadFiles shows files through: SEARCH text
	// is matched against the same redacted view, and placeholders in new
	// text are mapped back to the secrets they stand for (secrets.go).
	// nil redacts with the default rules; redact.New(true) turns the
	// mapping off (the model was shown the secrets themselves).
	Redactor     *redact.Redactor
	Now          func() time.Time // nil means time.Now
	MaxFileBytes int64            // 0 means DefaultMaxFileBytes
}

// Engine plans and commits edit batches for one session. It is safe for
// concurrent use.
type Engine struct {
	ledger   *evidence.Ledger
	paths    PathChecker
	stateDir string
	session  string
	locks    *PathLocks
	lockDir  string
	lockWait time.Duration
	redactor *redact.Redactor
	now      func() time.Time
	maxBytes int64

	mu sync.Mutex // guards the fields below
	// conflicts counts SEARCH conflicts per canonical path since the last
	// successful commit of that path (see RecoveryExhaustedError).
	conflicts map[string]int
	// swept is when each directory was last swept of stale temp files.
	swept map[string]time.Time
	// history is this engine's own commits, oldest first, at most
	// maxHistory (history.go).
	history []ownEdit
}

// NewEngine returns an engine. It creates StateDir's subdirectories and
// removes expired receipts and undo records.
func NewEngine(opts EngineOptions) (*Engine, error) {
	if opts.Ledger == nil || opts.Paths == nil {
		return nil, errors.New("edit: NewEngine needs a Ledger and a PathChecker")
	}
	e := &Engine{
		ledger:    opts.Ledger,
		paths:     opts.Paths,
		stateDir:  opts.StateDir,
		session:   opts.Session,
		locks:     opts.Locks,
		lockDir:   opts.LockDir,
		lockWait:  opts.LockWait,
		redactor:  opts.Redactor,
		now:       opts.Now,
		maxBytes:  opts.MaxFileBytes,
		conflicts: make(map[string]int),
		swept:     make(map[string]time.Time),
	}
	if e.locks == nil {
		e.locks = &PathLocks{}
	}
	if e.now == nil {
		e.now = time.Now
	}
	if e.lockWait <= 0 {
		e.lockWait = DefaultLockWait
	}
	if e.maxBytes <= 0 {
		e.maxBytes = DefaultMaxFileBytes
	}
	if e.lockDir != "" {
		if err := atomicfile.MkdirPrivate(e.lockDir); err != nil {
			return nil, fmt.Errorf("edit: lock directory: %w", err)
		}
	}
	if e.stateDir != "" {
		for _, sub := range []string{receiptDir, undoDir, intentDir} {
			if err := atomicfile.MkdirPrivate(filepath.Join(e.stateDir, sub)); err != nil {
				return nil, fmt.Errorf("edit: state directory: %w", err)
			}
		}
		e.sweepState()
	}
	return e, nil
}

// Plan is a validated batch with its new bytes, ready for Commit. It holds
// no lock and no file descriptor; Commit re-checks everything that matters.
type Plan struct {
	Files  []PlannedFile
	key    string   // receipt key of the normalized batch
	replay *receipt // non-nil: an identical batch already succeeded and still matches
	// recovered: this very batch was interrupted by a crash and planning
	// it finished it (intent.go); Commit returns it.
	recovered *Result
}

// PlannedFile is one target of a Plan.
type PlannedFile struct {
	Path    string // canonical
	Mode    Mode
	Exists  bool              // false: the file is created
	OldRev  evidence.Revision // "" when created
	OldMode fs.FileMode
	old     []byte
	new     []byte
	NewRev  evidence.Revision
	// Tolerances the matcher applied (search_replace).
	Tolerances []string
	// known is how the model's coverage carries to the new revision.
	known  knowledge
	remove bool // undo of a creation: the file is removed
}

// receiptAfterCommits waits until no commit holds paths and then looks for
// the receipt of an identical batch. A repeated call that read a file while
// the original call was committing it sees the original's own write as a
// change; once that commit ended, its receipt makes the repeat a replay.
func (e *Engine) receiptAfterCommits(key string, paths []string) *receipt {
	unlock := e.locks.lock(paths)
	defer unlock()
	if r := e.loadReceipt(key); r != nil && r.stillMatches() {
		return r
	}
	return nil
}

// Plan validates edits and computes the new bytes of every target in
// memory. It writes nothing. Validation, in order for each entry: the batch
// shape (1..MaxBatchFiles unique canonical targets; undo alone), the path
// policy, the mode payload, the current bytes, ExpectedRevision, read
// coverage and block matching. Coverage problems of all files are gathered
// into one *NeedsReadError; any other problem returns at once.
//
// Coverage rules (the model can only change what it has seen):
//   - line_patch: a patch deleting lines L..M needs L..M shown at the
//     current revision; an insertion before line N needs line N-1 or line N
//     shown (the missing read asked for is N-1..N, clamped to the file); an
//     empty file needs its revision read.
//   - search_replace: every line a block matched needs to have been shown.
//   - replace of an existing file: the whole file; a new file: nothing.
//   - undo: nothing (the model made the edit; the record proves the bytes).
//
// If the ledger holds another revision than the one on disk, the edit is a
// *ConflictError with ReasonChangedAfterRead rather than a read request.
func (e *Engine) Plan(edits []FileEdit) (*Plan, error) {
	if len(edits) == 0 {
		return nil, &InvalidError{Msg: "no files"}
	}
	if len(edits) > MaxBatchFiles {
		return nil, &InvalidError{Msg: fmt.Sprintf("%d files, limit %d", len(edits), MaxBatchFiles)}
	}
	for _, ed := range edits {
		if ed.Mode == ModeUndo && len(edits) != 1 {
			return nil, &InvalidError{Path: ed.Path, Msg: "undo must be the only entry of its batch"}
		}
	}
	if edits[0].Mode == ModeUndo {
		pf, err := e.planUndo(edits[0])
		var ce *ConflictError
		if errors.As(err, &ce) {
			// A lost response to this very undo: replay it.
			p := &Plan{Files: []PlannedFile{{Path: ce.Path, Mode: ModeUndo}}}
			p.key = e.receiptKey(edits, p)
			if r := e.loadReceipt(p.key); r != nil && r.stillMatches() {
				p.replay = r
				return p, nil
			}
		}
		if err != nil {
			return nil, err
		}
		p := &Plan{Files: []PlannedFile{*pf}}
		p.key = e.receiptKey(edits, p)
		return p, nil
	}

	// Resolve every path first: policy refusals and duplicates come before
	// any file is read.
	canon := make([]string, len(edits))
	seen := make(map[string]bool, len(edits))
	for i, ed := range edits {
		if err := checkPayload(ed); err != nil {
			return nil, err
		}
		c, err := e.paths.Resolve(ed.Path)
		if err != nil {
			return nil, &DeniedError{Path: ed.Path, Err: err}
		}
		if seen[c] {
			return nil, &InvalidError{Path: c, Msg: "named twice in one batch"}
		}
		seen[c] = true
		canon[i] = c
	}

	p := &Plan{Files: make([]PlannedFile, len(edits))}
	for i := range p.Files {
		p.Files[i].Path = canon[i]
	}
	p.key = e.receiptKey(edits, p)
	// A batch that died half-way: the same call finishes it, any other
	// call on one of its files rolls it back first.
	recovered, err := e.recoverIntents(p.key, canon)
	if err != nil {
		return nil, err
	}
	if recovered != nil {
		p.recovered = recovered
		return p, nil
	}
	if r := e.loadReceipt(p.key); r != nil && r.stillMatches() {
		p.replay = r
		return p, nil
	}

	var reads []RequiredRead
	for i, ed := range edits {
		pf, missing, err := e.planFile(canon[i], ed)
		var ce *ConflictError
		if errors.As(err, &ce) {
			if r := e.receiptAfterCommits(p.key, canon); r != nil {
				p.replay = r
				return p, nil
			}
		}
		if err != nil {
			return nil, err
		}
		if len(missing) > 0 {
			reads = append(reads, RequiredRead{Path: canon[i], Ranges: missing})
			continue
		}
		p.Files[i] = *pf
	}
	if len(reads) > 0 {
		return nil, &NeedsReadError{Reads: reads}
	}
	return p, nil
}

// checkPayload validates the fields an entry's mode needs, without reading.
func checkPayload(ed FileEdit) error {
	if ed.ExpectedRevision != "" {
		if _, err := evidence.ParseRevisionRef(string(ed.ExpectedRevision)); err != nil {
			return &InvalidError{Path: ed.Path, Msg: err.Error()}
		}
	}
	switch ed.Mode {
	case ModeLinePatch:
		if ed.ExpectedRevision == "" {
			return &InvalidError{Path: ed.Path, Msg: "line_patch needs expected_revision"}
		}
		if len(ed.Patches) == 0 || len(ed.Patches) > MaxPatches {
			return &InvalidError{Path: ed.Path, Msg: fmt.Sprintf("line_patch needs 1..%d patches, got %d", MaxPatches, len(ed.Patches))}
		}
		prevEnd := 0 // first line after the previous patch's deleted lines
		for i, pt := range ed.Patches {
			switch {
			case pt.StartLine < 1 || pt.StartLine > evidence.MaxLineNumber:
				return &InvalidError{Path: ed.Path, Msg: fmt.Sprintf("patch %d: start_line %d out of range", i+1, pt.StartLine)}
			case pt.DeleteLines < 0 || pt.DeleteLines > evidence.MaxLineNumber:
				return &InvalidError{Path: ed.Path, Msg: fmt.Sprintf("patch %d: delete_lines %d out of range", i+1, pt.DeleteLines)}
			case pt.DeleteLines == 0 && pt.Replacement == "":
				return &InvalidError{Path: ed.Path, Msg: fmt.Sprintf("patch %d: changes nothing", i+1)}
			case i > 0 && pt.StartLine < prevEnd:
				return &InvalidError{Path: ed.Path, Msg: fmt.Sprintf("patch %d: overlaps or precedes patch %d (patches must be ordered and disjoint)", i+1, i)}
			case i > 0 && pt.StartLine == ed.Patches[i-1].StartLine && ed.Patches[i-1].DeleteLines == 0:
				return &InvalidError{Path: ed.Path, Msg: fmt.Sprintf("patch %d: two patches at line %d; merge them", i+1, pt.StartLine)}
			}
			prevEnd = pt.StartLine + pt.DeleteLines
		}
		if ed.Content != "" || ed.UndoID != "" {
			return &InvalidError{Path: ed.Path, Msg: "line_patch takes patches only"}
		}
	case ModeSearchReplace:
		if ed.Content == "" {
			return &InvalidError{Path: ed.Path, Msg: "search_replace needs content with SEARCH/REPLACE blocks"}
		}
		if len(ed.Patches) > 0 || ed.UndoID != "" {
			return &InvalidError{Path: ed.Path, Msg: "search_replace takes content only"}
		}
	case ModeReplace:
		if len(ed.Patches) > 0 || ed.UndoID != "" {
			return &InvalidError{Path: ed.Path, Msg: "replace takes content only"}
		}
	case ModeUndo:
		return &InvalidError{Path: ed.Path, Msg: "undo must be the only entry of its batch"}
	default:
		return &InvalidError{Path: ed.Path, Msg: fmt.Sprintf("unknown mode %q", ed.Mode)}
	}
	return nil
}

// planFile reads one target and computes its new bytes. missing is non-nil
// when the model must read more first.
func (e *Engine) planFile(path string, ed FileEdit) (pf *PlannedFile, missing []evidence.Range, err error) {
	pf = &PlannedFile{Path: path, Mode: ed.Mode}
	snap, err := evidence.ReadSnapshot(path, e.maxBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if ed.Mode != ModeReplace {
			return nil, nil, &NotFoundError{Path: path}
		}
		if ed.ExpectedRevision != "" {
			return nil, nil, &ConflictError{Path: path, Want: ed.ExpectedRevision, Reason: ReasonRevisionMismatch}
		}
		if int64(len(ed.Content)) > e.maxBytes {
			return nil, nil, &InvalidError{Path: path, Msg: fmt.Sprintf("content is %d bytes, limit %d", len(ed.Content), e.maxBytes)}
		}
		content := ed.Content
		if !e.redactor.Disabled() && hasPlaceholder(content) {
			sv := &secretView{}
			if content, err = sv.fill(path, content, nil, ""); err != nil {
				return nil, nil, err
			}
		}
		pf.new = []byte(content)
		pf.NewRev = evidence.RevisionOf(pf.new)
		pf.known = knowledge{whole: true}
		return pf, nil, nil
	case errors.Is(err, evidence.ErrNotRegular), errors.Is(err, evidence.ErrTooLarge), errors.Is(err, evidence.ErrUnstable):
		return nil, nil, &InvalidError{Path: path, Msg: err.Error()}
	case errors.Is(err, fs.ErrPermission):
		return nil, nil, &DeniedError{Path: path, Err: err}
	case err != nil:
		return nil, nil, &InvalidError{Path: path, Msg: err.Error()}
	}
	if snap.Path != path {
		// A component became a symlink between Resolve and the read.
		return nil, nil, &DeniedError{Path: path, Err: errors.New("path changed while it was read")}
	}
	pf.Exists, pf.old, pf.OldRev, pf.OldMode = true, snap.Bytes, snap.Revision, snap.Mode

	lines := evidence.IndexLines(snap.Bytes)
	if ed.ExpectedRevision != "" && !ed.ExpectedRevision.IsFull() {
		// A short revision names one the session was issued; from here on
		// only full revisions are compared (evidence.ShortRevisionHex).
		full, err := e.resolveShort(path, ed.ExpectedRevision)
		if err != nil {
			return nil, nil, err
		}
		ed.ExpectedRevision = full
	}
	if ed.ExpectedRevision != "" && ed.ExpectedRevision != snap.Revision {
		if changed, ok := e.ownChain(path, ed.ExpectedRevision, snap.Revision); ok {
			// The session's own later edit made the revision stale:
			// say where the file is and what that edit changed.
			return nil, nil, &ConflictError{Path: path, Want: ed.ExpectedRevision, Got: snap.Revision, Reason: ReasonRevisionMismatch, OwnEdit: true, Changed: changed}
		}
		if !e.issued(path, ed.ExpectedRevision) {
			// A revision the session was never given: not a change
			// since a read, but a read that is missing.
			if m := e.missing(path, snap.Revision, lines, evidence.All); m != nil {
				return nil, m, nil
			}
			return nil, nil, &ConflictError{Path: path, Want: ed.ExpectedRevision, Got: snap.Revision, Reason: ReasonRevisionMismatch, NeverIssued: true}
		}
		return nil, nil, &ConflictError{Path: path, Want: ed.ExpectedRevision, Got: snap.Revision, Reason: ReasonRevisionMismatch}
	}
	if _, known, seen := e.ledger.Missing(path, snap.Revision, evidence.Range{}); known && seen != snap.Revision {
		return nil, nil, &ConflictError{Path: path, Want: seen, Got: snap.Revision, Reason: ReasonChangedAfterRead}
	}

	switch ed.Mode {
	case ModeLinePatch:
		patches := ed.Patches
		if !e.redactor.Disabled() && slices.ContainsFunc(patches, func(p Patch) bool { return hasPlaceholder(p.Replacement) }) {
			if patches, err = newSecretView(e.redactor, string(snap.Bytes)).fillPatches(path, lines, patches); err != nil {
				return nil, nil, err
			}
		}
		out, known, err := applyPatches(snap.Bytes, lines, patches)
		if err != nil {
			return nil, nil, &InvalidError{Path: path, Msg: err.Error()}
		}
		if missing = e.patchCoverage(path, snap.Revision, lines, ed.Patches); missing != nil {
			return nil, missing, nil
		}
		pf.new, pf.known = out, known
	case ModeReplace:
		if missing = e.missing(path, snap.Revision, lines, evidence.All); missing != nil {
			return nil, missing, nil
		}
		content := ed.Content
		if !e.redactor.Disabled() && hasPlaceholder(content) {
			sv := newSecretView(e.redactor, string(snap.Bytes))
			if content, err = sv.fill(path, content, sv.regs, sv.literalText(0, len(sv.orig))); err != nil {
				return nil, nil, err
			}
		}
		pf.new, pf.known = []byte(content), knowledge{whole: true}
	case ModeSearchReplace:
		blocks, err := ParseBlocks(ed.Content)
		if err != nil {
			return nil, nil, &FileError{Path: path, Err: err}
		}
		// Match on the text ReadFiles showed: the redacted view.
		sv := &secretView{orig: string(snap.Bytes), view: string(snap.Bytes)}
		if !e.redactor.Disabled() {
			sv = newSecretView(e.redactor, sv.orig)
		}
		applied, err := Apply(sv.view, blocks)
		if err != nil {
			if me := (*MatchError)(nil); errors.As(err, &me) && me.Nearest != nil {
				sv.renumber(me.Nearest, lines)
			}
			return nil, nil, e.searchConflict(path, err)
		}
		for _, m := range applied.Matches {
			a, b := sv.origLines(lines, m.StartLine, m.EndLine)
			missing = append(missing, e.missing(path, snap.Revision, lines, evidence.Range{Start: a, End: b})...)
		}
		if missing != nil {
			return nil, mergeRanges(missing), nil
		}
		content := applied.Content
		if !e.redactor.Disabled() {
			if content, err = sv.applySearch(path, applied); err != nil {
				return nil, nil, err
			}
		}
		pf.new, pf.Tolerances = []byte(content), applied.Tolerances
		// The replacement lines are the model's own text (as the
		// tolerances adapted it, which the diff shows).
		pf.known = knowledge{carry: true, wrote: true}
	}
	if int64(len(pf.new)) > e.maxBytes {
		return nil, nil, &InvalidError{Path: path, Msg: fmt.Sprintf("new content is %d bytes, limit %d", len(pf.new), e.maxBytes)}
	}
	pf.NewRev = evidence.RevisionOf(pf.new)
	return pf, nil, nil
}

// missing returns the ranges of want (clamped to the file) not shown at rev;
// for an empty file, whether the revision itself was read.
func (e *Engine) missing(path string, rev evidence.Revision, lines evidence.Lines, want evidence.Range) []evidence.Range {
	w, ok := want.Clamp(lines.Count())
	if !ok {
		if _, known, seen := e.ledger.Missing(path, rev, evidence.Range{}); known && seen == rev {
			return nil
		}
		return []evidence.Range{evidence.All}
	}
	m, _, _ := e.ledger.Missing(path, rev, w)
	return m
}

// patchCoverage applies the line_patch coverage rule of Plan.
func (e *Engine) patchCoverage(path string, rev evidence.Revision, lines evidence.Lines, patches []Patch) []evidence.Range {
	total := lines.Count()
	var out []evidence.Range
	for _, pt := range patches {
		if pt.DeleteLines > 0 {
			out = append(out, e.missing(path, rev, lines, evidence.Range{Start: pt.StartLine, End: pt.StartLine + pt.DeleteLines - 1})...)
			continue
		}
		if total == 0 {
			out = append(out, e.missing(path, rev, lines, evidence.All)...)
			continue
		}
		lo, hi := max(pt.StartLine-1, 1), min(pt.StartLine, total)
		if e.ledger.Covers(path, rev, evidence.Range{Start: lo, End: lo}) || e.ledger.Covers(path, rev, evidence.Range{Start: hi, End: hi}) {
			continue
		}
		out = append(out, evidence.Range{Start: lo, End: hi})
	}
	return mergeRanges(out)
}

// mergeRanges sorts concrete ranges and merges overlapping or adjacent ones.
func mergeRanges(rs []evidence.Range) []evidence.Range {
	if len(rs) == 0 {
		return nil
	}
	out := make([]evidence.Range, 0, len(rs))
	sorted := append([]evidence.Range(nil), rs...)
	for i := 1; i < len(sorted); i++ { // insertion sort: few ranges, mostly ordered
		for j := i; j > 0 && sorted[j].Start < sorted[j-1].Start; j-- {
			sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
		}
	}
	for _, r := range sorted {
		if n := len(out); n > 0 {
			last := &out[n-1]
			if last.End == 0 {
				continue
			}
			if r.Start <= last.End+1 {
				if r.End == 0 || r.End > last.End {
					last.End = r.End
				}
				continue
			}
		}
		out = append(out, r)
	}
	return out
}

// searchConflict counts a matcher refusal against path and wraps it.
func (e *Engine) searchConflict(path string, err error) error {
	var me *MatchError
	if errors.As(err, &me) && (me.Kind == NotFound || me.Kind == Ambiguous) {
		e.mu.Lock()
		e.conflicts[path]++
		n := e.conflicts[path]
		if n >= maxSearchConflicts {
			delete(e.conflicts, path)
		}
		e.mu.Unlock()
		if n >= maxSearchConflicts {
			return &RecoveryExhaustedError{Path: path, Err: err}
		}
	}
	return &FileError{Path: path, Err: err}
}

// maxSearchConflicts: the SEARCH conflict on one target that gives
// RecoveryExhaustedError.
const maxSearchConflicts = 3
