package vt

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// recorder is a dispatcher that writes down what the parser recognised.
// Printed text is merged into one event per run, so the events do not
// depend on how the input was split.
type recorder struct {
	events []string
	text   strings.Builder
}

var _ dispatcher = (*recorder)(nil)

func (r *recorder) flush() {
	if r.text.Len() > 0 {
		r.events = append(r.events, fmt.Sprintf("print %q", r.text.String()))
		r.text.Reset()
	}
}

func (r *recorder) add(format string, args ...any) {
	r.flush()
	r.events = append(r.events, fmt.Sprintf(format, args...))
}

func (r *recorder) printASCII(run []byte) { r.text.Write(run) }
func (r *recorder) print(c rune)          { r.text.WriteRune(c) }
func (r *recorder) execute(b byte)        { r.add("exec %#02x", b) }
func (r *recorder) escDispatch(inter []byte, final byte) {
	r.add("esc %q %q", inter, final)
}
func (r *recorder) csiDispatch(params []int, inter []byte, final byte) {
	r.add("csi %q %v %q", inter, params, final)
}
func (r *recorder) oscDispatch(data []byte) { r.add("osc %q", data) }
func (r *recorder) dcsDispatch(params []int, inter []byte, final byte, data []byte) {
	r.add("dcs %q %v %q %q", inter, params, final, data)
}

func (r *recorder) done() []string {
	r.flush()
	return r.events
}

// parseEvents runs in through a fresh parser in chunks of size n (all at
// once when n <= 0) and returns the events and the final state.
func parseEvents(in string, n int) ([]string, state) {
	var p parser
	var r recorder
	data := []byte(in)
	if n <= 0 {
		n = len(data) + 1
	}
	for len(data) > 0 {
		k := min(n, len(data))
		p.parse(&r, data[:k])
		data = data[k:]
	}
	return r.done(), p.state
}

func seq(from, to int) string {
	var s []string
	for i := from; i <= to; i++ {
		s = append(s, fmt.Sprint(i))
	}
	return strings.Join(s, ";")
}

func ints(from, to int) string {
	var s []string
	for i := from; i <= to; i++ {
		s = append(s, fmt.Sprint(i))
	}
	return "[" + strings.Join(s, " ") + "]"
}

