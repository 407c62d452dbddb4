package tools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"winx/auth"
	"winx/codemap/shellcmd"
	"winx/guardian"
	"winx/mcp"
)

// Mode enforcement for the tools: the glue between the shell parser
// (codemap/shellcmd) and the decisions of auth.Mode.
//
// Where it applies:
//   - BashCommand "command", foreground or background: every simple command
//     of the line, before anything is sent to the shell.
//   - BashCommand "send_text" and "send_ascii" to the session's shell (not
//     to a background command): outside wcgw the text may land at the
//     prompt and run, so it is checked as a command line, even when a
//     program is reading input (a reply to a prompt is then checked as a
//     command too). At the prompt, readline edits the line with control
//     keys (Ctrl-A, Ctrl-P, Tab, ...) and a line without its end waits
//     there for the next command to join it, so typed text must be whole
//     lines of printable ASCII; control keys go alone and only those that
//     signal (Ctrl-C, Ctrl-D, Ctrl-Z, Ctrl-\). send_specials may not
//     send Key-up or Key-down, which recall earlier commands. Input to a
//     background command goes to that program, which was itself checked
//     when it started.
//   - Every checked line: a "!" that interactive bash would read as a
//     history expansion ("!!", "!-2", "!rm", "!?x?") is denied, since it
//     pastes earlier commands into the line after this check.
//   - EditFiles: architect writes nothing; code_writer writes only its
//     globs; verify_command is checked like a command, before any file is
//     written.
//
// A line that cannot be parsed is denied: the policy never allows what it
// could not read.
//
// What this does not cover: the names checked are the names typed, so an
// alias or shell function with an allowed name (from the user's rc file, or
// defined while the session was wcgw) runs whatever it holds; and lines
// are read with bash's grammar, so zsh-only syntax may be misread (most of
// it fails to parse and is denied).

// codeCommandNotAllowed is the errorCode of a denied command.
const codeCommandNotAllowed = "command_not_allowed"

// ModeError is a write the session's mode forbids.
type ModeError struct {
	Mode string
	Path string // "" when the mode forbids every write
}

func (e *ModeError) Error() string {
	switch {
	case e.Path == "":
		return fmt.Sprintf("tools: mode %s does not allow file changes", e.Mode)
	case e.Mode == ModeCodeWriter:
		return fmt.Sprintf("tools: mode %s does not allow writing %s (outside its allowed_globs)", e.Mode, e.Path)
	}
	return fmt.Sprintf("tools: mode %s does not allow writing %s (it changes no files)", e.Mode, e.Path)
}

// CommandParseError is a command line the policy could not read, so it
// was denied.
type CommandParseError struct {
	Mode string
	Err  *shellcmd.ParseError
}

func (e *CommandParseError) Error() string {
	return fmt.Sprintf("tools: mode %s denies a command that could not be parsed: %v", e.Mode, e.Err)
}
func (e *CommandParseError) Unwrap() error { return e.Err }

// Validate reports a mode that is unknown or a code_writer mode whose
// configuration is malformed. It wraps ErrInvalidMode.
func (m Mode) Validate() error {
	err := auth.Mode(m).Validate()
	if err == nil {
		return nil
	}
	var ce *auth.ModeConfigError
	if errors.As(err, &ce) {
		return fmt.Errorf("%w: %s", ErrInvalidMode, ce.Msg)
	}
	return fmt.Errorf("%w: %v", ErrInvalidMode, err)
}

func (m Mode) clone() Mode { return Mode(auth.Mode(m).Clone()) }

// allowsWrite reports whether the mode lets a file at the canonical path
// be changed; it returns nil or a *ModeError.
func (m Mode) allowsWrite(path string) error {
	var we *auth.WriteDeniedError
	if err := auth.Mode(m).AllowsWrite(path); errors.As(err, &we) {
		return &ModeError{Mode: we.Mode, Path: we.Path}
	}
	return nil
}

// checkCommandLine decides a whole command line in mode m; cwd is the
// shell's directory. It returns nil, a *auth.CommandDeniedError naming
// the first denied simple command, or a *CommandParseError. wcgw allows
// without parsing.
func (m Mode) checkCommandLine(line, cwd string) error {
	if m.Name == "" || m.Name == ModeWCGW {
		return nil
	}
	if i := historyExpansion(line); i >= 0 {
		return &auth.CommandDeniedError{Mode: m.Name, Command: line,
			Reason: fmt.Sprintf("%q at byte %d is a history expansion in an interactive shell, which would run earlier command text (write \\! or leave it out)", line[i:i+2], i)}
	}
	cmds, err := shellcmd.Parse(line)
	if err != nil {
		var pe *shellcmd.ParseError
		if !errors.As(err, &pe) {
			pe = &shellcmd.ParseError{Msg: err.Error()}
		}
		return &CommandParseError{Mode: m.Name, Err: pe}
	}
	for _, c := range cmds {
		if len(c.Args) > 0 && slices.Contains([]string{"cd", "pushd", "popd"}, c.Args[0]) {
			// Relative redirection targets after a cd name another
			// directory than the shell's; leave them unresolved (denied).
			cwd = ""
		}
	}
	for _, c := range cmds {
		if err := auth.Mode(m).AllowsInvocation(invocation(c), cwd); err != nil {
			return err
		}
	}
	return nil
}

