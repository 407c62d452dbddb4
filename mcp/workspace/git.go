package workspace

// Git queries. Every one runs with an environment that cannot point git at
// another repository, a timeout, a bound on what is kept of its output, and
// configuration that keeps git from running a program the repository
// names (core.fsmonitor here; diff drivers and text conversion filters
// where diffs are taken).

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// maxGitListBytes bounds what git ls-files may write before the rest is
// ignored.
const maxGitListBytes = 4 << 20

// gitEnv is the environment of the git commands: the process's, without
// GIT_* variables that could point git at another repository, and with no
// optional locks (a status must not block the user's own git) or prompts.
func gitEnv() []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "GIT_") })
	return append(env, "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
}

// runGit runs git in dir with a timeout and keeps at most limit bytes of its
// output. A repository's core.fsmonitor is switched off: it names a program
// that git status would otherwise run.
func runGit(ctx context.Context, dir string, timeout time.Duration, limit int, args ...string) ([]byte, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	full := append([]string{"-c", "core.fsmonitor=false", "-c", "core.quotepath=off"}, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	out := &cappedBuffer{limit: limit}
	cmd.Stdout = out
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		return nil, false, err
	}
	return out.buf.Bytes(), out.truncated, nil
}

// cappedBuffer keeps the first limit bytes written and drops the rest, so
// the writer is never blocked or failed.
type cappedBuffer struct {
	buf       bytes.Buffer
	limit     int
	truncated bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := c.limit - c.buf.Len(); room < len(p) {
		c.truncated = true
		c.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.buf.Write(p)
}

func gitWorkTree(ctx context.Context, root string, timeout time.Duration) bool {
	out, _, err := runGit(ctx, root, timeout, 64, "rev-parse", "--is-inside-work-tree")
	return err == nil && strings.TrimSpace(string(out)) == "true"
}

// gitFiles lists what git does not ignore below root (git prints paths
// relative to the directory it runs in and only below it).
func gitFiles(ctx context.Context, root string, lim Limits) ([]scannedFile, bool, error) {
	out, truncated, err := runGit(ctx, root, lim.GitTimeout, maxGitListBytes,
		"ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if err != nil {
		return nil, false, err
	}
	if truncated { // the last name may be cut: keep complete ones only
		out = out[:bytes.LastIndexByte(out, 0)+1]
	}
	seen := make(map[string]bool)
	var files []scannedFile
	for name := range strings.SplitSeq(string(out), "\x00") {
		if name == "" || seen[name] || overviewSkip.SkippedPath(name) {
			continue
		}
		seen[name] = true // unmerged paths are listed once per stage
		if len(files) == lim.MaxScan {
			return files, true, nil
		}
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			continue // tracked but deleted in the work tree
		}
		files = append(files, scannedFile{rel: name, dir: fi.IsDir(), mod: fi.ModTime()})
	}
	return files, truncated, nil
}
