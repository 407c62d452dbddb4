package guardian

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"winx/evidence/redact"
)

// A command's output leaves its terminal as logical lines, redacted one by
// one before anything else sees them, and goes two ways: to the command's
// journal, a 0600 file in the session's private directory that keeps every
// line from the first within a disk budget, and to a small in-memory tail
// of the lines not yet delivered, which is what an answer shows. Nothing
// else keeps the output, so a flood costs the tail, the terminal's cells
// and a write buffer, whatever its size. Lines that leave the tail before
// anyone saw them are counted, and the next answer says which lines they
// were and where the journal keeps them, or that the budget dropped them.

// Budgets of the journals.
const (
	// JournalCommandBudget bounds the bytes of one command's journal file;
	// later lines are counted and reported, not written.
	JournalCommandBudget = 64 << 20
	// JournalSessionBudget bounds the journal files a session keeps; the
	// oldest finished commands' journals are deleted first.
	JournalSessionBudget = 256 << 20
	// journalWriteBuffer is the write buffer of an open journal.
	journalWriteBuffer = 64 << 10
	// freeAfterBytes is the output size after which a finished command
	// hands freed memory back to the system at once.
	freeAfterBytes = 16 << 20
)

// cutMark ends a piece of a line longer than vt.MaxLineBytes; the line goes
// on in the next one.
const cutMark = " [winx: line continues on the next line]"

// tailEntry is a run of identical lines of the tail.
type tailEntry struct {
	text   string
	count  int
	first  int   // number of the first line of the run, from 1
	offset int64 // where that line starts in the journal file when saved
	saved  bool  // the lines are in the journal file
}

// skipped describes undelivered lines that left the tail unseen.
type skipped struct {
	first, lines int
	bytes        int64
	offset       int64 // of line first in the journal file, when saved
	// lostLines, lostBytes: those of them not in the journal file either.
	lostLines int
	lostBytes int64
}

// journal is one command's output. Guarded by the Shell's mu.
type journal struct {
	path   string // "" when the file could not be created
	opened bool   // open ran: f and w are set, or err says why not
	f      *os.File
	w      *bufio.Writer
	err    error // first error creating or writing the file
	budget int64

	lines     int   // lines so far, numbered from 1
	bytes     int64 // their bytes, a newline each
	fileLines int   // lines 1..fileLines are in the file
	fileBytes int64

	lossNoted bool // the final note about unsaved lines was given

	red        *redact.Lines // nil: no redaction
	redactions int           // replacements not yet reported

	compress   bool
	tail       []tailEntry // tail[head:] are undelivered lines
	head       int
	tailBytes  int
	tailBudget int
	skip       skipped
}

// newJournal prepares path (which must not exist) for a command's output.
// The file is created by open: the launch calls it once the command is
// typed, so that the shell reads the line meanwhile, and add and close call
// it first, so no line can come before it.
func newJournal(path string, red *redact.Redactor, tailBudget int, compress bool) *journal {
	j := &journal{path: path, budget: JournalCommandBudget, tailBudget: tailBudget, compress: compress}
	if red != nil {
		j.red = red.Lines()
	}
	return j
}

// open creates the journal's file, once; an error is kept and reported in
// the answers, and the output still flows.
func (j *journal) open() {
	if j.opened || j.path == "" {
		return
	}
	j.opened = true
	// Opened by hand, not with os.OpenFile: that tries (and, for a regular
	// file, fails) to register the descriptor with the runtime's poller,
	// five system calls more on every command's path.
	fd, err := syscall.Open(j.path, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		j.err = &os.PathError{Op: "open", Path: j.path, Err: err}
		j.path = ""
		return
	}
	j.f = os.NewFile(uintptr(fd), j.path)
	j.w = bufio.NewWriterSize(j.f, journalWriteBuffer)
}

