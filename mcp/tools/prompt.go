package tools

import (
	"context"
	"strings"

	"winx/mcp"
)

// Typing into an idle shell. Text sent while no command runs lands at the
// shell's prompt: an agent starts a REPL by typing its name, or answers a
// prompt after the command that asked already ended. A whole line (one
// that ends with Enter) is what a person at the prompt would run, so it
// runs as a command: a generation of its own, its output and exit code,
// and the same mode policy and temporary-artifact rules as a command
// action (bashTool.handle sets bashRun.atPrompt). Nothing else is typed
// there:
//
//   - Text without a final Enter would wait in the line editor, and the
//     next command clears the line before it is typed: it would be lost
//     silently, or, were it kept, join the next command unchecked (a
//     command split over two calls). It is refused with the call that
//     runs it.
//   - Control bytes edit or recall a line in the line editor (Ctrl-U,
//     Ctrl-P, Tab completion): what would run is not what was sent, so a
//     line holding them is refused.
//   - Ctrl-D at the prompt would end the shell: refused with the rest.

// typeAtPrompt answers text sent to the shell while no command runs.
func (r *bashRun) typeAtPrompt(ctx context.Context, text string) *mcp.CallToolResult {
	line := strings.ReplaceAll(text, "\r", "\n")
	command := strings.TrimRight(line, "\n")
	switch {
	case r.atPrompt == nil:
	case strings.TrimSpace(command) == "":
		return r.notRunning("No command is running; the shell waits at its prompt and the text holds no command, so nothing was typed.", "")
	case !strings.HasSuffix(line, "\n"):
		return r.notRunning("No command is running; the shell waits at its prompt. Text typed there runs as a command only as a whole line, ending with Enter; this text has none, so nothing was typed (a partial line would be lost or join the next command).", command)
	case strings.ContainsFunc(command, func(c rune) bool { return c < 0x20 && c != '\t' && c != '\n' || c == 0x7f }):
		return r.notRunning("No command is running; the shell waits at its prompt, where control keys edit or recall the line, so text holding them is not typed there. Nothing was typed.", "")
	default:
		return r.atPrompt(ctx, command)
	}
	return r.notRunning("No command is running in this shell; run one with action_json type command.", "")
}

// notRunning refuses input to an idle shell; command, when not "", is the
// command action the text stands for, offered as the next call.
func (r *bashRun) notRunning(msg, command string) *mcp.CallToolResult {
	env := mcp.Envelope{Status: mcp.StatusNotFound, Tool: BashCommandTool, ErrorCode: codeCommandNotRunning, Retryable: true, Message: msg}
	if command != "" {
		env.NextAction = &mcp.NextAction{Tool: BashCommandTool, Instruction: "Run the text as a command (it is checked as one).",
			Arguments: map[string]any{"action_json": map[string]any{"type": actCommand, "command": command}, "thread_id": r.threadID, "workspace_root": r.root}}
	}
	return env.Result(env.Message)
}
