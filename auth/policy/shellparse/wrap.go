package shellparse

import (
	"fmt"
	"slices"
	"strings"
)

// Commands that run other commands. Each is reported itself and so is the
// command it runs. Option tables list the options that take a value in the
// next word; getting one wrong could hide the wrapped command, so they
// follow the GNU and sudo manuals.

// optSpec describes a wrapper's options.
type optSpec struct {
	short    string   // short options whose value may be the next word
	optional string   // short options whose value can only be attached (xargs -i[R])
	long     []string // long options whose value may be the next word
	operands int      // operands before the command (timeout's duration)
	assigns  bool     // NAME=value words before the command are assignments
	noCmd    string   // short options after which the operands are not a command
	// all, when set, is every long option of the program (without "--";
	// "=" after a name: the value may be the next word; "[=]": only
	// attached), and flags are its short options without a value. The
	// program then parses the way getopt_long does, and so does this
	// reader: a long option may be abbreviated to any unique prefix, and an
	// unknown or ambiguous option is a parse error (the program would
	// refuse it too), never a guess at where the command starts.
	all   []string
	flags string
}

var wrappers = map[string]optSpec{
	"sudo": {short: "ugCDhprtTU", long: []string{"--user", "--group", "--close-from", "--chdir", "--prompt", "--role",
		"--type", "--command-timeout", "--other-user", "--host"}, assigns: true},
	"doas":  {short: "uC"},
	"nice":  {short: "n", flags: "0123456789+", all: []string{"adjustment=", "help", "version"}}, // nice -10: the old form
	"nohup": {},
	"time":  {short: "fo", long: []string{"--format", "--output"}},
	"timeout": {short: "sk", flags: "fpv", all: []string{"signal=", "kill-after=", "foreground", "preserve-status",
		"verbose", "help", "version"}, operands: 1},
	"xargs": {short: "adEILnPs", optional: "eil", flags: "0oprtx", all: []string{"arg-file=", "delimiter=", "eof[=]",
		"replace[=]", "max-lines[=]", "max-args=", "open-tty", "max-procs=", "interactive", "process-slot-var=",
		"no-run-if-empty", "max-chars=", "show-limits", "verbose", "exit", "help", "version"}},
	"command": {},
	"builtin": {},
	"exec":    {short: "a"},
	"stdbuf":  {short: "ioe", all: []string{"input=", "output=", "error=", "help", "version"}},
	"ionice":  {short: "cnpPu", long: []string{"--class", "--classdata", "--pid", "--pgid", "--uid"}, noCmd: "pPu"},
	"setsid":  {},
	"coproc":  {},
}

