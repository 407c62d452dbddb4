package workspace

// Crash-safe creation of managed worktrees.
//
// Making a worktree is several steps that git does not make atomic: the
// branch winx/<name> is created, then `git worktree add` registers the
// worktree, makes its directory and checks files out. A process that dies
// in between (killed, out of memory, its machine off) used to leave a
// branch without a worktree, a registration whose checkout was cut off, or
// a directory git does not know, and every later call on the name answered
// "taken" or "not found" until a person ran `git branch -D`.
//
// So a creation is recorded before it changes anything, and runs under a
// lock:
//
//   - The name's lock (<meta>/<name>.lock, an flock) is held from before
//     the first look at the name until its record is settled. The lock's
//     descriptor is handed down to the git processes that change the
//     repository, so the lock is held while any of them runs: when the
//     creating process dies, a `git worktree add` it started may still be
//     checking files out, and no one else may touch the name before it is
//     gone. The kernel drops the lock when the last holder exits.
//   - The intent (<meta>/<name>.intent, 0600, written atomically and
//     synced) names the repository, the branch, the base commit, the
//     target path, the creating process and the time. It is written before
//     the branch is made and removed after the worktree's own record is
//     written (synced), so a creation is either finished with a record or
//     still has its intent.
//
// The next Create of the name, from any process, takes the lock and finds
// the intent. A creation git had finished gets its record. Otherwise what
// was made is checked against the intent: a branch that still points at the
// intent's base has no commits of its own and is adopted (a half-made
// registration or directory is removed and `git worktree add` runs again,
// onto the existing branch); with nothing made the creation starts over.
// A branch that has moved, is checked out elsewhere, or a path registered
// on another branch is work that winx did not make: the call is refused
// with what is there and how to resolve it, and nothing is changed. Remove
// of the name undoes the creation instead: the half-made worktree goes, and
// the branch too when it still points at the base.
//
// The three files of a name are told apart by their suffix (.json, .lock,
// .intent): a name never ends in ".lock" and never starts with '.', so no
// name's file is another name's.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"winx/edit/atomicfile"
)

// gitAddingLock is the reason git gives the lock of a worktree it is still
// adding (its locale is C); a registration that keeps it after git is gone
// was cut off.
const gitAddingLock = "initializing"

// maxNameLockPoll bounds the pause between two tries of a held name lock.
const maxNameLockPoll = 50 * time.Millisecond

// worktreeIntent is the record of a creation in progress.
type worktreeIntent struct {
	Name    string    `json:"name"`
	Repo    string    `json:"repo"`     // the repository's canonical top level
	Branch  string    `json:"branch"`   // winx/<name>
	Base    string    `json:"base"`     // the commit the branch starts at
	BaseRef string    `json:"base_ref"` // what the base was given as
	Path    string    `json:"path"`     // the worktree's managed path
	PID     int       `json:"pid"`      // the creating process
	Created time.Time `json:"created"`
}

func (r *repo) intentPath(name string) string { return filepath.Join(r.meta, name+".intent") }

// readIntent returns name's intent, nil when there is none. A record that
// cannot be read or is not one of this name of this repository is refused
// (ErrWorktreeTaken): what it meant cannot be known, so nothing is touched.
func (r *repo) readIntent(name string) (*worktreeIntent, error) {
	path := r.intentPath(name)
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	bad := func(why string) error {
		return &WorktreeError{Name: name, Path: path, Err: ErrWorktreeTaken,
			Detail: "the record of an interrupted creation, " + path + ", " + why + "; winx changes nothing while it is there: " +
				"look at branch " + WorktreeBranchPrefix + name + " and `git worktree list`, clean up by hand, then delete the record"}
	}
	if err != nil {
		return nil, bad("cannot be opened (" + err.Error() + ")")
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxWorktreeMeta+1))
	if err != nil {
		return nil, bad("cannot be read (" + err.Error() + ")")
	}
	var in worktreeIntent
	if len(b) > maxWorktreeMeta || json.Unmarshal(b, &in) != nil {
		return nil, bad("is not a valid record")
	}
	switch {
	case in.Name != name, in.Branch != WorktreeBranchPrefix+name, in.Repo != r.top:
		return nil, bad("is about another worktree (" + in.Branch + " of " + in.Repo + ")")
	case in.Path != filepath.Join(r.managed, name):
		return nil, bad("names another path (" + in.Path + ")")
	case !isCommitID(in.Base):
		return nil, bad("has no valid base commit")
	}
	return &in, nil
}