var parseTests = []struct {
	name  string
	in    string
	want  []string
	state state // stateGround unless set
}{
	// ground: print and execute
	{name: "ascii", in: "hello", want: []string{`print "hello"`}},
	{name: "c0 executes", in: "a\r\nb\a", want: []string{`print "a"`, "exec 0x0d", "exec 0x0a", `print "b"`, "exec 0x07"}},
	{name: "del ignored", in: "a\x7fb", want: []string{`print "ab"`}},
	{name: "nul executes", in: "\x00", want: []string{"exec 0x00"}},

	// ground: UTF-8
	{name: "utf8 two three four bytes", in: "é日🙂\uffff", want: []string{`print "é日🙂\uffff"`}},
	{name: "stray continuation", in: "\x80", want: []string{`print "�"`}},
	{name: "cut by ascii", in: "\xc3(", want: []string{`print "�("`}},
	{name: "cut by esc", in: "\xe2\x82\x1b[m", want: []string{`print "�"`, `csi "" [] 'm'`}},
	{name: "cut by can", in: "\xf0\x9f\x18", want: []string{`print "�"`, "exec 0x18"}},
	{name: "maximal subpart", in: "\xe2\x82d", want: []string{`print "�d"`}},
	{name: "overlong", in: "\xc0\xaf\xe0\x80\xaf", want: []string{`print "�����"`}},
	{name: "surrogate", in: "\xed\xa0\x80", want: []string{`print "���"`}},
	{name: "above U+10FFFF", in: "\xf4\x90\x80\x80\xf5", want: []string{`print "�����"`}},
	{name: "new lead ends a sequence", in: "\xe2\xc3\xa9", want: []string{`print "�é"`}},
	{name: "decoded C1 dropped", in: "a\xc2\x9b1m\xc2\x85b\xc2\xa0", want: []string{`print "a1mb\u00a0"`}},
	{name: "raw CSI byte is not CSI", in: "\x9b1m", want: []string{`print "�1m"`}},
	{name: "raw OSC byte is not OSC", in: "\x9d0;t\a", want: []string{`print "�0;t"`, "exec 0x07"}},
	{name: "raw DCS and ST bytes", in: "\x90q\x9c", want: []string{`print "�q�"`}},

	// escape and escape_intermediate
	{name: "esc dispatch", in: "\x1b7\x1bc", want: []string{`esc "" '7'`, `esc "" 'c'`}},
	{name: "esc intermediate", in: "\x1b(0\x1b#8\x1b%G", want: []string{`esc "(" '0'`, `esc "#" '8'`, `esc "%" 'G'`}},
	{name: "esc two intermediates", in: "\x1b ($B", want: []string{`esc " ($" 'B'`}},
	{name: "esc too many intermediates", in: "\x1b!!!!!0x", want: []string{`print "x"`}},
	{name: "c0 inside esc", in: "\x1b\n7", want: []string{"exec 0x0a", `esc "" '7'`}},
	{name: "c0 inside esc intermediate", in: "\x1b(\r0", want: []string{"exec 0x0d", `esc "(" '0'`}},
	{name: "del inside esc", in: "\x1b\x7f7\x1b(\x7f0", want: []string{`esc "" '7'`, `esc "(" '0'`}},
	{name: "esc esc restarts", in: "\x1b\x1b7", want: []string{`esc "" '7'`}},
	{name: "can aborts esc", in: "\x1b(\x180", want: []string{"exec 0x18", `print "0"`}},
	{name: "high bytes ignored in esc", in: "\x1b\xc3\xa97", want: []string{`esc "" '7'`}},
	{name: "lone esc waits", in: "\x1b", state: stateEscape},
	{name: "esc with intermediate waits", in: "\x1b(", state: stateEscapeIntermediate},

	// csi_entry, csi_param, csi_intermediate
	{name: "csi no params", in: "\x1b[m", want: []string{`csi "" [] 'm'`}},
	{name: "csi params", in: "\x1b[1;22;333m", want: []string{`csi "" [1 22 333] 'm'`}},
	{name: "csi empty params", in: "\x1b[;5H\x1b[5;H\x1b[;m", want: []string{`csi "" [0 5] 'H'`, `csi "" [5 0] 'H'`, `csi "" [0 0] 'm'`}},
	{name: "csi leading zeros", in: "\x1b[007d", want: []string{`csi "" [7] 'd'`}},
	{name: "csi private marker", in: "\x1b[?1049h\x1b[>0c\x1b[<1;2M\x1b[=c", want: []string{`csi "?" [1049] 'h'`, `csi ">" [0] 'c'`, `csi "<" [1 2] 'M'`, `csi "=" [] 'c'`}},
	{name: "csi intermediates", in: "\x1b[1 q\x1b[!p\x1b[?2026$p", want: []string{`csi " " [1] 'q'`, `csi "!" [] 'p'`, `csi "?$" [2026] 'p'`}},
	{name: "csi param clamped", in: "\x1b[99999999999999999999;65536;65535m", want: []string{`csi "" [65535 65535 65535] 'm'`}},
	{name: "csi params beyond the limit dropped", in: "\x1b[" + seq(1, 40) + "m", want: []string{`csi "" ` + ints(1, 32) + ` 'm'`}},
	{name: "csi 32 params kept", in: "\x1b[" + seq(1, 32) + "m", want: []string{`csi "" ` + ints(1, 32) + ` 'm'`}},
	{name: "c0 inside csi", in: "\x1b[1\n;2\rH", want: []string{"exec 0x0a", "exec 0x0d", `csi "" [1 2] 'H'`}},
	{name: "c0 inside csi entry and intermediate", in: "\x1b[\b1 \tq", want: []string{"exec 0x08", "exec 0x09", `csi " " [1] 'q'`}},
	{name: "del inside csi", in: "\x1b[\x7f1\x7f;2 \x7fH", want: []string{`csi " " [1 2] 'H'`}},
	{name: "high bytes ignored in csi", in: "\x1b[1\xc3\xa9;\x9b2m", want: []string{`csi "" [1 2] 'm'`}},
	{name: "csi too many intermediates", in: "\x1b[1!!!!!pX", want: []string{`print "X"`}},
	{name: "csi waits for final", in: "\x1b[1;2", state: stateCSIParam},
	{name: "csi waits in intermediate", in: "\x1b[1 ", state: stateCSIIntermediate},

	// csi_ignore
	{name: "colon to csi_ignore", in: "\x1b[38:2:1:2:3mX", want: []string{`print "X"`}},
	{name: "colon first to csi_ignore", in: "\x1b[:mX", want: []string{`print "X"`}},
	{name: "marker after param to csi_ignore", in: "\x1b[1?hX", want: []string{`print "X"`}},
	{name: "param after intermediate to csi_ignore", in: "\x1b[1 1qX", want: []string{`print "X"`}},
	{name: "c0 inside csi_ignore", in: "\x1b[:\n\x7fmX", want: []string{"exec 0x0a", `print "X"`}},
	{name: "csi_ignore waits", in: "\x1b[1:", state: stateCSIIgnore},

	// anywhere: CAN, SUB, ESC
	{name: "esc inside csi restarts", in: "\x1b[1;2\x1b[3m", want: []string{`csi "" [3] 'm'`}},
	{name: "can aborts csi", in: "\x1b[1;2\x18m", want: []string{"exec 0x18", `print "m"`}},
	{name: "sub aborts csi", in: "\x1b[?1\x1ah", want: []string{"exec 0x1a", `print "h"`}},
	{name: "can aborts csi_ignore", in: "\x1b[1:\x18m", want: []string{"exec 0x18", `print "m"`}},

	// osc_string
	{name: "osc bel", in: "\x1b]0;title\a", want: []string{`osc "0;title"`}},
	{name: "osc st", in: "\x1b]2;t\x1b\\", want: []string{`osc "2;t"`, `esc "" '\\'`}},
	{name: "osc utf8 with C1-range bytes", in: "\x1b]2;a\u2014b\u0080\a", want: []string{"osc \"2;a\u2014b\\u0080\""}},
	{name: "osc c0 ignored", in: "\x1b]2;a\nb\x00c\a", want: []string{`osc "2;abc"`}},
	{name: "osc del kept", in: "\x1b]2;a\x7f\a", want: []string{`osc "2;a\x7f"`}},
	{name: "osc capped", in: "\x1b]2;" + strings.Repeat("x", 5000) + "\a", want: []string{fmt.Sprintf("osc %q", "2;"+strings.Repeat("x", MaxStringBytes-2))}},
	{name: "osc empty", in: "\x1b]\a", want: []string{`osc ""`}},
	{name: "can cancels osc", in: "\x1b]2;t\x18x", want: []string{"exec 0x18", `print "x"`}},
	{name: "sub cancels osc", in: "\x1b]2;t\x1ax", want: []string{"exec 0x1a", `print "x"`}},
	{name: "esc ends osc", in: "\x1b]2;t\x1b[m", want: []string{`osc "2;t"`, `csi "" [] 'm'`}},
	{name: "osc waits", in: "\x1b]2;t", state: stateOSCString},

	// dcs_entry, dcs_param, dcs_intermediate, dcs_passthrough, dcs_ignore
	{name: "dcs", in: "\x1bP1;2$qm\x1b\\", want: []string{`dcs "$" [1 2] 'q' "m"`, `esc "" '\\'`}},
	{name: "dcs no header", in: "\x1bPqdata\x1b\\", want: []string{`dcs "" [] 'q' "data"`, `esc "" '\\'`}},
	{name: "dcs private marker", in: "\x1bP>|x\x1b\\", want: []string{`dcs ">" [] '|' "x"`, `esc "" '\\'`}},
	{name: "dcs data keeps c0 and utf8", in: "\x1bPq\nä\x1b\\", want: []string{"dcs \"\" [] 'q' \"\\nä\"", `esc "" '\\'`}},
	{name: "dcs c0 in header ignored", in: "\x1bP\n1\r \tqD\x1b\\", want: []string{`dcs " " [1] 'q' "D"`, `esc "" '\\'`}},
	{name: "dcs del ignored", in: "\x1bP\x7f1q\x7fD\x1b\\", want: []string{`dcs "" [1] 'q' "D"`, `esc "" '\\'`}},
	{name: "dcs capped", in: "\x1bPq" + strings.Repeat("y", 5000) + "\x1b\\", want: []string{fmt.Sprintf("dcs \"\" [] 'q' %q", strings.Repeat("y", MaxStringBytes)), `esc "" '\\'`}},
	{name: "colon to dcs_ignore", in: "\x1bP1:2q data\x1b\\X", want: []string{`esc "" '\\'`, `print "X"`}},
	{name: "marker after param to dcs_ignore", in: "\x1bP1>q data\x1b\\", want: []string{`esc "" '\\'`}},
	{name: "param after intermediate to dcs_ignore", in: "\x1bP 1q data\x1b\\", want: []string{`esc "" '\\'`}},
	{name: "can cancels dcs", in: "\x1bPqdata\x18x", want: []string{"exec 0x18", `print "x"`}},
	{name: "can aborts dcs header", in: "\x1bP1;\x18x", want: []string{"exec 0x18", `print "x"`}},
	{name: "dcs waits in passthrough", in: "\x1bPqabc", state: stateDCSPassthrough},
	{name: "dcs waits in entry", in: "\x1bP", state: stateDCSEntry},
	{name: "dcs waits in param", in: "\x1bP1", state: stateDCSParam},
	{name: "dcs waits in intermediate", in: "\x1bP$", state: stateDCSIntermediate},
	{name: "dcs waits in ignore", in: "\x1bP:", state: stateDCSIgnore},

	// sos_pm_apc_string
	{name: "apc ignored", in: "\x1b_Gf=100;AAAA\x1b\\X", want: []string{`esc "" '\\'`, `print "X"`}},
	{name: "pm ignored", in: "\x1b^private\a\x1b\\", want: []string{`esc "" '\\'`}},
	{name: "sos ignored", in: "\x1bXstart\x1b\\", want: []string{`esc "" '\\'`}},
	{name: "can ends apc", in: "\x1b_abc\x18x", want: []string{"exec 0x18", `print "x"`}},
	{name: "apc waits", in: "\x1b_" + strings.Repeat("z", 10000), state: stateSOSPMAPCString},
}

