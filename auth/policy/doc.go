// Package policy owns the command policy of a session: on one parse of a
// command line (package shellparse) it decides what the session's mode
// (wcgw, architect, code_writer) lets run and write, which typed input may
// reach the shell's prompt, which writes the temporary-artifact rules refuse
// and which commands count as cleanup, and whether a trailing "| tail" may be
// dropped. It decides only: it runs nothing, keeps no state and builds no
// tool answers (mcp/tools turns its typed errors into envelopes), and it does
// not measure temporary-artifact budgets (guardian/artifacts does).
//
// Session modes: what a session may write and which commands it may run.
// Each mode is one row of the mode table (modetable.go), which every other
// package reads for the mode's names, rules, shell profile and summary.
//
//   - wcgw: everything the path policy allows.
//   - architect: no writes; only the read-only commands of readonly.go,
//     with no output redirection other than to /dev/null, /dev/stdout or
//     /dev/stderr.
//   - code_writer: writes only to paths matching AllowedGlobs (or all);
//     runs only AllowedCommands (or all), compared word by word, so "ls"
//     does not allow "lsof" and "git status" allows "git status -s" but not
//     "git statusx"; redirection targets must match AllowedGlobs.
//
// Outside wcgw a command whose name is only known at run time ($cmd,
// $(...), a glob) is denied, and so are assignments to variables that make
// the shell or a program run something else (PATH, PROMPT_COMMAND, PS0-PS4,
// BASH_ENV, LD_*, GIT_*, ...), by any spelling: NAME=value words, the
// NAME=value arguments of declare and its kin, ${NAME:=value} and
// ${NAME=value} in any word of any command (":" and "true" included, which
// code_writer always runs; bash assigns wherever it expands), the names
// that read, printf -v, mapfile, readarray and getopts assign, and for and
// select loop variables. A prompt assigned "$(cmd)" as text runs cmd at the
// next prompt, after every check. So is every place where bash evaluates a
// variable's value as code: arithmetic (a value "a[$(cmd)]" runs cmd when read as a number),
// indirect expansion ${!x}, prompt expansion ${x@P}, subscripted names.
// Values can come from anywhere (a file, an earlier command), so these are
// refused where they are read, in both modes.
//
// Where the tools apply it:
//   - BashCommand "command", foreground or background: every simple command
//     of the line (CheckLine), before anything is sent to the shell.
//   - BashCommand "send_text" and "send_ascii" to the session's shell (not
//     to a background command): outside wcgw the text may land at the
//     prompt and run, so it is checked as a command line (TypedLine, then
//     CheckLine), even when a program is reading input (a reply to a prompt
//     is then checked as a command too). At the prompt, readline edits the
//     line with control keys (Ctrl-A, Ctrl-P, Tab, ...) and a line without
//     its end waits there for the next command to join it, so typed text
//     must be whole lines of printable ASCII; control keys go alone and only
//     those that signal (Ctrl-C, Ctrl-D, Ctrl-Z, Ctrl-\). send_specials may
//     not send Key-up or Key-down, which recall earlier commands
//     (CheckKeys). Input to a background command goes to that program,
//     which was itself checked when it started.
//   - Every checked line: a "!" that interactive bash would read as a
//     history expansion ("!!", "!-2", "!rm", "!?x?") is denied, since it
//     pastes earlier commands into the line after this check.
//   - EditFiles: architect writes nothing; code_writer writes only its
//     globs (AllowsWrite); verify_command is checked like a command, before
//     any file is written.
//
// Options are read the way each tool reads them (options.go): the tools
// architect runs with options that write or run programs have a table of
// all their options, parsed as getopt_long does (unique prefixes of long
// options, "--opt=value", required and optional values, attached and
// clustered short options, "--"), and an unknown or ambiguous option is
// refused. go and git keep closed lists of reading subcommands and flags
// (readonly.go).
//
// A line that cannot be parsed is denied: the policy never allows what it
// could not read.
//
// What this does not cover: the names checked are the names typed, so an
// alias or shell function with an allowed name (from the user's rc file, or
// defined while the session was wcgw) runs whatever it holds; and lines
// are read with bash's grammar, so zsh-only syntax may be misread (most of
// it fails to parse and is denied).
package policy
