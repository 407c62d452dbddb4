package workspace

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Environment of the helper process of TestWorktreeCreateKilled.
const (
	killHelperState = "WINX_TEST_WT_STATE"
	killHelperRepo  = "WINX_TEST_WT_REPO"
	killHelperName  = "WINX_TEST_WT_NAME"
	killGitFIFO     = "WINX_TEST_GIT_FIFO"
)

// TestWorktreeCreateHelper is the creating process of
// TestWorktreeCreateKilled (the test binary run again); on its own it
// skips.
func TestWorktreeCreateHelper(t *testing.T) {
	state := os.Getenv(killHelperState)
	if state == "" {
		t.Skip("the helper process of TestWorktreeCreateKilled")
	}
	w := &Worktrees{StateDir: state}
	if _, _, err := w.Create(context.Background(), os.Getenv(killHelperRepo), os.Getenv(killHelperName), ""); err != nil {
		fmt.Fprintln(os.Stderr, "Create:", err)
		os.Exit(3)
	}
	os.Exit(0)
}

// slowGit is a directory holding a `git` that announces each call on the
// FIFO, then sleeps 0-200 ms before and after running the real git: hooks
// are off, so this is how a kill is made to land inside `git worktree
// add`. The pause before also lets a kill land between two steps.
func slowGit(t *testing.T, fifo string) string {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	script := `#!/bin/sh
printf '%s\n' "$*" >"$` + killGitFIFO + `"
pause() { n=$(od -An -N1 -tu1 /dev/urandom | tr -d ' '); sleep "0.$(printf %03d $((n * 200 / 255)))"; }
pause
'` + real + `' "$@"
rc=$?
pause
exit $rc
`
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// killTree SIGKILLs pid and every process below it, as a service manager
// stopping a control group or a machine losing power would: each is
// stopped first, so none starts another or does anything after.
func killTree(pid int) {
	syscall.Kill(pid, syscall.SIGSTOP)
	all := map[int]bool{pid: true}
	for grew := true; grew; {
		grew = false
		for p, parent := range processParents() {
			if all[parent] && !all[p] {
				syscall.Kill(p, syscall.SIGSTOP)
				all[p], grew = true, true
			}
		}
	}
	for p := range all {
		syscall.Kill(p, syscall.SIGKILL)
	}
}

// processParents maps every process to its parent, from /proc.
func processParents() map[int]int {
	parents := map[int]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		rest := b[bytes.LastIndexByte(b, ')')+1:]
		f := strings.Fields(string(rest))
		if len(f) > 1 {
			if ppid, err := strconv.Atoi(f[1]); err == nil {
				parents[pid] = ppid
			}
		}
	}
	return parents
}

// leftover is what a killed creation left of name.
type leftover struct {
	intent, meta, branch, dir bool
	registered                string // "" none, else "ok", "locked", "prunable", or the branch it is on
}

func (l leftover) nothing() bool {
	return !l.intent && !l.meta && !l.branch && !l.dir && l.registered == ""
}

// finished: a worktree with its record, as a completed Create leaves it.
func (l leftover) finished() bool {
	return !l.intent && l.meta && l.branch && l.dir && l.registered == "ok"
}

func (l leftover) String() string {
	return fmt.Sprintf("intent=%v meta=%v branch=%v dir=%v registration=%q", l.intent, l.meta, l.branch, l.dir, l.registered)
}

// inspectLeft looks at what exists of name, once no process of its
// creation runs any more: it waits for the name's lock, which the killed
// creation's git processes hold while they live.
func inspectLeft(t *testing.T, repoDir, state, name string) leftover {
	t.Helper()
	metas, _ := filepath.Glob(filepath.Join(state, "worktree-meta", "*"))
	for _, m := range metas {
		if f, err := os.Open(filepath.Join(m, name+".lock")); err == nil {
			for deadline := time.Now().Add(20 * time.Second); syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil; {
				if time.Now().After(deadline) {
					t.Fatalf("the lock of %s stays held", name)
				}
				time.Sleep(10 * time.Millisecond)
			}
			f.Close()
		}
	}
	var l leftover
	exists := func(pattern string) bool {
		got, _ := filepath.Glob(pattern)
		return len(got) > 0
	}
	l.intent = exists(filepath.Join(state, "worktree-meta", "*", name+".intent"))
	l.meta = exists(filepath.Join(state, "worktree-meta", "*", name+".json"))
	l.dir = exists(filepath.Join(state, "worktrees", "*", name))
	l.branch = strings.TrimSpace(gitOut(t, repoDir, "branch", "--list", "winx/"+name)) != ""
	for block := range strings.SplitSeq(gitOut(t, repoDir, "worktree", "list", "--porcelain"), "\n\n") {
		first, _, _ := strings.Cut(block, "\n")
		if !strings.HasSuffix(first, "/"+name) || !strings.Contains(first, filepath.Join(state, "worktrees")) {
			continue
		}
		switch {
		case strings.Contains(block, "\nlocked"):
			l.registered = "locked"
		case strings.Contains(block, "\nprunable"):
			l.registered = "prunable"
		case !strings.Contains(block, "\nbranch refs/heads/winx/"+name):
			l.registered = "other: " + block
		default:
			l.registered = "ok"
		}
	}
	return l
}