// add takes one complete line of output, raw from the terminal; lines up
// to number delivered were shown already (as live screen lines) and only
// go to the file.
func (j *journal) add(raw string, cut bool, delivered int) {
	j.open()
	text := raw
	if j.red != nil {
		var n int
		text, n = j.red.Line(raw)
		j.redactions += n
	}
	if cut {
		text += cutMark
	}
	j.lines++
	size := int64(len(text) + 1)
	j.bytes += size
	saved := false
	if j.w != nil && j.err == nil && j.fileLines == j.lines-1 && j.fileBytes+size <= j.budget {
		j.w.WriteString(text)
		if err := j.w.WriteByte('\n'); err != nil {
			j.err = err
		} else {
			j.fileLines++
			j.fileBytes += size
			saved = true
		}
	}
	if j.lines <= delivered {
		return
	}
	if j.compress && len(j.tail) > j.head {
		if last := &j.tail[len(j.tail)-1]; last.text == text && last.saved == saved && !cut {
			last.count++
			return
		}
	}
	if len(text) > j.tailBudget/2 {
		text = j.cutMiddle(text, j.tailBudget/4)
	}
	j.tail = append(j.tail, tailEntry{text: text, count: 1, first: j.lines, offset: j.bytes - size, saved: saved})
	j.tailBytes += len(text) + 1
	for j.tailBytes > j.tailBudget && len(j.tail)-j.head > 1 {
		j.evict()
	}
}

// cutMiddle keeps about keep bytes of each end of a line too long for the
// tail, with a mark saying what was cut and where the whole line is.
func (j *journal) cutMiddle(text string, keep int) string {
	head, tail := keep, len(text)-keep
	for head > 0 && !utf8.RuneStart(text[head]) {
		head--
	}
	for tail < len(text) && !utf8.RuneStart(text[tail]) {
		tail++
	}
	where := "it could not be saved"
	if j.fileLines == j.lines {
		where = fmt.Sprintf("the whole line is line %d of %s", j.lines, j.path)
	}
	return fmt.Sprintf("%s [winx: %d bytes cut from the middle of this line; %s] %s", text[:head], tail-head, where, text[tail:])
}

// evict drops the oldest undelivered run, counting it as skipped.
func (j *journal) evict() {
	e := j.tail[j.head]
	j.tail[j.head] = tailEntry{}
	j.head++
	j.tailBytes -= len(e.text) + 1
	if j.skip.lines == 0 {
		j.skip.first, j.skip.offset = e.first, e.offset
	}
	size := int64(e.count) * int64(len(e.text)+1)
	j.skip.lines += e.count
	j.skip.bytes += size
	if !e.saved {
		j.skip.lostLines += e.count
		j.skip.lostBytes += size
	}
	if j.head > 64 && 2*j.head > len(j.tail) {
		n := copy(j.tail, j.tail[j.head:])
		clear(j.tail[n:])
		j.tail, j.head = j.tail[:n], 0
	}
}

// take returns the undelivered lines of the tail (runs marked as Shape
// marks them) and what was skipped before them, and empties both.
func (j *journal) take() (string, skipped, int) {
	var b strings.Builder
	for _, e := range j.tail[j.head:] {
		switch {
		case e.count >= collapseMinRun:
			b.WriteString(e.text)
			b.WriteString(runMarkOpen)
			b.WriteString(strconv.Itoa(min(e.count, maxRunCount)))
			b.WriteString("]\n")
		default:
			for range e.count {
				b.WriteString(e.text)
				b.WriteByte('\n')
			}
		}
	}
	clear(j.tail)
	j.tail, j.head, j.tailBytes = j.tail[:0], 0, 0
	if cap(j.tail) > 1024 {
		j.tail = nil // a flood's index is not kept for the next look
	}
	sk, n := j.skip, j.redactions
	j.skip, j.redactions = skipped{}, 0
	return b.String(), sk, n
}

// close flushes and closes the file; later lines are not saved. A command
// that printed nothing still leaves its (empty) file.
func (j *journal) close() {
	j.open()
	if j.f == nil {
		return
	}
	if err := j.w.Flush(); err != nil && j.err == nil {
		j.err = err
	}
	if err := j.f.Close(); err != nil && j.err == nil {
		j.err = err
	}
	j.f, j.w = nil, nil
}

// flush makes what was written readable by another reader of the file.
func (j *journal) flush() {
	if j.w != nil {
		if err := j.w.Flush(); err != nil && j.err == nil {
			j.err = err
		}
	}
}

