package policy

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"winx/auth/policy/shellparse"
)

// The read-only command list of architect mode. A command is on it when
// none of its options writes a file, changes the system or runs another
// program, or when the options that do are refused by its check. Commands
// with a check also refuse arguments only known at run time ($x, globs),
// since those could turn into a refused option. Everything else is denied:
// editors, interpreters, awk, xxd, make, package managers, wrappers (env,
// sudo, timeout, ...), shells and the shell's own state changers (export,
// alias, trap, source, read).

// argCheck returns why the arguments (after the name) are refused, or "".
type argCheck func(args []string) string

// readOnlyCommands maps each architect command to its argument check (nil:
// any arguments).
var readOnlyCommands = map[string]argCheck{
	// Listing and reading files.
	"ls": nil, "cat": nil, "head": nil, "tail": nil, "wc": nil, "nl": nil, "tac": nil, "rev": nil,
	"od": nil, "strings": nil, "stat": nil, "du": nil, "df": nil, "pwd": nil, "cd": nil,
	"realpath": nil, "readlink": nil, "basename": nil, "dirname": nil,
	"grep": nil, "egrep": nil, "fgrep": nil, "rg": refuse("--pre"),
	"find": findCheck, "tree": refuseShortLetters("oR", "--output"), "file": refuse("-C", "--compile"),
	// Text filters.
	"cut": nil, "tr": nil, "paste": nil, "join": nil, "comm": nil, "fold": nil, "column": nil,
	"diff": nil, "cmp": nil, "jq": nil,
	"sort": refuseShortLetters("o", "--output", "--compress-program"),
	"uniq": uniqCheck, "sed": sedCheck, "tee": teeCheck,
	"md5sum": nil, "sha1sum": nil, "sha224sum": nil, "sha256sum": nil, "sha384sum": nil, "sha512sum": nil,
	"b2sum": nil, "cksum": nil,
	// Printing and testing.
	"echo": nil, "printf": refuse("-v"), "true": nil, "false": nil, ":": nil, "test": nil, "[": nil,
	"[[": condCheck,
	// The system, read only.
	"date": dateCheck, "whoami": nil, "id": nil, "uname": nil, "hostname": hostnameCheck,
	"which": nil, "type": nil, "printenv": nil,
	// Tools with read-only subcommands.
	"git": gitCheck, "go": goCheck, "xargs": xargsCheck,
}

// ReadOnlyCommands returns the names architect mode may run, sorted.
func ReadOnlyCommands() []string {
	names := make([]string, 0, len(readOnlyCommands))
	for n := range readOnlyCommands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// readOnly decides a command in architect mode; "" allows.
func readOnly(c shellparse.Command) string {
	check, ok := readOnlyCommands[c.Args[0]]
	if !ok {
		return "not on architect's read-only command list"
	}
	if check == nil {
		return ""
	}
	for i := 1; i < len(c.Args); i++ {
		if c.ArgIsDynamic(i) {
			return "argument " + c.Args[i] + " is only known at run time, so its options cannot be checked"
		}
	}
	return check(c.Args[1:])
}

// longOption reports whether a names the long option full: exactly, with
// "=value", or abbreviated, since getopt_long and git accept any
// unambiguous prefix ("--in" is sed's --in-place). Any prefix counts here,
// ambiguous or not.
func longOption(a, full string) bool {
	name, _, _ := strings.Cut(a, "=")
	return len(name) > 2 && strings.HasPrefix(name, "--") && strings.HasPrefix(full, name)
}

// refuse refuses the options given, alone or with an attached value
// ("--pre", "--pre=x", "--pr", "-Cx").
func refuse(opts ...string) argCheck {
	return func(args []string) string {
		for _, a := range args {
			if a == "--" {
				return ""
			}
			for _, o := range opts {
				if (strings.HasPrefix(o, "--") && longOption(a, o)) ||
					(!strings.HasPrefix(o, "--") && len(o) == 2 && strings.HasPrefix(a, o)) {
					return "option " + o + " writes or runs a program"
				}
			}
		}
		return ""
	}
}

// refuseShortLetters refuses short option letters anywhere in a group of
// short options, and the long options given.
func refuseShortLetters(letters string, long ...string) argCheck {
	return func(args []string) string {
		for _, a := range args {
			if a == "--" {
				return ""
			}
			if len(a) > 1 && a[0] == '-' && a[1] != '-' {
				if i := strings.IndexAny(a[1:], letters); i >= 0 {
					return "option -" + a[1+i:2+i] + " writes a file or runs a program"
				}
			}
			for _, o := range long {
				if longOption(a, o) {
					return "option " + o + " writes or runs a program"
				}
			}
		}
		return ""
	}
}

var findActions = []string{"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}

func findCheck(args []string) string {
	for _, a := range args {
		if slices.Contains(findActions, a) {
			return "find " + a + " writes or runs a program"
		}
	}
	return ""
}

// uniqCheck refuses a second operand, the output file.
func uniqCheck(args []string) string {
	operands := 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			operands += len(args) - i - 1
			i = len(args)
		case a == "-f" || a == "-s" || a == "-w":
			i++
		case len(a) > 1 && a[0] == '-':
		default:
			operands++
		}
	}
	if operands > 1 {
		return "uniq's second operand is an output file"
	}
	return ""
}

