package workspace

// Managed git worktrees: a task gets its own checkout of a repository on
// branch winx/<name>, in a directory winx owns outside the main checkout
// (<state>/worktrees/<repo>-<8 hex>/<name>), so two sessions on two tasks
// of one repository never touch each other's files.
//
// Git is the record of which worktrees exist: a worktree is managed when
// `git worktree list` of the repository shows it at its managed path on
// its winx/<name> branch. What git does not keep (the base commit and the
// ref it was given as) is in a small 0600 file per worktree beside, not
// inside, the directory file tools may reach (<state>/worktree-meta/).
//
// Making one is crash-safe: an intent record and a per-name lock let the
// next call finish or undo a creation cut off by a dying process
// (worktree_intent.go).
//
// Every git process runs as the other git queries of this package do (no
// repository-configured program, see git.go) and, besides, with hooks and
// fsmonitor switched off on its command line: `git worktree add` checks
// files out, and a post-checkout hook of the repository must not run.
// Arguments are argv, never a shell string; names are checked before any
// git runs; a base ref is passed after --end-of-options.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"winx/auth"
)

// Limits of the worktree service.
const (
	// MaxWorktreeName is the longest task name.
	MaxWorktreeName = 64
	// DefaultChangesTokens is the budget of a changes view (about 16 KB).
	DefaultChangesTokens = 4000
	// DefaultWorktreeTimeout bounds each git process of the service; a
	// checkout of a large repository is the slowest.
	DefaultWorktreeTimeout = 60 * time.Second
	// WorktreeBranchPrefix starts the branch of every managed worktree.
	WorktreeBranchPrefix = "winx/"

	maxWorktreeGitBytes = 1 << 20  // what is kept of a git listing
	maxWorktreeGitErr   = 4 << 10  // what is kept of git's stderr
	maxWorktreeMeta     = 16 << 10 // a metadata file
	maxChangeCommits    = 500      // commits listed before counting only
)

// Worktree states in a listing.
const (
	WorktreeClean   = "clean"
	WorktreeDirty   = "dirty"
	WorktreeMissing = "missing" // git lists it, its directory is gone
)

// Sentinels of the worktree service; a *WorktreeError carries the details.
var (
	// ErrNotRepository: the path is not inside a git work tree.
	ErrNotRepository = errors.New("workspace: not inside a git repository")
	// ErrWorktreeName: a task name outside the allowed spelling.
	ErrWorktreeName = errors.New("workspace: invalid worktree name")
	// ErrWorktreeBase: the base does not name a commit.
	ErrWorktreeBase = errors.New("workspace: worktree base is not a commit")
	// ErrWorktreeTaken: the branch winx/<name> or the managed directory
	// exists but is not a managed worktree of this repository.
	ErrWorktreeTaken = errors.New("workspace: worktree name is taken")
	// ErrWorktreeNotFound: no managed worktree of that name.
	ErrWorktreeNotFound = errors.New("workspace: no such managed worktree")
	// ErrWorktreeDirty: removal without force of a worktree with
	// uncommitted changes or untracked files.
	ErrWorktreeDirty = errors.New("workspace: worktree has uncommitted changes or untracked files")
	// ErrWorktreeGit: a git command of the service failed.
	ErrWorktreeGit = errors.New("workspace: git failed")
	// ErrWorktreeBusy: another process held the name's lock (it is making
	// or removing that worktree) for longer than the wait.
	ErrWorktreeBusy = errors.New("workspace: another process is making or removing this worktree")
)

// WorktreeError is an error about one worktree (or one repository).
type WorktreeError struct {
	Name   string // the task name, "" when none
	Path   string // the worktree or workspace path
	Detail string // bounded: what git said, or the files that block
	Err    error  // one of the sentinels above
}

