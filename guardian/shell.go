package guardian

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// Shell names accepted in Options.Shell.
const (
	ShellBash = "bash"
	ShellZsh  = "zsh"
)

// rcBash is the rc file of a session's bash. It sources the user's
// ~/.bashrc (never modifying it), then installs the completion marker in a
// read-only PROMPT_COMMAND and a read-only hook function, so a command that
// assigns PROMPT_COMMAND or redefines the hook cannot silence completion.
// The start marker is a read-only function too (__winx_s, see commandLine).
// The hook prints the nonce __winx_s was last given (see marker.go), kept
// in __winx_n: a shell variable, never exported (export -n again on every
// command, as set -a or a command may have exported it), so no program the
// shell starts finds it in its environment. Until the first command it
// holds the rc file's start nonce, which this file, readable by the
// session's programs, gives away: it is no use after the first prompt.
// The builtins are called as builtins, so a function named printf or
// export cannot stand in for them.
// PS1 is blanked; if a command sets it, its text follows the marker and is
// discarded with the rest of the prompt. Echo is off: the model sees what
// commands print, not what was typed.
//
// History: the session's shell keeps no history file. HISTFILE is unset
// and made read-only before the user's ~/.bashrc runs, so its assignment
// of HISTFILE fails (bash goes on with the next line; the message is
// printed before the first prompt and never reaches the model) and a
// `history -a` in it, or in a DEBUG trap it sets, has no file to write.
// After it, history recording is turned off. The typed wrapper lines never
// land in the user's ~/.bash_history.
const rcBash = `# winx session rc (generated; the user's own files are not modified)
unset HISTFILE; readonly HISTFILE
@STARTUP@
set +o history
stty -echo 2>/dev/null
PS1=''; PS2=''; PS3=''
export PAGER=cat GIT_PAGER=cat MANPAGER=cat SYSTEMD_PAGER= TERM=xterm-256color
__winx_n='@NONCE@'
__winx_hook() { builtin printf '\033]6973;W;%s;%d;%s\007' "$__winx_n" "$1" "$PWD"; }
__winx_s() { __winx_n=$1; builtin export -n __winx_n; builtin printf '\033]6973;S;%s\007' "$1"; }
PROMPT_COMMAND='__winx_hook $?'
readonly -f __winx_hook __winx_s
readonly PROMPT_COMMAND
`

// The start-up files rcBash sources where it says @STARTUP@: the user's
// ~/.bashrc, or for a login session (WINX_SHELL_ARGS --login or -l) what
// bash reads as a login shell: /etc/profile, then the first of
// ~/.bash_profile, ~/.bash_login and ~/.profile (which usually source
// ~/.bashrc themselves). bash itself cannot be started as a login shell:
// a login shell ignores --rcfile, so the marker would never be installed.
// The session's `shopt login_shell` therefore says off.
const (
	bashStartupRC    = `if [ -f "$HOME/.bashrc" ]; then . "$HOME/.bashrc"; fi`
	bashStartupLogin = `if [ -f /etc/profile ]; then . /etc/profile; fi
for __winx_f in "$HOME/.bash_profile" "$HOME/.bash_login" "$HOME/.profile"; do
  if [ -f "$__winx_f" ]; then . "$__winx_f"; break; fi
done; unset __winx_f`
	// bashStartupNone: --login with --noprofile reads no start-up file,
	// as bash does.
	bashStartupNone = `:`
)

// zprofile is the ZDOTDIR/.zprofile of a login zsh session: zsh reads
// $ZDOTDIR/.zprofile only as a login shell, and ZDOTDIR is the session's
// private rc directory, so the user's own ~/.zprofile is sourced from it.
const zprofile = `# winx session zprofile (generated; the user's own files are not modified)
if [ -f "$HOME/.zprofile" ]; then . "$HOME/.zprofile"; fi
`