// invocation converts a parsed command for auth, which takes plain words.
func invocation(c shellcmd.Command) auth.Invocation {
	inv := auth.Invocation{Args: c.Args, ArgDynamic: c.ArgDynamic, Assignments: c.Assignments}
	if len(c.Args) > 0 && c.Dynamic && (len(inv.ArgDynamic) == 0 || !inv.ArgDynamic[0]) {
		inv.ArgDynamic = append([]bool{true}, inv.ArgDynamic[min(1, len(inv.ArgDynamic)):]...)
	}
	for _, r := range c.Redirects {
		inv.Redirects = append(inv.Redirects, auth.Redirection{Op: r.Op, Target: r.Target, Dynamic: r.Dynamic, Body: r.Body})
	}
	return inv
}

// historyExpansion returns the offset of the first "!" that interactive
// bash could read as a history expansion, or -1. It errs on the side of
// finding one: quotes are not followed (history expansion happens inside
// double quotes, and readline's quoting rules differ from the parser's),
// so only a "!" before a blank, "=", "(" or the end, after "$", or escaped
// by a backslash is let through.
func historyExpansion(line string) int {
	for i := 0; i+1 < len(line); i++ {
		if line[i] != '!' || strings.IndexByte(" \t\r\n=(", line[i+1]) >= 0 || (i > 0 && line[i-1] == '$') {
			continue
		}
		backslashes := 0
		for j := i - 1; j >= 0 && line[j] == '\\'; j-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return i
		}
	}
	return -1
}

// signalKeys are the control bytes typed input may send outside wcgw, on
// their own: Ctrl-C, Ctrl-D, Ctrl-Z and Ctrl-\.
const signalKeys = "\x03\x04\x1a\x1c"

// typedInputProblem returns why text typed into the shell's foreground is
// refused outside wcgw, or "".
func typedInputProblem(text string) string {
	if strings.Trim(text, signalKeys) == "" {
		return ""
	}
	for i := 0; i < len(text); i++ {
		if c := text[i]; (c < 0x20 || c >= 0x7f) && c != '\n' && c != '\r' {
			return fmt.Sprintf("byte 0x%02x could edit or recall a command line at the prompt; outside wcgw typed text is printable ASCII and control keys go alone", c)
		}
	}
	if c := text[len(text)-1]; c != '\n' && c != '\r' {
		return "typed text must end with a line end (submit); an unfinished line would wait at the prompt and join the next command"
	}
	return ""
}

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
	var ce *auth.CommandDeniedError
	var pe *CommandParseError
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
// anything reaches the shell; nil lets the action run.
func bashGate(ctx context.Context, sess *Session, term guardian.Terminal, act *action) *mcp.CallToolResult {
	m := sess.Mode()
	if m.Name == "" || m.Name == ModeWCGW {
		return nil
	}
	var line string
	typed := false
	switch {
	case act.Type == "command" && act.Command != nil:
		line = *act.Command
	case act.Type == "send_text" && act.SendText != nil && act.BgCommandID == "":
		line, typed = *act.SendText, true
		if act.Submit {
			line += "\r"
		}
	case act.Type == "send_ascii" && act.BgCommandID == "":
		b := make([]byte, 0, len(act.SendASCII))
		for _, v := range act.SendASCII {
			b = append(b, byte(min(max(v, 0), 0xff)))
		}
		line, typed = string(b), true
	case act.Type == "send_specials" && act.BgCommandID == "":
		for _, k := range act.SendSpecials {
			if k == "Key-up" || k == "Key-down" {
				return commandDenied(BashCommandTool, &auth.CommandDeniedError{Mode: m.Name, Command: k,
					Reason: "at the prompt it recalls an earlier command"}, "Nothing was sent.")
			}
		}
		return nil
	default:
		return nil
	}
	if typed {
		if reason := typedInputProblem(line); reason != "" {
			return commandDenied(BashCommandTool, &auth.CommandDeniedError{Mode: m.Name, Command: strconv.Quote(line), Reason: reason}, "Nothing was sent.")
		}
		// The terminal turns CR into a line end, as readline does.
		line = strings.ReplaceAll(strings.Trim(line, signalKeys), "\r", "\n")
	}
	if strings.TrimSpace(line) == "" {
		return nil
	}
	if err := m.checkCommandLine(line, term.Cwd(ctx)); err != nil {
		return commandDenied(BashCommandTool, err, "Nothing ran.")
	}
	return nil
}

// editGate checks an EditFiles call against the session's mode before
// anything is planned or written: architect changes no files, and
// verify_command must be a command the mode runs. nil lets the call go on;
// code_writer's globs are checked per planned file.
func (t *editTool) editGate(ctx context.Context, sess *Session, in *editInput) *mcp.CallToolResult {
	m := sess.Mode()
	if m.Name == ModeArchitect {
		path := ""
		if len(in.Files) > 0 {
			path = in.Files[0].FilePath
		}
		return t.failure(in, &ModeError{Mode: m.Name, Path: path})
	}
	if in.VerifyCommand == "" {
		return nil
	}
	cwd := sess.Root
	if sh := sess.Shell(); sh != nil {
		cwd = sh.Cwd(ctx)
	}
	if err := m.checkCommandLine(in.VerifyCommand, cwd); err != nil {
		return commandDenied(EditFilesTool, fmt.Errorf("verify_command: %w", err), "Nothing was written.")
	}
	return nil
}

// globMatch is auth.GlobMatch: filepath.Match with "**" for any number of
// whole path segments.
func globMatch(pattern, path string) bool { return auth.GlobMatch(pattern, path) }