func (e *WorktreeError) Error() string {
	msg := e.Err.Error()
	if e.Name != "" {
		msg += " (" + e.Name + ")"
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

func (e *WorktreeError) Unwrap() error { return e.Err }

// Worktree is one managed worktree.
type Worktree struct {
	Name    string `json:"name"`
	Path    string `json:"path"`
	Branch  string `json:"branch"`
	Base    string `json:"base"`               // commit sha; "" when its record is lost
	BaseRef string `json:"base_ref,omitempty"` // the ref the base was given as
	Repo    string `json:"repo"`               // the repository's top level
	State   string `json:"state,omitempty"`    // WorktreeClean, WorktreeDirty, WorktreeMissing
	// Recovered: Create finished, or Remove undid, a creation that a
	// dying process had cut off.
	Recovered bool `json:"recovered,omitempty"`
	// BranchDeleted: Remove deleted the branch (undoing a cut-off
	// creation whose branch had no commits of its own); otherwise the
	// branch is kept.
	BranchDeleted bool `json:"branch_deleted,omitempty"`
}

// Worktrees is the worktree service of one state directory. The zero
// Timeout means DefaultWorktreeTimeout.
type Worktrees struct {
	StateDir string
	Timeout  time.Duration
	// Admit, when set, decides whether Create may make or hand out the
	// worktree at dir (its canonical managed path, which need not exist
	// yet). It runs before Create makes anything: a refusal, returned
	// unchanged, leaves no branch, no directory and no record, so a caller
	// that would refuse the worktree afterwards (its roots, its mode) must
	// refuse it here, or every refused call leaves a checkout behind.
	Admit func(dir string) error
}

// WorktreesDir is the managed directory of every repository's worktrees,
// "" without a state directory.
func WorktreesDir(stateDir string) string {
	if stateDir == "" {
		return ""
	}
	return filepath.Join(stateDir, "worktrees")
}

// ValidWorktreeName checks a task name: 1..MaxWorktreeName bytes of
// [A-Za-z0-9._-], not starting with '.' or '-', without "..", not ending
// in ".lock" or '.' (both make the branch name invalid). The name becomes
// a directory and a branch, so nothing else is let through.
func ValidWorktreeName(name string) error {
	bad := func(why string) error {
		return &WorktreeError{Name: name[:min(len(name), MaxWorktreeName)], Detail: why + "; use 1.." + strconv.Itoa(MaxWorktreeName) + " of A-Z a-z 0-9 . _ -", Err: ErrWorktreeName}
	}
	if name == "" || len(name) > MaxWorktreeName {
		return bad("length " + strconv.Itoa(len(name)))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return bad(fmt.Sprintf("byte %q is not allowed", c))
		}
	}
	switch {
	case name[0] == '.' || name[0] == '-':
		return bad("it starts with " + name[:1])
	case strings.Contains(name, ".."):
		return bad(`it contains ".."`)
	case strings.HasSuffix(name, ".lock") || strings.HasSuffix(name, "."):
		return bad(`it ends with ".lock" or "."`)
	}
	return nil
}

func (w *Worktrees) timeout() time.Duration {
	if w.Timeout > 0 {
		return w.Timeout
	}
	return DefaultWorktreeTimeout
}

// repo is one repository opened for an operation.
type repo struct {
	top     string   // canonical top level of the main checkout (the common dir of a bare one)
	common  string   // canonical git common directory (refs live there)
	key     string   // <basename>-<8 hex of sha256(top)>
	env     []string // the neutralised git environment (git.go)
	managed string   // canonical <state>/worktrees/<key>
	meta    string   // <state>/worktree-meta/<key>
}

// git runs git in dir with the repository's environment, hooks and
// fsmonitor off, a timeout, and at most limit bytes of output kept. The
// error of a failing git is a *WorktreeError wrapping ErrWorktreeGit with
// the start of its stderr.
func (w *Worktrees) git(ctx context.Context, env []string, dir string, limit int, args ...string) ([]byte, bool, error) {
	return w.gitHolding(ctx, nil, env, dir, limit, args...)
}

// gitHolding is git for a step of a creation: the creation's lock (hold,
// when not nil) is handed down to git and every process git starts, so
// the lock stays held while any of them runs, also after this process
// died. git runs in a process group of its own, killed whole at the
// timeout: a checkout child must not outlive the command that waits for
// it.
func (w *Worktrees) gitHolding(ctx context.Context, hold *os.File, env []string, dir string, limit int, args ...string) ([]byte, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, w.timeout())
	defer cancel()
	argv := append([]string{"--no-pager", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"}, args...)
	cmd := exec.CommandContext(ctx, "git", argv...)
	cmd.Dir, cmd.Env = dir, env
	out, stderr := &cappedBuffer{limit: limit}, &cappedBuffer{limit: maxWorktreeGitErr}
	cmd.Stdout, cmd.Stderr = out, stderr
	cmd.WaitDelay = time.Second
	if hold != nil {
		cmd.ExtraFiles = []*os.File{hold}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	}
	if err := cmd.Run(); err != nil {
		detail := strings.TrimSpace(stderr.buf.String())
		if detail == "" {
			detail = err.Error()
		}
		if ctx.Err() != nil {
			detail = "timed out after " + w.timeout().String()
		}
		return nil, false, &WorktreeError{Path: dir, Detail: "git " + args[0] + ": " + detail, Err: ErrWorktreeGit}
	}
	return out.buf.Bytes(), out.truncated, nil
}

// open finds the repository of path (a file means its directory) and makes
// its managed directories (0700).
func (w *Worktrees) open(ctx context.Context, path string) (*repo, error) {
	r, err := w.locate(ctx, path)
	if err != nil {
		return nil, err
	}
	return r, w.makeDirs(r)
}

// locate finds the repository of path (a file means its directory) and
// where its managed worktrees go, making nothing: git is only asked where
// the repository is, and r.managed is canonical as far as it exists.
func (w *Worktrees) locate(ctx context.Context, path string) (*repo, error) {
	if w.StateDir == "" {
		return nil, ErrNoStateDir
	}
	dir := path
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		dir = filepath.Dir(dir)
	}
	notRepo := &WorktreeError{Path: path, Err: ErrNotRepository}
	if !mayBeInRepository(dir) {
		return nil, notRepo
	}
	g, err := newGitRunner(ctx, dir, w.timeout())
	if err != nil {
		if errors.Is(err, ErrGitTooOld) {
			return nil, err
		}
		return nil, notRepo // git config refuses to run outside a repository too
	}
	out, _, err := w.git(ctx, g.env, dir, 4096, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return nil, notRepo
	}
	common, err := filepath.EvalSymlinks(strings.TrimSpace(string(out)))
	if err != nil {
		return nil, notRepo
	}
	top := common
	if filepath.Base(common) == ".git" {
		top = filepath.Dir(common)
	}
	sum := sha256.Sum256([]byte(top))
	r := &repo{top: top, common: common, key: filepath.Base(top) + "-" + hex.EncodeToString(sum[:4]), env: g.env}
	r.meta = filepath.Join(w.StateDir, "worktree-meta", r.key)
	if r.managed, err = auth.CanonicalPlanned(filepath.Join(WorktreesDir(w.StateDir), r.key)); err != nil {
		return nil, err
	}
	return r, nil
}

// makeDirs makes r's managed directories (0700) and canonicalizes
// r.managed again now that it exists.
func (w *Worktrees) makeDirs(r *repo) error {
	managed := filepath.Join(WorktreesDir(w.StateDir), r.key)
	for _, d := range []string{managed, r.meta} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	var err error
	r.managed, err = filepath.EvalSymlinks(managed)
	return err
}

// worktreeEntry is one worktree as `git worktree list --porcelain` shows
// it.
type worktreeEntry struct {
	path     string // canonical as far as it exists
	branch   string // the full ref, "" when detached
	locked   string // the lock's reason, "locked" when it has none; "" unlocked
	prunable bool   // git finds its directory gone
}

// entries lists the repository's worktrees, the main one included.
func (w *Worktrees) entries(ctx context.Context, r *repo) ([]worktreeEntry, error) {
	out, _, err := w.git(ctx, r.env, r.top, maxWorktreeGitBytes, "worktree", "list", "--porcelain")
	if err != nil {
		return nil, err
	}
	var list []worktreeEntry
	var e worktreeEntry
	flush := func() {
		if e.path != "" {
			list = append(list, e)
		}
		e = worktreeEntry{}
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), maxWorktreeGitBytes)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			flush()
		case strings.HasPrefix(line, "worktree "):
			e.path = strings.TrimPrefix(line, "worktree ")
			if c, err := filepath.EvalSymlinks(e.path); err == nil {
				e.path = c
			}
		case strings.HasPrefix(line, "branch "):
			e.branch = strings.TrimPrefix(line, "branch ")
		case line == "locked":
			e.locked = "locked"
		case strings.HasPrefix(line, "locked "):
			e.locked = strings.TrimPrefix(line, "locked ")
		case strings.HasPrefix(line, "prunable"):
			e.prunable = true
		}
	}
	flush()
	return list, nil
}

