package tools

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"winx/codemap/shellcmd"
	"winx/guardian/artifacts"
	"winx/mcp"
)

// Temporary-artifact policy of BashCommand (TOOLS.md, "BashCommand"). Each
// session writes its scratch files under WINX_TEMP_DIR,
// <root>/.winx/tmp/session-<id>/, within the budgets of package
// guardian/artifacts. Before a command action (foreground or background)
// runs, tempArtifacts.check
//
//  1. rejects statically visible writes into another session's directory,
//     into .winx or .winx/tmp themselves (for removing commands), or to a
//     reserved <root>/.winx-* path (see artifactWriteTargets for which
//     commands and redirects count as writes); a line that does not parse
//     is left to the mode policy;
//  2. measures the workspace's .winx/tmp (reclaiming stale directories of
//     sessions that are not live when it is over the high-water mark) and,
//     while this session is over a budget, or the workspace is and this
//     session holds artifacts of its own, lets only cleanup commands run
//     (see isCleanupCommand). A session with nothing on disk cannot help a
//     full workspace and is not blocked.
//
// Both refusals are status denied with errorCode temporary_artifact_policy;
// the command never reaches the shell.
const codeTemporaryArtifactPolicy = "temporary_artifact_policy"

// artifactScanReuse is how long a workspace scan below artifactWarnLevel is
// reused by the next check; a scan at or above it is never reused, so a
// cleanup shows at once. Within the window a command may have written
// more than the scan saw; the next check after it catches that.
const artifactScanReuse = time.Second

// artifactWarnLevel is the fraction of a budget from which scans are always
// fresh.
const artifactWarnLevel = 0.8

// tempArtifacts holds the last scan of each workspace's .winx/tmp. Its zero
// value is ready to use.
type tempArtifacts struct {
	mu    sync.Mutex                 // guards scans
	scans map[string]artifactScanned // by canonical root; entries older than artifactScanReuse are dropped
}

type artifactScanned struct {
	at    time.Time
	usage *artifacts.Usage
}

// check is BashCommand's hook before a command action runs: nil lets it
// run, otherwise the result is the refusal.
func (g *tempArtifacts) check(ctx context.Context, reg *Sessions, sess *Session, act *action, threadID, root string) *mcp.CallToolResult {
	if act.Type != "command" || act.Command == nil {
		return nil
	}
	id, ok := artifacts.SessionID(filepath.Base(sess.TempDir))
	if !ok {
		panic("tools: session temp dir " + sess.TempDir + " is not named by TempArtifactDir")
	}
	cwd := sess.Root
	if sh := sess.Shell(); sh != nil && sh.Cwd(ctx) != "" {
		cwd = sh.Cwd(ctx)
	}
	cmds, perr := shellcmd.Parse(*act.Command)
	if perr == nil {
		if w := forbiddenArtifactWrite(cmds, sess.Root, cwd, sess.TempDir); w != nil {
			return artifactWriteDenied(w, sess)
		}
	}
	if perr == nil && isCleanupCommand(cmds) {
		return nil // cleanup runs whatever the budget says
	}
	u, err := g.usage(reg, sess.Root, id)
	if err != nil {
		return artifactScanDenied(err, sess)
	}
	var over *artifacts.OverBudgetError
	if !errors.As(u.Check(id, nil), &over) {
		return nil
	}
	s := u.Session(id)
	sessionLimit := over.Limit != artifacts.LimitWorkspaceBytes && over.Limit != artifacts.LimitWorkspaceEntries
	if !sessionLimit && s.Files == 0 && len(s.Helpers) == 0 {
		return nil
	}
	return artifactBudgetDenied(over, u, s, sess, threadID, root)
}

// annotate adds a usage warning to a command's result when the scan its
// check made shows a temporary-artifact budget of the session or the
// workspace at artifactWarnLevel or more: the agent hears of the limit
// before commands are refused. The scan is the one from before the command.
func (g *tempArtifacts) annotate(res *mcp.CallToolResult, act *action, sess *Session) *mcp.CallToolResult {
	if act.Type != "command" || res == nil {
		return res
	}
	env, ok := res.StructuredContent.(mcp.Envelope)
	if !ok {
		return res
	}
	data, ok := env.Data.(bashData)
	if !ok {
		return res
	}
	id, ok := artifacts.SessionID(filepath.Base(sess.TempDir))
	if !ok {
		return res
	}
	g.mu.Lock()
	scan, ok := g.scans[sess.Root]
	g.mu.Unlock()
	if !ok {
		return res
	}
	p := scan.usage.Pressure(id, nil)
	if p < artifactWarnLevel {
		return res
	}
	data.TempArtifactUse = int(math.Round(p * 100))
	env.Data = data
	note := fmt.Sprintf("note: temporary artifacts use %d%% of a budget (%s); remove what you no longer need from %s before commands are refused",
		data.TempArtifactUse, artifactBudgets, sess.TempDir)
	text := env.Output
	if text != "" {
		text += "\n"
	}
	return env.Result(text+note, res.Content[1:]...)
}