// sedCheck allows only line-addressed scripts (sed -n '10,20p'): the w, W,
// e, r, s and y commands and regular expressions are refused, and so are
// -i and script files.
func sedCheck(args []string) string {
	var scripts []string
	explicit := false
	operands := 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-e" || (longOption(a, "--expression") && !strings.Contains(a, "=")):
			if i+1 < len(args) {
				scripts = append(scripts, args[i+1])
			}
			explicit = true
			i++
		case longOption(a, "--expression"):
			scripts = append(scripts, a[strings.IndexByte(a, '=')+1:])
			explicit = true
		case a == "-i" || longOption(a, "--in-place") || a == "-f" || longOption(a, "--file"):
			return "sed " + a + " writes or reads a script file"
		case strings.HasPrefix(a, "--"):
		case len(a) > 1 && a[0] == '-':
		group:
			for j := 1; j < len(a); j++ {
				switch a[j] {
				case 'i', 'f':
					return "sed " + a + " writes or reads a script file"
				case 'e':
					explicit = true
					if j < len(a)-1 {
						scripts = append(scripts, a[j+1:])
					} else if i+1 < len(args) {
						scripts = append(scripts, args[i+1])
						i++
					}
					break group
				case 'l':
					if j == len(a)-1 {
						i++
					}
					break group
				}
			}
		default:
			if !explicit && operands == 0 {
				scripts = append(scripts, a)
			}
			operands++
		}
	}
	for _, s := range scripts {
		for i := 0; i < len(s); i++ {
			if !strings.ContainsRune("0123456789,$;!{} \t\npPdDqQnNlg=", rune(s[i])) {
				return "architect runs only line-addressed sed scripts such as '10,20p'"
			}
		}
	}
	return ""
}

// teeCheck allows tee only into the discard targets.
func teeCheck(args []string) string {
	options := true
	for _, a := range args {
		if options && a == "--" {
			options = false
			continue
		}
		if options && len(a) > 1 && a[0] == '-' {
			continue
		}
		if !slices.Contains(discardTargets, a) {
			return "tee writes " + a
		}
	}
	return ""
}

// condCheck refuses arithmetic comparisons in [[ ]]: bash evaluates their
// operands as expressions, which can run commands held in variables. So
// does the subscript of -v a[i].
func condCheck(args []string) string {
	for i, a := range args {
		switch a {
		case "-eq", "-ne", "-lt", "-le", "-gt", "-ge":
			return "[[ " + a + " ]] evaluates its operands as arithmetic"
		case "-v":
			if i+1 < len(args) && strings.Contains(args[i+1], "[") {
				return "the subscript of -v " + args[i+1] + " is evaluated as arithmetic"
			}
		}
	}
	return ""
}

