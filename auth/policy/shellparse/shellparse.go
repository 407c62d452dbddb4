// Package shellparse finds every simple command a bash command line would
// run: the parsed-command model that package auth/policy decides on (session
// modes, temporary-artifact writes). It reads bash syntax statically: it
// runs, expands and evaluates nothing, and it does not decide what is
// allowed (package policy does).
//
// The reading is conservative. Commands nested anywhere are reported: in
// pipelines and lists, $( ), backticks, ( ) subshells, { ; } groups, <( )
// and >( ), compound commands, function bodies, unquoted heredoc bodies
// (their expansions run), the strings of bash -c (and sh, zsh, dash, ksh,
// su -c, watch), the joined arguments of eval, the action of trap, the commands run by find
// -exec, and the commands run by wrappers (env, sudo, nice, nohup, time,
// timeout, xargs, command, builtin, exec, stdbuf, ionice, watch, setsid,
// doas, coproc), which are reported together with the wrapper. A word whose
// value is only known at run time is marked dynamic rather than guessed.
// Where a wrapper's options are known in full (xargs, nice, timeout,
// stdbuf) they are read as getopt_long reads them, abbreviations and
// optional values included, and an unknown or ambiguous option is a
// *ParseError: where the wrapped command starts depends on it. A for or
// select loop is reported when its word list holds an expansion or its
// variable is not a lowercase name (it could be one the shell reads, PS1).
//
// Anything this reader does not understand is a *ParseError, never a
// partial answer: Parse returns no commands with an error, so a policy built
// on it cannot allow a line it failed to read. Deliberate deviations from
// bash: an unterminated heredoc, a trailing backslash inside quotes and
// constructs bash accepts only with options (extglob patterns, "for x in a;
// { ...; }") are errors; single quotes inside ${ } within double quotes are
// read as quotes.
package shellparse

import (
	"fmt"
)

// Limits of Parse.
const (
	// MaxLineBytes bounds the command line Parse reads.
	MaxLineBytes = 64 << 10
	// MaxDepth bounds nesting: substitutions, compound commands, wrapped
	// commands and the strings of bash -c and eval, together.
	MaxDepth = 64
	// MaxCommands bounds the commands one line may report.
	MaxCommands = 1 << 14
)

// Redirect is one redirection of a command.
type Redirect struct {
	// Op is the operator with its file descriptor prefix as written: ">",
	// ">>", "<", "2>", "&>", "&>>", ">|", "<>", ">&", "2>&", "<&", "<<",
	// "<<-", "<<<", "{fd}>".
	Op string
	// Target is the word after the operator, quotes removed; for a heredoc
	// it is the delimiter.
	Target string
	// Dynamic reports that the target holds an expansion, a glob or a
	// tilde, so the file it names is only known at run time.
	Dynamic bool
	// Body is the body of a heredoc whose delimiter is unquoted, as
	// written: its expansions are evaluated (their commands are reported
	// on their own). It is "" for a quoted delimiter, whose body is data.
	Body string

	heredoc int // 1 + index of the body in output.bodies; 0 if no heredoc
}

// Command is one simple command.
type Command struct {
	// Args are the words with quotes removed; Args[0] is the command name,
	// after any leading NAME=value assignments. Expansions keep their source
	// text ("$(date)", "$HOME"). Args is empty for a line of only
	// assignments or redirections (those still write), and for the
	// redirections of a compound command ("{ ls; } > f").
	//
	// Two compound forms are reported as commands because they evaluate
	// arithmetic: "[[ ... ]]" (Args from "[[" to "]]") and "(( expr ))"
	// (Args "((", the expression, "))").
	Args []string
	// ArgDynamic[i] reports that Args[i] holds an expansion, a glob, a
	// brace pattern or a tilde; its run-time value can differ from the text.
	ArgDynamic []bool
	// Dynamic reports that the command name is not known statically (it
	// comes from an expansion, or it is the string of bash -c or eval that
	// holds an expansion); Args then hold what is known.
	Dynamic bool
	// Redirects are the command's redirections in order.
	Redirects []Redirect
	// Assignments are the leading NAME=value words (also those given to
	// env and sudo for the command they run).
	Assignments []string
}

// ArgIsDynamic reports whether Args[i] is only known at run time. The name
// also counts as dynamic when Dynamic is set, and so does a word without an
// ArgDynamic entry: Parse fills every entry, and a command built by hand
// that leaves one out is read the safe way for an allowlist.
func (c Command) ArgIsDynamic(i int) bool {
	return i >= len(c.ArgDynamic) || c.ArgDynamic[i] || (i == 0 && c.Dynamic)
}

// ParseError is a line Parse could not read. Offset is a byte offset into
// the line (for text inside a bash -c string or backticks, the offset of
// that string).
type ParseError struct {
	Offset int
	Msg    string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("shell: parse error at byte %d: %s", e.Offset, e.Msg)
}

// Parse returns every simple command of line in source order (a wrapper
// before the command it runs, a substitution before the command whose word
// holds it). On error it returns no commands and a *ParseError.
func Parse(line string) (cmds []Command, err error) {
	if len(line) > MaxLineBytes {
		return nil, &ParseError{Offset: MaxLineBytes, Msg: fmt.Sprintf("line longer than %d bytes", MaxLineBytes)}
	}
	out := &output{}
	defer func() {
		if r := recover(); r != nil {
			pe, ok := r.(*ParseError)
			if !ok {
				panic(r)
			}
			// Offsets inside rebuilt strings (bash -c, eval) are
			// approximate; keep them inside the line.
			pe.Offset = max(0, min(pe.Offset, len(line)))
			cmds, err = nil, pe
		}
	}()
	parseString(line, 0, 0, out)
	for _, c := range out.cmds {
		for i := range c.Redirects {
			if r := &c.Redirects[i]; r.heredoc > 0 {
				r.Body = out.bodies[r.heredoc-1]
				r.heredoc = 0
			}
		}
	}
	return out.cmds, nil
}

// output collects the commands of one Parse call, across nested parsers.
type output struct {
	cmds []Command
	// bodies are the unquoted heredoc bodies, in the order of their
	// redirections; heredoc bodies are read after their command is added.
	bodies []string
}

// parseString parses src as a complete command line; base is its offset
// in the outermost line and depth the nesting it sits at.
func parseString(src string, base, depth int, out *output) {
	p := &parser{src: src, base: base, depth: depth, out: out}
	p.checkDepth(0)
	p.list(func() bool { return false })
	p.skipBlanks()
	if p.pos < len(p.src) {
		p.fail(p.pos, "unexpected "+p.describe())
	}
	if len(p.pending) > 0 {
		p.fail(p.pos, fmt.Sprintf("heredoc delimited by %q is not terminated", p.pending[0].delim))
	}
}