// TestWorktreeCreateKilled: a process making a worktree is SIGKILLed at a
// random point (its git slowed down so the kill often lands inside `git
// worktree add`); either the process alone dies (its git runs on), or its
// whole process tree. Then a new engine, as another adapter would, creates
// the same name: it must answer a proper worktree on winx/<name>, with its
// record and no intent left. Every third run removes the name instead,
// which must leave nothing of it.
func TestWorktreeCreateKilled(t *testing.T) {
	ctx := context.Background()
	repoDir, _, w := worktreeRepo(t)
	// Enough files that the checkout inside `git worktree add` takes a
	// while, so kills land in it too.
	for i := range 1000 {
		p := filepath.Join(repoDir, "tree", strconv.Itoa(i%40), strconv.Itoa(i)+".txt")
		if i < 40 {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(p, []byte(strings.Repeat("line\n", 20)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, repoDir, "add", ".")
	git(t, repoDir, "commit", "-q", "-m", "many files")
	head := strings.TrimSpace(gitOut(t, repoDir, "rev-parse", "HEAD"))
	fifo := filepath.Join(t.TempDir(), "git-calls")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// Held open for reading and writing, so a git announcing itself never
	// waits for a reader.
	ff, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ff.Close() })
	calls := make(chan string, 256)
	go func() {
		sc := bufio.NewScanner(ff)
		for sc.Scan() {
			calls <- sc.Text()
		}
	}()
	env := append(os.Environ(), "PATH="+slowGit(t, fifo)+string(os.PathListSeparator)+os.Getenv("PATH"),
		killGitFIFO+"="+fifo, killHelperState+"="+w.StateDir, killHelperRepo+"="+repoDir)

	runs := 15
	if raceEnabled {
		runs = 5
	}
	half, start := 0, time.Now()
	for i := range runs {
		if time.Since(start) > 40*time.Second {
			t.Logf("stopping after %d runs to stay in time", i)
			break
		}
		name := fmt.Sprintf("kill-%d", i)
		for len(calls) > 0 {
			<-calls
		}
		// Killed after the worktree add is announced (most runs) or after
		// the k-th git call, then a random 0-350 ms later.
		atAdd, k := rand.IntN(10) < 6, 1+rand.IntN(6)
		delay := time.Duration(rand.IntN(350)) * time.Millisecond
		tree := i%2 == 0

		cmd := exec.Command(os.Args[0], "-test.run=^TestWorktreeCreateHelper$", "-test.count=1")
		cmd.Env = append(env, killHelperName+"="+name)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		killed, seen := false, 0
	watch:
		for {
			select {
			case call := <-calls:
				seen++
				if atAdd && strings.Contains(call, "worktree add") || !atAdd && seen == k {
					time.Sleep(delay) // the fault's timing, not synchronisation
					if tree {
						killTree(cmd.Process.Pid)
					} else {
						cmd.Process.Kill()
					}
					killed = true
					<-exited
					break watch
				}
			case err := <-exited:
				if err != nil {
					t.Fatalf("run %d: the creating process failed: %v\n%s", i, err, stderr.String())
				}
				break watch
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("run %d: the creating process hangs", i)
			}
		}

		left := inspectLeft(t, repoDir, w.StateDir, name)
		if !left.nothing() && !left.finished() {
			half++
		}
		how := "the process"
		if tree {
			how = "the process tree"
		}
		t.Logf("run %d: killed %s: %v (at add %v, call %d, +%v); left %v", i, how, killed, atAdd, k, delay, left)

		fresh := &Worktrees{StateDir: w.StateDir} // another adapter's engine
		if i%3 == 2 {
			wt, err := fresh.Remove(ctx, repoDir, name, false)
			if err != nil && !(errors.Is(err, ErrWorktreeNotFound) && left.nothing()) {
				t.Errorf("run %d: Remove after the kill = %v; left %v", i, err, left)
			}
			after := inspectLeft(t, repoDir, w.StateDir, name)
			// A creation that had finished is removed as any: its branch is kept.
			keptBranch := left.finished()
			if after.intent || after.meta || after.dir || after.registered != "" || after.branch != keptBranch {
				t.Errorf("run %d: Remove after the kill (%+v) left %v", i, wt, after)
			}
			continue
		}
		wt, created, err := fresh.Create(ctx, repoDir, name, "")
		if err != nil {
			t.Errorf("run %d: Create after the kill = %v; left %v", i, err, left)
			continue
		}
		after := inspectLeft(t, repoDir, w.StateDir, name)
		if !after.finished() || wt.Branch != "winx/"+name || wt.Base != head {
			t.Errorf("run %d: Create after the kill = %+v (created %v); left %v", i, wt, created, after)
		}
		if st := gitOut(t, wt.Path, "status", "--porcelain", "--untracked-files=all"); st != "" {
			t.Errorf("run %d: the worktree is not a clean checkout: %q", i, st[:min(len(st), 200)])
		}
		if locks, _ := filepath.Glob(filepath.Join(w.StateDir, "worktree-meta", "*", name+".lock")); len(locks) != 0 {
			t.Errorf("run %d: lock file left: %v", i, locks)
		}
	}
	t.Logf("%d of %d runs left a half-made worktree at the kill", half, runs)
}
