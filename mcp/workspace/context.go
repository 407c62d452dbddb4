package workspace

// Collecting a task's context for ContextSave: the task, the workspace
// overview, git diffs and the files matching the task's globs, redacted
// and within token caps, as one Markdown document saved under the state
// directory (saved.go).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"winx/auth"
	"winx/auth/policy"
	"winx/codemap/walk"
	"winx/evidence"
	"winx/evidence/redact"
)

// Limits of a context save. Tokens are estimated as bytes/4 (Tokens).
const (
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
	// contextWalkTimeout bounds the glob walk of one save.
	contextWalkTimeout = 10 * time.Second
	// savedFileOverhead is what one saved file adds besides its content and
	// its name (heading, size, fences), charged to the total cap so that
	// many empty files cannot grow the saved file without bound.
	savedFileOverhead = 32
)

// ErrNoStateDir: no state directory is configured, so nothing can be saved.
var ErrNoStateDir = errors.New("workspace: no state directory is configured")

// Saver collects and saves task contexts. Its fields are configuration,
// set before the first Save and not changed after.
type Saver struct {
	StateDir string // "" refuses every save with ErrNoStateDir
	Build    string // the server's build, recorded in the header
	Overview Limits
	Redactor *redact.Redactor // every saved string passes it
	// FileTokens and TotalTokens cap one file's and all files' content;
	// zero means DefaultContextFileTokens and DefaultContextTotalTokens.
	FileTokens, TotalTokens int
	Now                     func() time.Time // nil means time.Now
}

func (s *Saver) fileTokens() int {
	if s.FileTokens > 0 {
		return s.FileTokens
	}
	return DefaultContextFileTokens
}

func (s *Saver) totalTokens() int {
	if s.TotalTokens > 0 {
		return s.TotalTokens
	}
	return DefaultContextTotalTokens
}

func (s *Saver) now() time.Time {
	if s.Now == nil {
		return time.Now()
	}
	return s.Now()
}

// Task is what one save is about.
type Task struct {
	ID          string // ValidTaskID
	Root        string // canonical project root, allowed by Policy
	Description string
	Globs       []string // each accepted by CheckGlob
	// Policy confines every file read to the workspace and the allowed
	// paths.
	Policy *auth.PathPolicy
	// ActiveFiles are the files the session read or edited, the most
	// recent first; the first MaxContextActiveFiles are listed. Terminal
	// is the session's shell; nil when it has none.
	ActiveFiles []ActiveFile
	Terminal    *TerminalState
}

// ActiveFile is one file a session read or edited, with the lines the
// model was shown and the lines its edits wrote (End 0: to the end).
type ActiveFile struct {
	Path   string // canonical
	Read   []evidence.Range
	Edited bool
	Wrote  []evidence.Range
}

// MaxContextActiveFiles bounds the active files a saved context lists.
const MaxContextActiveFiles = 50

// TerminalState is a session's shell as a saved context records it.
type TerminalState struct {
	Cwd string
	// Running is the foreground command still running, "" when none.
	Running string
	// Commands are the last foreground commands, the most recent first.
	Commands []CommandRun
}

// CommandRun is one remembered foreground command.
type CommandRun struct {
	Command  string
	Running  bool
	ExitCode int // valid when !Running
	Cwd      string
}

// OmittedFile is a matched file that was not saved, and why.
type OmittedFile struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// SaveResult describes a saved context; ContextSave answers with it as
// its data.
type SaveResult struct {
	ID             string        `json:"id"`
	Path           string        `json:"path"`
	ProjectRoot    string        `json:"project_root"`
	Bytes          int           `json:"bytes"`
	Tokens         int           `json:"tokens"`
	FilesIncluded  []string      `json:"files_included"`
	FilesTruncated []string      `json:"files_truncated,omitempty"`
	FilesOmitted   []OmittedFile `json:"files_omitted,omitempty"`
	// FilesOmittedMore counts the files left out past the first
	// MaxContextListedOmissions, which are not listed.
	FilesOmittedMore int      `json:"files_omitted_more,omitempty"`
	UnmatchedGlobs   []string `json:"unmatched_globs,omitempty"`
	ScanTruncated    bool     `json:"scan_truncated,omitempty"`
	// OpenedWith names the program that showed the file to the user; the
	// caller sets it.
	OpenedWith string `json:"opened_with,omitempty"`
}

