package guardian

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"winx/evidence/redact"
)

// Output shaping turns the rendered text of a command (VT output, lines
// joined by "\n") into what the model is shown, in three steps:
//
//  1. Repetition collapse: a run of three or more identical consecutive lines
//     becomes the line once followed by "  [winx: xN]". Blank lines are lines
//     like any other, so a run of blank lines becomes "  [winx: xN]". A line
//     that already ends in a run mark with N >= 3 counts as N lines of its
//     text, which makes the collapse idempotent (shaping shaped text changes
//     nothing) and lets an earlier mark merge with the same line repeated
//     after it.
//  2. Redaction of the whole collapsed text, when a Redactor is given.
//  3. Head truncation to the budget at a line boundary, keeping the last
//     lines; the dropped head is saved to a new private file in ScratchDir
//     and one note line naming it is put before the kept text.
//
// Deliberately (docs/tools.md, "BashCommand"; the older contract said
// collapse, truncate, redact): redaction runs before truncation, not after. Redacting the two
// halves after the cut would let a secret that straddles it (a PEM key,
// or the tail of a cut long line) escape both, and replacements that are
// longer than the secret would push the delivered text over the budget.
// Both the delivered text and the saved head are still redacted, and nothing
// unredacted is written to disk.
//
// Every step is linear in the size of the text.

// DefaultOutputBudget is the number of bytes of shaped text delivered when
// ShapeOptions.BudgetBytes is zero.
const DefaultOutputBudget = 32 << 10

const (
	// collapseMinRun is the shortest run of identical lines that collapses.
	collapseMinRun = 3
	// maxRunCount caps the count in a run mark: marks with more digits are
	// plain text and sums saturate here, so a mark always parses back to
	// the count it shows.
	maxRunCount = 999_999_999
	// runMarkOpen starts the mark appended to a collapsed line; the count
	// and "]" follow.
	runMarkOpen = "  [winx: x"
	// spillAttempts bounds how many fresh names are tried when a name in
	// ScratchDir is already taken.
	spillAttempts = 8
)

// ShapeOptions configure Shape. The zero value means defaults.
type ShapeOptions struct {
	// BudgetBytes is the most bytes of output text delivered, not counting
	// the note line about a dropped head; <= 0 means DefaultOutputBudget.
	BudgetBytes int
	// ScratchDir receives the dropped head of output over budget, one new
	// 0600 file per shaping. It is created 0700 if missing; a relative path
	// is resolved against the process working directory. "" means the head
	// is dropped and only reported.
	ScratchDir string
	// NoCompress turns the repetition collapse off (WINX_NO_COMPRESS=1).
	NoCompress bool
	// Redactor redacts the text before it is delivered or saved; nil means
	// no redaction (the caller reads WINX_NO_REDACT).
	Redactor *redact.Redactor
}

// Shaped is output ready for the model.
type Shaped struct {
	Text         string // what the model sees
	DroppedBytes int    // bytes of collapsed, redacted text removed from the head
	DroppedLines int    // complete lines among DroppedBytes; a cut inside the last line counts in bytes only
	DroppedFile  string // absolute path of the file holding the dropped head, "" if none
	Collapsed    int    // runs of input lines that were merged into one marked line
	Redactions   int    // secrets replaced by the Redactor
	// Journal is the private file that keeps the command's output from
	// its first line (within JournalCommandBudget), "" if none.
	Journal string
	// LostLines and LostBytes count lines this delivery could not show that
	// are not in the journal either (its budget was reached): dropped, and
	// said so in Text.
	LostLines int
	LostBytes int64
	// Open: the last line of Text is a running command's line still being
	// written (no newline yet); the next look sends it again, whole and
	// current. Joining two looks drops it from the first (DropOpenLine).
	Open bool
}

// DropOpenLine returns text without its last line: the open line of a
// look that a later look sends again.
func DropOpenLine(text string) string {
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		return text[:i]
	}
	return ""
}

// Shape collapses, redacts and truncates text for delivery. The returned
// Shaped is always usable: a non-nil error only reports that the dropped
// head could not be saved, in which case the note line in Text says so and
// DroppedFile is "".
func Shape(text string, opts ShapeOptions) (Shaped, error) {
	budget := opts.BudgetBytes
	if budget <= 0 {
		budget = DefaultOutputBudget
	}
	var s Shaped
	if !opts.NoCompress {
		text, s.Collapsed = collapseRuns(text)
	}
	if opts.Redactor != nil {
		text, s.Redactions = opts.Redactor.String(text)
	}
	if len(text) <= budget {
		s.Text = text
		return s, nil
	}
	cut := headCut(text, budget)
	head, kept := text[:cut], text[cut:]
	s.DroppedBytes = len(head)
	s.DroppedLines = strings.Count(head, "\n")
	var err error
	if opts.ScratchDir != "" {
		s.DroppedFile, err = spillHead(opts.ScratchDir, head, time.Now())
		if err != nil {
			err = fmt.Errorf("guardian: save dropped output: %w", err)
		}
	}
	s.Text = droppedNote(s, err != nil) + kept
	return s, err
}