// artifactBudgets names the limits for messages.
var artifactBudgets = fmt.Sprintf("session %s and %d files, helper %s, workspace %s",
	mib(artifacts.MaxSessionBytes), artifacts.MaxSessionFiles, mib(artifacts.MaxHelperBytes), mib(artifacts.MaxWorkspaceBytes))

// usage returns a fresh enough scan of root's .winx/tmp, reclaiming stale
// directories first when the workspace is over the high-water mark.
func (g *tempArtifacts) usage(reg *Sessions, root, id string) (*artifacts.Usage, error) {
	now := reg.now()
	g.mu.Lock()
	for r, s := range g.scans {
		if now.Sub(s.at) >= artifactScanReuse || s.at.After(now) {
			delete(g.scans, r)
		}
	}
	if s, ok := g.scans[root]; ok && s.usage.Pressure(id, nil) < artifactWarnLevel {
		g.mu.Unlock()
		return s.usage, nil
	}
	g.mu.Unlock()

	res, err := artifacts.Reclaim(root, now, reg.liveArtifactIDs(root), nil)
	if err != nil {
		return nil, err
	}
	u := res.Usage
	if u.Truncated && len(res.Removed) > 0 {
		// Truncated totals are lower bounds; count again after deleting.
		if u, err = artifacts.Scan(root); err != nil {
			return nil, err
		}
	}
	g.mu.Lock()
	if g.scans == nil {
		g.scans = make(map[string]artifactScanned)
	}
	g.scans[root] = artifactScanned{at: now, usage: u}
	g.mu.Unlock()
	return u, nil
}

// liveArtifactIDs is the set of artifact session ids of the registry's
// sessions in root; Reclaim never deletes their directories. Sessions of
// other Winx processes on the same workspace are not in it: only their
// 24-hour idle time protects them.
func (s *Sessions) liveArtifactIDs(root string) map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	live := make(map[string]bool)
	for _, sess := range s.sessions {
		if sess.Root != root {
			continue
		}
		if id, ok := artifacts.SessionID(filepath.Base(sess.TempDir)); ok {
			live[id] = true
		}
	}
	return live
}

// mib formats bytes as MiB with one decimal.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// cleanupCommandList is what isCleanupCommand allows, for messages.
const cleanupCommandList = "rm, rmdir, ls, du, find (without -exec, -ok or -fprint), stat, cd, pwd and true"

func artifactBudgetDenied(over *artifacts.OverBudgetError, u *artifacts.Usage, s *artifacts.Session, sess *Session, threadID, root string) *mcp.CallToolResult {
	var what string
	switch over.Limit {
	case artifacts.LimitSessionBytes:
		what = fmt.Sprintf("this session's temporary artifacts hold %s, over the %s session limit", mib(over.Usage), mib(over.Max))
	case artifacts.LimitSessionFiles:
		what = fmt.Sprintf("this session's temporary artifacts are %d files, over the %d-file session limit", over.Usage, over.Max)
	case artifacts.LimitHelperBytes:
		what = fmt.Sprintf("the helper directory %s holds %s, over the %s helper limit", over.Dir, mib(over.Usage), mib(over.Max))
	case artifacts.LimitWorkspaceBytes:
		what = fmt.Sprintf("the workspace's %s holds %s, over the %s workspace limit", over.Dir, mib(over.Usage), mib(over.Max))
	default:
		what = fmt.Sprintf("the workspace's %s holds more than %d entries", over.Dir, over.Max)
	}
	msg := fmt.Sprintf("Temporary artifacts are over budget, so the command was not run: %s. "+
		"Your temporary directory (WINX_TEMP_DIR) is %s: %s in %s (limits %s and %d files per session, %s per helper directory; "+
		"the workspace's .winx/tmp holds %s of %s). Delete what you no longer need; until then only cleanup commands run: %s.",
		what, sess.TempDir, mib(s.Bytes), plural(s.Files, "file"), mib(artifacts.MaxSessionBytes), artifacts.MaxSessionFiles, mib(artifacts.MaxHelperBytes),
		mib(u.Bytes), mib(artifacts.MaxWorkspaceBytes), cleanupCommandList)
	cmd := `du -sh "$WINX_TEMP_DIR"/* "$WINX_TEMP_DIR"/.[!.]*`
	if s.Largest != "" {
		cmd = `rm -rf -- "$WINX_TEMP_DIR"/` + shellQuote(s.Largest)
	}
	env := mcp.Envelope{
		Status: mcp.StatusDenied, Tool: BashCommandTool, ErrorCode: codeTemporaryArtifactPolicy, Retryable: true,
		Message: msg,
		NextAction: &mcp.NextAction{
			Tool:        BashCommandTool,
			Instruction: "Remove temporary artifacts you no longer need (this suggestion removes the largest entry of WINX_TEMP_DIR; check it first), then run the command again.",
			Arguments: map[string]any{
				"action_json":    map[string]any{"type": "command", "command": cmd},
				"thread_id":      threadID,
				"workspace_root": root,
			},
		},
	}
	return env.Result(msg)
}

