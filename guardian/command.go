package guardian

import (
	"strings"
	"time"

	"winx/vt"
)

// maxJournalBytes bounds the rendered output one command keeps in memory;
// older lines are dropped (and counted) beyond it.
const maxJournalBytes = 32 << 20

// command is one foreground (or background) command and its output journal.
// Its fields are guarded by the owning Session's mu.
type command struct {
	gen     uint64
	text    string
	script  string // private script file for long commands, removed when done
	started time.Time

	// begun is set by the start marker: output before it is the shell's
	// prompt, not the command's.
	begun       bool
	done        bool
	exitCode    int
	shellExited bool
	finished    time.Time

	// term renders this command's bytes; lines that scroll out of it are
	// moved to lines, so the journal holds every rendered line once.
	term         *vt.Terminal
	lines        []string
	linesBytes   int
	droppedLines int // lines lost beyond maxJournalBytes
	// delivered counts lines (from the first ever, dropped included) that
	// were handed out already.
	delivered int
}

func newCommand(gen uint64, text string, rows, cols int) *command {
	return &command{gen: gen, text: text, started: time.Now(), term: vt.New(rows, cols, nil)}
}

// write renders p and moves finished lines into the journal.
func (c *command) write(p []byte) {
	c.term.Write(p)
	for _, line := range c.term.DrainScrollback() {
		c.lines = append(c.lines, line)
		c.linesBytes += len(line) + 1
	}
	for c.linesBytes > maxJournalBytes && len(c.lines) > 0 {
		c.linesBytes -= len(c.lines[0]) + 1
		c.lines = c.lines[1:]
		c.droppedLines++
	}
}

func (c *command) finishLocked(code int, shellExited bool) {
	if c.done {
		return
	}
	c.done = true
	c.exitCode = code
	c.shellExited = shellExited
	c.finished = time.Now()
}

// takeNewLocked returns the rendered text not delivered yet and marks it
// delivered. Lines on the live screen at or below the cursor of a running
// command may still change (progress bars), so they are sent again later.
func (c *command) takeNewLocked() string {
	visible := visibleLines(c.term)
	var b strings.Builder
	from := c.delivered
	if from < c.droppedLines {
		b.WriteString("[winx: earlier output exceeded the journal and was dropped]\n")
		from = c.droppedLines
	}
	idx := from - c.droppedLines
	for _, l := range c.lines[min(idx, len(c.lines)):] {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	vstart := max(0, idx-len(c.lines))
	for i := vstart; i < len(visible); i++ {
		b.WriteString(visible[i])
		b.WriteByte('\n')
	}
	settled := len(visible)
	if !c.done {
		row, _ := c.term.Cursor()
		settled = min(row, len(visible))
	}
	c.delivered = c.droppedLines + len(c.lines) + max(settled, vstart)
	return strings.TrimRight(b.String(), "\n")
}

// visibleLines is the live screen of a command terminal with trailing
// empty rows removed (its scrollback is always drained).
func visibleLines(t *vt.Terminal) []string {
	text := t.Transcript()
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}