func dateCheck(args []string) string {
	for _, a := range args {
		if a == "-s" || longOption(a, "--set") || (len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.IndexByte(a, 's') > 0) {
			return "date " + a + " sets the clock"
		}
		if a != "" && a[0] != '-' && a[0] != '+' {
			return "a date operand sets the clock"
		}
	}
	return ""
}

func hostnameCheck(args []string) string {
	for _, a := range args {
		if a == "" || a[0] != '-' || strings.HasPrefix(a, "-F") || longOption(a, "--file") {
			return "hostname " + a + " sets the host name"
		}
	}
	return ""
}

// xargsSafe are the commands xargs may run in architect mode: xargs feeds
// them arguments read from input, which might be any option, so only
// commands without writing options qualify.
var xargsSafe = []string{"cat", "grep", "egrep", "fgrep", "wc", "head", "tail", "ls", "stat", "du", "basename",
	"dirname", "realpath", "readlink", "echo", "cmp", "diff", "nl", "strings",
	"md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum"}

// xargsCheck finds the command xargs runs (after options; see shellparse's
// wrapper table) and requires it to be xargs-safe. Absent, xargs runs echo.
func xargsCheck(args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			i++
			if i < len(args) && !slices.Contains(xargsSafe, args[i]) {
				return "xargs would run " + args[i] + " with arguments read from input"
			}
			return ""
		}
		if len(a) < 2 || a[0] != '-' {
			if !slices.Contains(xargsSafe, a) {
				return "xargs would run " + a + " with arguments read from input"
			}
			return ""
		}
		if strings.HasPrefix(a, "--") {
			switch a {
			case "--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--max-lines", "--process-slot-var":
				i++
			}
			continue
		}
		for j := 1; j < len(a); j++ {
			if strings.IndexByte("eil", a[j]) >= 0 {
				break
			}
			if strings.IndexByte("adEILnPs", a[j]) >= 0 {
				if j == len(a)-1 {
					i++
				}
				break
			}
		}
	}
	return ""
}

// gitGlobal are the options allowed before a git subcommand (-C takes a
// directory). Others (-c, --exec-path, --git-dir, ...) can run programs or
// point git elsewhere.
var gitGlobal = []string{"--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--no-replace-objects"}

// gitReadOnly are git subcommands that only read, with any arguments
// except those refused in gitCheck.
var gitReadOnly = []string{"status", "log", "show", "diff", "blame", "annotate", "rev-parse", "ls-files", "ls-tree",
	"cat-file", "describe", "shortlog", "rev-list", "grep", "show-ref", "for-each-ref", "merge-base", "name-rev",
	"count-objects", "check-ignore", "whatchanged", "cherry", "version", "show-branch"}

func gitCheck(args []string) string {
	i := 0
	for i < len(args) {
		a := args[i]
		switch {
		case a == "-C":
			i += 2
			continue
		case slices.Contains(gitGlobal, a):
			i++
			continue
		case strings.HasPrefix(a, "-"):
			return "git option " + a + " is not allowed before the subcommand"
		}
		break
	}
	if i >= len(args) {
		return "" // git alone prints help
	}
	sub, rest := args[i], args[i+1:]
	for _, a := range rest {
		if longOption(a, "--output") || longOption(a, "--open-files-in-pager") || strings.HasPrefix(a, "-O") {
			return "git " + sub + " " + a + " writes a file or runs a program"
		}
	}
	if slices.Contains(gitReadOnly, sub) {
		return ""
	}
	switch sub {
	case "branch":
		return gitListing(sub, rest, []string{"-a", "-r", "-v", "-vv", "--all", "--remotes", "--verbose", "--show-current",
			"--no-color", "--color", "--column", "--no-column", "-i", "--ignore-case"},
			[]string{"--merged", "--no-merged", "--contains", "--no-contains", "--points-at", "--sort", "--format"})
	case "tag":
		return gitListing(sub, rest, []string{"-n", "--column", "--no-column", "-i", "--ignore-case", "--color", "--no-color"},
			[]string{"--merged", "--no-merged", "--contains", "--no-contains", "--points-at", "--sort", "--format"})
	case "remote":
		if len(rest) == 0 || (len(rest) == 1 && (rest[0] == "-v" || rest[0] == "--verbose")) ||
			rest[0] == "get-url" || rest[0] == "show" {
			return ""
		}
	case "stash", "worktree":
		if len(rest) > 0 && (rest[0] == "list" || (sub == "stash" && rest[0] == "show")) {
			return ""
		}
	case "reflog":
		if len(rest) == 0 || rest[0] == "show" {
			return ""
		}
	case "config":
		return gitConfigCheck(rest)
	}
	return "git " + sub + " is not one of architect's read-only git commands"
}