// managedList is the repository's managed worktrees by name, as git lists
// them: at <managed>/<name> on branch winx/<name>. A worktree that git is
// still making (or whose making was cut off: locked "initializing") is
// not one yet.
func (w *Worktrees) managedList(ctx context.Context, r *repo) (map[string]*Worktree, error) {
	list, err := w.entries(ctx, r)
	if err != nil {
		return nil, err
	}
	found := map[string]*Worktree{}
	for _, e := range list {
		if filepath.Dir(e.path) != r.managed || e.locked == gitAddingLock {
			continue
		}
		name := filepath.Base(e.path)
		if ValidWorktreeName(name) != nil || e.branch != "refs/heads/"+WorktreeBranchPrefix+name {
			continue
		}
		wt := &Worktree{Name: name, Path: e.path, Branch: WorktreeBranchPrefix + name, Repo: r.top}
		if e.prunable {
			wt.State = WorktreeMissing
		}
		found[name] = wt
	}
	return found, nil
}

// worktreeMeta is the record of what git does not keep.
type worktreeMeta struct {
	Base    string    `json:"base"`
	BaseRef string    `json:"base_ref"`
	Created time.Time `json:"created"`
}

func (r *repo) metaPath(name string) string { return filepath.Join(r.meta, name+".json") }

