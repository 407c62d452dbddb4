package auth

// Session modes: what a session may write and which commands it may run.
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
// the shell or a program run something else (PATH, PROMPT_COMMAND, LD_*,
// GIT_*, ...). So is every place where bash evaluates a variable's value as
// code: arithmetic (a value "a[$(cmd)]" runs cmd when read as a number),
// indirect expansion ${!x}, prompt expansion ${x@P}, subscripted names.
// Values can come from anywhere (a file, an earlier command), so these are
// refused where they are read, in both modes. This package decides on plain
// words; splitting a command line into commands belongs to the caller
// (codemap/shellcmd).

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Mode names.
const (
	ModeWCGW       = "wcgw"
	ModeArchitect  = "architect"
	ModeCodeWriter = "code_writer"
)

// Limits of a code_writer configuration.
const (
	// MaxModeEntries bounds allowed_globs and allowed_commands each.
	MaxModeEntries = 256
	// MaxModeEntryBytes bounds one glob or command entry.
	MaxModeEntryBytes = 1024
)

// ErrInvalidMode is an unknown mode or a malformed code_writer
// configuration; it is always carried in a *ModeConfigError.
var ErrInvalidMode = errors.New("auth: invalid mode")

// ModeConfigError is a mode that cannot be used. Msg says why, for the
// caller to show.
type ModeConfigError struct {
	Msg string
}

func (e *ModeConfigError) Error() string { return "auth: invalid mode: " + e.Msg }
func (e *ModeConfigError) Unwrap() error { return ErrInvalidMode }

func badMode(format string, args ...any) error {
	return &ModeConfigError{Msg: fmt.Sprintf(format, args...)}
}

// Mode is a session's mode and, for code_writer, what it may touch. The
// zero Name behaves as wcgw in the decisions (the session default);
// Validate rejects it.
type Mode struct {
	Name string
	// AllGlobs allows writes anywhere; otherwise AllowedGlobs are absolute,
	// clean patterns (filepath.Match per segment, "**" for any number of
	// segments) a written path must match.
	AllGlobs     bool
	AllowedGlobs []string
	// AllCommands allows every command; otherwise AllowedCommands are
	// command prefixes of one or more plain words.
	AllCommands     bool
	AllowedCommands []string
}

// CodeWriterConfig is code_writer's configuration as a client gives it:
// each list is "all" (the All flag) or a list. Relative globs are joined to
// the workspace root.
type CodeWriterConfig struct {
	AllGlobs        bool
	AllowedGlobs    []string
	AllCommands     bool
	AllowedCommands []string
}

// ParseMode builds the mode name with cfg. code_writer needs cfg; for the
// other modes a cfg is still checked (a malformed one is an error, never
// ignored) but not used. root, an absolute path, anchors relative globs.
// Errors are *ModeConfigError.
func ParseMode(name string, cfg *CodeWriterConfig, root string) (Mode, error) {
	if name != ModeCodeWriter {
		if cfg != nil {
			if _, err := ParseMode(ModeCodeWriter, cfg, root); err != nil {
				return Mode{}, err
			}
		}
		m := Mode{Name: name}
		return m, m.Validate()
	}
	if cfg == nil {
		return Mode{}, badMode("code_writer needs allowed_globs and allowed_commands")
	}
	if len(cfg.AllowedGlobs) > MaxModeEntries || len(cfg.AllowedCommands) > MaxModeEntries {
		return Mode{}, badMode("code_writer allows at most %d globs and %d commands", MaxModeEntries, MaxModeEntries)
	}
	m := Mode{Name: ModeCodeWriter, AllGlobs: cfg.AllGlobs, AllCommands: cfg.AllCommands}
	for _, g := range cfg.AllowedGlobs {
		if slices.Contains(strings.Split(g, "/"), "..") {
			return Mode{}, badMode("code_writer glob %q holds \"..\"", g)
		}
		if g != "" {
			g = filepath.Clean(g)
		}
		if g != "" && !filepath.IsAbs(g) {
			if !filepath.IsAbs(root) {
				return Mode{}, badMode("code_writer glob %q is relative and there is no workspace root", g)
			}
			g = filepath.Join(root, g)
		}
		m.AllowedGlobs = append(m.AllowedGlobs, g)
	}
	for _, c := range cfg.AllowedCommands {
		m.AllowedCommands = append(m.AllowedCommands, strings.Join(strings.Fields(c), " "))
	}
	return m, m.Validate()
}

