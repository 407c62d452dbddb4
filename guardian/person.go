package guardian

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"winx/pty"
)

// A person at a terminal may take the wheel of a session (winx attach
// --interactive): while attached, the bytes they type go to the shell's PTY
// as they are, the shell's output is streamed to them raw, and every action
// of the agent that would type into the session or start a command is
// refused with ErrPersonAttached. The session is the one owner of that
// state; the guardian serves it over the wire and the adapter only learns
// it from the refusal and from the note of the next answer (PersonNote).
//
// An attachment is held by a lease: every read renews it, and one not
// renewed for personLease ends as a detach would (a person's client that
// was killed or stopped does not lock the agent out forever).

// ErrPersonAttached: a person is attached to the session's terminal; the
// agent's action was refused and nothing was typed.
var ErrPersonAttached = errors.New("guardian: a person is attached to the session's terminal")

// ErrNotAttached: a person's call named an attachment that is not (or no
// longer) the session's.
var ErrNotAttached = errors.New("guardian: no such person attachment")

// Limits of a person's attachment.
const (
	// personLease is how long an attachment lives without a read.
	personLease = 15 * time.Second
	// MaxPersonRead bounds the output one read hands a person.
	MaxPersonRead = 64 << 10
	// maxPersonBuffer bounds the output kept for a person who reads late;
	// older bytes are dropped (the terminal redraws on the next prompt).
	maxPersonBuffer = 256 << 10
	// MaxPersonWrite bounds what one write types.
	MaxPersonWrite = 64 << 10
	// maxPersonLines and maxPersonLineBytes bound what the note of the
	// agent's next answer says the person ran.
	maxPersonLines     = 8
	maxPersonLineBytes = 160
	// maxPersonPending bounds a line being typed; the rest is dropped
	// from the record (not from the terminal).
	maxPersonPending = 4 << 10
	// maxPersonNote bounds the notes of earlier attachments kept until
	// the agent's next answer.
	maxPersonNote = 2 << 10
)

// person is an attachment; it lives from AttachPerson until a detach (an
// explicit one, or a lease that ran out). Guarded by Shell.mu.
type person struct {
	id   string
	seen time.Time // the last read; the lease counts from it
	// out holds output not read yet; base is the stream offset of out[0].
	out  []byte
	base uint64
	// line is the command line being typed, as far as it can be told from
	// the keys (an edit by arrow keys or completion marks it approximate);
	// lines are the finished ones the shell read at its prompt; input
	// counts the lines typed to a program the shell ran.
	line        []byte
	approximate bool
	lines       []string
	more        int // lines beyond maxPersonLines
	input       int
	// prepared: the attach turned echo on and set a visible prompt, which
	// the agent's next command turns back (Shell.restorePrompt).
	prepared bool
}

// personLocked returns the attachment, ending it first if its lease ran
// out.
func (s *Shell) personLocked() *person {
	p := s.person
	if p != nil && time.Since(p.seen) > personLease {
		s.detachLocked(p)
		return nil
	}
	return p
}

// refusePersonLocked is the check of every agent action that types into the
// session or starts a command.
func (s *Shell) refusePersonLocked() error {
	if s.personLocked() != nil {
		return ErrPersonAttached
	}
	return nil
}

// refusePerson is refusePersonLocked for callers without the lock.
func (s *Shell) refusePerson() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refusePersonLocked()
}

// PersonAttached reports whether a person is attached now.
func (s *Shell) PersonAttached() bool {
	return s.refusePerson() != nil
}

// Attachment is what a person's client learns when it attaches.
type Attachment struct {
	ID     string // names the attachment in every later call
	Offset uint64 // where the person's output stream starts
}