func artifactScanDenied(err error, sess *Session) *mcp.CallToolResult {
	msg := fmt.Sprintf("Temporary artifacts could not be measured, so the command was not run: %v. "+
		"Winx does not count or clean through a symlinked or unreadable .winx/tmp; make %s a plain directory Winx can read (or remove it). "+
		"Until then only cleanup commands run: %s.", err, filepath.Dir(sess.TempDir), cleanupCommandList)
	env := mcp.Envelope{Status: mcp.StatusDenied, Tool: BashCommandTool, ErrorCode: codeTemporaryArtifactPolicy, Retryable: true, Message: msg}
	return env.Result(msg)
}

// shellQuote quotes s for bash as one word.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// artifactWrite is a statically visible write the policy refuses.
type artifactWrite struct {
	Command string // the command name, or "redirect"
	Target  string // as written
	Path    string // resolved
	Reason  string
}

func artifactWriteDenied(w *artifactWrite, sess *Session) *mcp.CallToolResult {
	msg := fmt.Sprintf("The command was not run: %s writes %s (%s), which %s. "+
		"Each session writes temporary files only under its own WINX_TEMP_DIR, %s.",
		w.Command, w.Target, w.Path, w.Reason, sess.TempDir)
	env := mcp.Envelope{Status: mcp.StatusDenied, Tool: BashCommandTool, ErrorCode: codeTemporaryArtifactPolicy, Retryable: true, Message: msg}
	return env.Result(msg)
}

// cleanupCommands may run while the session is over its budget.
var cleanupCommands = []string{"rm", "rmdir", "ls", "du", "find", "stat", "cd", "pwd", "true"}

// findWriteActions are find actions that run programs or write files.
var findWriteActions = []string{"-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"}

// isCleanupCommand reports whether every simple command of the line (the
// parser reports those inside substitutions and behind wrappers too) is a
// cleanup command: one of cleanupCommands, named literally, without
// variable assignments, without output redirects other than to /dev/null
// or between descriptors, and for find without actions that run programs
// or write files.
func isCleanupCommand(cmds []shellcmd.Command) bool {
	if len(cmds) == 0 {
		return false
	}
	for _, c := range cmds {
		if len(c.Args) == 0 || c.Dynamic || len(c.Assignments) > 0 || !slices.Contains(cleanupCommands, c.Args[0]) {
			return false
		}
		for _, r := range c.Redirects {
			if isOutputRedirect(r) && (r.Dynamic || r.Target != "/dev/null") {
				return false
			}
		}
		if c.Args[0] == "find" && slices.ContainsFunc(c.Args[1:], func(a string) bool { return slices.Contains(findWriteActions, a) }) {
			return false
		}
	}
	return true
}

// isOutputRedirect reports a redirect that opens its target for writing
// (>, >>, >|, &>, &>>, <>, n>, {fd}>, >&file); a duplication between
// descriptors (2>&1, >&-) opens nothing.
func isOutputRedirect(r shellcmd.Redirect) bool {
	if !strings.Contains(r.Op, ">") {
		return false
	}
	if strings.HasSuffix(r.Op, "&") {
		t := r.Target
		return !(t == "-" || (t != "" && strings.Trim(t, "0123456789") == ""))
	}
	return true
}