// Validate reports an unknown mode, or a code_writer mode with a glob that
// is not an absolute clean pattern or a command entry that is not plain
// words. Errors are *ModeConfigError.
func (m Mode) Validate() error {
	switch m.Name {
	case ModeWCGW, ModeArchitect:
		if m.AllGlobs || m.AllCommands || len(m.AllowedGlobs) > 0 || len(m.AllowedCommands) > 0 {
			return badMode("mode %s takes no allowed_globs or allowed_commands", m.Name)
		}
		return nil
	case ModeCodeWriter:
	default:
		return badMode("unknown mode %q (want %s, %s or %s)", m.Name, ModeWCGW, ModeArchitect, ModeCodeWriter)
	}
	if len(m.AllowedGlobs) > MaxModeEntries || len(m.AllowedCommands) > MaxModeEntries {
		return badMode("code_writer allows at most %d globs and %d commands", MaxModeEntries, MaxModeEntries)
	}
	for _, g := range m.AllowedGlobs {
		switch {
		case g == "":
			return badMode("code_writer allowed_globs holds an empty glob")
		case len(g) > MaxModeEntryBytes:
			return badMode("code_writer glob longer than %d bytes", MaxModeEntryBytes)
		case !filepath.IsAbs(g):
			return badMode("code_writer glob %q is not absolute", g)
		case filepath.Clean(g) != g:
			return badMode("code_writer glob %q is not clean (no \"..\", \".\", \"//\" or trailing \"/\")", g)
		}
		for _, seg := range strings.Split(g, "/") {
			if _, err := filepath.Match(seg, ""); err != nil {
				return badMode("code_writer glob %q: %v", g, err)
			}
		}
	}
	for _, c := range m.AllowedCommands {
		if err := checkCommandEntry(c); err != nil {
			return err
		}
	}
	return nil
}

// checkCommandEntry accepts one allowed_commands entry: plain words, no
// shell syntax, because entries are compared with parsed words, never run.
func checkCommandEntry(c string) error {
	switch {
	case strings.TrimSpace(c) == "":
		return badMode("code_writer allowed_commands holds an empty command")
	case len(c) > MaxModeEntryBytes:
		return badMode("code_writer command longer than %d bytes", MaxModeEntryBytes)
	case c == "all":
		return badMode(`code_writer allowed_commands: give "all" as the whole value, not as a list entry`)
	}
	for i := 0; i < len(c); i++ {
		b := c[i]
		if b < 0x20 && b != '\t' || b == 0x7f || strings.IndexByte(";&|<>()$`'\"\\*?[]{}~!#=", b) >= 0 {
			return badMode("code_writer command %q holds %q: entries are plain words, not shell syntax", c, string(b))
		}
	}
	return nil
}

// Clone returns m with its own slices.
func (m Mode) Clone() Mode {
	m.AllowedGlobs = slices.Clone(m.AllowedGlobs)
	m.AllowedCommands = slices.Clone(m.AllowedCommands)
	return m
}

// WriteDeniedError is a write the mode forbids.
type WriteDeniedError struct {
	Mode string
	Path string // "" when the mode forbids every write
}

func (e *WriteDeniedError) Error() string {
	switch {
	case e.Path == "":
		return fmt.Sprintf("auth: mode %s does not allow file changes", e.Mode)
	case e.Mode == ModeCodeWriter:
		return fmt.Sprintf("auth: mode %s does not allow writing %s (outside its allowed_globs)", e.Mode, e.Path)
	}
	return fmt.Sprintf("auth: mode %s does not allow writing %s", e.Mode, e.Path)
}

