package tools

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"

	"winx/auth/policy"
	"winx/auth/policy/shellparse"
	"winx/evidence/redact"
	"winx/guardian/artifacts"
	"winx/mcp"
	"winx/mcp/session"
)

// Temporary-artifact policy of BashCommand (docs/tools.md, "BashCommand"). Each
// session writes its scratch files under WINX_TEMP_DIR,
// <root>/.winx/tmp/session-<id>/, within the budgets of package
// guardian/artifacts. Before a command action (foreground or background)
// runs, tempArtifacts.check
//
//  1. rejects statically visible writes into another session's directory,
//     into .winx or .winx/tmp themselves (for removing commands), or to a
//     reserved <root>/.winx-* path (policy.ArtifactDirs.ForbiddenWrite
//     says which commands and redirects count as writes); a line that does
//     not parse is left to the mode policy;
//  2. measures the workspace's .winx/tmp (reclaiming stale directories of
//     sessions that are not live when it is over the high-water mark) and,
//     while this session is over a budget, or the workspace is and this
//     session holds artifacts of its own, lets only cleanup commands run
//     (policy.IsCleanup). A session with nothing on disk cannot help a
//     full workspace and is not blocked. The scans and that decision are
//     artifacts.Monitor's and artifacts.Usage.Blocking's.
//
// Both refusals are status denied with errorCode temporary_artifact_policy;
// the command never reaches the shell.
const codeTemporaryArtifactPolicy = "temporary_artifact_policy"

// tempArtifacts is BashCommand's temporary-artifact gate: the scans and
// budget decisions are guardian/artifacts' (artifacts.Monitor,
// Usage.Blocking); it builds the refusals and warnings. Its zero value is
// ready to use.
type tempArtifacts struct {
	monitor artifacts.Monitor
}

// check is BashCommand's hook before a command action runs: nil lets it
// run, otherwise the result is the refusal.
func (g *tempArtifacts) check(ctx context.Context, reg *session.Sessions, sess *session.Session, act *action, threadID, root string) *mcp.CallToolResult {
	if act.Type != actCommand || act.Command == nil {
		return nil
	}
	id, ok := artifacts.SessionID(filepath.Base(sess.TempDir))
	if !ok {
		panic("tools: session temp dir " + sess.TempDir + " is not named by TempArtifactDir")
	}
	cwd := sess.Root
	if sh := sess.Shell(); sh != nil {
		if c := sh.Cwd(ctx); c != "" {
			cwd = c
		}
	}
	cmds, perr := shellparse.Parse(*act.Command)
	if perr == nil {
		dirs := policy.ArtifactDirs{Root: sess.Root, Dir: artifacts.Dir(sess.Root), Own: sess.TempDir, SessionID: artifacts.SessionID}
		var we *policy.ArtifactWriteError
		if errors.As(dirs.ForbiddenWrite(cmds, cwd), &we) {
			return artifactWriteDenied(we, sess)
		}
	}
	if perr == nil && policy.IsCleanup(cmds) {
		return nil // cleanup runs whatever the budget says
	}
	// Sessions of other Winx processes on the same workspace are not live
	// here: only their 24-hour idle time protects them from Reclaim.
	u, err := g.monitor.Usage(sess.Root, id, reg.Now(), func() map[string]bool { return artifacts.LiveIDs(reg.TempDirs(sess.Root)) })
	if err != nil {
		return artifactScanDenied(err, sess)
	}
	over := u.Blocking(id, nil)
	if over == nil {
		return nil
	}
	return artifactBudgetDenied(over, u, u.Session(id), sess, threadID, root)
}

// tempArtifactData is the temporary-artifact usage every BashCommand
// answer carries: the session's files and bytes on the audit after the
// action, and the stale directories this server's reclaims deleted, of the
// session's own (its idle helpers) and in the whole workspace.
//
// It is in an answer only when something is non-zero, and then holds only
// the non-zero parts: zero counters on every command cost the model bytes
// and say nothing.
type tempArtifactData struct {
	Files              int              `json:"files,omitempty"`
	Bytes              int64            `json:"bytes,omitempty"`
	Reclaimed          *artifacts.Freed `json:"reclaimed,omitempty"`
	WorkspaceReclaimed *artifacts.Freed `json:"workspace_reclaimed,omitempty"`
}

// newTempArtifactData returns the usage for an answer, nil when all zero.
func newTempArtifactData(files int, bytes int64, own, all artifacts.Freed) *tempArtifactData {
	d := tempArtifactData{Files: files, Bytes: bytes}
	if own != (artifacts.Freed{}) {
		d.Reclaimed = &own
	}
	if all != (artifacts.Freed{}) {
		d.WorkspaceReclaimed = &all
	}
	if d == (tempArtifactData{}) {
		return nil
	}
	return &d
}