// shells are the programs whose -c string is a command line.
var shells = []string{"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "rbash"}

// unwrap reports the commands that the simple command ws runs.
func (p *parser) unwrap(ws []word, depth int) {
	if ws[0].dyn {
		return
	}
	name := ws[0].val
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	switch {
	case slices.Contains(shells, name):
		p.shellString(ws, depth)
	case name == "su":
		p.suString(ws, depth)
	case name == "eval":
		p.parseWords(ws[1:], depth)
	case name == "trap":
		p.trap(ws, depth)
	case name == "watch":
		p.watch(ws, depth)
	case name == "env":
		p.env(ws, depth)
	case name == "find":
		p.findExec(ws, depth)
	default:
		spec, ok := wrappers[name]
		if !ok {
			return
		}
		i, noCmd, bad := skipOptions(ws, 1, spec)
		if bad != "" {
			p.fail(p.pos, fmt.Sprintf("%s: %s, so the command it runs is not known", name, bad))
		}
		if noCmd {
			return
		}
		var c Command
		for spec.assigns && i < len(ws) && ws[i].assign {
			c.Assignments = append(c.Assignments, ws[i].val)
			i++
		}
		i += spec.operands
		if i < len(ws) {
			p.emit(c, ws[i:], depth+1)
		}
	}
}

// skipOptions returns the index of the first operand at or after i. A
// dynamic word ends the options: it may be anything, so it is treated as
// the command.
//
// With a full option table (spec.all) an unknown or ambiguous option is
// returned as bad: where the command starts depends on it.
func skipOptions(ws []word, i int, spec optSpec) (next int, noCmd bool, bad string) {
	for i < len(ws) {
		w := ws[i]
		v := w.val
		if w.dyn {
			return i, noCmd, ""
		}
		if v == "--" {
			return i + 1, noCmd, ""
		}
		if len(v) < 2 || v[0] != '-' {
			return i, noCmd, ""
		}
		if strings.HasPrefix(v, "--") {
			name, _, attached := strings.Cut(v[2:], "=")
			if spec.all != nil {
				kind, reason := resolveLong(spec.all, name)
				if reason != "" {
					return i, noCmd, "option --" + name + " is " + reason
				}
				if kind == "=" && !attached {
					i++
				}
			} else if !attached && slices.Contains(spec.long, v) {
				i++
			}
			i++
			continue
		}
		for j := 1; j < len(v); j++ {
			if strings.IndexByte(spec.noCmd, v[j]) >= 0 {
				noCmd = true
			}
			if strings.IndexByte(spec.optional, v[j]) >= 0 {
				break
			}
			if strings.IndexByte(spec.short, v[j]) >= 0 {
				if j == len(v)-1 {
					i++
				}
				break
			}
			if spec.all != nil && strings.IndexByte(spec.flags, v[j]) < 0 {
				return i, noCmd, "option -" + string(v[j]) + " is unknown"
			}
		}
		i++
	}
	return i, noCmd, ""
}

// resolveLong finds name (without "--") in a full table of long options
// as getopt_long does: an exact name, or else the one option it is a
// prefix of. It returns the option's value kind ("", "=" or "[=]"), or why
// it could not ("unknown", "ambiguous").
func resolveLong(all []string, name string) (kind, reason string) {
	found := -1
	for k, o := range all {
		base := strings.TrimSuffix(strings.TrimSuffix(o, "[=]"), "=")
		if base == name {
			return o[len(base):], ""
		}
		if name != "" && strings.HasPrefix(base, name) {
			if found >= 0 {
				return "", "ambiguous"
			}
			found = k
		}
	}
	if found < 0 {
		return "", "unknown"
	}
	o := all[found]
	base := strings.TrimSuffix(strings.TrimSuffix(o, "[=]"), "=")
	return o[len(base):], ""
}

// shellString parses the string of "bash -c STRING" (options may precede
// it, grouped as in -ec or -lc).
func (p *parser) shellString(ws []word, depth int) {
	sawC := false
	i := 1
	for ; i < len(ws); i++ {
		w := ws[i]
		v := w.val
		if w.dyn {
			// An unknown option may be -c: what follows could be run.
			p.dynamic(ws[i:])
			return
		}
		if v == "--" || v == "-" {
			i++
			break
		}
		if len(v) < 2 || (v[0] != '-' && v[0] != '+') {
			break
		}
		if strings.HasPrefix(v, "--") {
			if v == "--rcfile" || v == "--init-file" {
				i++
			}
			continue
		}
		for j := 1; j < len(v); j++ {
			if v[j] == 'c' && v[0] == '-' {
				sawC = true
			}
			if v[j] == 'o' || v[j] == 'O' {
				if j == len(v)-1 {
					i++
				}
				break
			}
		}
	}
	if sawC && i < len(ws) {
		p.parseWords(ws[i:i+1], depth)
	}
}

// suString parses the command of "su -c STRING" / "su --command=STRING".
func (p *parser) suString(ws []word, depth int) {
	for i := 1; i < len(ws); i++ {
		w := ws[i]
		v := w.val
		if w.dyn {
			p.dynamic(ws[i:])
			return
		}
		switch {
		case v == "--command" || v == "--session-command":
			if i+1 < len(ws) {
				p.parseWords(ws[i+1:i+2], depth)
			}
			return
		case strings.HasPrefix(v, "--command=") || strings.HasPrefix(v, "--session-command="):
			p.parseWords([]word{{val: v[strings.IndexByte(v, '=')+1:]}}, depth)
			return
		case len(v) >= 2 && v[0] == '-' && v[1] != '-':
			if k := strings.IndexByte(v, 'c'); k > 0 {
				if k < len(v)-1 {
					p.parseWords([]word{{val: v[k+1:]}}, depth)
				} else if i+1 < len(ws) {
					p.parseWords(ws[i+1:i+2], depth)
				}
				return
			}
		}
	}
}

// watch reports the command watch runs: its arguments joined and given to
// sh -c, or with -x (--exec) the arguments themselves.
func (p *parser) watch(ws []word, depth int) {
	exec := false
	for _, w := range ws[1:] {
		v := w.val
		if v == "--" || len(v) < 2 || v[0] != '-' {
			break
		}
		if v == "--exec" {
			exec = true
		}
		for j := 1; j < len(v) && v[1] != '-'; j++ {
			if v[j] == 'x' {
				exec = true
			}
			if v[j] == 'n' || v[j] == 'q' {
				break
			}
		}
	}
	i, _, _ := skipOptions(ws, 1, optSpec{short: "nq", long: []string{"--interval", "--equexit"}})
	if i >= len(ws) {
		return
	}
	if exec {
		p.emit(Command{}, ws[i:], depth+1)
		return
	}
	p.parseWords(ws[i:], depth)
}

// envLong are env's long options (see optSpec.all).
var envLong = []string{"ignore-environment", "null", "unset=", "chdir=", "split-string=", "block-signal[=]",
	"default-signal[=]", "ignore-signal[=]", "list-signal-handling", "debug", "help", "version"}

// env reports the command env runs, with its NAME=value words, and reads
// -S (--split-string) as a command line.
func (p *parser) env(ws []word, depth int) {
	i := 1
options:
	for i < len(ws) {
		w := ws[i]
		v := w.val
		switch {
		case w.dyn:
			break options
		case v == "--":
			i++
			break options
		case v == "-":
			i++
		case strings.HasPrefix(v, "--"):
			// getopt_long: "--split" is --split-string.
			name, value, attached := strings.Cut(v[2:], "=")
			kind, bad := resolveLong(envLong, name)
			if bad != "" {
				p.fail(p.pos, "env: option --"+name+" is "+bad+", so the command it runs is not known")
			}
			if kind == "=" && strings.HasPrefix("split-string", name) {
				// The string and the words after it, read as one line.
				if attached {
					p.parseWords(append([]word{{val: value}}, ws[i+1:]...), depth)
				} else {
					p.parseWords(ws[i+1:], depth)
				}
				return
			}
			if kind == "=" && !attached {
				i++
			}
			i++
		case len(v) >= 2 && v[0] == '-':
			for j := 1; j < len(v); j++ {
				if v[j] == 'S' {
					if j < len(v)-1 {
						p.parseWords(append([]word{{val: v[j+1:]}}, ws[i+1:]...), depth)
					} else {
						p.parseWords(ws[i+1:], depth)
					}
					return
				}
				if v[j] == 'u' || v[j] == 'C' {
					if j == len(v)-1 {
						i++
					}
					break
				}
				if strings.IndexByte("i0v", v[j]) < 0 {
					p.fail(p.pos, "env: option -"+v[j:j+1]+" is unknown, so the command it runs is not known")
				}
			}
			i++
		default:
			break options
		}
	}
	var c Command
	for i < len(ws) && ws[i].assign {
		c.Assignments = append(c.Assignments, ws[i].val)
		i++
	}
	if i < len(ws) {
		p.emit(c, ws[i:], depth+1)
	}
}

// findExec reports the commands of find's -exec, -execdir, -ok and -okdir.
func (p *parser) findExec(ws []word, depth int) {
	for i := 1; i < len(ws); i++ {
		switch ws[i].val {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		j := i + 1
		for j < len(ws) && ws[j].val != ";" && !(ws[j].val == "+" && ws[j-1].val == "{}") {
			j++
		}
		if j > i+1 {
			p.emit(Command{}, ws[i+1:j], depth+1)
		}
		i = j
	}
}

// trap reads the action of "trap ACTION SIGNAL..." as a command line: the
// shell runs it later, when the signal (or DEBUG, RETURN, ERR, EXIT)
// comes. "-" and "" reset or ignore; one operand alone is a signal to
// reset; -p, -l and -P print.
func (p *parser) trap(ws []word, depth int) {
	i := 1
	for i < len(ws) && !ws[i].dyn && len(ws[i].val) > 1 && ws[i].val[0] == '-' {
		if ws[i].val == "--" {
			i++
			break
		}
		i++
	}
	if len(ws)-i < 2 || (!ws[i].dyn && (ws[i].val == "-" || ws[i].val == "")) {
		return
	}
	p.parseWords(ws[i:i+1], depth)
}

// parseWords parses words joined by spaces as a command line, as eval and
// sh -c do. When a word is dynamic the line is unknown: it is reported as
// one dynamic command.
func (p *parser) parseWords(ws []word, depth int) {
	if len(ws) == 0 {
		return
	}
	vals := make([]string, len(ws))
	for i, w := range ws {
		if w.dyn {
			p.dynamic(ws)
			return
		}
		vals[i] = w.val
	}
	parseString(strings.Join(vals, " "), p.base+p.pos, depth+1, p.out)
}

// dynamic reports words that will be run but are only known at run time.
func (p *parser) dynamic(ws []word) {
	vals := make([]string, len(ws))
	for i, w := range ws {
		vals[i] = w.val
	}
	p.add(Command{Args: []string{strings.Join(vals, " ")}, ArgDynamic: []bool{true}, Dynamic: true})
}