// AllowsWrite reports whether the mode lets the file at path (absolute and
// canonical: the caller resolved symlinks) be changed. It returns nil or a
// *WriteDeniedError.
func (m Mode) AllowsWrite(path string) error {
	switch m.Name {
	case "", ModeWCGW:
		return nil
	case ModeCodeWriter:
		if m.AllGlobs {
			return nil
		}
		git := hasGitSegment(path)
		for _, g := range m.AllowedGlobs {
			// A repository's .git holds hooks and config that run programs
			// (core.fsmonitor, core.pager...) under commands code_writer may
			// allow, such as git status: only a glob that names .git itself
			// reaches it, never a wildcard.
			if GlobMatch(g, path) && (!git || hasGitSegment(g)) {
				return nil
			}
		}
	}
	return &WriteDeniedError{Mode: m.Name, Path: path}
}

// hasGitSegment reports whether a path or pattern has a ".git" segment.
func hasGitSegment(p string) bool {
	for _, seg := range strings.Split(filepath.ToSlash(p), "/") {
		if seg == ".git" {
			return true
		}
	}
	return false
}

// GlobMatch is filepath.Match extended with "**" as any number of whole
// path segments ("src/**/*.go" matches "src/a.go" and "src/x/y/a.go").
func GlobMatch(pattern, path string) bool {
	ps := strings.Split(filepath.Clean(pattern), "/")
	ns := strings.Split(filepath.Clean(path), "/")
	return matchSegments(ps, ns, 0)
}

// maxGlobStars bounds the "**" segments one match explores, so a pattern
// of many "**" cannot make matching exponential.
const maxGlobStars = 8

func matchSegments(ps, ns []string, stars int) bool {
	for len(ps) > 0 {
		if ps[0] == "**" {
			if stars >= maxGlobStars {
				return false
			}
			for skip := 0; skip <= len(ns); skip++ {
				if matchSegments(ps[1:], ns[skip:], stars+1) {
					return true
				}
			}
			return false
		}
		if len(ns) == 0 {
			return false
		}
		if ok, err := filepath.Match(ps[0], ns[0]); err != nil || !ok {
			return false
		}
		ps, ns = ps[1:], ns[1:]
	}
	return len(ns) == 0
}

// CommandDeniedError is a command the mode does not run. Command is the
// simple command as words; Reason says why.
type CommandDeniedError struct {
	Mode    string
	Command string
	Reason  string
}

func (e *CommandDeniedError) Error() string {
	return fmt.Sprintf("auth: mode %s does not allow %q: %s", e.Mode, e.Command, e.Reason)
}

// Redirection is one redirection of a command: its operator as written
// (with any file descriptor prefix: "2>", ">>", "&>", "<") and target.
type Redirection struct {
	Op      string
	Target  string
	Dynamic bool   // the target is only known at run time
	Body    string // an unquoted heredoc's body, whose expansions run
}

// Invocation is one simple command in plain words.
type Invocation struct {
	// Args[0] is the command name; Args is empty for a line of only
	// assignments or redirections.
	Args []string
	// ArgDynamic[i] reports that Args[i] is only known at run time (an
	// expansion or a glob). Missing entries count as dynamic.
	ArgDynamic  []bool
	Assignments []string // leading NAME=value words
	Redirects   []Redirection
}

// String renders the invocation for messages.
func (inv Invocation) String() string {
	parts := append(slices.Clone(inv.Assignments), inv.Args...)
	for _, r := range inv.Redirects {
		parts = append(parts, r.Op+r.Target)
	}
	return strings.Join(parts, " ")
}

func (inv Invocation) dynamic(i int) bool {
	return i >= len(inv.ArgDynamic) || inv.ArgDynamic[i]
}