// droppedNote is the line put before truncated text.
func droppedNote(s Shaped, saveFailed bool) string {
	lines := "lines"
	if s.DroppedLines == 1 {
		lines = "line"
	}
	note := fmt.Sprintf("[winx: %d bytes (%d %s) dropped from the head", s.DroppedBytes, s.DroppedLines, lines)
	switch {
	case s.DroppedFile != "":
		note += " and saved in " + s.DroppedFile
	case saveFailed:
		note += "; they could not be saved"
	}
	return note + "]\n"
}

// collapseRuns replaces each run of collapseMinRun or more identical lines
// of text with one marked line and reports how many runs it merged. Lines
// are separated by "\n"; a final "\n" ends the last line and is kept.
//
// A group of lines that is not merged comes out byte for byte as it went in
// (a lone marked line is already canonical), so only merged runs are
// rewritten and text without any is returned as is, without a copy.
func collapseRuns(text string) (string, int) {
	body := strings.TrimSuffix(text, "\n")
	var (
		b         strings.Builder
		copied    int    // text[:copied] is already in b
		collapsed int    // runs rewritten into b
		line      string // text of the current group of lines
		count     int    // lines of text the group stands for
		members   int    // input lines in the group; 0 before the first line
		start     int    // offset of the group's first line
	)
	// merge writes the group, which ends at end, as one marked line.
	merge := func(end int) {
		b.WriteString(text[copied:start])
		b.WriteString(line)
		b.WriteString(runMarkOpen)
		b.WriteString(strconv.Itoa(count))
		b.WriteByte(']')
		copied = end
		collapsed++
	}
	for pos := 0; ; {
		end := len(body)
		i := strings.IndexByte(body[pos:], '\n')
		if i >= 0 {
			end = pos + i
		}
		lt, n := parseRunMark(body[pos:end])
		if members > 0 && lt == line {
			count = min(count+n, maxRunCount)
			members++
		} else {
			if members > 1 && count >= collapseMinRun {
				merge(pos - 1)
			}
			line, count, members, start = lt, n, 1, pos
		}
		if i < 0 {
			break
		}
		pos = end + 1
	}
	if members > 1 && count >= collapseMinRun {
		merge(len(body))
	}
	if collapsed == 0 {
		return text, 0
	}
	b.WriteString(text[copied:])
	return b.String(), collapsed
}

// parseRunMark splits a line ending in a run mark into its text and count.
// Any other line, including a mark with a count below collapseMinRun, a
// leading zero or more than nine digits, is plain text standing for itself.
func parseRunMark(l string) (string, int) {
	end := len(l) - 1
	if end < len(runMarkOpen)+1 || l[end] != ']' {
		return l, 1
	}
	start := end
	for start > end-9 && l[start-1] >= '0' && l[start-1] <= '9' {
		start--
	}
	digits := l[start:end]
	if digits == "" || digits[0] == '0' || !strings.HasSuffix(l[:start], runMarkOpen) {
		return l, 1
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n < collapseMinRun {
		return l, 1
	}
	return l[:start-len(runMarkOpen)], n
}

// headCut returns where the kept tail of text begins so that at most budget
// bytes are kept: the first line boundary that fits, or, when not even the
// last line fits, the first rune boundary inside it. It expects
// len(text) > budget > 0.
func headCut(text string, budget int) int {
	cut := len(text) - budget
	if text[cut-1] == '\n' {
		return cut
	}
	if i := strings.IndexByte(text[cut:], '\n'); i >= 0 && cut+i+1 < len(text) {
		return cut + i + 1
	}
	// Step past at most one rune's continuation bytes: invalid UTF-8 must
	// not move the cut further.
	for i := 1; i < utf8.UTFMax && cut < len(text) && !utf8.RuneStart(text[cut]); i++ {
		cut++
	}
	return cut
}

// spillHead writes head to a new file in dir and returns its absolute path.
func spillHead(dir, head string, now time.Time) (string, error) {
	return spillReader(dir, strings.NewReader(head), now)
}

// spillReader writes what r holds to a new file in dir and returns its
// absolute path.
// The file is created exclusively and without following a symlink, so a name
// planted in dir, dangling symlink or not, is never written through; a taken
// name is retried with fresh random bits.
func spillReader(dir string, r io.Reader, now time.Time) (string, error) {
	// Not atomicfile.MkdirPrivate: dir is the caller's, and an existing one
	// keeps the mode its owner gave it; only a missing one is made private.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for range spillAttempts {
		path := filepath.Join(abs, spillName(now))
		err = writeNewFile(path, r)
		if err == nil {
			return path, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return "", err
}

// spillName is "output-<UTC time>-<8 random hex>.txt".
func spillName(now time.Time) string {
	var r [4]byte
	rand.Read(r[:]) // never fails (crypto/rand, Go 1.24+)
	return "output-" + now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(r[:]) + ".txt"
}

// writeNewFile creates path with mode 0600 and writes data to it. It fails
// with an error wrapping fs.ErrExist if anything, a symlink included,
// already has that name; a partly written file is removed.
func writeNewFile(path string, r io.Reader) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}
