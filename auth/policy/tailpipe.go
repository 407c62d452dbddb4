package policy

// Trailing-pipe detection for BashCommand's foreground commands. It scans
// the source text instead of reading shellparse's commands: it must hand
// back the exact text before the pipe, which the parse (words with quotes
// removed, no offsets) does not keep, and it refuses more than the parser
// does (backquotes, heredocs, case patterns), since a refusal only keeps a
// tail the user asked for.

import "strings"

// maxTailDigits bounds the digits of a tail count DropTailPipe accepts.
const maxTailDigits = 9

// DropTailPipe removes a trailing "| tail", "| tail -n N", "| tail -N",
// "|tail --lines=N" and the like from a shell command line, because output
// is already bounded and the tail would only hide the head the model could
// otherwise be pointed to. It returns the command unchanged and false when
// the pipe is not a plain trailing tail of stdout: tail with any other
// option (-f, -c, -n +N, -n 0) or a file argument; a pipe inside quotes,
// $( ), ( ), ${ } or a comment; "|&", "||" and ">|"; anything after the
// tail (more pipes, operators, redirections, "&", a new line).
//
// The scan is a conservative approximation of the POSIX shell grammar: a
// command with backquotes or here-documents ("<<") outside single quotes,
// unbalanced parentheses or quotes, or a ")" closing a case pattern is left
// unchanged, since refusing costs only some truncated output.
func DropTailPipe(command string) (string, bool) {
	pipe := lastTopLevelPipe(command)
	if pipe < 0 || !plainTail(command[pipe+1:]) {
		return command, false
	}
	rest := strings.TrimRight(command[:pipe], " \t")
	if rest == "" || strings.ContainsAny(rest[len(rest)-1:], "|&;<>(\\\n") {
		return command, false
	}
	return rest, true
}

// lastTopLevelPipe returns the index of the last "|" of command that
// separates two commands of its outermost pipeline, or -1 when there is
// none or the command is beyond the scan (see DropTailPipe).
func lastTopLevelPipe(s string) int {
	var nest []byte // open constructs: '(' for ( and $(, '{' for ${, '"'
	last := -1
	next := func(i int) byte {
		if i+1 < len(s) {
			return s[i+1]
		}
		return 0
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		var top byte
		if len(nest) > 0 {
			top = nest[len(nest)-1]
		}
		if top == '"' {
			switch c {
			case '\\':
				i++
			case '"':
				nest = nest[:len(nest)-1]
			case '`':
				return -1
			case '$':
				if n := next(i); n == '(' || n == '{' {
					nest = append(nest, n)
					i++
				}
			}
			continue
		}
		switch c {
		case '\\':
			i++
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return -1
			}
			i += j + 1
		case '"':
			nest = append(nest, '"')
		case '`':
			return -1
		case '$':
			switch next(i) {
			case '\'': // ANSI-C quoting: backslash escapes, ' ends
				j := i + 2
				for ; j < len(s) && s[j] != '\''; j++ {
					if s[j] == '\\' {
						j++
					}
				}
				if j >= len(s) {
					return -1
				}
				i = j
			case '(', '{':
				nest = append(nest, next(i))
				i++
			}
		case '(':
			nest = append(nest, '(')
		case ')':
			if top != '(' {
				return -1
			}
			nest = nest[:len(nest)-1]
		case '}':
			if top == '{' {
				nest = nest[:len(nest)-1]
			}
		case '#':
			if top != '{' && (i == 0 || strings.IndexByte(" \t\n;&|()<>", s[i-1]) >= 0) {
				j := strings.IndexByte(s[i:], '\n')
				if j < 0 {
					j = len(s) - i // the rest is a comment
				}
				i += j - 1
			}
		case '<':
			if next(i) == '<' {
				return -1
			}
		case '|':
			switch {
			case next(i) == '|':
				i++
			case top != 0:
			case i > 0 && s[i-1] == '>': // ">|" redirects
			default:
				last = i // "|&" too; plainTail refuses what follows it
			}
		}
	}
	if len(nest) > 0 {
		return -1
	}
	return last
}

// plainTail reports whether seg, the text after a pipe, is only "tail"
// with line-count options and blanks, optionally ending in new lines.
func plainTail(seg string) bool {
	seg = strings.TrimRight(seg, " \t\n")
	if strings.IndexByte(seg, '\n') >= 0 {
		return false
	}
	words := strings.FieldsFunc(seg, func(r rune) bool { return r == ' ' || r == '\t' })
	if len(words) == 0 || words[0] != "tail" {
		return false
	}
	for i := 1; i < len(words); i++ {
		w := words[i]
		var n string
		switch {
		case w == "-n" || w == "--lines":
			i++
			if i == len(words) {
				return false
			}
			n = words[i]
		case strings.HasPrefix(w, "--lines="):
			n = w[len("--lines="):]
		case strings.HasPrefix(w, "-n"):
			n = w[len("-n"):]
		case strings.HasPrefix(w, "-"):
			n = w[len("-"):]
		default:
			return false
		}
		if !tailCount(n) {
			return false
		}
	}
	return true
}

// tailCount reports whether s is a positive decimal line count; "+N" counts
// from the start and is refused.
func tailCount(s string) bool {
	if s == "" || len(s) > maxTailDigits {
		return false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n > 0
}
