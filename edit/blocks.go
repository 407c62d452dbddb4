// Package edit is the one plan/commit engine for every file mutation:
// line_patch, search_replace (this file's block syntax and the tolerant
// matcher), replace and undo. Plan validates a batch against the path policy,
// the session's read ledger and the current revisions and builds the new
// bytes in memory, writing nothing; Commit replaces each file atomically
// (same-directory temp file, fsync, rename, directory fsync) and reports the
// committed prefix when it stops. It owns receipts and undo records; it does
// not own path policy (a PathChecker is passed in) or what was read (the
// evidence.Ledger is).
package edit

import (
	"fmt"
	"strconv"
	"strings"
)

// Limits on untrusted block input.
const (
	// MaxBlocks is the most blocks one content string (or one Apply call)
	// may carry. It matches the EditFiles limit on patches per file.
	MaxBlocks = 256
	// MaxBlocksSize is the largest content string ParseBlocks accepts, and
	// the largest total of Search and Replace bytes Apply accepts.
	MaxBlocksSize = 4 << 20
	// maxAnchorDigits bounds the digits of an @N anchor so it fits an int
	// on every platform.
	maxAnchorDigits = 9
)

// markerRun is the fewest marker characters ('<', '=', '>') that make a
// marker line. Models often emit 8 or more; any run of at least 7 is accepted.
const markerRun = 7

// Anchor pins a block to lines of the original revision: "@N" gives
// Start == End == N, "@A-B" gives Start A and End B. Lines are 1-based and
// inclusive.
type Anchor struct {
	Start, End int
}

// String renders the anchor as it is written after SEARCH.
func (a Anchor) String() string {
	if a.Start == a.End {
		return "@" + strconv.Itoa(a.Start)
	}
	return "@" + strconv.Itoa(a.Start) + "-" + strconv.Itoa(a.End)
}

// Block is one search/replace block.
//
// Search and Replace hold whole lines, each terminated by "\n": a body of
// zero lines is "" and a body of one empty line is "\n". Carriage returns at
// the end of body lines are dropped by ParseBlocks, so bodies are LF-only;
// Apply writes replacement lines with the line endings of the region they
// replace. Apply also accepts bodies whose last line lacks the "\n".
type Block struct {
	Search  string
	Replace string
	Anchor  *Anchor // from "@N" or "@A-B" after SEARCH; nil if none
	Line    int     // 1-based line of the SEARCH marker in the content, for errors
}

// BlockSyntaxError reports malformed block content. Line is the 1-based line
// of the content it concerns, or 0 when it concerns the content as a whole.
type BlockSyntaxError struct {
	Line int
	Msg  string
}

func (e *BlockSyntaxError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("edit: block syntax: line %d: %s", e.Line, e.Msg)
	}
	return "edit: block syntax: " + e.Msg
}

type markerKind int

const (
	notMarker markerKind = iota
	searchMarker
	dividerMarker
	replaceMarker
)

// classifyLine decides whether line (without its line ending) is a marker.
//
//	SEARCH:  7+ '<', optional spaces or tabs, "SEARCH", optionally
//	         whitespace and an anchor "@N" or "@A-B", optional trailing
//	         whitespace.
//	divider: 7+ '=', optional trailing whitespace.
//	REPLACE: 7+ '>', optional spaces or tabs, "REPLACE", optional trailing
//	         whitespace.
//
// A run of 7+ '<' or '>' followed by a keyword and other text (for example
// "<<<<<<< SEARCH foo") is an error rather than body text, so a mistyped
// marker is never silently written into a file. A run followed by anything
// else ("<<<<<<< HEAD", "<<<<<<< SEARCHING") is ordinary text.
func classifyLine(line string) (markerKind, *Anchor, string) {
	line = strings.TrimRight(line, " \t")
	if line == "" {
		return notMarker, nil, ""
	}
	c := line[0]
	if c != '<' && c != '=' && c != '>' {
		return notMarker, nil, ""
	}
	n := 0
	for n < len(line) && line[n] == c {
		n++
	}
	if n < markerRun {
		return notMarker, nil, ""
	}
	rest := line[n:]
	switch c {
	case '=':
		if rest == "" {
			return dividerMarker, nil, ""
		}
		return notMarker, nil, ""
	case '<':
		rest = strings.TrimLeft(rest, " \t")
		after, ok := strings.CutPrefix(rest, "SEARCH")
		if !ok {
			return notMarker, nil, ""
		}
		if after == "" {
			return searchMarker, nil, ""
		}
		if after[0] != ' ' && after[0] != '\t' {
			return notMarker, nil, ""
		}
		a, msg := parseAnchor(strings.TrimLeft(after, " \t"))
		if msg != "" {
			return notMarker, nil, msg
		}
		return searchMarker, a, ""
	default: // '>'
		rest = strings.TrimLeft(rest, " \t")
		after, ok := strings.CutPrefix(rest, "REPLACE")
		if !ok {
			return notMarker, nil, ""
		}
		if after == "" {
			return replaceMarker, nil, ""
		}
		if after[0] != ' ' && after[0] != '\t' {
			return notMarker, nil, ""
		}
		return notMarker, nil, "unexpected text after REPLACE marker"
	}
}