func TestParse(t *testing.T) {
	for _, tt := range parseTests {
		t.Run(tt.name, func(t *testing.T) {
			got, st := parseEvents(tt.in, 0)
			if !slices.Equal(got, tt.want) {
				t.Errorf("parse(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if st != tt.state {
				t.Errorf("parse(%q) state = %v, want %v", tt.in, st, tt.state)
			}
			// A sequence may be split anywhere, even inside a UTF-8 rune.
			for _, n := range []int{1, 2, 3, 7} {
				got, st := parseEvents(tt.in, n)
				if !slices.Equal(got, tt.want) || st != tt.state {
					t.Errorf("parse(%q) in chunks of %d = %q, %v, want %q, %v", tt.in, n, got, st, tt.want, tt.state)
				}
			}
		})
	}
}

// stateEntries are inputs that lead from ground to each state.
var stateEntries = [numStates]string{
	stateGround:             "",
	stateEscape:             "\x1b",
	stateEscapeIntermediate: "\x1b(",
	stateCSIEntry:           "\x1b[",
	stateCSIParam:           "\x1b[1",
	stateCSIIntermediate:    "\x1b[ ",
	stateCSIIgnore:          "\x1b[:",
	stateDCSEntry:           "\x1bP",
	stateDCSParam:           "\x1bP1",
	stateDCSIntermediate:    "\x1bP ",
	stateDCSPassthrough:     "\x1bPq",
	stateDCSIgnore:          "\x1bP:",
	stateOSCString:          "\x1b]",
	stateSOSPMAPCString:     "\x1b_",
}

// TestTransitions drives the parser into every state and checks each
// family of transitions out of it against the diagram.
func TestTransitions(t *testing.T) {
	for s := range numStates {
		_, got := parseEvents(stateEntries[s], 0)
		if got != s {
			t.Fatalf("parse(%q) state = %v, want %v", stateEntries[s], got, s)
		}
	}
	tests := []struct {
		from state
		b    byte
		want state
	}{
		{stateGround, 'a', stateGround},
		{stateGround, '\n', stateGround},
		{stateEscape, ' ', stateEscapeIntermediate},
		{stateEscape, '[', stateCSIEntry},
		{stateEscape, ']', stateOSCString},
		{stateEscape, 'P', stateDCSEntry},
		{stateEscape, 'X', stateSOSPMAPCString},
		{stateEscape, '^', stateSOSPMAPCString},
		{stateEscape, '_', stateSOSPMAPCString},
		{stateEscape, '7', stateGround},
		{stateEscape, '\n', stateEscape},
		{stateEscapeIntermediate, '!', stateEscapeIntermediate},
		{stateEscapeIntermediate, 'B', stateGround},
		{stateCSIEntry, '1', stateCSIParam},
		{stateCSIEntry, ';', stateCSIParam},
		{stateCSIEntry, '?', stateCSIParam},
		{stateCSIEntry, ':', stateCSIIgnore},
		{stateCSIEntry, ' ', stateCSIIntermediate},
		{stateCSIEntry, 'm', stateGround},
		{stateCSIParam, '2', stateCSIParam},
		{stateCSIParam, '?', stateCSIIgnore},
		{stateCSIParam, '$', stateCSIIntermediate},
		{stateCSIParam, 'H', stateGround},
		{stateCSIIntermediate, '0', stateCSIIgnore},
		{stateCSIIntermediate, 'q', stateGround},
		{stateCSIIgnore, '1', stateCSIIgnore},
		{stateCSIIgnore, 'm', stateGround},
		{stateDCSEntry, '1', stateDCSParam},
		{stateDCSEntry, '>', stateDCSParam},
		{stateDCSEntry, ':', stateDCSIgnore},
		{stateDCSEntry, '$', stateDCSIntermediate},
		{stateDCSEntry, 'q', stateDCSPassthrough},
		{stateDCSEntry, '\n', stateDCSEntry},
		{stateDCSParam, '<', stateDCSIgnore},
		{stateDCSParam, '+', stateDCSIntermediate},
		{stateDCSParam, 'q', stateDCSPassthrough},
		{stateDCSIntermediate, '1', stateDCSIgnore},
		{stateDCSIntermediate, 'q', stateDCSPassthrough},
		{stateDCSPassthrough, 'x', stateDCSPassthrough},
		{stateDCSPassthrough, '\a', stateDCSPassthrough},
		{stateDCSIgnore, 'q', stateDCSIgnore},
		{stateOSCString, 'x', stateOSCString},
		{stateOSCString, '\a', stateGround},
		{stateOSCString, 0x9c, stateOSCString},
		{stateSOSPMAPCString, '\a', stateSOSPMAPCString},
		{stateSOSPMAPCString, 0x9c, stateSOSPMAPCString},
	}
	for _, tt := range tests {
		in := stateEntries[tt.from] + string([]byte{tt.b})
		if _, got := parseEvents(in, 0); got != tt.want {
			t.Errorf("parse(%q) state = %v, want %v", in, got, tt.want)
		}
	}
	// Anywhere: CAN and SUB to ground, ESC to escape, from every state.
	for s := range numStates {
		for b, want := range map[byte]state{0x18: stateGround, 0x1a: stateGround, 0x1b: stateEscape} {
			in := stateEntries[s] + string([]byte{b})
			if _, got := parseEvents(in, 0); got != want {
				t.Errorf("parse(%q) state = %v, want %v", in, got, want)
			}
		}
	}
}

// TestTable checks properties of the whole table rather than samples.
func TestTable(t *testing.T) {
	for s := range numStates {
		for b := range 256 {
			tr := table[s][b]
			if tr.action() >= numActions || tr.next() >= numStates {
				t.Errorf("table[%v][%#02x] = %#x, outside the actions or states", s, b, tr)
			}
			if !tr.changes() && tr.next() != 0 {
				t.Errorf("table[%v][%#02x] names state %v without a transition", s, b, tr.next())
			}
			if tr == 0 && b != 0 {
				// Only NUL, executed in the C0 states, may be the zero
				// value by accident; every other cell must be set.
				t.Errorf("table[%v][%#02x] was never set", s, b)
			}
			if b >= 0x80 && tr.changes() {
				t.Errorf("table[%v][%#02x] leaves the state; bytes >= 0x80 are never controls", s, b)
			}
		}
	}
}

func TestParserReset(t *testing.T) {
	var p parser
	var r recorder
	p.parse(&r, []byte("\x1b]2;abc\xe2"))
	p.reset()
	p.parse(&r, []byte("\x82x"))
	if got, want := r.done(), []string{`print "�x"`}; !slices.Equal(got, want) {
		t.Errorf("parse after reset = %q, want %q", got, want)
	}
	if p.state != stateGround {
		t.Errorf("state after reset = %v, want ground", p.state)
	}
}

func TestNames(t *testing.T) {
	for s := range numStates {
		if s.String() == "" || strings.Contains(s.String(), "?") {
			t.Errorf("state(%d).String() = %q", s, s.String())
		}
	}
	for a := range numActions {
		if a.String() == "" || strings.Contains(a.String(), "?") {
			t.Errorf("action(%d).String() = %q", a, a.String())
		}
	}
	if got := numStates.String(); got != "state(?)" {
		t.Errorf("numStates.String() = %q, want state(?)", got)
	}
	if got := numActions.String(); got != "action(?)" {
		t.Errorf("numActions.String() = %q, want action(?)", got)
	}
}