// AttachPerson attaches a person whose terminal is rows x cols (zero: keep
// the session's size). A second person is refused with ErrPersonAttached.
// When the shell waits at its prompt, it is given a visible prompt and
// echo, which the agent's next command takes back.
func (s *Shell) AttachPerson(ctx context.Context, rows, cols int) (Attachment, error) {
	if err := s.ensureShell(ctx); err != nil {
		return Attachment{}, err
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return Attachment{}, fmt.Errorf("guardian: attachment id: %w", err)
	}
	s.launchMu.Lock()
	defer s.launchMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Attachment{}, ErrClosed
	}
	if s.personLocked() != nil {
		return Attachment{}, ErrPersonAttached
	}
	p := &person{id: hex.EncodeToString(b[:]), seen: time.Now(), base: s.personOffset}
	s.person = p
	if rows > 0 && cols > 0 {
		s.resizeLocked(rows, cols)
	}
	sp := s.shell
	idle := s.cmd == nil || s.cmd.done
	if pg, err := sp.proc.ForegroundPgrp(); idle && err == nil && pg == sp.proc.Pid() {
		s.preparePersonLocked(p)
	}
	s.broadcastLocked()
	return Attachment{ID: p.ID(), Offset: p.base}, nil
}

// preparePersonLocked gives the attached person echo and a prompt, once,
// when the shell waits at its prompt: at the attach, or when the command
// that ran then ends. The line is typed without a nonce of its own: its
// prompt marker carries the last command's, which the scanner still
// expects, and finishes nothing (no command runs).
func (s *Shell) preparePersonLocked(p *person) {
	if p.prepared {
		return
	}
	if _, err := s.shell.proc.File().Write([]byte(personPrompt(s.opts.Shell))); err == nil {
		p.prepared = true
		s.restorePrompt = true
	}
}

// ID is the attachment's id.
func (p *person) ID() string { return p.id }

// personPrompt is the line that gives an attached person echo and a
// prompt; restoreLine takes them back before the agent's next command.
func personPrompt(shell string) string {
	if kind, _ := ShellKind(shell); kind == ShellZsh {
		return "\x15 stty echo 2>/dev/null; PS1='(winx attach) %~%# '\n"
	}
	return "\x15 stty echo 2>/dev/null; PS1='(winx attach) \\w\\$ '\n"
}

// restoreLine is what an agent's command line starts with after a person
// was given a prompt: echo off and the prompt blank again, as the rc file
// left them.
func restoreLine(shell string) string {
	if kind, _ := ShellKind(shell); kind == ShellZsh {
		return "stty -echo 2>/dev/null; PS1=''; PROMPT=''; "
	}
	return "stty -echo 2>/dev/null; PS1=''; "
}

// resizeLocked resizes the PTY and the screen that renders it.
func (s *Shell) resizeLocked(rows, cols int) {
	rows, cols = min(max(rows, 2), 1000), min(max(cols, 10), 1000)
	if err := s.shell.proc.Resize(pty.Size{Rows: uint16(rows), Cols: uint16(cols)}); err == nil {
		s.screen.Resize(rows, cols)
	}
}

// attachedLocked returns the attachment id names and renews its lease.
func (s *Shell) attachedLocked(id string) (*person, error) {
	p := s.personLocked()
	if p == nil || id == "" || p.id != id {
		return nil, ErrNotAttached
	}
	p.seen = time.Now()
	return p, nil
}

// PersonChunk is what one read hands a person.
type PersonChunk struct {
	Data   []byte
	Offset uint64 // the offset after Data: the next read's
	// Dropped counts output bytes the person's client was too slow for.
	Dropped uint64
	// ShellExited: the shell ended (the person typed exit); the session
	// starts a new one for the agent's next command, and the attachment
	// ends.
	ShellExited bool
}