// isCommitID reports a full SHA-1 or SHA-256 object name in lower-case hex.
func isCommitID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}

// writeIntent records in before anything of it is made.
func (r *repo) writeIntent(in *worktreeIntent) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(r.intentPath(in.Name), b, 0o600, atomicfile.Durability{SyncFile: true, SyncDir: true})
}

// dropIntent removes name's intent once the creation is settled.
func (r *repo) dropIntent(name string) error {
	if err := os.Remove(r.intentPath(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return atomicfile.SyncDir(r.meta)
}

// nameLock is a held lock of one worktree name of one repository.
type nameLock struct {
	f    *os.File // flocked; handed down to git's processes by gitHolding
	path string
}

// lockName takes name's lock, waiting while another process (or the git
// processes of a process that died) holds it, at most twice the git
// timeout: ErrWorktreeBusy after that. As with atomicfile.LockFile, the
// holder removes the lock file before it unlocks, and a waiter that got
// the lock of a file no longer at the path starts over. (LockFile itself
// does not give out its descriptor, which git's processes must inherit.)
func (w *Worktrees) lockName(ctx context.Context, r *repo, name string) (*nameLock, error) {
	path := filepath.Join(r.meta, name+".lock")
	deadline := time.Now().Add(2 * w.timeout())
	delay := time.Millisecond
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
		if err != nil {
			return nil, err
		}
		for {
			err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
			if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
				break
			}
			if ctx.Err() != nil || time.Now().After(deadline) {
				f.Close()
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return nil, &WorktreeError{Name: name, Path: r.top, Err: ErrWorktreeBusy,
					Detail: "waited " + (2 * w.timeout()).String() + " for " + path}
			}
			time.Sleep(delay)
			delay = min(2*delay, maxNameLockPoll)
		}
		if err != nil {
			f.Close()
			return nil, &fs.PathError{Op: "flock", Path: path, Err: err}
		}
		var held, named syscall.Stat_t
		if syscall.Fstat(int(f.Fd()), &held) == nil && syscall.Lstat(path, &named) == nil &&
			held.Dev == named.Dev && held.Ino == named.Ino {
			return &nameLock{f: f, path: path}, nil
		}
		f.Close() // the holder before us removed it: try the new one
	}
}

// unlock removes the lock file while still holding it, then releases it.
func (l *nameLock) unlock() {
	os.Remove(l.path)
	l.f.Close()
}

// branchHead is the commit branch points at, "" when it does not exist.
func (w *Worktrees) branchHead(ctx context.Context, r *repo, branch string) (string, error) {
	out, _, err := w.git(ctx, r.env, r.top, 256, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch)
	if err != nil {
		return "", nil // --verify --quiet fails without a word for a missing ref
	}
	return strings.TrimSpace(string(out)), nil
}

// make makes the worktree in records, under lock: the intent first, then
// the branch (adopt: it exists, at the base, and the intent is on disk),
// then the checkout, then the record, and the intent goes. A step that
// fails undoes what was made; a crash leaves the intent to the next call.
func (w *Worktrees) make(ctx context.Context, r *repo, lock *nameLock, in *worktreeIntent, adopt bool) (*Worktree, error) {
	fail := func(err error) (*Worktree, error) {
		// Undone without the caller's deadline: a cancelled call must
		// not leave its half to the next one when it need not.
		w.undo(context.WithoutCancel(ctx), r, lock, in, true)
		return nil, err
	}
	if !adopt {
		if err := r.writeIntent(in); err != nil {
			os.Remove(r.intentPath(in.Name))
			return nil, err
		}
		// Created only where no branch of that name exists (the empty
		// old value), at the resolved commit.
		if _, _, err := w.gitHolding(ctx, lock.f, r.env, r.top, maxWorktreeGitErr,
			"update-ref", "-m", "winx: worktree "+in.Name, "refs/heads/"+in.Branch, in.Base, ""); err != nil {
			return fail(err)
		}
	}
	if _, _, err := w.gitHolding(ctx, lock.f, r.env, r.top, maxWorktreeGitErr, "worktree", "add", "--", in.Path, in.Branch); err != nil {
		return fail(err)
	}
	if err := os.Chmod(in.Path, 0o700); err != nil {
		return fail(err)
	}
	return w.complete(r, in)
}