// gitConfigReads are git config's reading actions and how many operands
// each takes at most (--get name [value-pattern]).
var gitConfigReads = map[string]int{"--get": 2, "--get-all": 2, "--get-regexp": 2, "--get-urlmatch": 2, "--list": 0, "-l": 0}

// gitConfigFlags and gitConfigValued are the other options allowed, the
// latter with a value ("--file x" or "--file=x").
var (
	gitConfigFlags = []string{"--global", "--system", "--local", "--worktree", "--show-origin", "--show-scope",
		"--name-only", "--null", "-z", "--bool", "--int", "--bool-or-int", "--path", "--expiry-date", "--includes",
		"--no-includes"}
	gitConfigValued = []string{"--file", "-f", "--blob", "--type", "--default"}
)

// gitConfigCheck allows git config only with one reading action and no
// more operands than it reads. git config stops reading options at the
// first operand: in "git config user.name x --get" the "--get" is a value
// and the command writes, so options are only looked for before it.
func gitConfigCheck(args []string) string {
	action := ""
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		name, _, hasValue := strings.Cut(a, "=")
		_, read := gitConfigReads[a]
		switch {
		case read:
			if action != "" {
				return "git config takes one action"
			}
			action = a
		case slices.Contains(gitConfigFlags, a):
		case slices.Contains(gitConfigValued, name):
			if !hasValue {
				i++
			}
		default:
			return "git config " + a + " is not one of its reading options"
		}
	}
	if action == "" {
		return "git config is allowed only with --get, --get-all, --get-regexp, --get-urlmatch or --list"
	}
	if operands := len(args) - i; operands > gitConfigReads[action] {
		return "git config " + action + " with " + fmt.Sprint(operands) + " operands"
	}
	return ""
}

// gitListing allows "git branch" and "git tag" in their listing forms:
// listed flags, listed options with a value, and patterns only after
// -l / --list.
func gitListing(sub string, args, flags, valued []string) string {
	list := slices.Contains(args, "-l") || slices.Contains(args, "--list")
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := strings.Cut(a, "=")
		switch {
		case a == "-l" || a == "--list" || slices.Contains(flags, a) || (sub == "tag" && strings.HasPrefix(a, "-n")):
		case slices.Contains(valued, name):
			if !hasValue {
				i++
			}
		case !strings.HasPrefix(a, "-") && list:
		default:
			return "git " + sub + " is allowed only in its listing form"
		}
	}
	return ""
}

// goFlag returns the name and attached value of a go command flag, which
// may start with "-" or "--" ("" when a is not a flag).
func goFlag(a string) (name, value string) {
	if !strings.HasPrefix(a, "-") || a == "-" || a == "--" {
		return "", ""
	}
	name, value, _ = strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
	return name, value
}

func goCheck(args []string) string {
	if len(args) == 0 {
		return ""
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "version", "doc":
		return ""
	case "env":
		for _, a := range rest {
			if name, _ := goFlag(a); name == "w" || name == "u" {
				return "go env " + a + " writes the configuration"
			}
		}
		return ""
	case "list":
		for i, a := range rest {
			name, value := goFlag(a)
			if name == "mod" && value == "" && i+1 < len(rest) {
				value = rest[i+1]
			}
			if name == "toolexec" || name == "exec" || name == "modfile" || (name == "mod" && value == "mod") {
				return "go list " + a + " runs a program or changes go.mod"
			}
		}
		return ""
	}
	return "go " + sub + " is not one of architect's read-only go commands (version, env, list, doc)"
}