// rcZsh does the same for zsh with a precmd hook. PROMPT_SP and PROMPT_CR
// are off so zsh does not mark a missing final newline with "%".
// History is kept off as in rcBash: no HISTFILE and SAVEHIST 0, before
// the user's ~/.zshrc and again after it, then read-only. They cannot be
// read-only before it: zsh stops sourcing a file at the first assignment
// to a read-only variable, which would cut the user's ~/.zshrc short.
// The nonce is handed over as in rcBash; typeset -g +x un-exports the
// global (a plain typeset in a function would make a local).
const rcZsh = `# winx session rc (generated; the user's own files are not modified)
unset HISTFILE; SAVEHIST=0
if [ -f "$HOME/.zshrc" ]; then . "$HOME/.zshrc"; fi
unsetopt INC_APPEND_HISTORY SHARE_HISTORY APPEND_HISTORY 2>/dev/null
unset HISTFILE; SAVEHIST=0; typeset -r HISTFILE SAVEHIST 2>/dev/null
stty -echo 2>/dev/null
unsetopt PROMPT_SP PROMPT_CR 2>/dev/null
PS1=''; PROMPT=''; RPROMPT=''; PS2=''
export PAGER=cat GIT_PAGER=cat MANPAGER=cat TERM=xterm-256color
__winx_n='@NONCE@'
__winx_hook() { builtin printf '\033]6973;W;%s;%d;%s\007' "$__winx_n" "$1" "$PWD"; }
__winx_s() { __winx_n=$1; builtin typeset -g +x __winx_n; builtin printf '\033]6973;S;%s\007' "$1"; }
precmd_functions=()
precmd() { __winx_hook $?; }
typeset -r precmd_functions 2>/dev/null
`

// ShellKind is ShellBash or ShellZsh for a shell given by name or by an
// absolute path whose base name is one of them; ok is false otherwise.
func ShellKind(shell string) (kind string, ok bool) {
	if filepath.IsAbs(shell) {
		shell = filepath.Base(shell)
	}
	switch shell {
	case "", ShellBash:
		return ShellBash, true
	case ShellZsh:
		return ShellZsh, true
	}
	return "", false
}

// RCFile names the user's rc file a session's shell sources, as the
// user knows it: "~/.bashrc" or "~/.zshrc" ("" for an unknown shell).
func RCFile(shell string) string {
	switch kind, _ := ShellKind(shell); kind {
	case ShellBash:
		return "~/.bashrc"
	case ShellZsh:
		return "~/.zshrc"
	}
	return ""
}

// ShellArgsVar is the variable of a session's environment that holds extra
// shell arguments (WINX_SHELL_ARGS): whitespace-separated, no quoting, put
// after winx's own start-up options and before -i. It travels in the
// session environment the adapter hands every runtime, so the embedded
// shell and a guardian's get the same arguments with no extra field on the
// daemon wire. The adapter checks it with ParseShellArgs at start-up.
const ShellArgsVar = "WINX_SHELL_ARGS"

// Bounds of WINX_SHELL_ARGS.
const (
	MaxShellArgs     = 32
	MaxShellArgBytes = 256
)

// ErrShellArgs is the cause of a WINX_SHELL_ARGS outside its bounds.
var ErrShellArgs = fmt.Errorf("guardian: at most %d shell arguments of at most %d bytes each", MaxShellArgs, MaxShellArgBytes)

// ParseShellArgs splits a WINX_SHELL_ARGS value.
func ParseShellArgs(v string) ([]string, error) {
	args := strings.Fields(v)
	if len(args) > MaxShellArgs {
		return nil, ErrShellArgs
	}
	for _, a := range args {
		if len(a) > MaxShellArgBytes {
			return nil, ErrShellArgs
		}
	}
	return args, nil
}

// ErrShellArgUnusable is the cause of a WINX_SHELL_ARGS argument that
// cannot work in a winx session (*ShellArgError names it).
var ErrShellArgUnusable = errors.New("guardian: shell argument cannot work in a session")

// ShellArgError names a WINX_SHELL_ARGS argument that cannot work and why.
type ShellArgError struct {
	Arg    string
	Reason string
}

func (e *ShellArgError) Error() string {
	return fmt.Sprintf("%q cannot work in a winx session: %s", e.Arg, e.Reason)
}

func (e *ShellArgError) Unwrap() error { return ErrShellArgUnusable }

// shellInvocation is WINX_SHELL_ARGS sorted for one shell's command line.
type shellInvocation struct {
	// long are bash's long options: bash takes them only before its
	// single-letter options, so they go with winx's own --rcfile.
	long []string
	// short are the other arguments, after winx's own options, in order.
	short []string
	// login: --login or -l asked for a login shell's start-up files.
	login bool
	// noProfile: --noprofile, which a login shell honours too.
	noProfile bool
}

