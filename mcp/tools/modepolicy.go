package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"winx/auth/policy"
	"winx/mcp"
	"winx/mcp/session"
)

// Mode enforcement for the tools: BashCommand and EditFiles ask package
// auth/policy (which documents where each check applies and what it does
// not cover) and answer its typed denials here.

// Modes of a session (docs/tools.md, "Initialize"). Initialize records them; the
// tools that run commands and write files enforce them through auth/policy.
const (
	ModeWCGW       = policy.ModeWCGW
	ModeArchitect  = policy.ModeArchitect
	ModeCodeWriter = policy.ModeCodeWriter
)

// Mode is a session's mode, declared once by auth/policy. The zero Mode
// (Name "") means "keep the current mode" to Attach.
type Mode = policy.Mode

// codeCommandNotAllowed is the errorCode of a denied command.
const codeCommandNotAllowed = "command_not_allowed"

// commandDenial is the data of a denied command.
type commandDenial struct {
	Mode       string `json:"mode"`
	Command    string `json:"denied_command,omitempty"`
	Reason     string `json:"reason"`
	ParseError string `json:"parse_error,omitempty"`
}

// commandDenied answers a command the mode denied. nothing says what did
// not happen ("Nothing ran.", "Nothing was written.").
func commandDenied(tool string, err error, nothing string) *mcp.CallToolResult {
	env := mcp.Envelope{Status: mcp.StatusDenied, Tool: tool, ErrorCode: codeCommandNotAllowed}
	var ce *policy.CommandDeniedError
	var pe *policy.CommandParseError
	switch {
	case errors.As(err, &ce):
		env.Message = fmt.Sprintf("Mode %s does not allow the command %q: %s. %s", ce.Mode, ce.Command, ce.Reason, nothing)
		env.Data = commandDenial{Mode: ce.Mode, Command: ce.Command, Reason: ce.Reason}
	case errors.As(err, &pe):
		env.Message = fmt.Sprintf("The command could not be parsed (%s at byte %d), so mode %s denies it. %s",
			pe.Err.Msg, pe.Err.Offset, pe.Mode, nothing)
		env.Data = commandDenial{Mode: pe.Mode, Reason: "could not be parsed", ParseError: pe.Err.Error()}
	default:
		return toolFailure(tool, err)
	}
	env.Message += " If the user wants it run, they can change the mode (Initialize user_asked_mode_change)."
	return env.Result(env.Message)
}

// bashGate checks a BashCommand action against the session's mode before
// anything reaches the shell; nil lets the action run. threadID and root
// are the call's, for a next action.
func bashGate(ctx context.Context, sess *session.Session, term terminal, act *action, threadID, root string) *mcp.CallToolResult {
	m := sess.Mode()
	if !m.Restricts() {
		return nil
	}
	spec, ok := lookupAction(act.Type)
	if !ok || spec.mode == nil {
		return nil
	}
	in := spec.mode(act)
	line, typed := in.text, in.kind == inputTyped
	switch in.kind {
	case inputNone:
		return nil
	case inputKeys:
		if err := m.CheckKeys(in.keys); err != nil {
			return commandDenied(BashCommandTool, err, "Nothing was sent.")
		}
		return nil
	}
	if typed {
		var err error
		if line, err = m.TypedLine(line); err != nil {
			res := commandDenied(BashCommandTool, err, "Nothing was sent.")
			if next := submitNext(act, threadID, root); next != nil {
				// The corrected call is the same text submitted (it is
				// checked again, as a whole line).
				env := res.StructuredContent.(mcp.Envelope)
				env.NextAction = next
				res = env.Result(env.Body())
			}
			return res
		}
	}
	if strings.TrimSpace(line) == "" {
		return nil
	}
	if err := m.CheckLine(line, term.Cwd(ctx)); err != nil {
		return commandDenied(BashCommandTool, err, "Nothing ran.")
	}
	return nil
}

// editGate checks an EditFiles call against the session's mode before
// anything is planned or written: architect changes no files, and
// verify_command must be a command the mode runs. nil lets the call go on;
// code_writer's globs are checked per planned file.
func (t *editTool) editGate(ctx context.Context, sess *session.Session, in *editInput) *mcp.CallToolResult {
	m := sess.Mode()
	if spec, ok := m.Spec(); ok && spec.Files == policy.FilesNone {
		path := ""
		if len(in.Files) > 0 {
			path = in.Files[0].FilePath
		}
		return t.failure(in, &policy.WriteDeniedError{Mode: m.Name, Path: path})
	}
	if in.VerifyCommand == "" {
		return nil
	}
	cwd := sess.Root
	if sh := sess.Shell(); sh != nil {
		cwd = sh.Cwd(ctx)
	}
	if err := m.CheckLine(in.VerifyCommand, cwd); err != nil {
		return commandDenied(EditFilesTool, fmt.Errorf("verify_command: %w", err), "Nothing was written.")
	}
	return nil
}

// submitNext is the call that sends send_text's text as a whole line
// (submit true), when that is all it lacks outside wcgw: printable ASCII
// without a line end. nil otherwise.
func submitNext(act *action, threadID, root string) *mcp.NextAction {
	if act.Type != actSendText || act.SendText == nil || act.Submit || *act.SendText == "" {
		return nil
	}
	for _, c := range []byte(*act.SendText) {
		if c < 0x20 || c >= 0x7f {
			return nil
		}
	}
	return &mcp.NextAction{Tool: BashCommandTool, Instruction: "Send the text as a whole line (submit true); outside wcgw it is checked as a command.",
		Arguments: map[string]any{"action_json": map[string]any{"type": actSendText, "send_text": *act.SendText, "submit": true}, "thread_id": threadID, "workspace_root": root}}
}
