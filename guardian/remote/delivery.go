package remote

import (
	"fmt"
	"strings"
	"sync"

	"winx/guardian"
)

// maxRedeliverBytes bounds the unacknowledged output kept per stream; the
// oldest lines beyond it are dropped with a note.
const maxRedeliverBytes = 256 << 10

// deliveries keeps output that was taken from the session but not yet
// acknowledged by a client, per stream ("fg:<generation>" or "bg:<id>").
//
// Invariant: text taken from the session is held here until a client
// acknowledges the delivery that carried it; every answer that carries
// output carries all of its stream's pending text. So a caller that went
// away mid-answer, or an adapter that restarted, loses nothing: the next
// reader of the stream gets it again. Concurrent readers of one stream may
// both see the same text; nothing is ever lost.
type deliveries struct {
	mu      sync.Mutex // guards the fields below
	seq     uint64     // last delivery number handed out
	pending map[string]*pendingOutput
}

type pendingOutput struct {
	seq uint64 // delivery that last carried out
	out guardian.Shaped
}

// take folds the pending text of stream in front of o's output, records the
// result as pending under a new delivery number and returns that number (0
// when there is nothing to acknowledge).
func (d *deliveries) take(stream string, o *guardian.Outcome) uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	if p := d.pending[stream]; p != nil {
		o.Output = mergeShaped(p.out, o.Output)
	}
	if o.Output == (guardian.Shaped{}) {
		return 0
	}
	if d.pending == nil {
		d.pending = make(map[string]*pendingOutput)
	}
	d.seq++
	d.pending[stream] = &pendingOutput{seq: d.seq, out: o.Output}
	return d.seq
}

// ack drops the pending text last carried by delivery seq. An older seq
// acknowledges nothing: a later delivery carried the text again and is the
// one to acknowledge.
func (d *deliveries) ack(seq uint64) {
	if seq == 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for k, p := range d.pending {
		if p.seq == seq {
			delete(d.pending, k)
		}
	}
}

// forgetForeground drops pending text of foreground generations other than
// keep: a new command's answers never carry an older command's text.
func (d *deliveries) forgetForeground(keep string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for k := range d.pending {
		if strings.HasPrefix(k, "fg:") && k != keep {
			delete(d.pending, k)
		}
	}
}

func fgStream(gen uint64) string { return fmt.Sprintf("fg:%d", gen) }
func bgStream(id string) string  { return "bg:" + id }

// mergeShaped appends b to a, bounded by maxRedeliverBytes.
func mergeShaped(a, b guardian.Shaped) guardian.Shaped {
	out := guardian.Shaped{
		DroppedBytes: a.DroppedBytes + b.DroppedBytes,
		DroppedLines: a.DroppedLines + b.DroppedLines,
		DroppedFile:  b.DroppedFile,
		Collapsed:    a.Collapsed + b.Collapsed,
		Redactions:   a.Redactions + b.Redactions,
		Journal:      b.Journal,
		LostLines:    a.LostLines + b.LostLines,
		LostBytes:    a.LostBytes + b.LostBytes,
	}
	if out.DroppedFile == "" {
		out.DroppedFile = a.DroppedFile
	}
	if out.Journal == "" {
		out.Journal = a.Journal
	}
	out.Open = b.Open
	if a.Open && b.Text != "" {
		// b carries a's open line again, as it is now.
		a.Text = guardian.DropOpenLine(a.Text)
	}
	switch {
	case a.Text == "":
		out.Text = b.Text
	case b.Text == "":
		out.Text = a.Text
	default:
		out.Text = a.Text + "\n" + b.Text
	}
	if over := len(out.Text) - maxRedeliverBytes; over > 0 {
		cut := over
		if i := strings.IndexByte(out.Text[cut:], '\n'); i >= 0 {
			cut += i + 1
		}
		out.DroppedBytes += cut
		out.DroppedLines += strings.Count(out.Text[:cut], "\n")
		out.Text = fmt.Sprintf("[winx: %d bytes of unacknowledged output were dropped]\n", cut) + out.Text[cut:]
	}
	return out
}