// Bash arguments WINX_SHELL_ARGS may carry. What is not listed here
// cannot work: it replaces or disables winx's rc file (--norc, --rcfile,
// --init-file, --posix, whose interactive shell reads $ENV instead), makes
// the shell run something else than the session's terminal (-c, -s, a
// script operand, -D, --help, --version, --dump-strings), stops it running
// commands (-n, -t) or running winx's long-command files (-r, --restricted:
// "." of a path with a slash is refused), or ends the session on the first
// failing command (-e, -o errexit).
var (
	bashLong = map[string]bool{"--login": true, "--noprofile": true, "--noediting": true, "--verbose": true, "--debugger": true}
	// bashLetters are the set options bash takes on its command line
	// that leave a session working, plus i (winx passes -i anyway) and l.
	bashLetters = "abfhkmpuvxBCEHPTil"
	// bashBadSetO are the -o names that cannot work, as above.
	bashBadSetO = map[string]string{
		"posix":   "an interactive POSIX-mode bash reads $ENV instead of winx's rc file",
		"errexit": "the session's shell would exit on the first failing command",
		"onecmd":  "the session's shell would exit after one command",
		"noexec":  "the session's shell would run no command",
	}
	// zshBad are zsh arguments that cannot work, for the same reasons.
	zshBad = map[string]string{
		"--no-rcs": "it skips winx's rc file", "--norcs": "it skips winx's rc file",
		"-f": "it skips winx's rc file", "--no-exec": "the session's shell would run no command",
		"-n": "the session's shell would run no command", "-c": "the shell would run its argument instead of the session's terminal",
		"-s": "the shell would read commands from standard input", "--errexit": "the session's shell would exit on the first failing command",
		"-e": "the session's shell would exit on the first failing command",
	}
)

// CheckShellArgs checks a WINX_SHELL_ARGS value for shell (WINX_SHELL: a
// name or an absolute path): within its bounds (ErrShellArgs) and usable
// by the shell's session (*ShellArgError). The adapter calls it at
// start-up, so a value that cannot work stops winx naming the variable
// rather than failing every Initialize.
func CheckShellArgs(shell, v string) error {
	args, err := ParseShellArgs(v)
	if err != nil {
		return err
	}
	kind, ok := ShellKind(shell)
	if !ok {
		return nil // WINX_SHELL's own check names the shell
	}
	_, err = splitShellArgs(kind, args)
	return err
}

// splitShellArgs sorts args for kind's command line.
func splitShellArgs(kind string, args []string) (shellInvocation, error) {
	var inv shellInvocation
	if kind == ShellZsh {
		for _, a := range args {
			if why, bad := zshBad[a]; bad {
				return inv, &ShellArgError{Arg: a, Reason: why}
			}
			if !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "+") {
				return inv, &ShellArgError{Arg: a, Reason: "the shell would run it as a script instead of the session's terminal"}
			}
			if len(a) > 1 && a[1] != '-' && strings.ContainsAny(a[1:], "cfsn") {
				return inv, &ShellArgError{Arg: a, Reason: "-c, -s, -f and -n cannot work in a session"}
			}
			if a == "--login" || (len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.Contains(a, "l")) {
				inv.login = true
			}
			inv.short = append(inv.short, a)
		}
		return inv, nil
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.HasPrefix(a, "--"):
			if !bashLong[a] {
				return inv, &ShellArgError{Arg: a, Reason: "bash takes only --login, --noprofile, --noediting, --verbose and --debugger here (an unknown or start-up replacing option)"}
			}
			switch a {
			case "--login":
				inv.login = true
			case "--noprofile":
				inv.noProfile = true // winx passes --noprofile already
			default:
				inv.long = append(inv.long, a)
			}
		case a == "-o" || a == "+o" || a == "-O" || a == "+O":
			if i+1 >= len(args) {
				return inv, &ShellArgError{Arg: a, Reason: "it needs an option name after it"}
			}
			name := args[i+1]
			if why, bad := bashBadSetO[name]; bad && a == "-o" {
				return inv, &ShellArgError{Arg: a + " " + name, Reason: why}
			}
			inv.short = append(inv.short, a, name)
			i++
		case len(a) > 1 && (a[0] == '-' || a[0] == '+'):
			kept := []byte{a[0]}
			for j := 1; j < len(a); j++ {
				c := a[j]
				if !strings.ContainsRune(bashLetters, rune(c)) || (a[0] == '+' && (c == 'i' || c == 'l')) {
					return inv, &ShellArgError{Arg: a, Reason: fmt.Sprintf("bash's -%c cannot work in a session (it replaces the terminal, stops commands or ends the shell)", c)}
				}
				switch c {
				case 'l':
					inv.login = true
				case 'i': // winx passes -i itself
				default:
					kept = append(kept, c)
				}
			}
			if len(kept) > 1 {
				inv.short = append(inv.short, string(kept))
			}
		default:
			return inv, &ShellArgError{Arg: a, Reason: "bash would run it as a script instead of the session's terminal"}
		}
	}
	return inv, nil
}