// Save collects the context of task and writes it, replacing any context
// saved under the same id. Errors: ErrNoStateDir, ctx's error (nothing is
// written), or the write's.
func (s *Saver) Save(ctx context.Context, task Task) (*SaveResult, error) {
	if s.StateDir == "" {
		return nil, ErrNoStateDir
	}
	data := &SaveResult{ID: task.ID, ProjectRoot: task.Root, FilesIncluded: []string{}}
	var doc bytes.Buffer
	s.writeHeader(&doc, task.ID, task.Root)
	doc.WriteString("\n## Task description\n")
	doc.WriteString(s.clean(task.Description))
	ensureNewline(&doc)
	s.writeSession(&doc, task)
	s.writeWorkspace(ctx, &doc, task.Root)
	files := s.collect(ctx, task.Policy, task.Root, task.Globs, data)
	s.writeFiles(&doc, files, data)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The whole file passes the redactor once more: a piece written
	// without clean (a header, a path, a description) cannot leave raw.
	saved := s.clean(doc.String())
	path := ContextPath(s.StateDir, task.ID)
	if err := writeSaved(path, []byte(saved)); err != nil {
		return nil, fmt.Errorf("workspace: save context %s: %w", task.ID, err)
	}
	data.Path, data.Bytes, data.Tokens = path, len(saved), Tokens(len(saved))
	return data, nil
}

// clean redacts one piece of text for the saved file.
func (s *Saver) clean(text string) string {
	out, _ := s.Redactor.String(text)
	return out
}

func (s *Saver) writeHeader(doc *bytes.Buffer, id, root string) {
	doc.WriteString(SavedContextMagic + "\n")
	fmt.Fprintf(doc, "id: %s\n", id)
	fmt.Fprintf(doc, "saved_at: %s\n", s.now().UTC().Format(time.RFC3339))
	// Quoted so that any byte of a path survives the round trip.
	fmt.Fprintf(doc, "project_root: %s\n", strconv.Quote(root))
	fmt.Fprintf(doc, "build: %s\n", strconv.Quote(s.Build))
}

// writeSession writes what the session was doing: the files it read or
// edited, most recent first, and its terminal (cwd, running command, the
// last commands with their exit codes), so a resumed task starts where
// the work was.
func (s *Saver) writeSession(doc *bytes.Buffer, task Task) {
	doc.WriteString("\n## Active files (read or edited in the session, most recent first; the lines read, and the lines edits wrote)\n")
	if len(task.ActiveFiles) == 0 {
		doc.WriteString("(none)\n")
	}
	for i, f := range task.ActiveFiles {
		if i == MaxContextActiveFiles {
			fmt.Fprintf(doc, "- and %d more\n", len(task.ActiveFiles)-i)
			break
		}
		p := f.Path
		if rel, err := filepath.Rel(task.Root, p); err == nil && filepath.IsLocal(rel) {
			p = rel
		}
		fmt.Fprintf(doc, "- %s%s\n", s.clean(p), activity(f))
	}
	doc.WriteString("\n## Terminal\n")
	t := task.Terminal
	if t == nil {
		doc.WriteString("no shell\n")
		return
	}
	fmt.Fprintf(doc, "cwd: %s\n", s.clean(t.Cwd))
	if t.Running != "" {
		fmt.Fprintf(doc, "running: %s\n", s.clean(strconv.Quote(t.Running)))
	} else {
		doc.WriteString("running: (nothing)\n")
	}
	doc.WriteString("last commands (most recent first):\n")
	if len(t.Commands) == 0 {
		doc.WriteString("(none)\n")
	}
	for _, c := range t.Commands {
		state := "running"
		if !c.Running {
			state = "exit " + strconv.Itoa(c.ExitCode)
		}
		fmt.Fprintf(doc, "- [%s] %s (cwd %s)\n", state, s.clean(strconv.Quote(c.Command)), s.clean(c.Cwd))
	}
}

