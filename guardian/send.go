package guardian

import (
	"context"
	"fmt"
	"time"
)

// Key names a special key of send_specials.
type Key string

// The keys send_specials understands.
var keyBytes = map[Key]string{
	"Enter": "\r", "Key-up": "\x1b[A", "Key-down": "\x1b[B", "Key-right": "\x1b[C", "Key-left": "\x1b[D",
	"Ctrl-c": "\x03", "Ctrl-d": "\x04", "Ctrl-z": "\x1a",
}

// KeySequence is the bytes a terminal receives for keys; an unknown key
// is ErrInvalidInput.
func KeySequence(keys []Key) ([]byte, error) {
	var b []byte
	for _, k := range keys {
		seq, ok := keyBytes[k]
		if !ok {
			return nil, fmt.Errorf("%w: unknown key %q", ErrInvalidInput, k)
		}
		b = append(b, seq...)
	}
	return b, nil
}

// SendText types text (plus Enter when submit) into the foreground program.
func (s *Shell) SendText(ctx context.Context, text string, submit bool, wait time.Duration) (*Outcome, error) {
	if text == "" {
		return nil, fmt.Errorf("%w: send_text is empty", ErrInvalidInput)
	}
	if err := validateText(text, MaxInputBytes); err != nil {
		return nil, err
	}
	if submit {
		text += "\r"
	}
	return s.input(ctx, []byte(text), wait)
}

// SendKeys sends special keys. Ctrl-c goes through the interrupt logic.
func (s *Shell) SendKeys(ctx context.Context, keys []Key, wait time.Duration) (*Outcome, error) {
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: no keys", ErrInvalidInput)
	}
	b, err := KeySequence(keys)
	if err != nil {
		return nil, err
	}
	if len(keys) == 1 && keys[0] == "Ctrl-c" {
		return s.Interrupt(ctx, wait)
	}
	return s.input(ctx, b, wait)
}

// SendBytes sends raw bytes (send_ascii). NUL never reaches the shell.
func (s *Shell) SendBytes(ctx context.Context, b []byte, wait time.Duration) (*Outcome, error) {
	if len(b) == 0 || len(b) > MaxInputBytes {
		return nil, fmt.Errorf("%w: send_ascii needs 1 to %d bytes", ErrInvalidInput, MaxInputBytes)
	}
	for _, c := range b {
		if c == 0 {
			return nil, fmt.Errorf("%w: NUL bytes are not sent to the shell", ErrInvalidInput)
		}
	}
	return s.input(ctx, b, wait)
}

func (s *Shell) input(ctx context.Context, b []byte, wait time.Duration) (*Outcome, error) {
	if err := s.ensureShell(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	sp, c := s.shell, s.cmd
	idle := c == nil || c.done
	refused := s.refusePersonLocked()
	s.mu.Unlock()
	if refused != nil {
		return nil, refused
	}
	if idle {
		// Typed into an idle shell, text would run as a command that no
		// generation accounts for (and Ctrl-d would end the shell).
		return nil, ErrNotRunning
	}
	if _, err := sp.proc.File().Write(b); err != nil {
		return nil, fmt.Errorf("guardian: write to shell: %w", err)
	}
	return s.await(ctx, c, wait, sp.proc)
}

// validateText refuses empty, oversized and NUL-carrying text.
func validateText(text string, max int) error {
	if text == "" {
		return fmt.Errorf("%w: empty", ErrInvalidInput)
	}
	if len(text) > max {
		return fmt.Errorf("%w: %d bytes, more than the limit of %d", ErrInvalidInput, len(text), max)
	}
	for i := 0; i < len(text); i++ {
		if text[i] == 0 {
			return fmt.Errorf("%w: NUL bytes are not sent to the shell", ErrInvalidInput)
		}
	}
	return nil
}
