package policy

// The decision on one simple command, and on a whole command line.

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"winx/auth"
	"winx/auth/policy/shellparse"
)

// commandString renders a simple command for messages: assignments,
// words, then redirections ("LC_ALL=C sort f >out").
func commandString(c shellparse.Command) string {
	parts := append(slices.Clone(c.Assignments), c.Args...)
	for _, r := range c.Redirects {
		parts = append(parts, r.Op+r.Target)
	}
	return strings.Join(parts, " ")
}

// AllowsCommand decides one simple command of a parsed line: its
// assignments, its name and arguments, and its redirections. cwd is the
// shell's directory, which relative redirection targets are resolved
// against. It returns nil or a *CommandDeniedError.
func (m Mode) AllowsCommand(c shellparse.Command, cwd string) error {
	if !m.restricts() {
		return nil
	}
	deny := func(reason string) error {
		return &CommandDeniedError{Mode: m.Name, Command: commandString(c), Reason: reason}
	}
	if _, ok := m.Spec(); !ok {
		return deny("unknown mode")
	}
	if reason := evaluations(c); reason != "" {
		return deny(reason)
	}
	if reason := m.expansionAssignments(c); reason != "" {
		return deny(reason)
	}
	for _, a := range c.Assignments {
		if reason := m.assignment(a); reason != "" {
			return deny(reason)
		}
	}
	if len(c.Args) > 0 {
		if reason := m.command(c); reason != "" {
			return deny(reason)
		}
	}
	for _, r := range c.Redirects {
		if reason := m.redirect(r, cwd); reason != "" {
			return deny(reason)
		}
	}
	return nil
}

// implicitCommands run in code_writer without being listed: builtins that
// neither write nor start a program.
var implicitCommands = []string{"cd", "true", "false", ":"}

// command decides the name and arguments; "" allows.
func (m Mode) command(c shellparse.Command) string {
	if c.ArgIsDynamic(0) {
		return "the command name is only known at run time"
	}
	switch c.Args[0] {
	case "((", "let":
		return "arithmetic evaluation can run commands held in variables"
	case "for", "select":
		// The words of the compound command (package shellparse); their
		// expansions were checked with every word. The loop assigns its
		// variable.
		if len(c.Args) > 1 && hookName(c.Args[1]) {
			return "a loop over " + c.Args[1] + " assigns a variable that can change what runs"
		}
		return ""
	case "case":
		return ""
	case "source", ".":
		// The file runs in the session's shell, where it can assign the
		// prompt and hook variables this policy never lets a line assign;
		// its text is not checked.
		return c.Args[0] + " runs a file's commands in the session's shell, unchecked"
	case "fc":
		// fc -s and fc -e run earlier command text, as "!!" would.
		return "fc runs earlier command text"
	}
	if reason := unseenCode(c.Args); reason != "" {
		return reason
	}
	switch c.Args[0] {
	case "[[":
		return condCheck(c.Args[1:])
	}
	if reason := variableNames(c.Args); reason != "" {
		return reason
	}
	if reason := assignedNames(c); reason != "" {
		return reason
	}
	if m.readOnlyCommands() {
		return readOnly(c)
	}
	switch c.Args[0] {
	case "export", "declare", "typeset", "local", "readonly":
		for _, a := range c.Args[1:] {
			if strings.Contains(a, "=") {
				if reason := m.assignment(a); reason != "" {
					return reason
				}
			}
		}
	}
	if m.AllCommands || slices.Contains(implicitCommands, c.Args[0]) {
		return ""
	}
	for _, entry := range m.AllowedCommands {
		if matchesEntry(entry, c) {
			return ""
		}
	}
	if len(m.AllowedCommands) == 0 {
		return "code_writer allowed_commands is empty"
	}
	return "not in code_writer allowed_commands (" + strings.Join(m.AllowedCommands, ", ") + ")"
}

// matchesEntry compares an allowed_commands entry with the leading words
// of the command, whole word by whole word; a compared word must be static.
func matchesEntry(entry string, c shellparse.Command) bool {
	words := strings.Fields(entry)
	if len(words) == 0 || len(c.Args) < len(words) {
		return false
	}
	for i, w := range words {
		if c.ArgIsDynamic(i) || c.Args[i] != w {
			return false
		}
	}
	return true
}

