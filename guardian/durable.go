package guardian

import (
	"os"
	"strings"
	"time"

	"winx/evidence/redact"
)

// Output a command printed must survive the guardian's death (SIGKILL, an
// out-of-memory kill): the journal's write buffer is flushed, and the lines
// still on the command's screen (the last screenful, which joins the
// journal only when it scrolls away or the command ends) are written to a
// sidecar file beside the journal, within persistDelay of the output that
// changed them, whatever the command does next. The work is batched: one
// timer per session, armed by the first output after a flush, so a flood
// costs one flush per persistDelay, not a write per line, and a command
// that prints once costs one flush after it. An answer (takeNewLocked) and
// a screen snapshot flush what is new before they leave, so every line the
// model saw is on disk however late the timer runs on a busy machine.

// persistDelay bounds how long printed output may live only in memory.
const persistDelay = 50 * time.Millisecond

// ScreenSuffix names a journal's sidecar: the screen's lines of a running
// command as of the last flush, redacted. It is removed when the command
// ends (its lines then are in the journal itself).
const ScreenSuffix = ".screen"

// persister owns the shell's pending flushes. Guarded by the Shell's mu.
type persister struct {
	armed   bool
	pending []*command
	delay   time.Duration // persistDelay; tests may shorten it
}

// markPrintedLocked notes that c printed and arms the timer if it is not
// armed.
func (s *Shell) markPrintedLocked(c *command) {
	c.unpersisted = true
	if !c.persistPending {
		c.persistPending = true
		s.persist.pending = append(s.persist.pending, c)
	}
	if s.persist.armed {
		return
	}
	s.persist.armed = true
	delay := s.persist.delay
	if delay <= 0 {
		delay = persistDelay
	}
	time.AfterFunc(delay, s.flushPrinted)
}

// flushPrinted flushes every command that printed since the last run.
func (s *Shell) flushPrinted() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.persist.pending {
		c.persistPending = false
		c.persistNewLocked()
	}
	clear(s.persist.pending)
	s.persist.pending = s.persist.pending[:0]
	s.persist.armed = false
}

// persistLocked flushes c's journal and rewrites its screen sidecar. A
// finished command has nothing on a screen: its lines are in the journal.
func (c *command) persistLocked() {
	c.unpersisted = false
	c.out.flush()
	if c.term == nil || c.out.path == "" {
		return
	}
	lines := visibleLines(c.term)
	var red *redact.Lines
	if c.out.red != nil {
		// A copy: the lines reach the journal's redactor when they leave
		// the screen.
		cp := *c.out.red
		red = &cp
	}
	settled := min(c.term.CursorLine(), len(lines))
	var b strings.Builder
	for i, l := range lines {
		if red != nil {
			if i == settled {
				l, _ = red.Partial(l)
			} else {
				l, _ = red.Line(l)
			}
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	// Replaced by a rename, so a kill leaves the old screen or the new one.
	// A failure loses only what a later flush or the journal would have;
	// the journal's own errors are reported with the output.
	next := c.out.path + ScreenSuffix + ".new"
	if writePrivateFile(next, []byte(b.String())) == nil {
		os.Rename(next, c.out.path+ScreenSuffix)
	}
}

// persistNewLocked puts on disk what c printed since its last persist:
// the timer's flush, and an answer's or a screen snapshot's before it
// leaves. The screen sidecar is rewritten only when c printed since; an
// answer that follows a flush, or a snapshot that follows an answer,
// writes nothing again.
func (c *command) persistNewLocked() {
	if c.unpersisted {
		c.persistLocked()
		return
	}
	c.out.flush()
}

// dropScreenLocked removes c's screen sidecar once its lines are in the
// journal.
func (c *command) dropScreenLocked() {
	if c.out.path != "" {
		os.Remove(c.out.path + ScreenSuffix)
	}
}
