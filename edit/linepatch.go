package edit

import (
	"bytes"
	"fmt"

	"winx/evidence"
)

// knowledge says which lines of a file's new revision the model knows after
// a successful edit, so the ledger can be updated without a new read.
type knowledge struct {
	// whole: the model wrote every byte (replace).
	whole bool
	// carry: lines shown at the old revision that the edit left unchanged
	// stay shown at their new positions (line_patch, search_replace).
	carry bool
	// seen are lines of the new revision the model wrote verbatim
	// (line_patch replacements), concrete ranges.
	seen []evidence.Range
	// wrote: every line the edit changed is the model's own text
	// (search_replace): the new side of each hunk counts as shown.
	wrote bool
	// restored: undo; the new side of each hunk counts as shown when the
	// answer's diff showed it whole.
	restored bool
}

// applyPatches applies ordered, disjoint patches (validated by checkPayload)
// to old. A replacement that does not end in a newline gets the file's line
// ending unless it ends the file and the original's last line had none;
// appending to a file whose last line lacks a newline first terminates that
// line. Replacement text is otherwise inserted as given (no CRLF conversion).
func applyPatches(old []byte, lines evidence.Lines, patches []Patch) ([]byte, knowledge, error) {
	total := lines.Count()
	eol := []byte("\n")
	if total > 0 && bytes.HasSuffix(lines.Line(1), []byte("\r\n")) {
		eol = []byte("\r\n")
	}
	finalNL := len(old) == 0 || old[len(old)-1] == '\n'

	k := knowledge{carry: true}
	out := make([]byte, 0, len(old)+64)
	at := 0    // byte offset in old copied so far
	shift := 0 // new line number minus old line number after the patches so far
	for i, pt := range patches {
		if pt.StartLine > total+1 {
			return nil, knowledge{}, fmt.Errorf("patch %d: start_line %d is past the end of the file (%d lines)", i+1, pt.StartLine, total)
		}
		last := pt.StartLine + pt.DeleteLines - 1
		if last > total {
			return nil, knowledge{}, fmt.Errorf("patch %d: deletes lines %d-%d of a file of %d lines", i+1, pt.StartLine, last, total)
		}
		start := len(old)
		if pt.StartLine <= total {
			start, _ = lines.Span(pt.StartLine)
		}
		end := start
		if pt.DeleteLines > 0 {
			_, end = lines.Span(last)
		}
		out = append(out, old[at:start]...)
		at = end

		repl := []byte(pt.Replacement)
		endsFile := end == len(old)
		if pt.StartLine == total+1 && !finalNL && len(repl) > 0 {
			out = append(out, eol...) // terminate the old last line before appending
		}
		if len(repl) > 0 && repl[len(repl)-1] != '\n' && !(endsFile && !finalNL) {
			repl = append(repl, eol...)
		}
		out = append(out, repl...)
		n := evidence.IndexLines(repl).Count()
		if n > 0 {
			k.seen = append(k.seen, evidence.Range{Start: pt.StartLine + shift, End: pt.StartLine + shift + n - 1})
		}
		shift += n - pt.DeleteLines
	}
	out = append(out, old[at:]...)
	return out, k, nil
}
