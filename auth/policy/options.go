package policy

// Options read the way the tools read them.
//
// A check that looks for a refused option by its spelling can be talked
// around: getopt_long accepts any unique prefix of a long option ("--li"
// is sed's --line-length), a value may be attached ("--opt=v", "-n5") or
// be the next word, short options cluster ("-bF file" is -b then -F with
// the value "file"), and an option whose value is optional takes it only
// when attached ("--max-lines sh" runs sh). Reading a value as an operand,
// or an operand as a value, moves the script or the command the check
// looks at. So each tool the allowlist lets through with options has a
// table of all its options (optTable), and its arguments are parsed by
// that table the way the tool's own parser does:
//
//   - "--name" or "--name=value": name exact, or else the one option of
//     the table it is a prefix of; an ambiguous or unknown name is refused;
//   - a long option without a value given "=value" is refused (the tool
//     would refuse it as well);
//   - a required value is the rest of the word after "=" or the next word;
//     an optional value is only ever the rest of the word;
//   - "-abc" is a cluster of short options; the first one that takes a
//     value takes the rest of the word, or (required only) the next word;
//     an unknown letter is refused;
//   - "--" ends the options and "-" is an operand; with permute (GNU's
//     default) options may follow operands, without it (xargs, which stops
//     at its command) the first operand ends the options. A permuting
//     tool is checked both ways (POSIXLY_CORRECT turns permuting off).
//
// Each option has the reason it is refused in architect ("" when safe).
// Fail closed: what the table does not know is refused, never skipped.

import "strings"

// argKind says whether an option takes a value.
type argKind uint8

const (
	argNone     argKind = iota
	argRequired         // attached, or else the next word
	argOptional         // attached only
)

// opt is one option of a tool.
type opt struct {
	long   string // without "--"; "" when the option has none
	short  byte   // 0 when the option has none
	arg    argKind
	unsafe string // why architect refuses it; "" when it only reads
}

// optTable is every option of one tool.
type optTable struct {
	opts    []opt
	permute bool // options may follow operands (GNU getopt's default)
}

// parsedOpt is one option as given.
type parsedOpt struct {
	opt   *opt
	word  string // the word that named it, for messages
	value string
	has   bool // a value was given
}

// parse reads args by the table. reason is "" or why the arguments cannot
// be read (an unknown, ambiguous or malformed option).
func (t *optTable) parse(args []string) (opts []parsedOpt, operands []string, reason string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return opts, append(operands, args[i+1:]...), ""
		case len(a) < 2 || a[0] != '-':
			if !t.permute {
				return opts, append(operands, args[i:]...), ""
			}
			operands = append(operands, a)
		case a[1] == '-':
			name, value, attached := strings.Cut(a[2:], "=")
			o, why := t.long(name)
			if why != "" {
				return nil, nil, "option --" + name + " is " + why
			}
			p := parsedOpt{opt: o, word: a, value: value, has: attached}
			switch {
			case o.arg == argNone && attached:
				return nil, nil, "option --" + o.long + " takes no value"
			case o.arg == argRequired && !attached:
				if i+1 >= len(args) {
					return nil, nil, "option --" + o.long + " needs a value"
				}
				i++
				p.value, p.has = args[i], true
			}
			opts = append(opts, p)
		default:
			for j := 1; j < len(a); j++ {
				o := t.short(a[j])
				if o == nil {
					return nil, nil, "option -" + a[j:j+1] + " is unknown"
				}
				p := parsedOpt{opt: o, word: a}
				if o.arg != argNone {
					switch {
					case j+1 < len(a):
						p.value, p.has = a[j+1:], true
					case o.arg == argRequired:
						if i+1 >= len(args) {
							return nil, nil, "option -" + a[j:j+1] + " needs a value"
						}
						i++
						p.value, p.has = args[i], true
					}
					opts = append(opts, p)
					break
				}
				opts = append(opts, p)
			}
		}
	}
	return opts, operands, ""
}

// long resolves a long option name as getopt_long does.
func (t *optTable) long(name string) (*opt, string) {
	var found *opt
	for k := range t.opts {
		o := &t.opts[k]
		if o.long == "" {
			continue
		}
		if o.long == name {
			return o, ""
		}
		if name != "" && strings.HasPrefix(o.long, name) {
			if found != nil && found != o {
				return nil, "ambiguous"
			}
			found = o
		}
	}
	if found == nil {
		return nil, "unknown"
	}
	return found, ""
}

func (t *optTable) short(c byte) *opt {
	for k := range t.opts {
		if t.opts[k].short == c {
			return &t.opts[k]
		}
	}
	return nil
}

// checkTable returns a check that parses by t and refuses unsafe options;
// the options and operands are passed to then (nil: any operands). A
// permuting table is checked a second time without permuting: with
// POSIXLY_CORRECT in the environment a GNU tool stops reading options at
// its first operand, so "tee /dev/null -a" writes a file named "-a" and
// "sed '1e cmd' -e p" runs the first operand as its script. Both readings
// must pass.
func checkTable(tool string, t *optTable, then func(opts []parsedOpt, operands []string) string) argCheck {
	check := func(t *optTable, args []string) string {
		opts, operands, reason := t.parse(args)
		if reason != "" {
			return tool + ": " + reason + " (architect reads options the way " + tool + " does and refuses what it cannot read)"
		}
		for _, p := range opts {
			if p.opt.unsafe != "" {
				return tool + " " + p.word + ": " + p.opt.unsafe
			}
		}
		if then != nil {
			return then(opts, operands)
		}
		return ""
	}
	return func(args []string) string {
		if reason := check(t, args); reason != "" || !t.permute {
			return reason
		}
		strict := *t
		strict.permute = false
		return check(&strict, args)
	}
}

// Helpers to write tables shortly.
func flag(long string, short byte) opt { return opt{long: long, short: short} }
func valued(long string, short byte) opt {
	return opt{long: long, short: short, arg: argRequired}
}
func optional(long string, short byte) opt {
	return opt{long: long, short: short, arg: argOptional}
}
func unsafe(o opt, why string) opt { o.unsafe = why; return o }
