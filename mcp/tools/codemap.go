package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"winx/auth"
	"winx/codemap"
	"winx/evidence"
	"winx/evidence/redact"
	"winx/mcp"
	"winx/mcp/session"
)

// CodeMapTool is the code navigation tool's name.
const CodeMapTool = "CodeMap"

// CodeMap operations.
const (
	opOutline    = "outline"
	opReferences = "references"
)

// Error codes of CodeMap.
const (
	codeNavigationUnavailable = "navigation_unavailable"
	codeUnsupportedLanguage   = "unsupported_language"
	codeTooManyFiles          = "too_many_files"
	// codeHelperCodeMapBudget: the session spent its CodeMap budget for
	// its temporary files (session.MaxHelperCodeMapCalls, ...Files).
	codeHelperCodeMapBudget = "helper_codemap_budget"
)

// CodeMap bounds.
const (
	// maxOutlineSymbols bounds the symbols of a file outline.
	maxOutlineSymbols = 2000
	// maxMapFilesPerPage bounds max_results for a directory outline.
	maxMapFilesPerPage = 500
	// maxHelperOutlineBytes caps the text, and separately the symbol data,
	// of an outline of a file under the session's WINX_TEMP_DIR.
	maxHelperOutlineBytes = 12 << 10
)

// codeMapTool shares one codemap.Index per repository root between every
// session and call (codemap.IndexCache); each session keeps the files it
// outlined recently and its maps' frozen ranking inputs
// (session.Session.MapRanking).
type codeMapTool struct {
	// affinity is the catalog's session affinity (the scope of a reattach).
	affinity   string
	sessions   *session.Sessions
	allowPaths []string
	protected  *auth.Protected
	redactor   *redact.Redactor
	indexes    codemap.IndexCache
}

type codeMapInput struct {
	Operation     string `json:"operation"`
	Path          string `json:"path"`
	Name          string `json:"name"`
	Query         string `json:"query"`
	MaxResults    int    `json:"max_results"`
	Cursor        string `json:"cursor"`
	ThreadID      string `json:"thread_id"`
	WorkspaceRoot string `json:"workspace_root"`
}

// codeMapSymbol is a symbol in CodeMap's data.
// codeMapSymbol is one definition. On the wire it is the compact array
// [line, end_line, kind, name] or [line, end_line, kind, name, container]:
// the text already lists every symbol, and objects with their keys made the
// data four times the text.
type codeMapSymbol struct {
	Name      string
	Kind      string
	Line      int
	EndLine   int
	Container string
}

func (s codeMapSymbol) MarshalJSON() ([]byte, error) {
	v := []any{s.Line, s.EndLine, s.Kind, s.Name}
	if s.Container != "" {
		v = append(v, s.Container)
	}
	return json.Marshal(v)
}

func (s *codeMapSymbol) UnmarshalJSON(b []byte) error {
	var v []json.RawMessage
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if len(v) < 4 || len(v) > 5 {
		return fmt.Errorf("tools: a CodeMap symbol has 4 or 5 elements, not %d", len(v))
	}
	for i, dst := range []any{&s.Line, &s.EndLine, &s.Kind, &s.Name, &s.Container}[:len(v)] {
		if err := json.Unmarshal(v[i], dst); err != nil {
			return err
		}
	}
	return nil
}

type codeMapFile struct {
	Path     string          `json:"path"`
	Language string          `json:"language"`
	Reason   string          `json:"reason,omitempty"`
	Symbols  []codeMapSymbol `json:"symbols"`
	Omitted  int             `json:"omitted_symbols,omitempty"`
}

type codeMapHit struct {
	Path       string `json:"path"`
	Line       int    `json:"line"`
	Column     int    `json:"column"`
	Definition bool   `json:"definition"`
	Text       string `json:"text"`
}

