package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"

	"winx/auth"
	"winx/evidence"
	"winx/mcp"
	"winx/mcp/session"
	wspace "winx/mcp/workspace"
)

// ReadFilesTool is the file reading tool's name.
const ReadFilesTool = "ReadFiles"

// ReadFiles limits and defaults (docs/tools.md, "ReadFiles").
const (
	DefaultCodingTokenBudget    = 24000
	DefaultNonCodingTokenBudget = 8000
	DefaultReadParallelism      = 4
	MaxReadParallelism          = 32
	maxReadFiles                = 100
	maxReadFileBytes            = 16 << 20
)

// ReadOptions tune ReadFiles; zero fields mean the defaults.
type ReadOptions struct {
	CodingTokenBudget    int // WINX_CODING_TOKEN_BUDGET
	NonCodingTokenBudget int // WINX_NONCODING_TOKEN_BUDGET
	Parallelism          int // WINX_READ_PARALLELISM, at most MaxReadParallelism
}

func (o ReadOptions) withDefaults() ReadOptions {
	if o.CodingTokenBudget <= 0 {
		o.CodingTokenBudget = DefaultCodingTokenBudget
	}
	if o.NonCodingTokenBudget <= 0 {
		o.NonCodingTokenBudget = DefaultNonCodingTokenBudget
	}
	if o.Parallelism <= 0 {
		o.Parallelism = DefaultReadParallelism
	}
	o.Parallelism = min(o.Parallelism, MaxReadParallelism)
	return o
}

type readTool struct {
	// affinity is the catalog's session affinity (the scope of a reattach).
	affinity   string
	sessions   *session.Sessions
	allowPaths []string
	protected  *auth.Protected
	opts       ReadOptions
	stateDir   string // the server's; the session's ledger is kept under its principal's
	// editors settles an interrupted edit batch on a file before the file
	// is read.
	editors *editors
}

type readInput struct {
	FilePaths     []string `json:"file_paths"`
	ThreadID      string   `json:"thread_id"`
	WorkspaceRoot string   `json:"workspace_root"`
}

// fileRead is one file's part of the answer.
type fileRead struct {
	Path string `json:"path"`
	// Canonical is left out when it is Path itself.
	Canonical    string `json:"canonical_path,omitempty"`
	Revision     string `json:"revision,omitempty"`
	TotalLines   int    `json:"total_lines"`
	Shown        string `json:"shown_lines,omitempty"`
	Truncated    bool   `json:"truncated,omitempty"`
	Continuation string `json:"continuation,omitempty"`
	Binary       bool   `json:"binary,omitempty"`
	Error        string `json:"error,omitempty"`
	ErrorCode    string `json:"error_code,omitempty"`

	text string
}

type readData struct {
	Files []fileRead `json:"files"`
}

func addReadFiles(reg *mcp.Registry, opts Options, eds *editors) {
	t := &readTool{sessions: opts.Sessions, affinity: opts.Affinity, allowPaths: opts.AllowPaths, protected: opts.Protected, opts: opts.Read.withDefaults(), stateDir: opts.StateDir,
		editors: eds}
	reg.AddTool(mcp.Tool{
		Name:         ReadFilesTool,
		Title:        "Read files",
		Description:  readDescription,
		InputSchema:  readSchema,
		OutputSchema: mcp.EnvelopeOutputSchema,
		Annotations: &mcp.ToolAnnotations{
			ReadOnlyHint:  mcp.Bool(true),
			OpenWorldHint: mcp.Bool(false),
		},
	}, t.handle)
}

const readDescription = `Read workspace files with line numbers. A path may end with a range: ":N", ":A-B", ":A-" or ":-B". Answers give each file's revision and the lines shown; a truncated file names the continuation. Edits may only touch lines you were shown at the current revision.`

var readSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "file_paths": {"type": "array", "minItems": 1, "maxItems": 100, "items": {"type": "string", "minLength": 1},
      "description": "Absolute paths or paths relative to the workspace, each optionally followed by :N, :A-B, :A- or :-B"},
    "thread_id": {"type": "string", "minLength": 1},
    "workspace_root": {"type": "string", "minLength": 1}
  },
  "required": ["file_paths", "thread_id", "workspace_root"],
  "additionalProperties": false
}`)

func (t *readTool) handle(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
	var in readInput
	if err := decodeArguments(req.Arguments, &in); err != nil {
		return toolFailure(ReadFilesTool, err), nil
	}
	if len(in.FilePaths) == 0 || len(in.FilePaths) > maxReadFiles {
		return toolFailure(ReadFilesTool, &InputError{Msg: fmt.Sprintf("file_paths needs 1 to %d entries", maxReadFiles)}), nil
	}
	mcp.NoteCall(ctx, mcp.CallFacts{Batch: len(in.FilePaths), WorkerLimit: t.opts.Parallelism})
	if in.WorkspaceRoot == "" {
		return toolFailure(ReadFilesTool, session.ErrWorkspaceBindingRequired), nil
	}
	sess, err := lookupSession(ctx, t.sessions, t.affinity, req.Caller(), in.ThreadID, in.WorkspaceRoot)
	if err != nil {
		return toolFailure(ReadFilesTool, err), nil
	}
	policy, err := filePolicy(req.Caller(), sess, t.allowPaths, t.protected)
	if err != nil {
		return toolFailure(ReadFilesTool, err), nil
	}
	sess.UseLedgerDir(wspace.PrincipalStateDir(t.stateDir, sess.Key.Principal))
	defer sess.SaveLedger()
	sess.UseWorkDir(wspace.PrincipalStateDir(t.stateDir, sess.Key.Principal))
	defer sess.SaveWork()
	files := make([]fileRead, len(in.FilePaths))
	if len(files) == 1 {
		// One file is read here: a goroutine would only add a hand-off
		// between threads to the call.
		files[0] = t.readOne(ctx, req.Caller(), policy, sess, in.FilePaths[0])
		return t.answer(files), nil
	}
	sem := make(chan struct{}, t.opts.Parallelism)
	var wg sync.WaitGroup
	for i, spec := range in.FilePaths {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			files[i] = t.readOne(ctx, req.Caller(), policy, sess, spec)
		}()
	}
	wg.Wait()
	return t.answer(files), nil
}

// readOne reads one path spec, records what was shown and renders it.
func (t *readTool) readOne(ctx context.Context, caller mcp.Caller, policy *auth.PathPolicy, sess *session.Session, spec string) fileRead {
	ledger := sess.Ledger
	fr := fileRead{Path: spec}
	path, rng, _, err := evidence.ParsePathSpec(spec)
	if err != nil {
		return fr.fail(codeInvalidToolInput, err.Error())
	}
	if ctx.Err() != nil {
		return fr.fail(codeExecutionFailed, "the call was cancelled")
	}
	// The journal of the session's own lost shell, which an answer named
	// (lostsession.go), may be read wherever it is kept: that one file,
	// for this session's principal only.
	journal := ""
	if filepath.IsAbs(path) && sess.LostJournal(filepath.Clean(path)) {
		journal = filepath.Clean(path)
		if p, err := pathPolicy(filepath.Dir(journal), nil, nil); err == nil {
			policy = p
		}
	}
	canonical, err := policy.Resolve(path)
	if err == nil && journal != "" && canonical != journal {
		err = auth.ErrPathDenied
	}
	if err != nil {
		return fr.failErr(err)
	}
	if journal == "" {
		if err := t.editors.settle(caller, sess, canonical); err != nil {
			return fr.failErr(err)
		}
	}
	snap, err := readResolved(policy, canonical, maxReadFileBytes)
	if err != nil {
		return fr.failErr(err)
	}
	if rng.IsZero() {
		rng = evidence.All
	}
	// The file's part of the answer (head, lines, truncation note) is
	// built in one string with the rendering.
	view, text := evidence.RenderFramed(snap, rng, t.budgetFor(canonical), func(v evidence.View) (string, string) {
		fr.Canonical, fr.Revision, fr.TotalLines = snap.Path, snap.Revision.Short(), v.TotalLines
		fr.Shown, fr.Truncated, fr.Binary = v.Shown.String(), v.Truncated, v.Binary
		fr.Continuation = v.Continuation
		return fr.head(), fr.tail()
	})
	if !view.Shown.IsZero() || view.TotalLines == 0 {
		ledger.Record(snap.Path, snap.Revision, view.Shown)
		if journal == "" {
			sess.NoteRead(snap.Path, view.Shown)
		}
	}
	// Not redacted here: the whole answer leaves through the catalog's
	// one redaction step (redactingHandler), which would scan it again.
	fr.text = text
	return fr
}

// head is the lines before a read file's text in the answer.
func (fr *fileRead) head() string {
	var h string
	switch {
	case fr.Binary:
		h = fmt.Sprintf("revision %s; binary file, no lines shown\n", fr.Revision)
	case fr.Shown == "":
		h = fmt.Sprintf("revision %s; %d lines; no complete line shown\n", fr.Revision, fr.TotalLines)
	default:
		h = fmt.Sprintf("revision %s; lines %s of %d\n", fr.Revision, fr.Shown, fr.TotalLines)
	}
	return "### " + fr.Canonical + "\n" + h
}

// tail is the line after a read file's text in the answer.
func (fr *fileRead) tail() string {
	if fr.Truncated {
		return fmt.Sprintf("[truncated: read %s next]\n", fr.Continuation)
	}
	return ""
}

func (fr fileRead) fail(code, msg string) fileRead {
	fr.ErrorCode, fr.Error = code, msg
	return fr
}

// failErr classifies a read failure by type, never by text.
func (fr fileRead) failErr(err error) fileRead {
	switch {
	case errors.Is(err, auth.ErrPathProtected):
		return fr.fail(codeFileOperationDenied, "the path is "+protectedPathText)
	case errors.Is(err, auth.ErrPathDenied):
		return fr.fail(codeFileOperationDenied, "the path is outside the workspace and the allowed paths")
	case errors.Is(err, auth.ErrPathInvalid):
		return fr.fail(codeInvalidToolInput, err.Error())
	case errors.Is(err, fs.ErrNotExist):
		return fr.fail(codeFileNotFound, "no such file")
	case errors.Is(err, fs.ErrPermission):
		return fr.fail(codeFileOperationDenied, "permission denied")
	case errors.Is(err, evidence.ErrNotRegular):
		return fr.fail(codeInvalidToolInput, "not a regular file")
	case errors.Is(err, evidence.ErrTooLarge):
		return fr.fail(codeFileTooLarge, fmt.Sprintf("larger than %d bytes", maxReadFileBytes))
	}
	return fr.fail(codeExecutionFailed, "the file could not be read")
}

// codeExtensions are source files that get the larger coding budget.
var codeExtensions = map[string]bool{
	".go": true, ".py": true, ".js": true, ".jsx": true, ".ts": true, ".tsx": true, ".rs": true, ".c": true,
	".h": true, ".cc": true, ".cpp": true, ".hpp": true, ".java": true, ".rb": true, ".cs": true, ".php": true,
	".lua": true, ".ex": true, ".exs": true, ".kt": true, ".swift": true, ".scala": true, ".sh": true,
	".bash": true, ".zsh": true, ".sql": true, ".proto": true,
}

func (t *readTool) budgetFor(path string) int {
	if codeExtensions[strings.ToLower(filepath.Ext(path))] {
		return t.opts.CodingTokenBudget
	}
	return t.opts.NonCodingTokenBudget
}

// answer joins the files in request order. Any failed file makes the
// result an error result, but every other file is still there.
func (t *readTool) answer(files []fileRead) *mcp.CallToolResult {
	var firstErr *fileRead
	for i := range files {
		if f := &files[i]; f.Error != "" {
			// A failed file's part is its error.
			f.text = fmt.Sprintf("### %s\nerror (%s): %s\n", f.Path, f.ErrorCode, f.Error)
			if firstErr == nil {
				firstErr = f
			}
		}
	}
	// Each file's part is built whole (readOne); one file's is the text as
	// it is, several are joined by blank lines.
	text := files[0].text
	if len(files) > 1 {
		var b strings.Builder
		size := 0
		for i := range files {
			size += len(files[i].text) + 1
		}
		b.Grow(size)
		for i := range files {
			if i > 0 {
				b.WriteString("\n")
			}
			b.WriteString(files[i].text)
		}
		text = b.String()
	}
	for i := range files {
		if files[i].Canonical == files[i].Path {
			// Said once: the path as asked is the canonical one.
			files[i].Canonical = ""
		}
	}
	// No message on success: each file's head in the text says what was
	// read.
	env := mcp.Envelope{Status: mcp.StatusCompleted, Tool: ReadFilesTool, Data: readData{Files: files}}
	if firstErr != nil {
		env.Status, env.ErrorCode, env.Retryable = statusForCode(firstErr.ErrorCode), firstErr.ErrorCode, true
		env.Message = fmt.Sprintf("%s: %s; the other files were read.", firstErr.Path, firstErr.Error)
	}
	return env.Result(strings.TrimRight(text, "\n"))
}

// statusForCode is the envelope status of a per-file error code.
func statusForCode(code string) mcp.Status {
	switch code {
	case codeFileNotFound:
		return mcp.StatusNotFound
	case codeFileOperationDenied:
		return mcp.StatusDenied
	case codeInvalidToolInput, codeFileTooLarge:
		return mcp.StatusInvalidInput
	}
	return mcp.StatusFailed
}