// forbiddenArtifactWrite returns the first write of cmds the policy refuses
// for the session whose temporary directory is own, nil if none. Relative
// targets are resolved against the shell's cwd, the workspace root, and the
// directories of literal cd commands earlier on the line. Words whose value
// is only known at run time are skipped, except that $WINX_TEMP_DIR and
// $WINX_WORKSPACE_ROOT are taken to hold what Winx exported.
func forbiddenArtifactWrite(cmds []shellcmd.Command, root, cwd, own string) *artifactWrite {
	id, _ := artifacts.SessionID(filepath.Base(own))
	vars := map[string]string{"WINX_TEMP_DIR": own, "WINX_WORKSPACE_ROOT": root}
	dirs := []string{cwd}
	if cwd != root {
		dirs = append(dirs, root)
	}
	for _, c := range cmds {
		for _, t := range artifactWriteTargets(c, vars) {
			for _, p := range resolveTargets(t.target, dirs) {
				if reason := forbiddenArtifactPath(p, root, id, t.removes); reason != "" {
					return &artifactWrite{Command: t.command, Target: t.target, Path: p, Reason: reason}
				}
			}
		}
		if len(c.Args) == 2 && c.Args[0] == "cd" && !c.Dynamic && len(dirs) < maxTrackedDirs {
			dir, ok := staticWord(c.Args[1], argDynamic(c, 1), vars)
			if !ok || strings.ContainsAny(dir, "*?[") {
				continue
			}
			for _, d := range dirs {
				if filepath.IsAbs(dir) {
					dirs = append(dirs, filepath.Clean(dir))
				} else {
					dirs = append(dirs, filepath.Join(d, dir))
				}
			}
		}
	}
	return nil
}

// maxTrackedDirs bounds the directories one line's cd commands add.
const maxTrackedDirs = 16

// writeTarget is one path a command writes.
type writeTarget struct {
	command string
	target  string // with the known variables expanded
	removes bool   // the command removes or moves it away
}

// Commands whose operands are written, and which of their options take a
// value (so the value is not taken for an operand).
var (
	// Every operand is written (created, changed or removed).
	allOperandWriters = []string{"rm", "rmdir", "unlink", "touch", "mkdir", "tee", "truncate", "shred", "mkfifo", "mv"}
	// Operands that disappear: writing to an ancestor of another
	// session's directory is refused only for these.
	removers = []string{"rm", "rmdir", "unlink", "shred", "mv"}
	// The last operand, or -t/--target-directory, is written.
	destinationWriters = []string{"cp", "install", "ln", "rsync"}
	valueOptions       = map[string][]string{
		"touch": {"-d", "-r", "-t", "--date", "--reference"}, "truncate": {"-s", "-r", "--size", "--reference"},
		"mkdir": {"-m", "--mode"}, "install": {"-m", "-o", "-g", "-S", "--mode", "--owner", "--group", "--suffix"},
		"cp": {"-S", "--suffix"}, "ln": {"-S", "--suffix"}, "mv": {"-S", "--suffix"}, "rsync": {"-e", "--rsh"},
		"shred": {"-n", "-s", "--iterations", "--size"}, "mkfifo": {"-m", "--mode"},
	}
)

// artifactWriteTargets lists what c statically writes: the targets of its
// output redirects and the operands of the write commands above (dd: of=).
// Commands behind wrappers (sudo, env, nohup...) are separate commands of
// the parser's answer and are checked on their own.
func artifactWriteTargets(c shellcmd.Command, vars map[string]string) []writeTarget {
	var out []writeTarget
	for _, r := range c.Redirects {
		if !isOutputRedirect(r) {
			continue
		}
		if t, ok := staticWord(r.Target, r.Dynamic, vars); ok {
			out = append(out, writeTarget{command: "the redirect " + r.Op, target: t})
		}
	}
	if len(c.Args) == 0 || c.Dynamic {
		return out
	}
	name := c.Args[0]
	removes := slices.Contains(removers, name)
	add := func(i int, w string) {
		if t, ok := staticWord(w, argDynamic(c, i), vars); ok && t != "" {
			out = append(out, writeTarget{command: name, target: t, removes: removes})
		}
	}
	type operand struct {
		i int
		w string
	}
	var operands []operand
	var targetDir *operand
	values := valueOptions[name]
	for i := 1; i < len(c.Args); i++ {
		a := c.Args[i]
		switch {
		case name == "dd":
			if of, ok := strings.CutPrefix(a, "of="); ok {
				operands = append(operands, operand{i, of})
			}
		case a == "--":
			for j := i + 1; j < len(c.Args); j++ {
				operands = append(operands, operand{j, c.Args[j]})
			}
			i = len(c.Args)
		case a == "-t" || a == "--target-directory":
			if i+1 < len(c.Args) {
				targetDir = &operand{i + 1, c.Args[i+1]}
				i++
			}
		case strings.HasPrefix(a, "--target-directory="):
			targetDir = &operand{i, strings.TrimPrefix(a, "--target-directory=")}
		case slices.Contains(values, a):
			i++
		case strings.HasPrefix(a, "-") && a != "-":
		default:
			operands = append(operands, operand{i, a})
		}
	}
	switch {
	case name == "dd" || slices.Contains(allOperandWriters, name):
		for _, o := range operands {
			add(o.i, o.w)
		}
		if targetDir != nil {
			add(targetDir.i, targetDir.w)
		}
	case slices.Contains(destinationWriters, name):
		if targetDir != nil {
			add(targetDir.i, targetDir.w)
		} else if len(operands) > 0 {
			o := operands[len(operands)-1]
			add(o.i, o.w)
		}
	}
	return out
}