// fill adds the recorded base to wt, when the record is there.
func (r *repo) fill(wt *Worktree) {
	f, err := os.Open(r.metaPath(wt.Name))
	if err != nil {
		return
	}
	defer f.Close()
	var m worktreeMeta
	b, err := io.ReadAll(io.LimitReader(f, maxWorktreeMeta))
	if err == nil && json.Unmarshal(b, &m) == nil {
		wt.Base, wt.BaseRef = m.Base, m.BaseRef
	}
}

// Create makes the managed worktree name of the repository path is in, on a
// new branch winx/<name> from base ("" means HEAD), or finds it when it is
// already there (created false; base is then ignored). A branch or
// directory of that name that is not a managed worktree of this repository
// is refused (ErrWorktreeTaken).
//
// The making is crash-safe (worktree_intent.go): it runs under the name's
// cross-process lock, after an intent record, and a creation cut off by a
// dying process is finished (or, when nothing of it was made, started
// over) by the next Create of the name; the result then has Recovered set.
func (w *Worktrees) Create(ctx context.Context, path, name, base string) (wt *Worktree, created bool, err error) {
	if err := ValidWorktreeName(name); err != nil {
		return nil, false, err
	}
	r, err := w.locate(ctx, path)
	if err != nil {
		return nil, false, err
	}
	if err := w.admit(filepath.Join(r.managed, name)); err != nil {
		return nil, false, err
	}
	planned := r.managed
	if err := w.makeDirs(r); err != nil {
		return nil, false, err
	}
	if r.managed != planned {
		// A link appeared on the way while the directories were made:
		// the worktree would land elsewhere than what was admitted.
		if err := w.admit(filepath.Join(r.managed, name)); err != nil {
			return nil, false, err
		}
	}
	lock, err := w.lockName(ctx, r, name)
	if err != nil {
		return nil, false, err
	}
	defer lock.unlock()
	// The base is resolved where the caller stands (a linked worktree has
	// its own HEAD) and passed on as a sha, never as an option.
	at := path
	if fi, err := os.Stat(at); err == nil && !fi.IsDir() {
		at = filepath.Dir(at)
	}
	resolve := func() (sha, ref string, err error) {
		ref = base
		if ref == "" {
			ref = "HEAD"
		}
		out, _, err := w.git(ctx, r.env, at, 256, "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
		if err != nil {
			return "", "", &WorktreeError{Name: name, Path: r.top, Detail: fmt.Sprintf("%q does not name a commit", ref), Err: ErrWorktreeBase}
		}
		return strings.TrimSpace(string(out)), ref, nil
	}
	in, err := r.readIntent(name)
	if err != nil {
		return nil, false, err
	}
	if in != nil {
		r.dropStaleRefLock(in)
		wt, err := w.finish(ctx, r, lock, in)
		if err != nil || wt != nil {
			if wt != nil && base != "" {
				// The interrupted call's base holds; a different one asked
				// for now is ignored, as for a worktree that exists.
				sha, _, err := resolve()
				return wt, err == nil && sha == wt.Base, nil
			}
			return wt, wt != nil, err
		}
		// Nothing of the interrupted creation was left: make it afresh.
	}
	list, err := w.managedList(ctx, r)
	if err != nil {
		return nil, false, err
	}
	if wt, ok := list[name]; ok {
		r.fill(wt)
		return wt, false, nil
	}
	branch := WorktreeBranchPrefix + name
	if sha, err := w.branchHead(ctx, r, branch); err != nil {
		return nil, false, err
	} else if sha != "" {
		return nil, false, &WorktreeError{Name: name, Path: r.top, Err: ErrWorktreeTaken,
			Detail: "branch " + branch + " (at " + shortSHA(sha) + ") exists, no winx worktree uses it and no interrupted winx creation recorded it, " +
				"so winx does not take it over: pick another name, or look at its commits and, if they are not needed, delete it with `git branch -D " + branch + "`"}
	}
	dir := filepath.Join(r.managed, name)
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		return nil, false, &WorktreeError{Name: name, Path: dir, Err: ErrWorktreeTaken,
			Detail: "directory " + dir + " exists and is not a worktree of this repository; pick another name"}
	}
	sha, baseRef, err := resolve()
	if err != nil {
		return nil, false, err
	}
	in = &worktreeIntent{Name: name, Repo: r.top, Branch: branch, Base: sha, BaseRef: baseRef, Path: dir,
		PID: os.Getpid(), Created: time.Now().UTC()}
	wt, err = w.make(ctx, r, lock, in, false)
	if err != nil {
		return nil, false, err
	}
	return wt, true, nil
}