// Variables that make the shell, the loader or a program run something
// else, or move where commands are found. Denied outside wcgw.
var (
	hookVariables = []string{"PATH", "IFS", "ENV", "BASH_ENV", "PROMPT_COMMAND", "PS0", "PS1", "PS2", "PS3", "PS4",
		"SHELLOPTS", "BASHOPTS", "GLOBIGNORE", "CDPATH", "HISTFILE", "PAGER", "MANPAGER", "EDITOR", "VISUAL",
		"BROWSER", "SHELL", "TMPDIR", "HOME", "ZDOTDIR", "PYTHONSTARTUP", "PYTHONPATH", "NODE_OPTIONS", "PERL5OPT",
		"PERL5LIB", "RUBYOPT", "GOFLAGS", "GOTOOLCHAIN", "SSH_ASKPASS", "SUDO_ASKPASS",
		"INPUTRC", "FCEDIT", "LESSOPEN", "LESSCLOSE", "GOROOT", "GOENV"}
	hookPrefixes = []string{"LD_", "DYLD_", "BASH_FUNC_", "BASH_", "GIT_"}
	// architectVariables are the only variables architect assigns: they
	// change formatting, never what runs.
	architectVariables = []string{"LANG", "LANGUAGE", "TZ", "NO_COLOR", "CLICOLOR", "COLUMNS", "LINES", "TERM"}
)

// unseenCode refuses builtin options whose value is code the shell runs
// without this policy seeing it: mapfile's callback (-C), compgen's and
// complete's command and function (-C, -F), enable's shared object (-f).
func unseenCode(args []string) string {
	letters := ""
	switch args[0] {
	case "mapfile", "readarray":
		letters = "C"
	case "compgen", "complete":
		letters = "CF"
	case "enable":
		letters = "f"
	default:
		return ""
	}
	for _, a := range args[1:] {
		if a == "--" {
			break
		}
		if len(a) > 1 && a[0] == '-' && strings.ContainsAny(a[1:], letters) {
			return args[0] + " " + a + " runs code the policy cannot check"
		}
	}
	return ""
}