type codeMapData struct {
	Operation string `json:"operation"`
	// Root is the repository root the paths are relative to.
	Root string `json:"root,omitempty"`
	Path string `json:"path"`
	// A file outline.
	Language  string          `json:"language,omitempty"`
	Symbols   []codeMapSymbol `json:"symbols,omitempty"`
	Truncated bool            `json:"truncated,omitempty"`
	// A repository map.
	Files      []codeMapFile `json:"files,omitempty"`
	Tokens     int           `json:"tokens,omitempty"`
	Budget     int           `json:"budget,omitempty"`
	Candidates int           `json:"candidate_files,omitempty"`
	// References.
	Name        string       `json:"name,omitempty"`
	Hits        []codeMapHit `json:"hits,omitempty"`
	Total       int          `json:"total,omitempty"`
	Definitions int          `json:"definitions,omitempty"`

	NextCursor string `json:"next_cursor,omitempty"`
}

func addCodeMap(reg *mcp.Registry, opts Options) {
	t := &codeMapTool{
		sessions:   opts.Sessions,
		affinity:   opts.Affinity,
		allowPaths: opts.AllowPaths, protected: opts.Protected,
		redactor: opts.redactor(),
	}
	reg.AddTool(mcp.Tool{
		Name:         CodeMapTool,
		Title:        "Code map",
		Description:  codeMapDescription,
		InputSchema:  codeMapSchema,
		OutputSchema: mcp.EnvelopeOutputSchema,
		Annotations: &mcp.ToolAnnotations{
			ReadOnlyHint:  mcp.Bool(true),
			OpenWorldHint: mcp.Bool(false),
		},
	}, t.handle)
}

const codeMapDescription = `outline on a file lists its definitions (name, kind, line); on a directory (or the workspace) it gives a ranked, token-budgeted symbol map that respects .gitignore: files you read first, then matches of query, then the rest. references finds where name is defined and used (identifiers only, not strings or comments). Pass next_cursor back as cursor for the next page.`

var codeMapSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "operation": {"type": "string", "enum": ["outline", "references"], "description": "outline (default) or references"},
    "path": {"type": "string", "description": "File or directory; empty: the workspace"},
    "name": {"type": "string", "description": "identifier (references)"},
    "query": {"type": "string", "description": "words ranked first (directory outline)"},
    "max_results": {"type": "integer", "minimum": 0, "maximum": 1000, "description": "hits (references, default 100) or files (directory outline) per page"},
    "cursor": {"type": "string", "description": "next_cursor of the previous page"},
    "thread_id": {"type": "string", "minLength": 1},
    "workspace_root": {"type": "string", "minLength": 1}
  },
  "required": ["thread_id", "workspace_root"],
  "additionalProperties": false
}`)

func (t *codeMapTool) handle(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
	var in codeMapInput
	if err := decodeArguments(req.Arguments, &in); err != nil {
		return toolFailure(CodeMapTool, err), nil
	}
	if in.Operation == "" {
		in.Operation = opOutline
	}
	switch {
	case in.Operation != opOutline && in.Operation != opReferences:
		return toolFailure(CodeMapTool, &InputError{Msg: fmt.Sprintf("operation must be %q or %q", opOutline, opReferences)}), nil
	case in.Operation == opReferences && in.Name == "":
		return toolFailure(CodeMapTool, &InputError{Msg: "name is required for references"}), nil
	case in.MaxResults < 0 || in.MaxResults > codemap.MaxReferences:
		return toolFailure(CodeMapTool, &InputError{Msg: fmt.Sprintf("max_results must be 0 to %d", codemap.MaxReferences)}), nil
	}
	if in.WorkspaceRoot == "" {
		return toolFailure(CodeMapTool, session.ErrWorkspaceBindingRequired), nil
	}
	sess, err := lookupSession(ctx, t.sessions, t.affinity, req.Caller(), in.ThreadID, in.WorkspaceRoot)
	if err != nil {
		return toolFailure(CodeMapTool, err), nil
	}
	if !codemap.Available() {
		return t.fail(codeMapError{status: mcp.StatusFailed, code: codeNavigationUnavailable, retryable: false,
			msg: "Code navigation is unavailable in this build of Winx (built without cgo); use ReadFiles and BashCommand (grep) instead."}), nil
	}
	policy, err := filePolicy(req.Caller(), sess, t.allowPaths, t.protected)
	if err != nil {
		return toolFailure(CodeMapTool, err), nil
	}
	target := in.Path
	if target == "" {
		target = sess.Root
	}
	canonical, err := policy.Resolve(target)
	if err != nil {
		return t.fail(codeMapPathFailure(in.Path, err)), nil
	}
	info, err := os.Stat(canonical)
	if err != nil {
		return t.fail(codeMapPathFailure(in.Path, err)), nil
	}
	// A helper's files (WINX_TEMP_DIR) are mapped one at a time, small and
	// within the session's budget, so scratch output cannot flood the
	// conversation; canonical sources are not charged.
	if underDir(sess.TempDir, canonical) {
		if info.IsDir() || in.Operation != opOutline {
			return t.fail(codeMapError{mcp.StatusInvalidInput, codeInvalidToolInput,
				"Under the session's temporary directory (WINX_TEMP_DIR) CodeMap outlines one existing file per call; pass a file path with operation outline.", true}), nil
		}
		if _, _, err := sess.ChargeHelperCodeMap(canonical); err != nil {
			return t.fail(helperBudgetFailure(err)), nil
		}
		return t.outlineFile(sess, &in, canonical, policy, maxHelperOutlineBytes), nil
	}
	if in.Operation == opOutline && !info.IsDir() {
		return t.outlineFile(sess, &in, canonical, policy, 0), nil
	}
	ix, err := t.indexes.Get(codemap.RepoRoot(canonical, info.IsDir(), sess.Root, policy.Roots()))
	if err != nil {
		return t.fail(codeMapPathFailure(in.Path, err)), nil
	}
	rel, ok := ix.Rel(canonical)
	if !ok {
		// Unreachable: root is canonical and an ancestor of canonical.
		return t.fail(codeMapPathFailure(in.Path, &auth.PathError{Path: in.Path, Reason: "outside the repository", Err: auth.ErrPathDenied})), nil
	}
	if in.Operation == opReferences {
		return t.references(ctx, ix, &in, rel), nil
	}
	return t.repoMap(ctx, sess, ix, &in, rel), nil
}

// underDir reports whether path (canonical) is dir or inside it; dir is
// compared as given and with its symlinks resolved.
func underDir(dir, path string) bool {
	if dir == "" {
		return false
	}
	dirs := []string{dir}
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
		dirs = append(dirs, real)
	}
	for _, d := range dirs {
		if rel, err := filepath.Rel(d, path); err == nil && filepath.IsLocal(rel) {
			return true
		}
	}
	return false
}

// helperBudgetFailure answers a refused CodeMap call on a temporary file.
func helperBudgetFailure(err error) codeMapError {
	var he *session.HelperCodeMapError
	if !errors.As(err, &he) {
		return codeMapFailure(err)
	}
	what := fmt.Sprintf("%d calls", session.MaxHelperCodeMapCalls)
	if he.NewFile {
		what = fmt.Sprintf("%d unique files", session.MaxHelperCodeMapFiles)
	}
	return codeMapError{mcp.StatusDenied, codeHelperCodeMapBudget, fmt.Sprintf(
		"This session spent its CodeMap budget for files under its temporary directory (%s; used %d calls over %d files). "+
			"Read the file with ReadFiles instead; CodeMap on workspace sources is not limited by this budget.", what, he.Calls, he.Files), false}
}

// outlineFile answers an outline of one file; maxBytes > 0 caps the text
// and the symbol data at about that many bytes each.
func (t *codeMapTool) outlineFile(sess *session.Session, in *codeMapInput, canonical string, policy *auth.PathPolicy, maxBytes int) *mcp.CallToolResult {
	if _, ok := codemap.LanguageOf(canonical); !ok {
		return t.unsupported(in, canonical)
	}
	snap, err := readResolved(policy, canonical, codemap.MaxSourceBytes)
	if err != nil {
		return t.fail(codeMapPathFailure(in.Path, err))
	}
	syms, err := codemap.Outline(snap.Path, snap.Bytes)
	var ue *codemap.UnsupportedError
	switch {
	case errors.As(err, &ue):
		return t.unsupported(in, canonical)
	case err != nil:
		return t.fail(codeMapFailure(err))
	}
	sess.Navigation().NoteRecent(snap.Path)
	lang, _ := codemap.LanguageOf(snap.Path)
	data := codeMapData{Operation: opOutline, Path: snap.Path, Language: lang}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s, revision %s)\n", snap.Path, lang, snap.Revision.Short())
	// capReserve leaves room under maxBytes for the "more symbols" line.
	const capReserve = 64
	dataBytes := 0
	for i, s := range syms {
		line := codeMapSymbolLine(s)
		// A symbol's compact JSON array is its fields plus at most ~40
		// bytes of numbers, quotes and commas.
		dataBytes += len(s.Name) + len(s.Kind) + len(s.Container) + 40
		if i >= maxOutlineSymbols || codemap.EstimateTokens(b.String()+line) > codemap.MaxMapTokens ||
			(maxBytes > 0 && (b.Len()+len(line) > maxBytes-capReserve || dataBytes > maxBytes-capReserve)) {
			data.Truncated = true
			fmt.Fprintf(&b, "[%d more symbols not shown]\n", len(syms)-i)
			break
		}
		b.WriteString(line)
		data.Symbols = append(data.Symbols, t.symbol(s))
	}
	if len(syms) == 0 {
		b.WriteString("(no definitions)\n")
	}
	env := mcp.Envelope{Status: mcp.StatusCompleted, Tool: CodeMapTool, Data: data,
		Message: fmt.Sprintf("Outlined %d definitions of %s.", len(data.Symbols), filepath.Base(snap.Path))}
	return env.Result(t.redact(strings.TrimRight(b.String(), "\n")))
}

func codeMapSymbolLine(s codemap.Symbol) string {
	name := s.Name
	if s.Container != "" {
		name = s.Container + "." + s.Name
	}
	return "  " + strconv.Itoa(s.Line) + " " + s.Kind + " " + name + "\n"
}

func (t *codeMapTool) symbol(s codemap.Symbol) codeMapSymbol {
	return codeMapSymbol{Name: t.redact(s.Name), Kind: s.Kind, Line: s.Line, EndLine: s.EndLine, Container: t.redact(s.Container)}
}

// unsupported answers a file codemap cannot parse, with a ReadFiles call
// for it ready to send.
func (t *codeMapTool) unsupported(in *codeMapInput, canonical string) *mcp.CallToolResult {
	env := mcp.Envelope{
		Status: mcp.StatusInvalidInput, Tool: CodeMapTool, ErrorCode: codeUnsupportedLanguage, Retryable: true,
		Message: fmt.Sprintf("CodeMap does not parse the language of %s; read it with ReadFiles instead.", filepath.Base(canonical)),
		NextAction: &mcp.NextAction{
			Tool:        ReadFilesTool,
			Instruction: "Read the file with ReadFiles; CodeMap has no grammar for its language.",
			Arguments:   map[string]any{"file_paths": []string{canonical}, "thread_id": in.ThreadID, "workspace_root": in.WorkspaceRoot},
		},
		Data: codeMapData{Operation: in.Operation, Path: canonical},
	}
	return env.Result(env.Message)
}

// repoMap answers an outline of a directory.
func (t *codeMapTool) repoMap(ctx context.Context, sess *session.Session, ix *codemap.Index, in *codeMapInput, rel string) *mcp.CallToolResult {
	if in.MaxResults > maxMapFilesPerPage {
		return toolFailure(CodeMapTool, &InputError{Msg: fmt.Sprintf("max_results for a directory outline must be 0 to %d", maxMapFilesPerPage)})
	}
	// The pages of one map are the calls that differ only in their cursor.
	key := strings.Join([]string{ix.Root(), rel, in.Query, strconv.Itoa(in.MaxResults)}, "\x00")
	priority, touched, keep := sess.MapRanking(key, ix.Root(), in.Cursor != "")
	m, err := ix.RepoMap(ctx, codemap.MapRequest{Dir: rel, Query: in.Query, Priority: priority, Touched: touched,
		MaxFiles: in.MaxResults, Cursor: in.Cursor})
	if err != nil {
		return t.fail(codeMapFailure(err))
	}
	keep()
	data := codeMapData{Operation: opOutline, Root: ix.Root(), Path: rel, Tokens: m.Tokens, Budget: m.Budget,
		Candidates: m.Candidates, NextCursor: m.NextCursor, Files: make([]codeMapFile, 0, len(m.Files))}
	for _, f := range m.Files {
		cf := codeMapFile{Path: f.Path, Language: f.Lang, Reason: f.Reason, Omitted: f.Omitted, Symbols: make([]codeMapSymbol, 0, len(f.Symbols))}
		for _, s := range f.Symbols {
			cf.Symbols = append(cf.Symbols, t.symbol(s))
		}
		data.Files = append(data.Files, cf)
	}
	shown := rel
	if shown == "" {
		shown = "."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Repository map of %s under %s (files %d-%d, %d of %d tokens)\n", shown, ix.Root(), m.Offset+1, m.Offset+len(m.Files), m.Tokens, m.Budget)
	b.WriteString(m.Text)
	env := mcp.Envelope{Status: mcp.StatusCompleted, Tool: CodeMapTool, Data: data}
	switch {
	case len(m.Files) == 0:
		env.Message = fmt.Sprintf("No source files with definitions under %s (of %d source files walked).", shown, m.Candidates)
		b.Reset()
		b.WriteString(env.Message)
	case m.NextCursor != "":
		env.Message = fmt.Sprintf("Mapped %d files under %s; more files follow with next_cursor.", len(m.Files), shown)
		env.NextAction = t.continuation(in, m.NextCursor)
		fmt.Fprintf(&b, "[more: call CodeMap again with cursor %q]\n", m.NextCursor)
	default:
		env.Message = fmt.Sprintf("Mapped %d files under %s; this is the last page.", len(m.Files), shown)
	}
	return env.Result(t.redact(strings.TrimRight(b.String(), "\n")))
}

// continuation is the call that fetches the next page.
func (t *codeMapTool) continuation(in *codeMapInput, cursor string) *mcp.NextAction {
	args := map[string]any{"operation": in.Operation, "cursor": cursor, "thread_id": in.ThreadID, "workspace_root": in.WorkspaceRoot}
	for k, v := range map[string]string{"path": in.Path, "name": in.Name, "query": in.Query} {
		if v != "" {
			args[k] = v
		}
	}
	if in.MaxResults > 0 {
		args["max_results"] = in.MaxResults
	}
	return &mcp.NextAction{Tool: CodeMapTool, Instruction: "Call CodeMap again with this cursor for the next page, if you need it.", Arguments: args}
}

// references answers a references search.
func (t *codeMapTool) references(ctx context.Context, ix *codemap.Index, in *codeMapInput, rel string) *mcp.CallToolResult {
	r, err := ix.References(ctx, codemap.ReferencesRequest{Dir: rel, Name: in.Name, MaxResults: in.MaxResults, Cursor: in.Cursor})
	if err != nil {
		return t.fail(codeMapFailure(err))
	}
	data := codeMapData{Operation: opReferences, Root: ix.Root(), Path: rel, Name: in.Name, Total: r.Total,
		Definitions: r.Definitions, Truncated: r.Truncated, NextCursor: r.NextCursor, Hits: make([]codeMapHit, 0, len(r.Hits))}
	var b strings.Builder
	fmt.Fprintf(&b, "References to %s under %s: %d (%d definitions)", in.Name, ix.Root(), r.Total, r.Definitions)
	if len(r.Hits) > 0 {
		fmt.Fprintf(&b, "; showing %d-%d", r.Offset+1, r.Offset+len(r.Hits))
	}
	b.WriteString("\n")
	for _, h := range r.Hits {
		text := t.redact(h.Text)
		data.Hits = append(data.Hits, codeMapHit{Path: h.Path, Line: h.Line, Column: h.Column, Definition: h.Definition, Text: text})
		mark := "use"
		if h.Definition {
			mark = "def"
		}
		fmt.Fprintf(&b, "%s:%d:%d %s  %s\n", h.Path, h.Line, h.Column, mark, text)
	}
	env := mcp.Envelope{Status: mcp.StatusCompleted, Tool: CodeMapTool, Data: data,
		Message: fmt.Sprintf("Found %d references to %s (%d definitions).", r.Total, in.Name, r.Definitions)}
	if r.Total == 0 {
		env.Message = fmt.Sprintf("No identifier named %s under %s (searched %d source files).", in.Name, ix.Root(), r.Files)
	}
	if r.Truncated {
		env.Message += fmt.Sprintf(" Counting stopped at %d; narrow the path.", codemap.MaxReferenceHits)
	}
	if r.NextCursor != "" {
		env.NextAction = t.continuation(in, r.NextCursor)
		fmt.Fprintf(&b, "[more: call CodeMap again with cursor %q]\n", r.NextCursor)
	}
	return env.Result(t.redact(strings.TrimRight(b.String(), "\n")))
}

func (t *codeMapTool) redact(s string) string {
	out, _ := t.redactor.String(s)
	return out
}

// codeMapError is a failure already classified for the envelope.
type codeMapError struct {
	status    mcp.Status
	code      string
	msg       string
	retryable bool
}

func (t *codeMapTool) fail(e codeMapError) *mcp.CallToolResult {
	env := mcp.Envelope{Status: e.status, Tool: CodeMapTool, ErrorCode: e.code, Retryable: e.retryable, Message: t.redact(e.msg)}
	return env.Result(env.Message)
}

// codeMapPathFailure classifies a path that could not be used, by type.
func codeMapPathFailure(given string, err error) codeMapError {
	if given == "" {
		given = "the workspace"
	}
	switch {
	case errors.Is(err, auth.ErrPathProtected):
		return codeMapError{mcp.StatusDenied, codeFileOperationDenied, "The path is " + protectedPathText + ".", false}
	case errors.Is(err, auth.ErrPathDenied):
		return codeMapError{mcp.StatusDenied, codeFileOperationDenied, "The path is outside the workspace and the allowed paths.", true}
	case errors.Is(err, auth.ErrPathInvalid):
		return codeMapError{mcp.StatusInvalidInput, codeInvalidToolInput, err.Error(), true}
	case errors.Is(err, fs.ErrNotExist):
		return codeMapError{mcp.StatusNotFound, codeFileNotFound, fmt.Sprintf("No such file or directory: %s.", given), true}
	case errors.Is(err, fs.ErrPermission):
		return codeMapError{mcp.StatusDenied, codeFileOperationDenied, fmt.Sprintf("Permission denied: %s.", given), true}
	case errors.Is(err, evidence.ErrNotRegular):
		return codeMapError{mcp.StatusInvalidInput, codeInvalidToolInput, fmt.Sprintf("%s is not a regular file.", given), true}
	case errors.Is(err, evidence.ErrTooLarge):
		return codeMapError{mcp.StatusInvalidInput, codeFileTooLarge, fmt.Sprintf("%s is larger than the %d bytes CodeMap parses; read parts of it with ReadFiles.", given, codemap.MaxSourceBytes), true}
	}
	return codeMapFailure(err)
}

// codeMapFailure classifies an error of package codemap, by type.
func codeMapFailure(err error) codeMapError {
	var re *codemap.RequestError
	var ce *codemap.CursorError
	var we *codemap.WalkLimitError
	var te *codemap.TooLargeError
	switch {
	case errors.Is(err, codemap.ErrUnavailable):
		return codeMapError{mcp.StatusFailed, codeNavigationUnavailable, "Code navigation is unavailable in this build of Winx (built without cgo).", false}
	case errors.As(err, &re):
		return codeMapError{mcp.StatusInvalidInput, codeInvalidToolInput, fmt.Sprintf("Invalid input: %s %s.", re.Field, re.Reason), true}
	case errors.As(err, &ce):
		return codeMapError{mcp.StatusInvalidInput, codeInvalidToolInput, fmt.Sprintf("The cursor cannot be used: %s.", ce.Reason), true}
	case errors.As(err, &we):
		return codeMapError{mcp.StatusInvalidInput, codeTooManyFiles, fmt.Sprintf("More than %d files to look at; pass a narrower path.", we.Limit), true}
	case errors.As(err, &te):
		return codeMapError{mcp.StatusInvalidInput, codeFileTooLarge, fmt.Sprintf("The file is larger than the %d bytes CodeMap parses; read parts of it with ReadFiles.", codemap.MaxSourceBytes), true}
	case errors.Is(err, fs.ErrNotExist):
		return codeMapError{mcp.StatusNotFound, codeFileNotFound, "No such file or directory.", true}
	case errors.Is(err, fs.ErrPermission):
		return codeMapError{mcp.StatusDenied, codeFileOperationDenied, "Permission denied.", true}
	}
	env := errorEnvelope(CodeMapTool, err)
	return codeMapError{env.Status, env.ErrorCode, env.Message, env.Retryable}
}