// copySkipped copies the saved part of sk from the journal file into a new
// private file in dir (the workspace's scratch directory, where the model
// can read it) and returns its absolute path.
func (j *journal) copySkipped(sk skipped, dir string) (string, error) {
	n := sk.bytes - sk.lostBytes
	if j.path == "" || n <= 0 || sk.lostLines == sk.lines {
		return "", nil
	}
	src, err := os.Open(j.path)
	if err != nil {
		return "", err
	}
	defer src.Close()
	return spillReader(dir, io.NewSectionReader(src, sk.offset, n), time.Now())
}

// note is the line that tells the model about skipped lines, "" if none.
func (j *journal) note(sk skipped) string {
	if sk.lines == 0 {
		return ""
	}
	last := sk.first + sk.lines - 1
	note := fmt.Sprintf("[winx: output lines %d-%d (%d lines, %d bytes) are not shown", sk.first, last, sk.lines, sk.bytes)
	savedLast := last - sk.lostLines
	switch {
	case j.path == "" && j.err != nil:
		note += fmt.Sprintf("; they could not be saved: %v", j.err)
	case sk.lostLines == 0:
		note += fmt.Sprintf("; they are in %s from line %d", j.path, sk.first)
	case savedLast >= sk.first:
		note += fmt.Sprintf("; lines %d-%d are in %s from line %d; the other %d lines (%d bytes) were dropped: %s",
			sk.first, savedLast, j.path, sk.first, sk.lostLines, sk.lostBytes, j.lossReason())
	default:
		note += fmt.Sprintf("; they were dropped (%s); %s holds lines 1-%d", j.lossReason(), j.path, j.fileLines)
	}
	return note + "]"
}

// finalNote says, once, after the command ended, which of its lines the
// journal file does not hold; "" if it holds them all.
func (j *journal) finalNote() string {
	if j.lossNoted || j.fileLines == j.lines {
		return ""
	}
	j.lossNoted = true
	if j.path == "" {
		return fmt.Sprintf("[winx: the %d lines of output could not be saved: %v]", j.lines, j.err)
	}
	return fmt.Sprintf("[winx: %s holds lines 1-%d of the %d lines of output; the other %d lines (%d bytes) were not saved: %s]",
		j.path, j.fileLines, j.lines, j.lines-j.fileLines, j.bytes-j.fileBytes, j.lossReason())
}

func (j *journal) lossReason() string {
	if j.err != nil {
		return fmt.Sprintf("writing the journal failed: %v", j.err)
	}
	return fmt.Sprintf("the journal reached its budget of %d MiB", j.budget>>20)
}

// redactRows redacts the rows of a screen snapshot as logical lines (rows
// that an autowrap continued are joined first, so a secret split by the
// wrap is still found) and gives back one string per row. The line holding
// the cursor may still be written to: its end is held back as a running
// command's is. A changed line is cut into rows of cols runes again.
func redactRows(rows []string, wrapped []bool, cursorRow, cols int, r *redact.Redactor) []string {
	if r == nil {
		return rows
	}
	out := make([]string, 0, len(rows))
	for start := 0; start < len(rows); {
		end := start
		for end < len(rows)-1 && wrapped[end] {
			end++
		}
		group := rows[start : end+1]
		joined := strings.Join(group, "")
		var red string
		if cursorRow >= start && cursorRow <= end {
			red, _ = r.Stable(joined)
		} else {
			red, _ = r.String(joined)
		}
		if red == joined {
			out = append(out, group...)
		} else {
			out = append(out, splitRunes(red, cols, len(group))...)
		}
		start = end + 1
	}
	return out
}

// splitRunes cuts s into n rows of at most cols runes; the last row takes
// what is left.
func splitRunes(s string, cols, n int) []string {
	rows := make([]string, n)
	for i := range n - 1 {
		k, count := 0, 0
		for k < len(s) && count < cols {
			_, size := utf8.DecodeRuneInString(s[k:])
			k += size
			count++
		}
		rows[i], s = s[:k], s[k:]
	}
	rows[n-1] = s
	return rows
}
