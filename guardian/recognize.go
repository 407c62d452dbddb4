package guardian

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// TurnState is what the text at the cursor says a program waits for.
type TurnState string

// Turn states a recognizer reports.
const (
	// TurnNone: nothing recognized (quiet, at most).
	TurnNone TurnState = ""
	// TurnBusy: the program says it is working (a spinner, "Thinking...").
	TurnBusy TurnState = "busy"
	// TurnAwaitingInput: the program asks for text.
	TurnAwaitingInput TurnState = "awaiting_input"
	// TurnAwaitingApproval: the program asks a yes/no question. A `[y/N]`
	// prompt is an approval, also when a `read` is what waits: approval is
	// the more precise kind of input, answered the same way (send_text).
	TurnAwaitingApproval TurnState = "awaiting_approval"
)

// Recognizer markers are regular expressions (RE2 syntax, package regexp:
// matching takes time linear in the screen, whatever the expression), as
// in the Rust Winx's WINX_TURN_RECOGNIZER_CONFIG, so its configurations
// work unchanged. RegexPrefix, the explicit form of earlier releases,
// still marks one; LiteralPrefix marks a literal substring.
const (
	RegexPrefix   = "re:"
	LiteralPrefix = "lit:"
)

// MaxRecognizerMarkers bounds the markers of one configuration.
const MaxRecognizerMarkers = 256

// ErrRecognizerConfig: a turn recognizer configuration is invalid.
var ErrRecognizerConfig = errors.New("guardian: invalid turn recognizer configuration")

// TurnRecognizer classifies the text a program shows into a TurnState
// from marker lists. It is immutable once built and safe to share.
type TurnRecognizer struct {
	busy, input, approval []marker1
	// lastLine: only the last non-blank row is looked at (prompts sit at
	// the cursor); otherwise the whole screen is, as a TUI may show its
	// state anywhere.
	lastLine bool
}

// marker1 is one marker: a literal or a regular expression.
type marker1 struct {
	lit string
	re  *regexp.Regexp
}

func (m marker1) match(s string) bool {
	if m.re != nil {
		return m.re.MatchString(s)
	}
	return strings.Contains(s, m.lit)
}

// recognizerConfig is the JSON form of WINX_TURN_RECOGNIZER_CONFIG.
type recognizerConfig struct {
	Busy             []string `json:"busy"`
	AwaitingInput    []string `json:"awaiting_input"`
	AwaitingApproval []string `json:"awaiting_approval"`
}

// ParseTurnRecognizer reads a configuration
// `{"busy": [...], "awaiting_input": [...], "awaiting_approval": [...]}`
// of markers (regular expressions, also with RegexPrefix; literal
// substrings with LiteralPrefix). Unknown keys, bad expressions (named with
// the marker), empty markers and a
// configuration with no marker at all are errors wrapping
// ErrRecognizerConfig. The markers are matched against the whole screen.
func ParseTurnRecognizer(raw string) (*TurnRecognizer, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.DisallowUnknownFields()
	var c recognizerConfig
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRecognizerConfig, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: text after the JSON object", ErrRecognizerConfig)
	}
	n := len(c.Busy) + len(c.AwaitingInput) + len(c.AwaitingApproval)
	if n == 0 {
		return nil, fmt.Errorf("%w: no markers in busy, awaiting_input or awaiting_approval", ErrRecognizerConfig)
	}
	if n > MaxRecognizerMarkers {
		return nil, fmt.Errorf("%w: %d markers, more than %d", ErrRecognizerConfig, n, MaxRecognizerMarkers)
	}
	r := &TurnRecognizer{}
	var err error
	if r.busy, err = compileMarkers("busy", c.Busy); err != nil {
		return nil, err
	}
	if r.input, err = compileMarkers("awaiting_input", c.AwaitingInput); err != nil {
		return nil, err
	}
	if r.approval, err = compileMarkers("awaiting_approval", c.AwaitingApproval); err != nil {
		return nil, err
	}
	return r, nil
}

func compileMarkers(key string, list []string) ([]marker1, error) {
	out := make([]marker1, 0, len(list))
	for i, m := range list {
		if m == "" || m == RegexPrefix || m == LiteralPrefix {
			return nil, fmt.Errorf("%w: %s[%d] is empty", ErrRecognizerConfig, key, i)
		}
		if lit, ok := strings.CutPrefix(m, LiteralPrefix); ok {
			out = append(out, marker1{lit: lit})
			continue
		}
		expr, _ := strings.CutPrefix(m, RegexPrefix)
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, fmt.Errorf("%w: %s[%d] %q is not a regular expression (prefix it with %q for a literal): %v", ErrRecognizerConfig, key, i, m, LiteralPrefix, err)
		}
		out = append(out, marker1{re: re})
	}
	return out, nil
}

// builtinApproval are the common yes/no prompts, at the end of the line
// at the cursor.
var builtinApproval = []marker1{
	{re: regexp.MustCompile(`(?i)[\[(]\s*y(es)?\s*/\s*n(o)?\s*[\])]`)},
	{re: regexp.MustCompile(`(?i)\(yes/no(/\[fingerprint\])?\)`)},
	{re: regexp.MustCompile(`(?i)\b(proceed|continue|are you sure)\b[^?]*\?\s*$`)},
}

// builtinInput are prompts for secrets and values.
var builtinInput = []marker1{
	{re: regexp.MustCompile(`(?i)(password|passphrase|passcode|token)[^:]*:\s*$`)},
}

// BuiltinTurnRecognizer recognizes the common approval prompts (`[y/N]`,
// `[Y/n]`, `(yes/no)`, `Proceed?`, `Continue?`, `Are you sure?`) and
// password prompts on the last non-blank row.
func BuiltinTurnRecognizer() *TurnRecognizer {
	return &TurnRecognizer{approval: builtinApproval, input: builtinInput, lastLine: true}
}

// Classify reports what rows (a screen, or a command's output as lines)
// show: approval before input before busy, since a program that asks is
// no longer working.
func (r *TurnRecognizer) Classify(rows []string) TurnState {
	if r == nil {
		return TurnNone
	}
	text := strings.Join(rows, "\n")
	if r.lastLine {
		text = ""
		for i := len(rows) - 1; i >= 0; i-- {
			if strings.TrimSpace(rows[i]) != "" {
				text = rows[i]
				break
			}
		}
	}
	for _, set := range []struct {
		ms []marker1
		st TurnState
	}{{r.approval, TurnAwaitingApproval}, {r.input, TurnAwaitingInput}, {r.busy, TurnBusy}} {
		for _, m := range set.ms {
			if m.match(text) {
				return set.st
			}
		}
	}
	return TurnNone
}