// annotate is BashCommand's hook after every action: it feeds the
// session's command history, audits the temporary artifacts (a new scan,
// so what the action wrote at run time, which no preflight saw, counts
// from the next check on, and a session at artifacts.ReclaimLevel frees
// its own stale helpers), puts the usage into the answer's data and, for
// commands, adds a warning when a budget is at artifacts.WarnLevel or more:
// the agent hears of the limit before commands are refused.
func (g *tempArtifacts) annotate(res *mcp.CallToolResult, reg *session.Sessions, act *action, sess *session.Session, red *redact.Redactor) *mcp.CallToolResult {
	id, ok := artifacts.SessionID(filepath.Base(sess.TempDir))
	if !ok {
		return res
	}
	// An audit that fails (an unsafe .winx/tmp) leaves the last scan; the
	// next check refuses with the reason.
	_, auditErr := g.monitor.Audit(sess.Root, id, reg.Now(), func() map[string]bool { return artifacts.LiveIDs(reg.TempDirs(sess.Root)) })
	if res == nil {
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
	noteCommand(sess, act, env.Status, data, red)
	if s, found := g.monitor.Session(sess.Root, id); found && auditErr == nil {
		own, all := g.monitor.Freed(sess.Root, id)
		data.TempArtifacts = newTempArtifactData(s.Files, s.Bytes, own, all)
	}
	env.Data = data
	p, warn := g.monitor.Warning(sess.Root, id)
	if act.Type != actCommand || !warn {
		// Only the data changed: the text blocks stay as they are.
		out := *res
		out.StructuredContent = env
		return &out
	}
	data.TempArtifactUse = int(math.Round(p * 100))
	env.Data = data
	note := fmt.Sprintf("note: temporary artifacts use %d%% of a budget (%s); remove what you no longer need from %s before commands are refused",
		data.TempArtifactUse, artifactBudgets, sess.TempDir)
	text := env.Body()
	if text != "" {
		text += "\n"
	}
	return env.Result(text+note, res.Content[1:]...)
}

// noteCommand feeds the session's command history (ContextSave's terminal
// state) from an answer about a foreground command: a started command
// brings its text, a later answer about the same generation its end. The
// text is redacted with red first, as everything the model sees: the
// history is kept on disk (session.UseHistoryDir), which must hold no
// secret the output would not show.
func noteCommand(sess *session.Session, act *action, status mcp.Status, data bashData, red *redact.Redactor) {
	if data.BgCommandID != "" || (data.Generation == 0 && data.ExitCode == nil) {
		return
	}
	rec := session.CommandRecord{Generation: data.Generation, Running: status == mcp.StatusRunning, Cwd: data.Cwd, At: time.Now()}
	if act.Type == actCommand && act.Command != nil && !act.IsBackground {
		rec.Command, _ = red.String(*act.Command)
	}
	if data.ExitCode != nil {
		rec.ExitCode = *data.ExitCode
	}
	sess.NoteCommand(rec)
}

// artifactBudgets names the limits for messages.
var artifactBudgets = fmt.Sprintf("session %s and %d files, helper %s, workspace %s",
	mib(artifacts.MaxSessionBytes), artifacts.MaxSessionFiles, mib(artifacts.MaxHelperBytes), mib(artifacts.MaxWorkspaceBytes))

// mib formats bytes as MiB with one decimal.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func artifactBudgetDenied(over *artifacts.OverBudgetError, u *artifacts.Usage, s *artifacts.Session, sess *session.Session, threadID, root string) *mcp.CallToolResult {
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
		mib(u.Bytes), mib(artifacts.MaxWorkspaceBytes), policy.CleanupCommandList)
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
				"action_json":    map[string]any{"type": actCommand, "command": cmd},
				"thread_id":      threadID,
				"workspace_root": root,
			},
		},
	}
	return env.Result(msg)
}

func artifactScanDenied(err error, sess *session.Session) *mcp.CallToolResult {
	msg := fmt.Sprintf("Temporary artifacts could not be measured, so the command was not run: %v. "+
		"Winx does not count or clean through a symlinked or unreadable .winx/tmp; make %s a plain directory Winx can read (or remove it). "+
		"Until then only cleanup commands run: %s.", err, filepath.Dir(sess.TempDir), policy.CleanupCommandList)
	env := mcp.Envelope{Status: mcp.StatusDenied, Tool: BashCommandTool, ErrorCode: codeTemporaryArtifactPolicy, Retryable: true, Message: msg}
	return env.Result(msg)
}

// shellQuote quotes s for bash as one word.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func artifactWriteDenied(w *policy.ArtifactWriteError, sess *session.Session) *mcp.CallToolResult {
	msg := fmt.Sprintf("The command was not run: %s writes %s (%s), which %s. "+
		"Each session writes temporary files only under its own WINX_TEMP_DIR, %s.",
		w.Command, w.Target, w.Path, w.Reason, sess.TempDir)
	env := mcp.Envelope{Status: mcp.StatusDenied, Tool: BashCommandTool, ErrorCode: codeTemporaryArtifactPolicy, Retryable: true, Message: msg}
	return env.Result(msg)
}
