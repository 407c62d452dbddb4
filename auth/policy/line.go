package policy

// Whole command lines, and text typed into the shell's foreground.

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"winx/auth/policy/shellparse"
)

// restricts reports whether the mode checks anything: wcgw and the zero
// mode (the session default) allow every command (Restricts, the mode
// table).
func (m Mode) restricts() bool { return m.Restricts() }

// CheckLine decides a whole command line in mode m; cwd is the shell's
// directory. It returns nil, a *CommandDeniedError naming the first denied
// simple command, or a *CommandParseError. wcgw allows without parsing.
func (m Mode) CheckLine(line, cwd string) error {
	if !m.restricts() {
		return nil
	}
	if i := historyExpansion(line); i >= 0 {
		return &CommandDeniedError{Mode: m.Name, Command: line,
			Reason: fmt.Sprintf("%q at byte %d is a history expansion in an interactive shell, which would run earlier command text (write \\! or leave it out)", line[i:i+2], i)}
	}
	cmds, err := shellparse.Parse(line)
	if err != nil {
		var pe *shellparse.ParseError
		if !errors.As(err, &pe) {
			pe = &shellparse.ParseError{Msg: err.Error()}
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
		if err := m.AllowsCommand(c, cwd); err != nil {
			return err
		}
	}
	return nil
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

// TypedLine checks text typed into the shell's foreground (send_text with
// its submitting CR, send_ascii) and returns the command line it would
// submit at the prompt, for CheckLine: signal keys removed and CR read as a
// line end, as the terminal and readline do. Outside wcgw text that could
// edit or recall a line at the prompt, or that does not end a line, is a
// *CommandDeniedError naming the quoted text. wcgw returns text unchanged.
func (m Mode) TypedLine(text string) (string, error) {
	if !m.restricts() {
		return text, nil
	}
	if reason := typedInputProblem(text); reason != "" {
		return "", &CommandDeniedError{Mode: m.Name, Command: strconv.Quote(text), Reason: reason}
	}
	// The terminal turns CR into a line end, as readline does.
	return strings.ReplaceAll(strings.Trim(text, signalKeys), "\r", "\n"), nil
}

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

// CheckKeys decides named keys sent to the shell's foreground
// (send_specials): outside wcgw Key-up and Key-down are refused, since at
// the prompt they recall earlier commands. It returns nil or a
// *CommandDeniedError naming the key.
func (m Mode) CheckKeys(keys []string) error {
	if !m.restricts() {
		return nil
	}
	for _, k := range keys {
		if k == "Key-up" || k == "Key-down" {
			return &CommandDeniedError{Mode: m.Name, Command: k, Reason: "at the prompt it recalls an earlier command"}
		}
	}
	return nil
}