// hookName reports a variable that makes the shell, the loader or a
// program run something else: never assigned outside wcgw, by any
// spelling.
func hookName(name string) bool {
	if slices.Contains(hookVariables, name) {
		return true
	}
	for _, p := range hookPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// nameAssigners are the builtins that assign variables named by their
// arguments (read NAME, printf -v NAME, mapfile NAME, getopts OPTS NAME).
// Every argument and every attached option value ("-vPS1") that could be
// such a name is checked, which may refuse a harmless word spelled like a
// hook variable but never misses one.
var nameAssigners = []string{"read", "mapfile", "readarray", "getopts", "printf"}

// assignedNames refuses the builtins of nameAssigners when a name they may
// assign is a hook variable. A prompt variable assigned this way takes a
// value the parser never sees ("read PS1 <<< '$(cmd)'"), which bash
// expands at the next prompt.
func assignedNames(c shellparse.Command) string {
	if !slices.Contains(nameAssigners, c.Args[0]) {
		return ""
	}
	deny := func(a string) string {
		return c.Args[0] + " would assign " + a + ", which can change what runs"
	}
	if c.Args[0] == "printf" {
		// printf's other words are its format and data; only -v names.
		for i := 1; i < len(c.Args) && c.Args[i] != "--"; i++ {
			a, k := c.Args[i], i
			switch {
			case a == "-v" && i+1 < len(c.Args):
				k = i + 1
			case strings.HasPrefix(a, "-v"):
			default:
				continue
			}
			if name := strings.TrimPrefix(c.Args[k], "-v"); hookName(name) || c.ArgIsDynamic(k) {
				return deny(c.Args[k])
			}
			if k > i {
				i = k
			}
		}
		return ""
	}
	for i := 1; i < len(c.Args); i++ {
		a := c.Args[i]
		name := a
		if len(a) > 2 && a[0] == '-' {
			name = a[2:]
		}
		if hookName(a) || hookName(name) || c.ArgIsDynamic(i) {
			return deny(a)
		}
	}
	return ""
}

// expansionAssignments checks the assignments that parameter expansion
// makes, ${NAME:=value} and ${NAME=value}, like NAME=value words: in every
// word of the command (arguments of ":", "true", "echo", "[[", heredoc
// bodies, redirection targets), since bash assigns wherever it expands
// them. "${PS1:=\$(cmd)}" sets a prompt whose command substitution runs at
// the next prompt, after every check.
func (m Mode) expansionAssignments(c shellparse.Command) string {
	words := slices.Concat(c.Args, c.Assignments)
	for _, r := range c.Redirects {
		words = append(words, r.Target, r.Body)
	}
	for _, w := range words {
		w = strings.ReplaceAll(w, "\\\n", "")
		for rest := w; ; {
			i := strings.Index(rest, "${")
			if i < 0 {
				break
			}
			rest = rest[i+2:]
			n := 0
			for n < len(rest) && (rest[n] == '_' || rest[n] >= 'a' && rest[n] <= 'z' || rest[n] >= 'A' && rest[n] <= 'Z' || rest[n] >= '0' && rest[n] <= '9') {
				n++
			}
			op := strings.TrimPrefix(rest[n:], ":")
			if n == 0 || !strings.HasPrefix(op, "=") {
				continue
			}
			value := op[1:]
			depth := 0
			for k := 0; k < len(value); k++ {
				if value[k] == '{' {
					depth++
				} else if value[k] == '}' {
					if depth == 0 {
						value = value[:k]
						break
					}
					depth--
				}
			}
			if reason := m.assignment(rest[:n] + "=" + value); reason != "" {
				return "${" + rest[:n] + "=...} assigns " + rest[:n] + ": " + reason
			}
		}
	}
	return ""
}

// assignment decides one NAME=value word; "" allows.
func (m Mode) assignment(a string) string {
	name := a
	if i := strings.IndexAny(a, "=[+"); i >= 0 {
		name = a[:i]
	}
	if strings.HasPrefix(a[len(name):], "[") {
		return "an array subscript is evaluated as arithmetic"
	}
	value := a[strings.IndexByte(a, '=')+1:]
	if strings.HasPrefix(value, "(") && strings.Contains(value, "[") {
		return "an array subscript is evaluated as arithmetic"
	}
	if m.readOnlyCommands() {
		if !slices.Contains(architectVariables, name) && !strings.HasPrefix(name, "LC_") {
			return "architect assigns only locale and display variables (" + name + ")"
		}
		if strings.Trim(value, plainValueBytes) != "" {
			return "architect assigns only plain values (letters, digits and " + plainValueBytes[62:] + ")"
		}
		return ""
	}
	if hookName(name) {
		return "assigning " + name + " can change what runs"
	}
	return ""
}

// plainValueBytes are the bytes of a value architect may assign: enough for
// locales ("en_US.UTF-8@euro"), zones ("Europe/Paris", "UTC+1") and sizes.
const plainValueBytes = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-+:/@,"

// discardTargets are the redirection targets that write no file.
var discardTargets = []string{"/dev/null", "/dev/stdout", "/dev/stderr"}

// redirect decides one redirection; "" allows. Input redirections and
// descriptor duplications write nothing.
func (m Mode) redirect(r shellparse.Redirect, cwd string) string {
	op := strings.TrimLeft(r.Op, "0123456789")
	if strings.HasPrefix(op, "{") {
		op = op[strings.IndexByte(op, '}')+1:]
	}
	if !strings.Contains(op, ">") {
		return "" // <, <<, <<-, <<<, <&
	}
	if op == ">&" && !r.Dynamic && (r.Target == "-" || isDigits(r.Target)) {
		return ""
	}
	if r.Dynamic {
		return "the redirection target " + r.Target + " is only known at run time"
	}
	if slices.Contains(discardTargets, r.Target) {
		return ""
	}
	if spec, _ := m.Spec(); spec.Files == FilesNone {
		return "architect writes no files (redirection to " + r.Target + ")"
	}
	if m.AllGlobs {
		return ""
	}
	path := r.Target
	if slices.Contains(strings.Split(path, "/"), "..") {
		// The kernel resolves "link/.." through the link; a lexical clean
		// would check another file than the one written.
		return "the redirection target " + r.Target + " holds \"..\""
	}
	if !filepath.IsAbs(path) {
		if !filepath.IsAbs(cwd) {
			return "the shell's directory is unknown, so " + r.Target + " cannot be checked"
		}
		path = filepath.Join(cwd, path)
	}
	canonical, err := canonicalForWrite(path)
	if err != nil {
		return "cannot resolve " + r.Target
	}
	if m.AllowsWrite(canonical) != nil {
		return "writes " + canonical + ", outside code_writer allowed_globs"
	}
	return ""
}

// canonicalForWrite resolves the symlinks of the longest existing prefix
// of path, so a link inside the allowed globs cannot lead a write outside.
func canonicalForWrite(path string) (string, error) {
	path = filepath.Clean(path)
	rest := ""
	for range auth.MaxSymlinks {
		resolved, err := filepath.EvalSymlinks(path)
		if err == nil {
			return filepath.Join(resolved, rest), nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		if _, lerr := os.Lstat(path); lerr == nil {
			// It exists but does not resolve: a dangling symlink, whose
			// target a write would create wherever it points.
			return "", errors.New("policy: dangling symbolic link")
		}
		parent := filepath.Dir(path)
		if parent == path {
			return "", err
		}
		rest = filepath.Join(filepath.Base(path), rest)
		path = parent
	}
	return "", errors.New("policy: path too deep to resolve")
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// evaluations returns why a word of c makes bash evaluate a value as
// code, or "". Bash reads a variable's value as an arithmetic expression in
// $(( )), $[ ], array subscripts and ${x:offset}, and in an expression an
// array subscript can hold a command substitution ("a[$(cmd)]"). Indirect
// expansion ${!x} and prompt expansion ${x@P} do the same with names and
// prompts. The words are checked as the parser reports them, with
// expansions as source text; heredoc bodies are checked too.
func evaluations(c shellparse.Command) string {
	words := slices.Concat(c.Args, c.Assignments)
	for _, r := range c.Redirects {
		words = append(words, r.Target, r.Body)
	}
	for _, w := range words {
		if reason := evaluation(w); reason != "" {
			return reason
		}
	}
	return ""
}

// evaluation checks one word for evaluations.
func evaluation(s string) string {
	// Bash joins lines before it expands: "${x@\<newline>P}" is "${x@P}".
	s = strings.ReplaceAll(s, "\\\n", "")
	if strings.Contains(s, "$((") || strings.Contains(s, "$[") {
		return "arithmetic expansion can run commands held in variables"
	}
	for rest := s; ; {
		i := strings.Index(rest, "${")
		if i < 0 {
			return ""
		}
		rest = rest[i+2:]
		body := rest
		if end := strings.IndexByte(rest, '}'); end >= 0 {
			body = rest[:end]
		}
		switch {
		case strings.HasPrefix(body, "!"):
			return "indirect expansion ${!...} can evaluate subscripts held in variables"
		case strings.Contains(body, "@P"):
			return "prompt expansion ${...@P} runs command substitutions held in variables"
		case subscripted(body):
			return "an array subscript is evaluated as arithmetic"
		}
		if j := strings.IndexByte(body, ':'); j >= 0 && (j+1 >= len(body) || !strings.ContainsRune("-=?+", rune(body[j+1]))) {
			return "a substring offset is evaluated as arithmetic"
		}
	}
}

// subscripted reports a "[" in a ${ } body other than the "[@]" and "[*]"
// that list an array's elements.
func subscripted(body string) bool {
	body = strings.ReplaceAll(strings.ReplaceAll(body, "[@]", ""), "[*]", "")
	return strings.Contains(body, "[")
}

// variableNames refuses the builtins that take variable names when a name
// has a subscript, which bash evaluates as arithmetic ("unset 'a[x]'",
// "read 'a[x]'", "printf -v 'a[x]'", "test -v 'a[x]'"), and the
// declarations that make later assignments arithmetic (-i) or references
// (-n).
func variableNames(args []string) string {
	switch args[0] {
	case "declare", "typeset", "local", "export", "readonly":
		for _, a := range args[1:] {
			if len(a) > 1 && (a[0] == '-' || a[0] == '+') && strings.ContainsAny(a[1:], "in") {
				return args[0] + " " + a + " makes assignments evaluate"
			}
			if strings.Contains(a, "[") {
				return "an array subscript is evaluated as arithmetic"
			}
		}
	case "unset", "read", "mapfile", "readarray", "getopts", "wait":
		for _, a := range args[1:] {
			if strings.Contains(a, "[") {
				return "an array subscript is evaluated as arithmetic"
			}
		}
	case "printf":
		for i, a := range args[1:] {
			if strings.HasPrefix(a, "-v") && (strings.Contains(a, "[") || i+2 < len(args) && strings.Contains(args[i+2], "[")) {
				return "an array subscript is evaluated as arithmetic"
			}
		}
	case "test", "[":
		for i, a := range args[1:] {
			if a == "-v" && i+2 < len(args) && strings.Contains(args[i+2], "[") {
				return "the subscript of -v " + args[i+2] + " is evaluated as arithmetic"
			}
		}
	}
	return ""
}
