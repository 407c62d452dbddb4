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
// sudo, timeout, ...), pagers (less, more, man), shells and the shell's own
// state changers (export, alias, trap, source, read).
//
// How a check reads options: sed, xargs, sort, date, hostname and tee are
// parsed by a table of all their options (tooloptions.go, read as
// options.go describes), because there an option's value moves the script,
// the command or the file that matters. rg, tree and file only need one
// option kept out, so they refuse it by every spelling: any prefix of the
// long option, the short letter anywhere in a cluster (refuse,
// refuseShortLetters), which errs on refusing. find's actions are single
// words it never abbreviates. git and go have closed lists of reading
// subcommands and options below.

// argCheck returns why the arguments (after the name) are refused, or "".
type argCheck func(args []string) string

// readOnlyCommands maps each architect command to its argument check (nil:
// any arguments).
var readOnlyCommands = map[string]argCheck{
	// Listing and reading files.
	"ls": nil, "cat": nil, "head": nil, "tail": nil, "wc": nil, "nl": nil, "tac": nil, "rev": nil,
	"od": nil, "strings": nil, "stat": nil, "du": nil, "df": nil, "pwd": nil, "cd": nil,
	"realpath": nil, "readlink": nil, "basename": nil, "dirname": nil,
	"grep": nil, "egrep": nil, "fgrep": nil, "rg": refuse("--pre", "--hostname-bin"),
	"find": findCheck, "tree": refuseShortLetters("oR", "--output"), "file": refuseShortLetters("C", "--compile"),
	// Text filters.
	"cut": nil, "tr": nil, "paste": nil, "join": nil, "comm": nil, "fold": nil, "column": nil,
	"diff": nil, "cmp": nil, "jq": nil,
	"sort": checkTable("sort", sortOptions, nil),
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

// gitGlobal are the options allowed before a git subcommand, exactly as
// written (git reads its global options by exact name). The others change
// what git reads or runs: -c and --config-env set configuration that names
// programs (core.fsmonitor, core.pager, diff.external), --exec-path picks
// the programs, and -C, --git-dir, --work-tree, --namespace and --bare
// point git at another repository, such as a bare one in the workspace
// whose configuration runs a program. -p (--paginate) starts a pager, and
// --help a manual page viewer.
var gitGlobal = []string{"--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--no-replace-objects",
	"--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs", "--no-advice", "--version"}

// gitRunning are the subcommand options that write a file or run a
// program: a word that is any prefix of one (git accepts unique prefixes
// of long options) is refused, whatever the subcommand.
var gitRunning = []string{"--output", "--open-files-in-pager", "--ext-diff", "--textconv", "--filters",
	"--show-signature", "--exec", "--upload-pack", "--receive-pack", "--output-directory", "--help"}

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
		if a == "--" {
			break
		}
		for _, o := range gitRunning {
			if longOption(a, o) {
				return "git " + sub + " " + a + " (" + o + ") writes a file or runs a program"
			}
		}
		// -O (git grep --open-files-in-pager) also in a cluster: "-iO".
		if len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.IndexByte(a, 'O') > 0 {
			return "git " + sub + " " + a + ": -O runs a program"
		}
		// %G placeholders and the %(signature) atom verify signatures with
		// the configured gpg.program.
		if strings.Contains(a, "%G") || strings.Contains(a, "%(signature") {
			return "git " + sub + " " + a + ": %G placeholders run the signature verification program"
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
		// git remote show asks the remote, through a transport the
		// repository's configuration may name (core.sshCommand), unless
		// -n keeps it to the cached state.
		if len(rest) == 0 || (len(rest) == 1 && (rest[0] == "-v" || rest[0] == "--verbose")) ||
			rest[0] == "get-url" || (rest[0] == "show" && slices.Contains(rest[1:], "-n")) {
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

// goFlagKind is how the go command's flag package reads a flag: a bool
// flag takes a value only after "=", any other the attached value or the
// next word. Flags are never abbreviated or clustered, and "-name" and
// "--name" are the same flag.
type goFlagKind uint8

const (
	goBool goFlagKind = iota + 1
	goValue
)

// goReadOnly are the go subcommands architect runs, each with every flag
// it may take: none of them builds, runs or writes. A flag not listed is
// refused. go list's -export, -compiled, -toolexec, -gcflags and the other
// build flags compile packages (-gcflags=-cpuprofile=F writes F), -u,
// -versions and -retracted query the network, -modfile and -mod=mod may
// rewrite go.mod; go doc -http and -play start or fetch programs; go env
// -w and -u write the configuration. go help prints help.
var goReadOnly = map[string]map[string]goFlagKind{
	"version": {"m": goBool, "v": goBool, "json": goBool},
	"env":     {"json": goBool, "changed": goBool},
	"list": {"json": goBool, "f": goValue, "m": goBool, "e": goBool, "deps": goBool, "find": goBool,
		"test": goBool, "tags": goValue, "mod": goValue},
	"doc":  {"all": goBool, "c": goBool, "cmd": goBool, "short": goBool, "src": goBool, "u": goBool},
	"help": {},
}

// goCheck reads every word that starts with "-" as a flag (the go command
// stops at the first package, and a flag after it is an error, so reading
// on refuses more, never less).
func goCheck(args []string) string {
	if len(args) == 0 {
		return ""
	}
	sub, rest := args[0], args[1:]
	flags, ok := goReadOnly[sub]
	if !ok {
		return "go " + sub + " is not one of architect's read-only go commands (version, env, list, doc, help)"
	}
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			break
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		name, value, attached := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		kind := flags[name]
		switch {
		case kind == 0:
			return "go " + sub + " " + a + " is not one of the flags architect allows there (they build, run or write)"
		case kind == goValue && !attached:
			if i+1 >= len(rest) {
				return "go " + sub + " " + a + " needs a value"
			}
			i++
			value = rest[i]
		}
		if sub == "list" && name == "mod" && value != "readonly" && value != "vendor" {
			return "go list -mod=" + value + " may change go.mod"
		}
	}
	return ""
}