// shellArgs are the extra arguments env carries (the last
// WINX_SHELL_ARGS entry wins, as in exec.Cmd); a value out of bounds
// fails the start.
func shellArgs(env []string) ([]string, error) {
	v := ""
	for _, kv := range env {
		if name, val, ok := strings.Cut(kv, "="); ok && name == ShellArgsVar {
			v = val
		}
	}
	return ParseShellArgs(v)
}

// shellPath is the program to run for shell: an absolute path as given,
// a name looked up on PATH.
func shellPath(shell, kind string) (string, error) {
	if filepath.IsAbs(shell) {
		return shell, nil
	}
	return exec.LookPath(kind)
}

// shellCommand prepares the shell process and its private rc directory.
func shellCommand(shell, nonce, rcDir, dir string, env []string) (*exec.Cmd, error) {
	kind, _ := ShellKind(shell)
	extra, err := shellArgs(env)
	if err != nil {
		return nil, err
	}
	inv, err := splitShellArgs(kind, extra)
	if err != nil {
		return nil, fmt.Errorf("guardian: %s: %w", ShellArgsVar, err)
	}
	switch kind {
	case ShellBash:
		startup := bashStartupRC
		switch {
		case inv.login && inv.noProfile:
			startup = bashStartupNone
		case inv.login:
			startup = bashStartupLogin
		}
		rc := filepath.Join(rcDir, "bashrc")
		text := strings.ReplaceAll(strings.Replace(rcBash, "@STARTUP@", startup, 1), "@NONCE@", nonce)
		if err := writePrivateFile(rc, []byte(text)); err != nil {
			return nil, fmt.Errorf("guardian: write rc file: %w", err)
		}
		path, err := shellPath(shell, kind)
		if err != nil {
			return nil, fmt.Errorf("guardian: %w", err)
		}
		// bash takes long options only before single-letter ones, and a
		// login shell would skip --rcfile: --login is the rc file's
		// choice of start-up files instead (see bashStartupLogin).
		argv := append(append(append([]string{"--noprofile"}, inv.long...), "--rcfile", rc), inv.short...)
		argv = append(argv, "-i")
		cmd := exec.Command(path, argv...)
		cmd.Dir = dir
		cmd.Env = env
		return cmd, nil
	case ShellZsh:
		rc := filepath.Join(rcDir, ".zshrc")
		if err := writePrivateFile(rc, []byte(strings.ReplaceAll(rcZsh, "@NONCE@", nonce))); err != nil {
			return nil, fmt.Errorf("guardian: write rc file: %w", err)
		}
		if inv.login {
			if err := writePrivateFile(filepath.Join(rcDir, ".zprofile"), []byte(zprofile)); err != nil {
				return nil, fmt.Errorf("guardian: write rc file: %w", err)
			}
		}
		path, err := shellPath(shell, kind)
		if err != nil {
			return nil, fmt.Errorf("guardian: %w", err)
		}
		cmd := exec.Command(path, append(inv.short, "-i")...)
		cmd.Dir = dir
		cmd.Env = append(env, "ZDOTDIR="+rcDir)
		return cmd, nil
	}
	return nil, fmt.Errorf("guardian: unknown shell %q (want bash or zsh)", shell)
}

// maxInlineCommand is the longest command typed on one line; longer ones are
// sourced from a private file, because a terminal in canonical mode cuts
// input lines at 4095 bytes.
const maxInlineCommand = 2048

// commandLine returns what to type for command: one line that hands the
// shell the command's nonce and prints the start marker, then runs the
// command in the shell itself (so cd and variables persist) and leaves its
// exit code for the prompt hook.
//
// The marker comes from __winx_s, defined by the session's rc file, rather
// than being typed out: the line editor reads what is typed one byte at a
// time, about 10 µs a byte, and the marker's printf was 70 of the 87 bytes
// typed for `echo hi`. The nonce (nonceAlphabet, no quoting needed) is the
// one thing that must be typed: it travels only through the terminal, to
// the shell, after the previous command ended.
func commandLine(command, scriptPath, nonce string) string {
	// Ctrl-U first: the line editor may hold text a finished program left
	// unread, or half a line a Ctrl-C cut short; it must not prefix ours.
	// The backslash keeps an alias of the same name from replacing it.
	start := "\x15\\__winx_s " + nonce + "; "
	if scriptPath != "" {
		return start + ". " + shellQuote(scriptPath) + "\n"
	}
	return start + "eval " + ansiCQuote(command) + "\n"
}

// ansiCQuote quotes s as a bash $'...' string that stays on one line.
func ansiCQuote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString("$'")
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' || c == '\'':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// shellQuote quotes s for any POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