// activity says what the session did with f: " (read 1-40; edited 12-14)"
// names the lines the model was shown and the lines its edits wrote.
func activity(f ActiveFile) string {
	ranges := func(rs []evidence.Range) string {
		parts := make([]string, len(rs))
		for i, r := range rs {
			parts[i] = r.String()
		}
		return strings.Join(parts, ", ")
	}
	var parts []string
	if len(f.Read) > 0 {
		parts = append(parts, "read "+ranges(f.Read))
	}
	switch {
	case len(f.Wrote) > 0:
		parts = append(parts, "edited "+ranges(f.Wrote))
	case f.Edited:
		parts = append(parts, "edited")
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// writeWorkspace writes the same workspace context Initialize shows, then
// the git diffs of the project (unstaged and staged, limited to the project
// directory).
func (s *Saver) writeWorkspace(ctx context.Context, doc *bytes.Buffer, root string) {
	lim := s.Overview.withDefaults()
	ov, err := NewOverview(ctx, root, s.Overview)
	doc.WriteString("\n")
	if err != nil {
		fmt.Fprintf(doc, "## Workspace %s\nworkspace context unavailable: %v\n", root, err)
		return
	}
	doc.WriteString(s.clean(ov.Text()))
	ensureNewline(doc)
	if !ov.Git {
		if _, err := exec.LookPath("git"); err != nil {
			doc.WriteString("\n## git\ngit is not installed; no status or diff.\n")
		} else {
			doc.WriteString("\n## git\nnot a git work tree; no status or diff.\n")
		}
		return
	}
	git, gerr := newGitRunner(ctx, root, lim.GitTimeout)
	for _, d := range []struct{ title, flag string }{
		{"git diff (unstaged changes)", ""},
		{"git diff --cached (staged changes)", "--cached"},
	} {
		// No external diff drivers or text conversion filters: they name
		// programs that a saved context has no business running. No
		// submodules either (see NewOverview's status).
		args := []string{"diff", "--no-color", "--no-ext-diff", "--no-textconv", "--relative", "--ignore-submodules=dirty"}
		if d.flag != "" {
			args = append(args, d.flag)
		}
		out, truncated, err := []byte(nil), false, gerr
		if gerr == nil {
			out, truncated, err = git.run(ctx, lim.GitTimeout, MaxContextDiffBytes, args...)
		}
		fmt.Fprintf(doc, "\n## %s\n", d.title)
		switch {
		case err != nil:
			fmt.Fprintf(doc, "git diff failed: %v\n", err)
		case len(out) == 0:
			doc.WriteString("(no changes)\n")
		default:
			doc.WriteString(Fenced(s.clean(string(CutToLine(out)))))
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

// CheckGlob rejects a malformed glob before any file is looked at.
func CheckGlob(g string) error {
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
func (s *Saver) collect(ctx context.Context, policy *auth.PathPolicy, root string, globs []string, data *SaveResult) []savedFile {
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
			f, reason := s.readFile(policy, canon, show(p))
			cost := Tokens(len(f.text) + len(f.show) + savedFileOverhead)
			if reason == "" && used+cost > s.totalTokens() {
				reason = fmt.Sprintf("over the total cap of %d tokens", s.totalTokens())
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
// plan, never entering version-control or Winx state (codemap/walk's
// SkipState), within MaxContextScan entries (counted in *scanned across
// globs) and ctx.
func walkGlob(ctx context.Context, plan globPlan, scanned *int, stopped *bool, visit func(string)) {
	if *scanned >= MaxContextScan {
		*stopped = true
		return
	}
	*scanned++ // the base itself
	err := walk.Walk(ctx, plan.base, "", walk.Options{Skip: walk.SkipState}, func(e walk.Entry) error {
		if *scanned >= MaxContextScan {
			*stopped = true
			return fs.SkipAll
		}
		*scanned++
		if e.IsDir() {
			if plan.depth >= 0 && strings.Count(e.Rel, "/")+1 >= plan.depth {
				return fs.SkipDir // matches are shallower than this
			}
			return nil
		}
		if policy.GlobMatch(plan.rest, e.Rel) {
			visit(e.Path)
		}
		return nil
	})
	if err != nil && ctx.Err() != nil {
		*stopped = true
	}
	// Any other error (an unreadable or missing base) means nothing more to
	// match.
}

// readFile reads one canonical file (from policy.Resolve) within the
// per-file cap and redacts it; a non-empty reason says why it is left out.
// The read is readBounded's: without blocking, judged by the descriptor,
// and rechecked against the roots afterwards.
func (s *Saver) readFile(policy *auth.PathPolicy, canon, show string) (savedFile, string) {
	limit := s.fileTokens() * bytesPerToken
	buf, size, reason := readBounded(policy, canon, limit)
	if reason != "" {
		return savedFile{}, reason
	}
	if bytes.IndexByte(buf, 0) >= 0 {
		return savedFile{}, reasonBinary
	}
	out := savedFile{show: show, size: size}
	if len(buf) > limit {
		buf, out.truncated = CutToLine(buf[:limit]), true
	}
	out.text = s.clean(string(buf))
	return out, ""
}

// omit records a file left out, listing only the first
// MaxContextListedOmissions.
func (d *SaveResult) omit(path, reason string) {
	if len(d.FilesOmitted) >= MaxContextListedOmissions {
		d.FilesOmittedMore++
		return
	}
	d.FilesOmitted = append(d.FilesOmitted, OmittedFile{Path: path, Reason: reason})
}

// pathReason is the short reason a path policy error gives in the list of
// omitted files; it never repeats a symlink's target.
func pathReason(err error) string {
	switch {
	case errors.Is(err, auth.ErrPathProtected):
		return "a credential or state path of the server"
	case errors.Is(err, auth.ErrPathDenied):
		return "outside the workspace and the allowed paths"
	case errors.Is(err, auth.ErrPathInvalid):
		return "invalid path"
	}
	return "could not be resolved"
}

func (s *Saver) writeFiles(doc *bytes.Buffer, files []savedFile, data *SaveResult) {
	if len(files) == 0 && len(data.FilesOmitted) == 0 && len(data.UnmatchedGlobs) == 0 {
		return
	}
	fmt.Fprintf(doc, "\n## Relevant files (%d saved)\n", len(files))
	for _, f := range files {
		fmt.Fprintf(doc, "\n### %s (%d bytes)\n", f.show, f.size)
		doc.WriteString(Fenced(f.text))
		if f.truncated {
			fmt.Fprintf(doc, "[%s truncated at %d tokens; read the rest with ReadFiles]\n", f.show, s.fileTokens())
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
