package guardian

import "unicode/utf8"

// Append folds next, a later look at the same command, into o, so that a
// caller following a command across several polls delivers one outcome
// with all its output: the texts are joined on a newline and kept within
// DefaultOutputBudget by dropping the head (counted in DroppedBytes, cut
// forward to a character boundary), as a single look would; counts add up;
// the state (running, exit code, elapsed time, cwd when known) is next's.
func (o *Outcome) Append(next *Outcome) {
	text := o.Output.Text
	if text != "" && next.Output.Text != "" {
		text += "\n"
	}
	text += next.Output.Text
	o.Output.DroppedBytes += next.Output.DroppedBytes
	o.Output.DroppedLines += next.Output.DroppedLines
	if overflow := len(text) - DefaultOutputBudget; overflow > 0 {
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
	o.Output.Collapsed += next.Output.Collapsed
	o.Output.Redactions += next.Output.Redactions
	o.Running, o.ExitCode, o.Elapsed = next.Running, next.ExitCode, next.Elapsed
	if next.Cwd != "" {
		o.Cwd = next.Cwd
	}
	o.ShellExited = o.ShellExited || next.ShellExited
	o.ShellReset = o.ShellReset || next.ShellReset
}