// complete writes the record of the worktree in made and removes the
// intent: the record is synced first, so one of the two is always there.
func (w *Worktrees) complete(r *repo, in *worktreeIntent) (*Worktree, error) {
	m, _ := json.Marshal(worktreeMeta{Base: in.Base, BaseRef: in.BaseRef, Created: in.Created})
	if err := atomicfile.WriteFile(r.metaPath(in.Name), m, 0o600, atomicfile.Durability{SyncFile: true, SyncDir: true}); err != nil {
		return nil, err
	}
	if err := r.dropIntent(in.Name); err != nil {
		return nil, err
	}
	return &Worktree{Name: in.Name, Path: in.Path, Branch: in.Branch, Base: in.Base, BaseRef: in.BaseRef, Repo: r.top}, nil
}

// halfMade is what exists of an interrupted creation.
type halfMade struct {
	at        *worktreeEntry // the registration at the intent's path, nil when none
	elsewhere string         // another worktree that has the branch checked out
	branchSHA string         // where the branch points, "" when it does not exist
	dir       bool           // something is at the intent's path
}

// finished reports a registration on the intent's branch that git
// completed and whose directory is there.
func (h *halfMade) finished(in *worktreeIntent) bool {
	return h.at != nil && h.at.branch == "refs/heads/"+in.Branch && h.at.locked != gitAddingLock && !h.at.prunable
}

// inspect finds what exists of in.
func (w *Worktrees) inspect(ctx context.Context, r *repo, in *worktreeIntent) (*halfMade, error) {
	list, err := w.entries(ctx, r)
	if err != nil {
		return nil, err
	}
	h := &halfMade{}
	for i, e := range list {
		switch {
		case e.path == in.Path:
			h.at = &list[i]
		case e.branch == "refs/heads/"+in.Branch:
			h.elsewhere = e.path
		}
	}
	if h.branchSHA, err = w.branchHead(ctx, r, in.Branch); err != nil {
		return nil, err
	}
	_, err = os.Lstat(in.Path)
	h.dir = err == nil
	return h, nil
}

// foreign is the refusal of an interrupted creation whose name holds
// something winx did not make, nil when all that is there is winx's.
func (h *halfMade) foreign(r *repo, in *worktreeIntent) error {
	what := ""
	switch {
	case h.at != nil && h.at.branch != "" && h.at.branch != "refs/heads/"+in.Branch:
		what = in.Path + " is registered as a worktree on " + strings.TrimPrefix(h.at.branch, "refs/heads/") +
			", not on " + in.Branch + "; move that work elsewhere (`git worktree move`) or remove it (`git worktree remove`)"
	case h.elsewhere != "":
		what = "branch " + in.Branch + " is checked out at " + h.elsewhere + ", not at the managed path " + in.Path +
			"; work there, or free the branch (`git worktree remove " + h.elsewhere + "`)"
	case h.branchSHA != "" && h.branchSHA != in.Base:
		what = "branch " + in.Branch + " points at " + shortSHA(h.branchSHA) + ", not at the base " + shortSHA(in.Base) +
			" it was made at, so it holds commits of its own; keep them under another name (`git branch -m " + in.Branch +
			" <new name>`) or, if they are not needed, delete it (`git branch -D " + in.Branch + "`), then call again"
	default:
		return nil
	}
	return &WorktreeError{Name: in.Name, Path: r.top, Err: ErrWorktreeTaken,
		Detail: fmt.Sprintf("a creation of this worktree by process %d at %s was cut off, and winx changes nothing now: %s",
			in.PID, in.Created.Format(time.RFC3339), what)}
}

