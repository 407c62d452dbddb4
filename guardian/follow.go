package guardian

import (
	"context"
	"errors"
	"time"
	"unicode/utf8"
)

// Poller is what Follow needs of a terminal: Terminal.Poll.
type Poller interface {
	Poll(ctx context.Context, gen uint64, wait time.Duration) (*Outcome, error)
}

var _ Poller = Terminal(nil)

// Follow polls the generation of first, a look at a command still running,
// on term in waits of at most slice until the command ends or until
// deadline, and returns one outcome carrying all output since first, as a
// single look would (within DefaultOutputBudget, the tail kept). A
// generation replaced meanwhile (a reset) ends the follow with ShellReset
// set. Any other poll error is returned as it is; when ctx ends, that error
// leaves the command running: whether to interrupt it is the caller's call.
func Follow(ctx context.Context, term Poller, first *Outcome, slice time.Duration, deadline time.Time) (*Outcome, error) {
	acc := *first
	for acc.Running && time.Now().Before(deadline) {
		o, err := term.Poll(ctx, acc.Generation, min(slice, time.Until(deadline)))
		if err != nil {
			if ctx.Err() == nil && errors.Is(err, ErrNotRunning) {
				acc.Running = false
				acc.ShellReset = true
				return &acc, nil
			}
			return nil, err
		}
		acc.Merge(o)
	}
	return &acc, nil
}

// Merge folds next, a later look at the same command, into o, so that a
// caller following a command across several polls delivers one outcome
// with all its output: the texts are joined on a newline and kept within
// DefaultOutputBudget by dropping the head (counted in DroppedBytes, cut
// forward to a character boundary), as a single look would; counts add up;
// the state (running, exit code, elapsed time, cwd when known) is next's.
func (o *Outcome) Merge(next *Outcome) {
	text := o.Output.Text
	if o.Output.Open && next.Output.Text != "" {
		// next carries that line again, as it is now.
		text = DropOpenLine(text)
	}
	o.Output.Open = next.Output.Open
	if text != "" && next.Output.Text != "" {
		text += "\n"
	}
	text += next.Output.Text
	o.Output.DroppedBytes += next.Output.DroppedBytes
	o.Output.DroppedLines += next.Output.DroppedLines
	if overflow := len(text) - DefaultOutputBudget; overflow > 0 {
		// Keep the tail, as a single look would; the head is counted. The
		// cut moves forward to a character boundary.
		for overflow < len(text) && !utf8.RuneStart(text[overflow]) {
			overflow++
		}
		text = text[overflow:]
		o.Output.DroppedBytes += overflow
	}
	o.Output.Text = text
	if next.Output.DroppedFile != "" {
		o.Output.DroppedFile = next.Output.DroppedFile
	}
	if next.Output.Journal != "" {
		o.Output.Journal = next.Output.Journal
	}
	o.Output.LostLines += next.Output.LostLines
	o.Output.LostBytes += next.Output.LostBytes
	o.Output.Collapsed += next.Output.Collapsed
	o.Output.Redactions += next.Output.Redactions
	o.Running, o.ExitCode, o.Elapsed = next.Running, next.ExitCode, next.Elapsed
	if next.Cwd != "" {
		o.Cwd = next.Cwd
	}
	o.ShellExited = o.ShellExited || next.ShellExited
	o.ShellReset = o.ShellReset || next.ShellReset
}