// PersonRead waits up to wait for output after offset and returns it.
func (s *Shell) PersonRead(ctx context.Context, id string, offset uint64, wait time.Duration) (PersonChunk, error) {
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		s.mu.Lock()
		p, err := s.attachedLocked(id)
		if err != nil {
			s.mu.Unlock()
			return PersonChunk{}, err
		}
		var c PersonChunk
		if offset < p.base {
			c.Dropped, offset = p.base-offset, p.base
		}
		if end := p.base + uint64(len(p.out)); offset > end {
			offset = end
		}
		rest := p.out[offset-p.base:]
		n := min(len(rest), MaxPersonRead)
		c.Data = append([]byte(nil), rest[:n]...)
		c.Offset = offset + uint64(n)
		// What was handed out is dropped: one reader per attachment.
		p.out = p.out[c.Offset-p.base:]
		p.base = c.Offset
		c.ShellExited = s.shell.dead
		ch := s.changed
		s.mu.Unlock()
		if n > 0 || c.ShellExited || c.Dropped > 0 {
			if c.ShellExited && n == 0 {
				s.DetachPerson(id)
			}
			return c, nil
		}
		select {
		case <-ch:
		case <-wctx.Done():
			if ctx.Err() != nil {
				// The person's client left (its connection closed): the
				// attachment ends with it.
				s.DetachPerson(id)
				return PersonChunk{}, ctx.Err()
			}
			return c, nil
		}
	}
}

// PersonWrite types b into the session's terminal as the person typed it.
func (s *Shell) PersonWrite(_ context.Context, id string, b []byte) error {
	if len(b) > MaxPersonWrite {
		return fmt.Errorf("%w: %d bytes, more than %d", ErrInvalidInput, len(b), MaxPersonWrite)
	}
	s.mu.Lock()
	p, err := s.attachedLocked(id)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	sp := s.shell
	p.record(b, s.atPromptLocked(sp))
	s.mu.Unlock()
	if _, err := sp.proc.File().Write(b); err != nil {
		return fmt.Errorf("guardian: write to shell: %w", err)
	}
	return nil
}

// PersonResize passes the person's terminal size to the session's PTY (the
// kernel signals the foreground program with SIGWINCH).
func (s *Shell) PersonResize(_ context.Context, id string, rows, cols int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.attachedLocked(id); err != nil {
		return err
	}
	if rows <= 0 || cols <= 0 {
		return fmt.Errorf("%w: terminal size %dx%d", ErrInvalidInput, rows, cols)
	}
	s.resizeLocked(rows, cols)
	return nil
}

// DetachPerson ends the attachment id names; a detach of one already ended
// does nothing.
func (s *Shell) DetachPerson(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.person; p != nil && p.id == id {
		s.detachLocked(p)
	}
}

// detachLocked ends p: the session gets its own size back and the agent's
// next answer the note of what the person did.
func (s *Shell) detachLocked(p *person) {
	if s.person != p {
		return
	}
	s.person = nil
	p.finishLine(false)
	if s.shell != nil && !s.shell.dead {
		s.resizeLocked(s.opts.Rows, s.opts.Cols)
	}
	note := p.note()
	if prev := s.personNote; prev != "" {
		// The agent has not answered since an earlier attachment: both
		// are said, the older cut to a bound.
		if len(prev) > maxPersonNote {
			prev = prev[:maxPersonNote] + "…"
		}
		note = prev + "; then " + note
	}
	s.personNote = note
	s.broadcastLocked()
}

// personOutputLocked keeps shell output for the attached person, if any.
// It is the output without the completion markers (a terminal would
// swallow them anyway).
func (s *Shell) personOutputLocked(b []byte) {
	if s.person == nil {
		s.personOffset += uint64(len(b))
		return
	}
	p := s.person
	p.out = append(p.out, b...)
	if over := len(p.out) - maxPersonBuffer; over > 0 {
		p.out = append(p.out[:0], p.out[over:]...)
		p.base += uint64(over)
	}
	s.personOffset = p.base + uint64(len(p.out))
}