// parseAnchor parses "@N" or "@A-B" with 1 <= A <= B.
func parseAnchor(s string) (*Anchor, string) {
	const bad = `SEARCH marker may be followed only by an anchor "@N" or "@A-B"`
	s, ok := strings.CutPrefix(s, "@")
	if !ok {
		return nil, bad
	}
	first, second, ranged := strings.Cut(s, "-")
	a, ok := parseLineNumber(first)
	if !ok {
		return nil, bad
	}
	b := a
	if ranged {
		if b, ok = parseLineNumber(second); !ok {
			return nil, bad
		}
	}
	if b < a {
		return nil, fmt.Sprintf("anchor @%d-%d ends before it starts", a, b)
	}
	return &Anchor{Start: a, End: b}, ""
}

// parseLineNumber parses 1 to maxAnchorDigits ASCII digits with a value of
// at least 1.
func parseLineNumber(s string) (int, bool) {
	if s == "" || len(s) > maxAnchorDigits {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, n >= 1
}

// ParseBlocks parses search/replace blocks:
//
//	<<<<<<< SEARCH [@N | @A-B]
//	lines to find
//	=======
//	lines to put in their place
//	>>>>>>> REPLACE
//
// Marker lines are described at classifyLine: 7 or more marker characters,
// trailing whitespace and a CR before the LF are allowed. Only blank lines may
// appear between blocks; any other text outside a block is an error. A
// SEARCH body that is empty or only whitespace is an error. Inside a REPLACE
// body a divider line is ordinary text (so replacement text may contain
// "=======" lines), but a SEARCH marker is an error: it almost always means a
// forgotten REPLACE marker. Content larger than MaxBlocksSize, more than
// MaxBlocks blocks, or no block at all is an error. Every error is a
// *BlockSyntaxError.
func ParseBlocks(content string) ([]Block, error) {
	if len(content) > MaxBlocksSize {
		return nil, &BlockSyntaxError{Msg: fmt.Sprintf("content is %d bytes, more than the limit of %d", len(content), MaxBlocksSize)}
	}
	const (
		outside = iota
		inSearch
		inReplace
	)
	var (
		blocks []Block
		cur    Block
		body   strings.Builder
		state  = outside
	)
	rest := content
	for ln := 1; rest != ""; ln++ {
		line, tail, _ := strings.Cut(rest, "\n")
		rest = tail
		line = strings.TrimRight(line, "\r")
		kind, anchor, msg := classifyLine(line)
		if msg != "" {
			return nil, &BlockSyntaxError{Line: ln, Msg: msg}
		}
		switch state {
		case outside:
			switch kind {
			case searchMarker:
				if len(blocks) == MaxBlocks {
					return nil, &BlockSyntaxError{Line: ln, Msg: fmt.Sprintf("more than %d blocks", MaxBlocks)}
				}
				cur = Block{Line: ln, Anchor: anchor}
				body.Reset()
				state = inSearch
			case dividerMarker:
				return nil, &BlockSyntaxError{Line: ln, Msg: "divider ======= outside a block"}
			case replaceMarker:
				return nil, &BlockSyntaxError{Line: ln, Msg: "REPLACE marker without a SEARCH marker"}
			default:
				if strings.TrimSpace(line) != "" {
					return nil, &BlockSyntaxError{Line: ln, Msg: "text outside a block"}
				}
			}
		case inSearch:
			switch kind {
			case dividerMarker:
				cur.Search = body.String()
				if strings.TrimSpace(cur.Search) == "" {
					return nil, &BlockSyntaxError{Line: cur.Line, Msg: "empty SEARCH"}
				}
				body.Reset()
				state = inReplace
			case searchMarker:
				return nil, &BlockSyntaxError{Line: ln, Msg: "SEARCH marker inside a SEARCH body (missing =======)"}
			case replaceMarker:
				return nil, &BlockSyntaxError{Line: ln, Msg: "REPLACE marker before the ======= divider"}
			default:
				body.WriteString(line)
				body.WriteByte('\n')
			}
		case inReplace:
			switch kind {
			case replaceMarker:
				cur.Replace = body.String()
				blocks = append(blocks, cur)
				state = outside
			case searchMarker:
				return nil, &BlockSyntaxError{Line: ln, Msg: "SEARCH marker inside a REPLACE body (missing >>>>>>> REPLACE)"}
			default:
				body.WriteString(line)
				body.WriteByte('\n')
			}
		}
	}
	if state != outside {
		return nil, &BlockSyntaxError{Line: cur.Line, Msg: "block not terminated by >>>>>>> REPLACE"}
	}
	if len(blocks) == 0 {
		return nil, &BlockSyntaxError{Msg: "no <<<<<<< SEARCH blocks"}
	}
	return blocks, nil
}

// RenderBlocks writes blocks in the canonical syntax ParseBlocks reads
// ("<<<<<<< SEARCH", "=======", ">>>>>>> REPLACE"). For blocks that
// ParseBlocks produced, ParseBlocks(RenderBlocks(b)) gives b back except for
// the Line fields.
func RenderBlocks(blocks []Block) string {
	var b strings.Builder
	for _, blk := range blocks {
		b.WriteString("<<<<<<< SEARCH")
		if blk.Anchor != nil {
			b.WriteByte(' ')
			b.WriteString(blk.Anchor.String())
		}
		b.WriteByte('\n')
		writeBody(&b, blk.Search)
		b.WriteString("=======\n")
		writeBody(&b, blk.Replace)
		b.WriteString(">>>>>>> REPLACE\n")
	}
	return b.String()
}

func writeBody(b *strings.Builder, s string) {
	if s == "" {
		return
	}
	b.WriteString(s)
	if !strings.HasSuffix(s, "\n") {
		b.WriteByte('\n')
	}
}
