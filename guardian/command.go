package guardian

import (
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"winx/evidence/redact"
	"winx/vt"
)

// outputConfig is what a new command's output needs from its session.
type outputConfig struct {
	rows, cols int
	journal    string           // path of the new journal file, "" for none
	redactor   *redact.Redactor // nil: no redaction
	tailBytes  int              // undelivered output kept in memory
	compress   bool
	// stale are the journal files of finished commands that no longer fit
	// the session's budget, for the caller to delete outside the lock.
	stale []string
}

// command is one foreground (or background) command and its output journal.
// Its fields are guarded by the owning Shell's mu.
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

	// term renders this command's bytes; logical lines that leave it go to
	// out at once. nil once the command finished and its screen was
	// flushed.
	term *vt.Terminal
	out  *journal
	// delivered is the number of the last line (from the first ever)
	// handed out already; live screen lines count once shown settled.
	delivered int
	// partial is the text of line delivered (the line at the cursor of a
	// running command) as it was last handed out. prompt is that text when
	// the answer that carried it reported the command waiting for input:
	// when the line comes back extended by the answer typed to it, only
	// the new end is sent, so the prompt is shown once. Other partial
	// lines (progress, a line cut by a pause) are sent whole again.
	partial, prompt string
	// lastOut is when the command last printed.
	lastOut time.Time
	// persistPending: the command is in its shell's persister, to be
	// flushed (durable.go).
	persistPending bool
	// unpersisted: the command printed since its last persist, so its
	// screen sidecar is behind its screen.
	unpersisted bool
}

func newCommand(gen uint64, text string, cfg outputConfig) *command {
	return &command{
		gen: gen, text: text, started: time.Now(),
		// The scrollback is drained after every write of at most 64 KiB,
		// which cannot push more lines than it keeps.
		term: vt.New(cfg.rows, cfg.cols, &vt.Options{ScrollbackLines: vt.MaxScrollbackLines}),
		out:  newJournal(cfg.journal, cfg.redactor, cfg.tailBytes, cfg.compress),
	}
}

// write renders p and moves finished lines into the journal.
func (c *command) write(p []byte) {
	c.lastOut = time.Now()
	c.term.Write(p)
	c.drainLocked()
}

func (c *command) drainLocked() {
	dropped := c.term.DrainLines(func(l []byte, cut bool) { c.out.add(string(l), cut, c.delivered) })
	if dropped > 0 {
		c.out.add(fmt.Sprintf("[winx: %d lines scrolled away faster than they could be kept]", dropped), false, c.delivered)
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
	// The screen's lines are final: they join the journal, and the cells
	// and file buffer go.
	if c.term != nil {
		c.drainLocked()
		for _, l := range visibleLines(c.term) {
			c.out.add(l, false, c.delivered)
		}
		c.term = nil
	}
	c.out.close()
	c.dropScreenLocked()
	if c.out.bytes > freeAfterBytes {
		// A flood's garbage is returned now, not when the next command
		// runs.
		go debug.FreeOSMemory()
	}
}

// takeNewLocked returns the rendered, redacted text not delivered yet and
// marks it delivered, with what left the tail unseen and the number of
// secrets redacted. Lines on the live screen at or below the cursor of a
// running command may still change (progress bars), so they are sent again
// later; the line at the cursor holds back an end that could start a
// secret.
func (c *command) takeNewLocked() (string, skipped, int) {
	body, sk, redactions := c.out.take()
	// What an answer shows is on disk before the answer leaves: a guardian
	// killed after answering keeps every line the model saw.
	c.persistNewLocked()
	prev := c.prompt
	c.partial, c.prompt = "", ""
	if c.term == nil {
		c.delivered = c.out.lines
		return dropDelivered(strings.TrimRight(body, "\n"), prev, sk), sk, redactions
	}
	var b strings.Builder
	b.WriteString(body)
	visible := visibleLines(c.term)
	vstart := max(0, c.delivered-c.out.lines)
	settled := len(visible)
	if !c.done {
		settled = min(c.term.CursorLine(), len(visible))
	}
	// A copy: these lines reach the journal's redactor again when they
	// leave the screen.
	var red *redact.Lines
	if c.out.red != nil {
		cp := *c.out.red
		red = &cp
	}
	for i := vstart; i < len(visible); i++ {
		v := visible[i]
		if red != nil {
			var n int
			if i == settled && !c.done {
				v, _ = red.Partial(v)
			} else {
				v, n = red.Line(v)
			}
			redactions += n
		}
		if i == settled && !c.done {
			c.partial = v
		}
		b.WriteString(v)
		b.WriteByte('\n')
	}
	c.delivered = c.out.lines + max(settled, vstart)
	text := strings.TrimRight(b.String(), "\n")
	if prev != "" && text == prev && c.partial == prev {
		// Nothing answered the prompt yet (a look right after the input
		// was typed): it stays the prompt for the next look.
		c.prompt = prev
	}
	return dropDelivered(text, prev, sk), sk, redactions
}

// dropDelivered removes from text, whose first line is the prompt last
// handed out unfinished as prev, the part of it already delivered: a
// prompt answered by the user comes back as "prompt answer", and the
// prompt was shown already. A line rewritten in place (a progress bar)
// does not start with prev and is sent whole, as is text after a gap.
func dropDelivered(text, prev string, sk skipped) string {
	if prev == "" || sk != (skipped{}) || !strings.HasPrefix(text, prev) {
		return text
	}
	// The blanks after the prompt belong to it (rows are kept without
	// trailing blanks, so prev lacks them).
	rest := strings.TrimLeft(text[len(prev):], " \t")
	if strings.HasPrefix(rest, "\n") {
		// The line ended with nothing typed on it.
		return rest[1:]
	}
	return rest
}

// visibleLines is the live screen of a command terminal as logical lines,
// trailing empty ones removed (its scrollback is always drained, but for
// a line still open).
func visibleLines(t *vt.Terminal) []string {
	text := t.Transcript()
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}
