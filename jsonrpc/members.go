package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// Members walks the members of a JSON object that is already known to be
// valid (a message DecodeMessage accepted, or a member of one), calling f
// with each member's name and its value's bytes (a sub-slice of obj), in
// order, until f returns false. It does not validate: it only finds where
// each value ends, which costs a small fraction of a validating scan, so
// that the parts of a large message can be looked at without scanning its
// large values again. Names are unescaped; repeated names are all passed.
func Members(obj []byte, f func(name string, value []byte) bool) error {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return ErrNotObject
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return nil
	}
	for {
		if i >= len(obj) || obj[i] != '"' {
			return ErrNotObject
		}
		end, err := skipString(obj, i)
		if err != nil {
			return err
		}
		name := string(obj[i+1 : end-1])
		if bytes.IndexByte(obj[i:end], '\\') >= 0 || !utf8.ValidString(name) {
			// Escapes, and invalid UTF-8 (which encoding/json reads as
			// U+FFFD), name the member as encoding/json does.
			if json.Unmarshal(obj[i:end], &name) != nil {
				return ErrNotObject
			}
		}
		i = skipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return ErrNotObject
		}
		start := skipSpace(obj, i+1)
		end, err = skipValue(obj, start)
		if err != nil {
			return err
		}
		if !f(name, obj[start:end]) {
			return nil
		}
		i = skipSpace(obj, end)
		if i >= len(obj) {
			return ErrNotObject
		}
		switch obj[i] {
		case ',':
			i = skipSpace(obj, i+1)
		case '}':
			return nil
		default:
			return ErrNotObject
		}
	}
}

// Member returns the value of the last member called name in the valid
// JSON object obj (encoding/json keeps the last of repeated members too);
// nil when there is none.
func Member(obj []byte, name string) []byte {
	var out []byte
	Members(obj, func(n string, v []byte) bool {
		if n == name {
			out = v
		}
		return true
	})
	return out
}

// ErrNotObject is returned by Members for bytes that are not a JSON object.
var ErrNotObject = errors.New("jsonrpc: not a JSON object")

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string that starts at b[i].
func skipString(b []byte, i int) (int, error) {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, ErrNotObject
		}
		j += k
		// The quote is escaped when an odd number of backslashes precede it.
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		j++
		if n%2 == 0 {
			return j, nil
		}
	}
}

// skipValue returns the index after the value that starts at b[i]. Depth is
// a counter, not recursion, so nesting costs no stack.
func skipValue(b []byte, i int) (int, error) {
	depth := 0
	for i < len(b) {
		switch c := b[i]; c {
		case '"':
			end, err := skipString(b, i)
			if err != nil {
				return 0, err
			}
			i = end
		case '{', '[':
			depth++
			i++
		case '}', ']':
			if depth == 0 {
				return i, nil // the end of a scalar member's object
			}
			depth--
			i++
		case ',', ':', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i, nil
			}
			i++
		default:
			i++
		}
		if depth == 0 && i > 0 && (b[i-1] == '"' || b[i-1] == '}' || b[i-1] == ']') {
			return i, nil
		}
	}
	if depth != 0 {
		return 0, ErrNotObject
	}
	return i, nil
}
