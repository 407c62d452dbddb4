package policy

import (
	"slices"
	"strings"
)

// The option tables of architect's tools that have options which write,
// run a program or change the system (options.go says how they are read).
// Each table lists every option of the GNU tool on this platform: an
// option missing from a table is refused, so a table errs on the side of
// refusing.

var sedOptions = &optTable{permute: true, opts: []opt{
	flag("quiet", 'n'), flag("silent", 0), flag("debug", 0), valued("expression", 'e'),
	unsafe(valued("file", 'f'), "reads a script file, which architect cannot check"),
	flag("follow-symlinks", 0),
	unsafe(optional("in-place", 'i'), "edits files in place"),
	valued("line-length", 'l'), flag("posix", 0), flag("regexp-extended", 'E'), flag("", 'r'),
	flag("separate", 's'), flag("sandbox", 0), flag("unbuffered", 'u'), flag("null-data", 'z'),
	flag("binary", 'b'), flag("help", 0), flag("version", 0),
}}

// sedCheck allows only line-addressed scripts (sed -n '10,20p'): the w, W,
// e, r, s and y commands and regular expressions are refused, and so are
// -i and script files. The script is each -e value, or else the first
// operand (checkTable also reads the line the way sed does with
// POSIXLY_CORRECT, where "sed '1e cmd' -e p" runs the first operand).
func sedCheck(args []string) string {
	return checkTable("sed", sedOptions, func(opts []parsedOpt, operands []string) string {
		var scripts []string
		for _, p := range opts {
			if p.opt.long == "expression" {
				scripts = append(scripts, p.value)
			}
		}
		if len(scripts) == 0 && len(operands) > 0 {
			scripts = append(scripts, operands[0])
		}
		for _, s := range scripts {
			if strings.Trim(s, "0123456789,$;!{} \t\npPdDqQnNlg=") != "" {
				return "architect runs only line-addressed sed scripts such as '10,20p'"
			}
		}
		return ""
	})(args)
}

// xargsOptions stop at the first operand, the command xargs runs.
var xargsOptions = &optTable{opts: []opt{
	flag("null", '0'), valued("arg-file", 'a'), valued("delimiter", 'd'), valued("", 'E'), optional("eof", 'e'),
	valued("", 'I'), optional("replace", 'i'), valued("", 'L'), optional("max-lines", 'l'), valued("max-args", 'n'),
	flag("open-tty", 'o'), valued("max-procs", 'P'), flag("interactive", 'p'),
	unsafe(valued("process-slot-var", 0), "sets a variable the command's environment reads"),
	flag("no-run-if-empty", 'r'), valued("max-chars", 's'), flag("show-limits", 0), flag("verbose", 't'),
	flag("exit", 'x'), flag("help", 0), flag("version", 0),
}}

// xargsSafe are the commands xargs may run in architect mode: xargs feeds
// them arguments read from input, which might be any option, so only
// commands without writing options qualify.
var xargsSafe = []string{"cat", "grep", "egrep", "fgrep", "wc", "head", "tail", "ls", "stat", "du", "basename",
	"dirname", "realpath", "readlink", "echo", "cmp", "diff", "nl", "strings",
	"md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum"}

// xargsCheck requires the command xargs runs (echo when none is given) to
// be xargs-safe.
func xargsCheck(args []string) string {
	return checkTable("xargs", xargsOptions, func(_ []parsedOpt, operands []string) string {
		if len(operands) > 0 && !slices.Contains(xargsSafe, operands[0]) {
			return "xargs would run " + operands[0] + " with arguments read from input"
		}
		return ""
	})(args)
}

var hostnameOptions = &optTable{permute: true, opts: []opt{
	flag("alias", 'a'), flag("all-fqdns", 'A'), unsafe(flag("boot", 'b'), "sets the host name"),
	flag("domain", 'd'), flag("fqdn", 'f'), flag("long", 0),
	unsafe(valued("file", 'F'), "sets the host name"),
	flag("ip-address", 'i'), flag("all-ip-addresses", 'I'), flag("short", 's'), flag("yp", 'y'), flag("nis", 0),
	flag("verbose", 'v'), flag("version", 'V'), flag("help", 'h'),
}}

// hostnameCheck allows hostname's displaying forms only: an operand sets
// the name.
func hostnameCheck(args []string) string {
	return checkTable("hostname", hostnameOptions, func(_ []parsedOpt, operands []string) string {
		if len(operands) > 0 {
			return "hostname " + operands[0] + " sets the host name"
		}
		return ""
	})(args)
}

var sortOptions = &optTable{permute: true, opts: []opt{
	flag("ignore-leading-blanks", 'b'), flag("dictionary-order", 'd'), flag("ignore-case", 'f'),
	flag("general-numeric-sort", 'g'), flag("ignore-nonprinting", 'i'), flag("month-sort", 'M'),
	flag("human-numeric-sort", 'h'), flag("numeric-sort", 'n'), flag("random-sort", 'R'),
	valued("random-source", 0), flag("reverse", 'r'), valued("sort", 0), flag("version-sort", 'V'),
	valued("batch-size", 0), optional("check", 0), flag("", 'c'), flag("", 'C'),
	unsafe(valued("compress-program", 0), "runs a program"), flag("debug", 0), valued("files0-from", 0),
	valued("key", 'k'), flag("merge", 'm'), unsafe(valued("output", 'o'), "writes a file"), flag("stable", 's'),
	valued("buffer-size", 'S'), valued("field-separator", 't'),
	unsafe(valued("temporary-directory", 'T'), "writes files into a directory"),
	valued("parallel", 0), flag("unique", 'u'), flag("zero-terminated", 'z'), flag("help", 0), flag("version", 0),
}}

var dateOptions = &optTable{permute: true, opts: []opt{
	valued("date", 'd'), flag("debug", 0), valued("file", 'f'), optional("iso-8601", 'I'), flag("resolution", 0),
	flag("rfc-email", 'R'), valued("rfc-3339", 0), valued("reference", 'r'),
	unsafe(valued("set", 's'), "sets the clock"), flag("utc", 'u'), flag("universal", 0),
	flag("help", 0), flag("version", 0),
}}

// dateCheck allows date's printing forms: an operand other than +FORMAT
// sets the clock.
func dateCheck(args []string) string {
	return checkTable("date", dateOptions, func(_ []parsedOpt, operands []string) string {
		for _, o := range operands {
			if !strings.HasPrefix(o, "+") {
				return "a date operand sets the clock"
			}
		}
		return ""
	})(args)
}

var teeOptions = &optTable{permute: true, opts: []opt{
	flag("append", 'a'), flag("ignore-interrupts", 'i'), flag("", 'p'), optional("output-error", 0),
	flag("help", 0), flag("version", 0),
}}

// teeCheck allows tee only into the discard targets.
func teeCheck(args []string) string {
	return checkTable("tee", teeOptions, func(_ []parsedOpt, operands []string) string {
		for _, o := range operands {
			if !slices.Contains(discardTargets, o) {
				return "tee writes " + o
			}
		}
		return ""
	})(args)
}