// TakePersonNote returns, once, the line the agent's next answer carries
// after a person detached: that a person typed in the session and what ran
// (redacted, bounded); "" when there is none.
func (s *Shell) TakePersonNote() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.personLocked() // a lease that ran out leaves its note
	n := s.personNote
	s.personNote = ""
	if n == "" || s.opts.Shape.Redactor == nil {
		return n
	}
	out, _ := s.opts.Shape.Redactor.String(n)
	return out
}

// atPromptLocked reports whether what is typed now is a command line: the
// shell itself holds the terminal and edits the line (its line editor has
// the kernel's line mode off). Anything else is input to a program, or to
// the shell's own read (a `read -s` password): it is counted, never
// recorded, so a secret typed at a prompt never reaches the agent.
func (s *Shell) atPromptLocked(sp *shellProc) bool {
	pg, err := sp.proc.ForegroundPgrp()
	if err != nil || pg != sp.proc.Pid() {
		return false
	}
	m, err := sp.proc.Modes()
	return err == nil && !m.Canonical
}

// record follows the keys typed, to tell the agent later which command
// lines the person ran. It is a best effort from the keys alone: an edit
// made with the arrow keys, history or completion marks the line
// approximate.
func (p *person) record(b []byte, atPrompt bool) {
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '\r' || c == '\n':
			p.finishLine(!atPrompt)
		case c == 0x7f || c == 0x08: // backspace: one character back
			if len(p.line) > 0 {
				_, size := utf8.DecodeLastRune(p.line)
				p.line = p.line[:len(p.line)-size]
			}
		case c == 0x15 || c == 0x03: // Ctrl-U, Ctrl-C: the line is gone
			p.line, p.approximate = p.line[:0], false
		case c == 0x1b: // an escape sequence: arrows, history, ...
			p.approximate = true
			i = skipEscape(b, i)
		case c == '\t' || c < 0x20:
			p.approximate = true
		default:
			if len(p.line) < maxPersonPending {
				p.line = append(p.line, c)
			}
		}
	}
}

// skipEscape returns the index of the last byte of the escape sequence that
// starts at b[i] (ESC), within b.
func skipEscape(b []byte, i int) int {
	if i+1 >= len(b) {
		return i
	}
	switch b[i+1] {
	case '[': // CSI: parameters, then a final byte 0x40..0x7e
		for j := i + 2; j < len(b); j++ {
			if b[j] >= 0x40 && b[j] <= 0x7e {
				return j
			}
		}
		return len(b) - 1
	case 'O': // SS3: one more byte
		return min(i+2, len(b)-1)
	}
	return i + 1
}

// finishLine ends the line being typed: a command line when the shell read
// it (toProgram false), else input to a program the shell ran.
func (p *person) finishLine(toProgram bool) {
	line := strings.TrimSpace(string(p.line))
	approx := p.approximate
	p.line, p.approximate = p.line[:0], false
	if line == "" && !approx {
		return
	}
	if toProgram {
		p.input++
		return
	}
	if len(line) > maxPersonLineBytes {
		line = line[:maxPersonLineBytes] + "…"
	}
	if approx {
		line += " (edited at the terminal; approximate)"
	}
	if len(p.lines) >= maxPersonLines {
		p.more++
		return
	}
	p.lines = append(p.lines, fmt.Sprintf("%q", line))
}

// note is the one line the agent's next answer carries.
func (p *person) note() string {
	var b strings.Builder
	b.WriteString("a person attached to this session's terminal and typed in it")
	switch {
	case len(p.lines) == 0:
		b.WriteString("; no command line was run")
	default:
		b.WriteString("; command lines run: ")
		b.WriteString(strings.Join(p.lines, ", "))
		if p.more > 0 {
			fmt.Fprintf(&b, " and %d more", p.more)
		}
	}
	if p.input > 0 {
		fmt.Fprintf(&b, "; %d line(s) typed to running programs", p.input)
	}
	b.WriteString("; check the cwd and state before relying on them")
	return b.String()
}
