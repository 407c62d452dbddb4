package vt

import (
	"bytes"
	"strings"
)

// oscDispatch handles an operating system command, "Ps ; Pt". Only titles
// matter to the text: OSC 0 and 2 set the title (OSC 1, the icon name,
// does not). Everything else is consumed and dropped, in particular OSC 8
// hyperlinks (the link text is printed normally between the two OSC 8
// sequences), OSC 7 working directories, OSC 52 clipboard writes and
// colour queries, which a Terminal never answers.
func (t *Terminal) oscDispatch(data []byte) {
	ps, pt, ok := bytes.Cut(data, []byte{';'})
	if !ok {
		return
	}
	switch string(ps) {
	case "0", "2":
		// The parser already dropped C0 controls; invalid UTF-8 must not
		// reach the caller's JSON.
		t.title = strings.ToValidUTF8(string(pt), "\uFFFD")
	}
}

// dcsDispatch consumes a device control string. None draws text (sixel,
// DECRQSS, tmux passthrough, XTGETTCAP), and queries are not answered.
func (t *Terminal) dcsDispatch(params []int, inter []byte, final byte, data []byte) {}
