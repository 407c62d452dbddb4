package tools

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"winx/auth"
	"winx/evidence"
	"winx/evidence/redact"
	"winx/mcp"
	"winx/mcp/session"
)

// ContextSaveTool is the name of the tool that saves a task's context for a
// later Initialize with task_id_to_resume.
const ContextSaveTool = "ContextSave"

// Limits of ContextSave. Tokens are estimated as bytes/4, which is close
// enough for code and English to size what a model will be shown.
const (
	// MaxTaskIDLen bounds a task id (1..64 bytes of [A-Za-z0-9_.-]).
	MaxTaskIDLen = 64
	// MaxContextDescriptionBytes bounds the description.
	MaxContextDescriptionBytes = 64 << 10
	// MaxContextGlobs bounds relevant_file_globs.
	MaxContextGlobs = 64
	// DefaultContextFileTokens caps one file's saved content; a longer
	// file is cut at a line end.
	DefaultContextFileTokens = 10000
	// DefaultContextTotalTokens caps the saved content of all files; a
	// file that no longer fits is left out and listed.
	DefaultContextTotalTokens = 40000
	// MaxContextScan bounds the directory entries one save walks while
	// matching globs.
	MaxContextScan = 50000
	// MaxContextDiffBytes bounds each git diff kept.
	MaxContextDiffBytes = 64 << 10
	// MaxContextListedOmissions bounds the files listed as left out; the
	// rest are only counted, so a broad glob over a large tree cannot make
	// the saved file or the answer grow with the tree.
	MaxContextListedOmissions = 100
	// MaxSavedContextBytes bounds a saved context file read back; what
	// ContextSave writes stays well below it.
	MaxSavedContextBytes = 2 << 20
	// contextWalkTimeout bounds the glob walk of one save.
	contextWalkTimeout = 10 * time.Second
	// bytesPerToken is the token estimate's divisor, the one ReadFiles uses.
	bytesPerToken = evidence.BytesPerToken
	// savedFileOverhead is what one saved file adds besides its content and
	// its name (heading, size, fences), charged to the total cap so that
	// many empty files cannot grow the saved file without bound.
	savedFileOverhead = 32
)

// codeStateDirUnavailable: the server has no state directory to save into.
const codeStateDirUnavailable = "state_dir_unavailable"

// ErrStateDirUnavailable: no state directory is configured.
var ErrStateDirUnavailable = errors.New("tools: no state directory is configured")

// savedContextMagic is the first line of every saved context file.
const savedContextMagic = "# Winx saved context"

var contextSaveSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "id": {"type": "string", "maxLength": 64,
      "description": "Task id: 1 to 64 characters of A-Z a-z 0-9 _ . - not starting with a dot. Empty generates one; an existing id is overwritten."},
    "project_root_path": {"type": "string",
      "description": "Project directory to save; default: the session's workspace root. It must be inside the workspace or the allowed paths."},
    "description": {"type": "string", "minLength": 1,
      "description": "What the task is, what was done and what is left, for whoever resumes it."},
    "relevant_file_globs": {"type": "array", "maxItems": 64, "items": {"type": "string", "minLength": 1},
      "description": "Files to save: globs, relative ones joining the project root; ** matches any number of directories."},
    "thread_id": {"type": "string"},
    "workspace_root": {"type": "string"}
  },
  "required": ["description"],
  "additionalProperties": false
}`)

const contextSaveDescription = `Save the current task so it can be resumed later, even by another client or after a restart: the description, the workspace context, git status and diff, and the contents of the files matching relevant_file_globs (token-capped, secrets redacted) go into one private file. ` +
	`Resume with Initialize type first_call and task_id_to_resume set to the returned id.`

type contextSaveInput struct {
	ID                string   `json:"id"`
	ProjectRootPath   string   `json:"project_root_path"`
	Description       string   `json:"description"`
	RelevantFileGlobs []string `json:"relevant_file_globs"`
	ThreadID          string   `json:"thread_id"`
	WorkspaceRoot     string   `json:"workspace_root"`
}

// omittedFile is a matched file that was not saved, and why.
type omittedFile struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// contextSaveData is the envelope's data.
type contextSaveData struct {
	ID             string        `json:"id"`
	Path           string        `json:"path"`
	ProjectRoot    string        `json:"project_root"`
	Bytes          int           `json:"bytes"`
	Tokens         int           `json:"tokens"`
	FilesIncluded  []string      `json:"files_included"`
	FilesTruncated []string      `json:"files_truncated,omitempty"`
	FilesOmitted   []omittedFile `json:"files_omitted,omitempty"`
	// FilesOmittedMore counts the files left out past the first
	// MaxContextListedOmissions, which are not listed.
	FilesOmittedMore int      `json:"files_omitted_more,omitempty"`
	UnmatchedGlobs   []string `json:"unmatched_globs,omitempty"`
	ScanTruncated    bool     `json:"scan_truncated,omitempty"`
	OpenedWith       string   `json:"opened_with,omitempty"`
}

// contextSaver serves ContextSave.
type contextSaver struct {
	sessions   *session.Sessions
	allowPaths []string
	stateDir   string // "" refuses every save
	build      string
	overview   OverviewLimits
	redactor   *redact.Redactor
	fileTokens int // per-file cap
	tokens     int // all files' cap
	now        func() time.Time
	// open shows the saved file to the user (WINX_OPEN_CONTEXT=1); nil
	// leaves it alone. It returns the opener's name.
	open func(path string) (string, error)
}

func addContextSave(reg *mcp.Registry, opts Options) {
	t := &contextSaver{
		sessions: opts.Sessions, allowPaths: opts.AllowPaths, stateDir: opts.StateDir, build: opts.Build,
		overview: opts.Overview, redactor: opts.redactor(),
		fileTokens: DefaultContextFileTokens, tokens: DefaultContextTotalTokens, now: time.Now,
	}
	if opts.OpenContext {
		t.open = openWithDesktop
	}
	reg.AddTool(mcp.Tool{
		Name:         ContextSaveTool,
		Title:        "Save the task context",
		Description:  contextSaveDescription,
		InputSchema:  contextSaveSchema,
		OutputSchema: mcp.EnvelopeOutputSchema,
		Annotations: &mcp.ToolAnnotations{
			Title:           "Save the task context",
			ReadOnlyHint:    mcp.Bool(false),
			DestructiveHint: mcp.Bool(false),
			OpenWorldHint:   mcp.Bool(false),
		},
	}, t.handle)
}

// validTaskID reports whether id may name a saved context: it becomes a
// file name, so only a small alphabet, no leading dot (no "..", no hidden
// files) and no separator.
func validTaskID(id string) error {
	if id == "" || len(id) > MaxTaskIDLen {
		return &InputError{Msg: fmt.Sprintf("task id must be 1 to %d characters", MaxTaskIDLen)}
	}
	if id[0] == '.' {
		return &InputError{Msg: fmt.Sprintf("task id %q must not start with a dot", id)}
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !session.IsThreadIDByte(c) && c != '-' && c != '.' {
			return &InputError{Msg: fmt.Sprintf("task id %q may only hold A-Z, a-z, 0-9, '_', '.' and '-'", id)}
		}
	}
	return nil
}

// newTaskID is a fresh random task id.
func newTaskID() string {
	var b [6]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return "task-" + hex.EncodeToString(b[:])
}

// contextFile is where a task's context is saved.
func contextFile(stateDir, id string) string {
	return filepath.Join(stateDir, "contexts", id+".txt")
}

func (t *contextSaver) handle(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
	var in contextSaveInput
	if err := decodeArguments(req.Arguments, &in); err != nil {
		return contextFailure(err), nil
	}
	return t.save(ctx, req.Caller().Principal, &in), nil
}

func (t *contextSaver) save(ctx context.Context, principal string, in *contextSaveInput) *mcp.CallToolResult {
	if in.ID == "" {
		in.ID = newTaskID()
	}
	if err := validTaskID(in.ID); err != nil {
		return contextFailure(err)
	}
	switch {
	case strings.TrimSpace(in.Description) == "":
		return contextFailure(&InputError{Msg: "description is required"})
	case len(in.Description) > MaxContextDescriptionBytes:
		return contextFailure(&InputError{Msg: fmt.Sprintf("description is longer than %d bytes", MaxContextDescriptionBytes)})
	case len(in.RelevantFileGlobs) > MaxContextGlobs:
		return contextFailure(&InputError{Msg: fmt.Sprintf("relevant_file_globs has more than %d entries", MaxContextGlobs)})
	}
	for i, g := range in.RelevantFileGlobs {
		if err := checkGlob(g); err != nil {
			return contextFailure(&InputError{Msg: fmt.Sprintf("relevant_file_globs[%d] %q: %v", i, g, err)})
		}
	}
	if t.stateDir == "" {
		return contextFailure(ErrStateDirUnavailable)
	}
	sess, err := t.session(principal, in)
	if err != nil {
		return contextFailure(err)
	}
	policy, err := auth.NewPathPolicy(sess.Root, t.allowPaths)
	if err != nil {
		return contextFailure(err)
	}
	root := sess.Root
	if in.ProjectRootPath != "" {
		if root, err = policy.Resolve(in.ProjectRootPath); err != nil {
			return contextFailure(err)
		}
		if fi, err := os.Stat(root); err != nil {
			return contextFailure(&session.WorkspaceError{Path: in.ProjectRootPath, Err: session.ErrWorkspaceNotFound})
		} else if !fi.IsDir() {
			return contextFailure(&InputError{Msg: fmt.Sprintf("project_root_path %q is not a directory", in.ProjectRootPath)})
		}
	}

	data := contextSaveData{ID: in.ID, ProjectRoot: root, FilesIncluded: []string{}}
	var doc bytes.Buffer
	t.writeHeader(&doc, in.ID, root)
	doc.WriteString("\n## Task description\n")
	doc.WriteString(t.clean(in.Description))
	ensureNewline(&doc)
	t.writeWorkspace(ctx, &doc, root)
	files := t.collect(ctx, policy, root, in.RelevantFileGlobs, &data)
	t.writeFiles(&doc, files, &data)
	if err := ctx.Err(); err != nil {
		return contextFailure(err)
	}

	path := contextFile(t.stateDir, in.ID)
	if err := writePrivateFile(path, doc.Bytes()); err != nil {
		return contextFailure(fmt.Errorf("tools: save context %s: %w", in.ID, err))
	}
	data.Path, data.Bytes, data.Tokens = path, doc.Len(), tokensOf(doc.Len())
	if t.open != nil {
		// Showing the file is a courtesy: its failure never fails the save.
		if name, err := t.open(path); err == nil {
			data.OpenedWith = name
		}
	}
	return t.answer(&data)
}

// session finds the session the call works in: by workspace_root (with
// thread_id), by thread_id alone, or by project_root_path as a workspace.
func (t *contextSaver) session(principal string, in *contextSaveInput) (*session.Session, error) {
	switch {
	case in.WorkspaceRoot != "":
		return t.sessions.Lookup(principal, in.ThreadID, in.WorkspaceRoot)
	case in.ThreadID != "":
		return t.sessions.ByThread(principal, in.ThreadID)
	case in.ProjectRootPath != "":
		return t.sessions.Lookup(principal, "", in.ProjectRootPath)
	}
	return nil, session.ErrNotInitialized
}

// clean redacts one piece of text for the saved file.
func (t *contextSaver) clean(s string) string {
	out, _ := t.redactor.String(s)
	return out
}

func (t *contextSaver) writeHeader(doc *bytes.Buffer, id, root string) {
	doc.WriteString(savedContextMagic + "\n")
	fmt.Fprintf(doc, "id: %s\n", id)
	fmt.Fprintf(doc, "saved_at: %s\n", t.now().UTC().Format(time.RFC3339))
	// Quoted so that any byte of a path survives the round trip.
	fmt.Fprintf(doc, "project_root: %s\n", strconv.Quote(root))
	fmt.Fprintf(doc, "build: %s\n", strconv.Quote(t.build))
}

// writeWorkspace writes the same workspace context Initialize shows, then
// the git diffs of the project (unstaged and staged, limited to the project
// directory).
func (t *contextSaver) writeWorkspace(ctx context.Context, doc *bytes.Buffer, root string) {
	lim := t.overview.withDefaults()
	ov, err := WorkspaceContext(ctx, root, t.overview)
	doc.WriteString("\n")
	if err != nil {
		fmt.Fprintf(doc, "## Workspace %s\nworkspace context unavailable: %v\n", root, err)
		return
	}
	doc.WriteString(t.clean(ov.Text()))
	ensureNewline(doc)
	if !ov.Git {
		if _, err := exec.LookPath("git"); err != nil {
			doc.WriteString("\n## git\ngit is not installed; no status or diff.\n")
		} else {
			doc.WriteString("\n## git\nnot a git work tree; no status or diff.\n")
		}
		return
	}
	for _, d := range []struct{ title, flag string }{
		{"git diff (unstaged changes)", ""},
		{"git diff --cached (staged changes)", "--cached"},
	} {
		// No external diff drivers or text conversion filters: they name
		// programs that a saved context has no business running.
		args := []string{"diff", "--no-color", "--no-ext-diff", "--no-textconv", "--relative"}
		if d.flag != "" {
			args = append(args, d.flag)
		}
		out, truncated, err := runGit(ctx, root, lim.GitTimeout, MaxContextDiffBytes, args...)
		fmt.Fprintf(doc, "\n## %s\n", d.title)
		switch {
		case err != nil:
			fmt.Fprintf(doc, "git diff failed: %v\n", err)
		case len(out) == 0:
			doc.WriteString("(no changes)\n")
		default:
			doc.WriteString(fenced(t.clean(string(cutToLine(out)))))
			if truncated {
				fmt.Fprintf(doc, "[diff truncated after %d bytes]\n", MaxContextDiffBytes)
			}
		}
	}
}

// savedFile is one matched file, read and redacted.
type savedFile struct {
	show      string // relative to the project root, else absolute
	text      string
	size      int64
	truncated bool
}

// globPlan is one glob split into the directory to walk and the pattern
// that paths below it must match.
type globPlan struct {
	base  string // canonical: the project root (or "/") joined with the glob's segments before the first metacharacter
	rest  string // the remaining segments, matched against paths relative to base; "" for a plain path
	depth int    // path components below base a match has; -1 with "**"
}

// checkGlob rejects a malformed glob before any file is looked at.
func checkGlob(g string) error {
	if strings.IndexByte(g, 0) >= 0 {
		return errors.New("holds a NUL byte")
	}
	for seg := range strings.SplitSeq(g, "/") {
		if seg == "**" {
			continue
		}
		if _, err := filepath.Match(seg, ""); err != nil {
			return err
		}
	}
	return nil
}

// planGlob splits glob g at its first segment with a metacharacter and
// resolves the part before it through the path policy. A relative glob
// joins root, whose own name is never read as a pattern.
func planGlob(policy *auth.PathPolicy, root, g string) (globPlan, error) {
	start := root
	if filepath.IsAbs(g) {
		start = string(filepath.Separator)
	}
	segs := strings.Split(filepath.Clean(g), string(filepath.Separator))
	i := 0
	for i < len(segs) && !strings.ContainsAny(segs[i], `*?[\`) {
		i++
	}
	base, err := policy.Resolve(filepath.Join(append([]string{start}, segs[:i]...)...))
	if err != nil {
		return globPlan{}, err
	}
	p := globPlan{base: base, rest: strings.Join(segs[i:], "/"), depth: len(segs) - i}
	for _, s := range segs[i:] {
		if s == "**" {
			p.depth = -1
		}
	}
	return p, nil
}

// collect reads the files matching the globs, in glob order and walk
// order, each once, within the per-file and total token caps.
func (t *contextSaver) collect(ctx context.Context, policy *auth.PathPolicy, root string, globs []string, data *contextSaveData) []savedFile {
	ctx, cancel := context.WithTimeout(ctx, contextWalkTimeout)
	defer cancel()
	seen := make(map[string]bool)
	scanned := 0
	var files []savedFile
	used := 0
	show := func(p string) string {
		if rel, err := filepath.Rel(root, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.ToSlash(rel)
		}
		return p
	}
	for _, g := range globs {
		plan, err := planGlob(policy, root, g)
		if err != nil {
			data.omit(g, pathReason(err))
			continue
		}
		matched := false
		visit := func(p string) {
			matched = true
			canon, err := policy.Resolve(p)
			if err != nil {
				data.omit(show(p), pathReason(err))
				return
			}
			if seen[canon] {
				return
			}
			seen[canon] = true
			f, reason := t.readFile(policy, canon, show(p))
			cost := tokensOf(len(f.text) + len(f.show) + savedFileOverhead)
			if reason == "" && used+cost > t.tokens {
				reason = fmt.Sprintf("over the total cap of %d tokens", t.tokens)
			}
			if reason != "" {
				data.omit(show(p), reason)
				return
			}
			used += cost
			files = append(files, f)
			data.FilesIncluded = append(data.FilesIncluded, f.show)
			if f.truncated {
				data.FilesTruncated = append(data.FilesTruncated, f.show)
			}
		}
		if plan.depth == 0 { // a plain path, no metacharacters
			if _, err := os.Lstat(plan.base); err == nil {
				visit(plan.base)
			}
		} else {
			walkGlob(ctx, plan, &scanned, &data.ScanTruncated, visit)
		}
		if !matched {
			data.UnmatchedGlobs = append(data.UnmatchedGlobs, g)
		}
	}
	return files
}

// walkGlob calls visit for each non-directory below plan.base matching the
// plan, skipping .git and Winx's own .winx, within MaxContextScan entries
// (counted in *scanned across globs) and ctx.
func walkGlob(ctx context.Context, plan globPlan, scanned *int, stopped *bool, visit func(string)) {
	filepath.WalkDir(plan.base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable entry or missing base: nothing to match
		}
		if ctx.Err() != nil || *scanned >= MaxContextScan {
			*stopped = true
			return fs.SkipAll
		}
		*scanned++
		if d.IsDir() {
			if p == plan.base {
				return nil
			}
			if d.Name() == ".git" || d.Name() == ".winx" {
				return fs.SkipDir
			}
			if rel, _ := filepath.Rel(plan.base, p); plan.depth >= 0 && strings.Count(rel, string(filepath.Separator))+1 >= plan.depth {
				return fs.SkipDir // matches are shallower than this
			}
			return nil
		}
		if rel, err := filepath.Rel(plan.base, p); err == nil && globMatch(plan.rest, filepath.ToSlash(rel)) {
			visit(p)
		}
		return nil
	})
}

// readFile reads one canonical file (from policy.Resolve) within the
// per-file cap and redacts it; a non-empty reason says why it is left out.
// The file is opened without blocking (a FIFO or a terminal put in its place
// cannot stall the save) and judged by its descriptor, and after the read
// the path must still resolve to itself inside the roots and name the file
// that was read: a directory swapped for a symlink after Resolve, to lead
// the read outside the workspace, is caught here.
func (t *contextSaver) readFile(policy *auth.PathPolicy, canon, show string) (savedFile, string) {
	f, err := os.OpenFile(canon, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return savedFile{}, "could not be read"
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return savedFile{}, "could not be read"
	}
	if !fi.Mode().IsRegular() {
		return savedFile{}, "not a regular file"
	}
	limit := t.fileTokens * bytesPerToken
	buf, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return savedFile{}, "could not be read"
	}
	if err := policy.Recheck(canon); err != nil {
		return savedFile{}, pathReason(err)
	}
	if now, err := os.Lstat(canon); err != nil || !os.SameFile(fi, now) {
		return savedFile{}, "changed while it was read"
	}
	if bytes.IndexByte(buf, 0) >= 0 {
		return savedFile{}, "binary"
	}
	out := savedFile{show: show, size: fi.Size()}
	if len(buf) > limit {
		buf, out.truncated = cutToLine(buf[:limit]), true
	}
	out.text = t.clean(string(buf))
	return out, ""
}

// omit records a file left out, listing only the first
// MaxContextListedOmissions.
func (d *contextSaveData) omit(path, reason string) {
	if len(d.FilesOmitted) >= MaxContextListedOmissions {
		d.FilesOmittedMore++
		return
	}
	d.FilesOmitted = append(d.FilesOmitted, omittedFile{Path: path, Reason: reason})
}

// pathReason is the short reason a path policy error gives in the list of
// omitted files; it never repeats a symlink's target.
func pathReason(err error) string {
	switch {
	case errors.Is(err, auth.ErrPathDenied):
		return "outside the workspace and the allowed paths"
	case errors.Is(err, auth.ErrPathInvalid):
		return "invalid path"
	}
	return "could not be resolved"
}

func (t *contextSaver) writeFiles(doc *bytes.Buffer, files []savedFile, data *contextSaveData) {
	if len(files) == 0 && len(data.FilesOmitted) == 0 && len(data.UnmatchedGlobs) == 0 {
		return
	}
	fmt.Fprintf(doc, "\n## Relevant files (%d saved)\n", len(files))
	for _, f := range files {
		fmt.Fprintf(doc, "\n### %s (%d bytes)\n", f.show, f.size)
		doc.WriteString(fenced(f.text))
		if f.truncated {
			fmt.Fprintf(doc, "[%s truncated at %d tokens; read the rest with ReadFiles]\n", f.show, t.fileTokens)
		}
	}
	if len(data.FilesOmitted) > 0 {
		doc.WriteString("\n## Files left out\n")
		for _, o := range data.FilesOmitted {
			fmt.Fprintf(doc, "- %s: %s\n", o.Path, o.Reason)
		}
		if data.FilesOmittedMore > 0 {
			fmt.Fprintf(doc, "- and %d more\n", data.FilesOmittedMore)
		}
	}
	if len(data.UnmatchedGlobs) > 0 {
		fmt.Fprintf(doc, "\n## Globs that matched nothing\n- %s\n", strings.Join(data.UnmatchedGlobs, "\n- "))
	}
	if data.ScanTruncated {
		fmt.Fprintf(doc, "\n[matching stopped early: more than %d entries or %v]\n", MaxContextScan, contextWalkTimeout)
	}
}

func (t *contextSaver) answer(data *contextSaveData) *mcp.CallToolResult {
	var b strings.Builder
	fmt.Fprintf(&b, "Saved the context of task %s to %s (%d bytes, about %d tokens).\n", data.ID, data.Path, data.Bytes, data.Tokens)
	fmt.Fprintf(&b, "Project root: %s.\n", data.ProjectRoot)
	fmt.Fprintf(&b, "Files saved: %d", len(data.FilesIncluded))
	if len(data.FilesTruncated) > 0 {
		fmt.Fprintf(&b, " (%d truncated)", len(data.FilesTruncated))
	}
	fmt.Fprintf(&b, "; left out: %d.\n", len(data.FilesOmitted)+data.FilesOmittedMore)
	for _, o := range data.FilesOmitted {
		fmt.Fprintf(&b, "- %s: %s\n", o.Path, o.Reason)
	}
	if data.FilesOmittedMore > 0 {
		fmt.Fprintf(&b, "- and %d more\n", data.FilesOmittedMore)
	}
	if len(data.UnmatchedGlobs) > 0 {
		fmt.Fprintf(&b, "Globs that matched nothing: %s.\n", strings.Join(data.UnmatchedGlobs, ", "))
	}
	if data.ScanTruncated {
		b.WriteString("Matching stopped early; narrow the globs to save the rest.\n")
	}
	if data.OpenedWith != "" {
		fmt.Fprintf(&b, "Opened with %s.\n", data.OpenedWith)
	}
	fmt.Fprintf(&b, "Resume with Initialize type first_call and task_id_to_resume=%s.\n", data.ID)
	env := mcp.Envelope{Status: mcp.StatusCompleted, Tool: ContextSaveTool, Data: data,
		Message: fmt.Sprintf("Saved task %s.", data.ID)}
	text, _ := t.redactor.String(b.String())
	return env.Result(text)
}

// contextFailure is the result of a save that wrote nothing.
func contextFailure(err error) *mcp.CallToolResult {
	var env mcp.Envelope
	switch {
	case errors.Is(err, ErrStateDirUnavailable):
		env = mcp.Envelope{Tool: ContextSaveTool, Status: mcp.StatusFailed, ErrorCode: codeStateDirUnavailable,
			Message: "This server has no state directory (set XDG_STATE_HOME or HOME), so contexts cannot be saved."}
	case errors.Is(err, auth.ErrPathDenied):
		env = mcp.Envelope{Tool: ContextSaveTool, Status: mcp.StatusDenied, ErrorCode: codeFileOperationDenied, Retryable: true,
			Message: "project_root_path is outside the workspace and the allowed paths: " + err.Error()}
	case errors.Is(err, auth.ErrPathInvalid):
		env = mcp.Envelope{Tool: ContextSaveTool, Status: mcp.StatusInvalidInput, ErrorCode: codeInvalidToolInput, Retryable: true,
			Message: "Invalid project_root_path: " + err.Error()}
	default:
		env = errorEnvelope(ContextSaveTool, err)
	}
	return env.Result(env.Message)
}

func tokensOf(n int) int { return (n + bytesPerToken - 1) / bytesPerToken }

func ensureNewline(b *bytes.Buffer) {
	if b.Len() > 0 && b.Bytes()[b.Len()-1] != '\n' {
		b.WriteByte('\n')
	}
}

// writePrivateFile replaces path with b atomically: a 0600 temp file in a
// 0700 directory, fsync, rename, fsync of the directory. A reader sees the
// old file or the new one, never a part.
func writePrivateFile(path string, b []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return &fs.PathError{Op: "save", Path: dir, Err: syscall.ENOTDIR}
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return err
		}
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp") // CreateTemp makes 0600
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(b); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		done = true
		return err
	}
	done = true
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// openWithDesktop starts the desktop's default opener (xdg-open, or open on
// macOS) on path in its own session and does not wait for it.
func openWithDesktop(path string) (string, error) {
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	bin, err := exec.LookPath(name)
	if err != nil {
		return "", err
	}
	cmd := exec.Command(bin, path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	go cmd.Wait() // reap it; how it ends does not matter
	return name, nil
}