// AllowsInvocation decides one simple command: its assignments, its name
// and arguments, and its redirections. cwd is the shell's directory, which
// relative redirection targets are resolved against. It returns nil or a
// *CommandDeniedError.
func (m Mode) AllowsInvocation(inv Invocation, cwd string) error {
	if m.Name == "" || m.Name == ModeWCGW {
		return nil
	}
	deny := func(reason string) error {
		return &CommandDeniedError{Mode: m.Name, Command: inv.String(), Reason: reason}
	}
	if m.Name != ModeArchitect && m.Name != ModeCodeWriter {
		return deny("unknown mode")
	}
	if reason := evaluations(inv); reason != "" {
		return deny(reason)
	}
	for _, a := range inv.Assignments {
		if reason := m.assignment(a); reason != "" {
			return deny(reason)
		}
	}
	if len(inv.Args) > 0 {
		if reason := m.command(inv); reason != "" {
			return deny(reason)
		}
	}
	for _, r := range inv.Redirects {
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
func (m Mode) command(inv Invocation) string {
	if inv.dynamic(0) {
		return "the command name is only known at run time"
	}
	switch inv.Args[0] {
	case "((", "let":
		return "arithmetic evaluation can run commands held in variables"
	case "for", "select", "case":
		// The words of the compound command (codemap/shellcmd); their
		// expansions were checked with every word.
		return ""
	case "[[":
		return condCheck(inv.Args[1:])
	}
	if reason := variableNames(inv.Args); reason != "" {
		return reason
	}
	if m.Name == ModeArchitect {
		return readOnly(inv)
	}
	switch inv.Args[0] {
	case "export", "declare", "typeset", "local", "readonly":
		for _, a := range inv.Args[1:] {
			if strings.Contains(a, "=") {
				if reason := m.assignment(a); reason != "" {
					return reason
				}
			}
		}
	}
	if m.AllCommands || slices.Contains(implicitCommands, inv.Args[0]) {
		return ""
	}
	for _, entry := range m.AllowedCommands {
		if matchesEntry(entry, inv) {
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
func matchesEntry(entry string, inv Invocation) bool {
	words := strings.Fields(entry)
	if len(words) == 0 || len(inv.Args) < len(words) {
		return false
	}
	for i, w := range words {
		if inv.dynamic(i) || inv.Args[i] != w {
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
		"PERL5LIB", "RUBYOPT", "GOFLAGS", "GOTOOLCHAIN", "SSH_ASKPASS", "SUDO_ASKPASS"}
	hookPrefixes = []string{"LD_", "DYLD_", "BASH_FUNC_", "BASH_", "GIT_"}
	// architectVariables are the only variables architect assigns: they
	// change formatting, never what runs.
	architectVariables = []string{"LANG", "LANGUAGE", "TZ", "NO_COLOR", "CLICOLOR", "COLUMNS", "LINES", "TERM"}
)

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
	if m.Name == ModeArchitect {
		if !slices.Contains(architectVariables, name) && !strings.HasPrefix(name, "LC_") {
			return "architect assigns only locale and display variables (" + name + ")"
		}
		if strings.Trim(value, plainValueBytes) != "" {
			return "architect assigns only plain values (letters, digits and " + plainValueBytes[62:] + ")"
		}
		return ""
	}
	if slices.Contains(hookVariables, name) {
		return "assigning " + name + " can change what runs"
	}
	for _, p := range hookPrefixes {
		if strings.HasPrefix(name, p) {
			return "assigning " + name + " can change what runs"
		}
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
func (m Mode) redirect(r Redirection, cwd string) string {
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
	if m.Name == ModeArchitect {
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
	for range MaxSymlinks {
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
			return "", errors.New("auth: dangling symbolic link")
		}
		parent := filepath.Dir(path)
		if parent == path {
			return "", err
		}
		rest = filepath.Join(filepath.Base(path), rest)
		path = parent
	}
	return "", errors.New("auth: path too deep to resolve")
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

// evaluations returns why a word of inv makes bash evaluate a value as
// code, or "". Bash reads a variable's value as an arithmetic expression in
// $(( )), $[ ], array subscripts and ${x:offset}, and in an expression an
// array subscript can hold a command substitution ("a[$(cmd)]"). Indirect
// expansion ${!x} and prompt expansion ${x@P} do the same with names and
// prompts. The words are checked as the parser reports them, with
// expansions as source text; heredoc bodies are checked too.
func evaluations(inv Invocation) string {
	words := slices.Concat(inv.Args, inv.Assignments)
	for _, r := range inv.Redirects {
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