// clear removes a half-made worktree at in's path: its registration (git
// worktree remove, also of a locked one) and its directory. Neither was
// handed to anyone: the creation that made them never answered.
func (w *Worktrees) clear(ctx context.Context, r *repo, lock *nameLock, in *worktreeIntent, h *halfMade) error {
	remove := func() error {
		_, _, err := w.gitHolding(ctx, lock.f, r.env, r.top, maxWorktreeGitErr, "worktree", "remove", "--force", "--force", "--", in.Path)
		return err
	}
	if h.at != nil && remove() == nil {
		return nil
	}
	// git refuses a directory whose .git link is not written yet: the
	// directory goes first, the registration of a missing one after.
	if h.dir || h.at != nil {
		if err := os.RemoveAll(in.Path); err != nil {
			return err
		}
	}
	if h.at != nil {
		return remove()
	}
	return nil
}

// finish settles an interrupted creation for Create: the finished
// worktree with its record, a half-made one completed onto its branch, or
// nil (and no intent) when nothing of it was left. Recovered is set.
func (w *Worktrees) finish(ctx context.Context, r *repo, lock *nameLock, in *worktreeIntent) (*Worktree, error) {
	h, err := w.inspect(ctx, r, in)
	if err != nil {
		return nil, err
	}
	if h.finished(in) {
		// git finished; the record was not written.
		if err := os.Chmod(in.Path, 0o700); err != nil {
			return nil, err
		}
		wt, err := w.complete(r, in)
		if wt != nil {
			wt.Recovered = true
		}
		return wt, err
	}
	if err := h.foreign(r, in); err != nil {
		return nil, err
	}
	if err := w.clear(ctx, r, lock, in, h); err != nil {
		return nil, err
	}
	if h.branchSHA == "" {
		return nil, r.dropIntent(in.Name)
	}
	wt, err := w.make(ctx, r, lock, in, true)
	if wt != nil {
		wt.Recovered = true
	}
	return wt, err
}

// undo settles an interrupted creation for Remove: a worktree git finished
// is removed as any (a dirty one only with force), a half-made one is
// cleared, the branch is deleted when it still points at the base and no
// other worktree has it, and the records go.
func (w *Worktrees) undo(ctx context.Context, r *repo, lock *nameLock, in *worktreeIntent, force bool) (*Worktree, error) {
	h, err := w.inspect(ctx, r, in)
	if err != nil {
		return nil, err
	}
	wt := &Worktree{Name: in.Name, Path: in.Path, Branch: in.Branch, Base: in.Base, BaseRef: in.BaseRef, Repo: r.top, Recovered: true}
	if h.at != nil && h.at.branch != "" && h.at.branch != "refs/heads/"+in.Branch {
		return nil, h.foreign(r, in)
	}
	if h.finished(in) {
		if err := w.removeTree(ctx, r, lock, wt, force); err != nil {
			return nil, err
		}
	} else if err := w.clear(ctx, r, lock, in, h); err != nil {
		return nil, err
	}
	if h.branchSHA == in.Base && h.elsewhere == "" {
		// Deleted only while it still points at the base: the old value
		// makes git check that under its ref lock.
		if _, _, err := w.gitHolding(ctx, lock.f, r.env, r.top, maxWorktreeGitErr,
			"update-ref", "-m", "winx: undo worktree "+in.Name, "-d", "refs/heads/"+in.Branch, in.Base); err != nil {
			return nil, err
		}
		wt.BranchDeleted = true
	}
	if err := os.Remove(r.metaPath(in.Name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return wt, r.dropIntent(in.Name)
}

// dropStaleRefLock removes the lock file git leaves beside the branch ref
// of an interrupted creation when it is killed while it updates the ref
// (update-ref, or worktree add): every later update of the branch would
// fail with "cannot lock ref". The caller holds the name's lock, which
// every creation holds, with its git children, until it ends: the git
// that made the file is gone, and nothing but a creation of this name
// touches refs/heads/winx/<name>.
func (r *repo) dropStaleRefLock(in *worktreeIntent) {
	if r.common == "" || in.Branch == "" {
		return
	}
	os.Remove(filepath.Join(r.common, "refs", "heads", filepath.FromSlash(in.Branch)+".lock"))
}