func argDynamic(c shellcmd.Command, i int) bool {
	return i < len(c.ArgDynamic) && c.ArgDynamic[i]
}

// staticWord returns the value of a word as far as it is known before the
// command runs: a literal word as is; a dynamic one with $WINX_TEMP_DIR,
// $WINX_WORKSPACE_ROOT (vars) expanded, if nothing else in it is an
// expansion, a tilde or a brace pattern. Globs stay in the answer for
// resolveTargets. ok is false for a word that is not statically known.
func staticWord(w string, dynamic bool, vars map[string]string) (string, bool) {
	if !dynamic {
		return w, true
	}
	var b strings.Builder
	for i := 0; i < len(w); i++ {
		if w[i] != '$' {
			b.WriteByte(w[i])
			continue
		}
		rest := w[i+1:]
		name, braced := "", false
		if strings.HasPrefix(rest, "{") {
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				return "", false
			}
			name, braced = rest[1:end], true
		} else {
			n := 0
			for n < len(rest) && (rest[n] == '_' || 'A' <= rest[n] && rest[n] <= 'Z' || 'a' <= rest[n] && rest[n] <= 'z' || n > 0 && '0' <= rest[n] && rest[n] <= '9') {
				n++
			}
			name = rest[:n]
		}
		v, ok := vars[name]
		if !ok {
			return "", false
		}
		b.WriteString(v)
		i += len(name)
		if braced {
			i += 2
		}
	}
	s := b.String()
	if strings.ContainsAny(s, "`{}") || strings.HasPrefix(s, "~") {
		return "", false
	}
	return s, true
}

// resolveTargets returns the absolute, cleaned paths a target may name:
// itself if absolute, else relative to each of dirs. Glob patterns are
// expanded against the file system as well, so a pattern naming existing
// directories of other sessions is seen.
func resolveTargets(t string, dirs []string) []string {
	var bases []string
	if filepath.IsAbs(t) {
		bases = []string{filepath.Clean(t)}
	} else {
		for _, d := range dirs {
			bases = append(bases, filepath.Join(d, t))
		}
	}
	out := bases
	if strings.ContainsAny(t, "*?[") {
		for _, b := range bases {
			m, err := filepath.Glob(b)
			if err == nil && len(m) <= maxGlobMatches {
				out = append(out, m...)
			}
		}
	}
	return out
}

// maxGlobMatches bounds the expansion of one glob target.
const maxGlobMatches = 4096

// forbiddenArtifactPath says why writing the cleaned absolute path p is
// refused for session id, "" when it is not: it is inside another
// session's directory, the write removes a directory holding every
// session's (.winx/tmp, .winx, the root or above), or it is a reserved
// .winx-* name at the root.
func forbiddenArtifactPath(p, root, id string, removes bool) string {
	tmp := artifacts.Dir(root)
	if removes && (p == tmp || strings.HasPrefix(tmp, p+"/") || p == "/") {
		return "holds the temporary directories of every session"
	}
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return ""
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if strings.HasPrefix(parts[0], ".winx-") {
		return "is a reserved .winx-* path at the workspace root"
	}
	if len(parts) < 3 || parts[0] != ".winx" || parts[1] != "tmp" {
		return ""
	}
	other, ok := artifacts.SessionID(parts[2])
	if ok && other != id {
		return "is another session's temporary directory"
	}
	if !ok && strings.ContainsAny(parts[2], "*?[") {
		// An unexpanded pattern at the session level may match sessions
		// that do not exist yet; only one matching no session name passes.
		if m, _ := filepath.Match(parts[2], artifacts.SessionPrefix+strings.Repeat("0", 16)); m {
			return "may name another session's temporary directory"
		}
	}
	return ""
}