// admit asks w.Admit, when set, about the worktree at dir.
func (w *Worktrees) admit(dir string) error {
	if w.Admit == nil {
		return nil
	}
	return w.Admit(dir)
}

// List returns the managed worktrees of the repository path is in, by
// name, each with its state.
func (w *Worktrees) List(ctx context.Context, path string) ([]Worktree, error) {
	r, err := w.open(ctx, path)
	if err != nil {
		return nil, err
	}
	list, err := w.managedList(ctx, r)
	if err != nil {
		return nil, err
	}
	out := make([]Worktree, 0, len(list))
	for _, wt := range list {
		r.fill(wt)
		if wt.State == "" {
			wt.State = WorktreeClean
			if st, err := w.status(ctx, r, wt.Path); err != nil {
				wt.State = WorktreeMissing
			} else if len(st) > 0 {
				wt.State = WorktreeDirty
			}
		}
		out = append(out, *wt)
	}
	slices.SortFunc(out, func(a, b Worktree) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// status lists the uncommitted changes and untracked files of a worktree
// (git status --porcelain entries).
func (w *Worktrees) status(ctx context.Context, r *repo, dir string) ([]string, error) {
	out, _, err := w.git(ctx, r.env, dir, 64<<10, "status", "--porcelain", "-z", "--untracked-files=normal", "--ignore-submodules=none")
	if err != nil {
		return nil, err
	}
	var entries []string
	for e := range strings.SplitSeq(string(out), "\x00") {
		if len(e) > 3 {
			entries = append(entries, e)
		}
	}
	return entries, nil
}

// find is the managed worktree name of r, with its record.
func (w *Worktrees) find(ctx context.Context, r *repo, name string) (*Worktree, error) {
	if err := ValidWorktreeName(name); err != nil {
		return nil, err
	}
	list, err := w.managedList(ctx, r)
	if err != nil {
		return nil, err
	}
	wt, ok := list[name]
	if !ok {
		return nil, &WorktreeError{Name: name, Path: r.top, Err: ErrWorktreeNotFound}
	}
	r.fill(wt)
	return wt, nil
}

// Remove removes the managed worktree name (git worktree remove) and its
// record; the branch winx/<name> is kept. Without force a worktree with
// uncommitted changes or untracked files is refused (ErrWorktreeDirty,
// the blocking entries in Detail). A name whose creation was cut off is
// undone instead (worktree_intent.go): what was made of it goes, the
// branch too unless it has commits of its own (BranchDeleted says which),
// and the result has Recovered set.
func (w *Worktrees) Remove(ctx context.Context, path, name string, force bool) (*Worktree, error) {
	if err := ValidWorktreeName(name); err != nil {
		return nil, err
	}
	r, err := w.open(ctx, path)
	if err != nil {
		return nil, err
	}
	lock, err := w.lockName(ctx, r, name)
	if err != nil {
		return nil, err
	}
	defer lock.unlock()
	in, err := r.readIntent(name)
	if err != nil {
		return nil, err
	}
	if in != nil {
		r.dropStaleRefLock(in)
		return w.undo(ctx, r, lock, in, force)
	}
	wt, err := w.find(ctx, r, name)
	if err != nil {
		return nil, err
	}
	if err := w.removeTree(ctx, r, lock, wt, force); err != nil {
		return nil, err
	}
	if err := os.Remove(r.metaPath(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	wt.State = ""
	return wt, nil
}

// removeTree runs git worktree remove on wt under the name's lock,
// refusing a dirty one without force.
func (w *Worktrees) removeTree(ctx context.Context, r *repo, lock *nameLock, wt *Worktree, force bool) error {
	args := []string{"worktree", "remove"}
	if force {
		args = append(args, "--force")
	} else if wt.State != WorktreeMissing {
		st, err := w.status(ctx, r, wt.Path)
		if err != nil {
			return err
		}
		if len(st) > 0 {
			shown := st[:min(len(st), 10)]
			detail := strings.Join(shown, ", ")
			if len(st) > len(shown) {
				detail += fmt.Sprintf(", ... %d more", len(st)-len(shown))
			}
			return &WorktreeError{Name: wt.Name, Path: wt.Path, Detail: detail, Err: ErrWorktreeDirty}
		}
	}
	_, _, err := w.gitHolding(ctx, lock.f, r.env, r.top, maxWorktreeGitErr, append(args, "--", wt.Path)...)
	return err
}

// WorktreeChanges is what a worktree changed against its base.
type WorktreeChanges struct {
	Worktree
	Commits   int    `json:"commits"`
	Files     int    `json:"files"`
	Added     int    `json:"added"`
	Deleted   int    `json:"deleted"`
	Untracked int    `json:"untracked"`
	Omitted   int    `json:"omitted_files,omitempty"` // files left out of Text by the budget
	Text      string `json:"-"`
}

// changedFile is one line of a changes view.
type changedFile struct {
	status, path string
	added, del   string // "-" for binary
}

// Changes summarises what the managed worktree name changed against its
// base: commits base..HEAD, the files changed in the work tree against the
// base (committed, staged, unstaged and untracked) and a diffstat, within
// maxTokens (0 means DefaultChangesTokens); files beyond it are counted in
// a "... N more files" line.
func (w *Worktrees) Changes(ctx context.Context, path, name string, maxTokens int) (*WorktreeChanges, error) {
	if maxTokens <= 0 {
		maxTokens = DefaultChangesTokens
	}
	r, err := w.open(ctx, path)
	if err != nil {
		return nil, err
	}
	wt, err := w.find(ctx, r, name)
	if err != nil {
		return nil, err
	}
	if wt.State == WorktreeMissing {
		return nil, &WorktreeError{Name: name, Path: wt.Path, Detail: "its directory is gone", Err: ErrWorktreeNotFound}
	}
	if wt.Base == "" {
		// The record is lost: the fork point from the main checkout's HEAD.
		head, _, err := w.git(ctx, r.env, r.top, 256, "rev-parse", "--verify", "HEAD")
		if err != nil {
			return nil, err
		}
		out, _, err := w.git(ctx, r.env, wt.Path, 256, "merge-base", "HEAD", strings.TrimSpace(string(head)))
		if err != nil {
			return nil, err
		}
		wt.Base = strings.TrimSpace(string(out))
	}
	c := &WorktreeChanges{Worktree: *wt}
	diff := []string{"diff", "--no-ext-diff", "--no-textconv", "--no-renames", "--no-color", "--ignore-submodules=none"}
	count, _, err := w.git(ctx, r.env, wt.Path, 64, "rev-list", "--count", wt.Base+"..HEAD")
	if err != nil {
		return nil, err
	}
	c.Commits, _ = strconv.Atoi(strings.TrimSpace(string(count)))
	logOut, _, err := w.git(ctx, r.env, wt.Path, maxWorktreeGitBytes, "log", "--oneline", "--no-decorate", "--no-color",
		"-n", strconv.Itoa(maxChangeCommits), wt.Base+"..HEAD")
	if err != nil {
		return nil, err
	}
	names, _, err := w.git(ctx, r.env, wt.Path, maxWorktreeGitBytes, append(diff, "--name-status", "-z", wt.Base, "--")...)
	if err != nil {
		return nil, err
	}
	nums, _, err := w.git(ctx, r.env, wt.Path, maxWorktreeGitBytes, append(diff, "--numstat", "-z", wt.Base, "--")...)
	if err != nil {
		return nil, err
	}
	untracked, _, err := w.git(ctx, r.env, wt.Path, maxWorktreeGitBytes, "ls-files", "-z", "--others", "--exclude-standard")
	if err != nil {
		return nil, err
	}
	stat := map[string][2]string{}
	for rec := range strings.SplitSeq(string(nums), "\x00") {
		f := strings.SplitN(rec, "\t", 3)
		if len(f) == 3 {
			stat[f[2]] = [2]string{f[0], f[1]}
			a, _ := strconv.Atoi(f[0])
			d, _ := strconv.Atoi(f[1])
			c.Added, c.Deleted = c.Added+a, c.Deleted+d
		}
	}
	var files []changedFile
	parts := strings.Split(string(names), "\x00")
	for i := 0; i+1 < len(parts); i += 2 {
		s := stat[parts[i+1]]
		files = append(files, changedFile{status: parts[i], path: parts[i+1], added: s[0], del: s[1]})
	}
	for p := range strings.SplitSeq(string(untracked), "\x00") {
		if p != "" {
			files = append(files, changedFile{status: "??", path: p})
			c.Untracked++
		}
	}
	c.Files = len(files)
	c.Text, c.Omitted = c.render(string(logOut), files, maxTokens*bytesPerToken)
	return c, nil
}

// render writes the view within budget bytes: the header, the commits (at
// most a quarter of the budget), then files while they fit.
func (c *WorktreeChanges) render(log string, files []changedFile, budget int) (string, int) {
	var b strings.Builder
	fmt.Fprintf(&b, "Worktree %s (branch %s, %s) against base %s", c.Name, c.Branch, c.Path, shortSHA(c.Base))
	if c.BaseRef != "" {
		fmt.Fprintf(&b, " (%s)", c.BaseRef)
	}
	fmt.Fprintf(&b, ":\n%d commit(s); %d file(s) changed, +%d -%d", c.Commits, c.Files, c.Added, c.Deleted)
	if c.Untracked > 0 {
		fmt.Fprintf(&b, ", %d untracked", c.Untracked)
	}
	b.WriteString(".\n")
	if c.Commits > 0 {
		b.WriteString("Commits:\n")
		limit := b.Len() + budget/4
		lines := strings.Split(strings.TrimRight(log, "\n"), "\n")
		for i, l := range lines {
			if b.Len()+len(l)+1 > limit {
				fmt.Fprintf(&b, "... %d more commits\n", c.Commits-i)
				break
			}
			b.WriteString(l + "\n")
			if i == len(lines)-1 && c.Commits > len(lines) {
				fmt.Fprintf(&b, "... %d more commits\n", c.Commits-len(lines))
			}
		}
	}
	if len(files) == 0 {
		b.WriteString("No file differs from the base.\n")
		return b.String(), 0
	}
	b.WriteString("Files (status, path, +added -deleted):\n")
	for i, f := range files {
		line := f.status + " " + f.path
		switch {
		case f.status == "??":
			line += " (untracked)"
		case f.added == "-":
			line += " (binary)"
		case f.added != "":
			line += " +" + f.added + " -" + f.del
		}
		tail := fmt.Sprintf("... %d more files\n", len(files)-i)
		if b.Len()+len(line)+1+len(tail) > budget {
			b.WriteString(tail)
			return b.String(), len(files) - i
		}
		b.WriteString(line + "\n")
	}
	return b.String(), 0
}

func shortSHA(s string) string { return s[:min(len(s), 12)] }
