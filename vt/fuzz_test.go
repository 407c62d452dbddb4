package vt

import (
	"slices"
	"testing"
	"unicode/utf8"
)

// fuzzSeeds are the golden inputs, the parser table inputs and bytes that
// sit on the edges of the state machine.
func fuzzSeeds(f testing.TB) [][]byte {
	seeds := goldenInputs(f)
	for _, tt := range parseTests {
		seeds = append(seeds, []byte(tt.in))
	}
	seeds = append(seeds,
		[]byte("\x1b[?1049h\x1b[1;2r\x1b[?6h\x1b[5;5H日本\u0301\x1b[2@\x1b[P\x1b[?1049l"),
		[]byte("\x1b[4h日\x1b[1;1H\x1b[3@\x1b[4l\x1b[?7l"+string(make([]byte, 40))),
		[]byte("\x1b(0\x0e\x1b)0lqk\x0f\x1b[99b"),
		[]byte("\x1b]2;\xe2\x80\x94\x1b\\\x1bP1;2|\x9c\x1b\\"),
		[]byte("\xf0\x9f\x91\xa8\u200d\xf0\x9f\x91\xa9\ufe0f\t\x1b[3g\t\x1b[Z\x1bH"),
		[]byte("\x1b7\x1b[?1049h\x1b8\x1b[?1048l\x1b[s\x1b[u\x1bc\x1b#8"),
	)
	return seeds
}

// FuzzVT writes random bytes in random chunks to terminals of random
// sizes, resizing between chunks, and checks after every step that the
// terminal keeps its invariants: no panic, Screen has exactly rows rows,
// none wider than cols cells, the transcript bounded by its limits, and
// CAN always returns the parser to ground. Without resizes, how the bytes
// were chunked must not change the result.
//
// plan drives the run, one byte per step: below 0xf0 it is a chunk of
// 1+b%32 bytes; 0xf0 and above resize to sizes taken from the next two
// bytes of the plan.
func FuzzVT(f *testing.F) {
	for i, s := range fuzzSeeds(f) {
		f.Add(s, uint8(i%30), uint8(i*7%90), uint8(i%5), []byte{uint8(i), 0xf0, 3, 9, uint8(i * 13), 31})
	}
	f.Add([]byte("ab日\x1b[2J"), uint8(0), uint8(0), uint8(0), []byte{0xf0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte, rows, cols, scrollback uint8, plan []byte) {
		size := func(r, c uint8) (int, int) { return 1 + int(r)%40, 1 + int(c)%100 }
		r, c := size(rows, cols)
		opts := &Options{ScrollbackLines: int(scrollback) % 24}
		if opts.ScrollbackLines == 0 {
			opts.ScrollbackLines = -1
		}
		term := New(r, c, opts)
		maxCols := c

		check := func(step string) {
			t.Helper()
			if msg := checkInvariants(term); msg != "" {
				t.Fatalf("%s: %s", step, msg)
			}
			screen := term.Screen()
			if len(screen) != r {
				t.Fatalf("%s: Screen() has %d rows, want %d", step, len(screen), r)
			}
			for i, row := range screen {
				if w := displayWidth(row); w > c {
					t.Fatalf("%s: Screen()[%d] = %q is %d cells wide, more than %d", step, i, row, w, c)
				}
				if !utf8.ValidString(row) {
					t.Fatalf("%s: Screen()[%d] = %q is not valid UTF-8", step, i, row)
				}
				for _, ch := range row {
					if ch < 0x20 || ch >= 0x7f && ch < 0xa0 {
						t.Fatalf("%s: Screen()[%d] = %q holds control %U", step, i, row, ch)
					}
				}
			}
			// The scrollback keeps logical lines (soft-wrapped rows joined),
			// so a kept line may span many rows; every byte written makes at
			// most one cell, which bounds what the joined rows add.
			limit := (max(opts.ScrollbackLines, 0)+r)*(maxCols*MaxCellBytes+1) + len(data)*MaxCellBytes
			if n := len(term.Transcript()); n > limit {
				t.Fatalf("%s: Transcript() is %d bytes, more than %d", step, n, limit)
			}
			row, col := term.Cursor()
			if row < 0 || row >= r || col < 0 || col >= c {
				t.Fatalf("%s: Cursor() = %d, %d outside %dx%d", step, row, col, r, c)
			}
		}

		check("New")
		rest := data
		// chunks are the sizes written, for the replay without resizes. The
		// step limit ends a plan of only resizes.
		var chunks []int
		for i := 0; len(rest) > 0 && i < 4*len(data)+8; i++ {
			n := len(rest)
			if len(plan) > 0 {
				b := plan[i%len(plan)]
				if b >= 0xf0 {
					r, c = size(plan[(i+1)%len(plan)], plan[(i+2)%len(plan)])
					maxCols = max(maxCols, c)
					term.Resize(r, c)
					check("Resize")
					continue
				}
				n = min(n, 1+int(b)%32)
			}
			term.Write(rest[:n])
			chunks = append(chunks, n)
			rest = rest[n:]
			// Checking after every write would make each run, and so the
			// minimisation of every new input, several times slower;
			// broken invariants persist, so every fourth write and the
			// last one suffice.
			if len(chunks)%4 == 0 || len(rest) == 0 {
				check("Write")
			}
		}
		term.Write([]byte{0x18})
		if !term.InGround() {
			t.Fatalf("InGround() after CAN = false")
		}
		check("CAN")

		// The same bytes at the first size, once whole and once in the
		// same chunks, must give the same terminal.
		r, c = size(rows, cols)
		whole, chunked := New(r, c, opts), New(r, c, opts)
		whole.Write(data)
		rest = data
		for _, n := range chunks {
			chunked.Write(rest[:n])
			rest = rest[n:]
		}
		chunked.Write(rest)
		if a, b := whole.Screen(), chunked.Screen(); !slices.Equal(a, b) {
			t.Fatalf("Screen() whole = %q, chunked = %q", a, b)
		}
		if a, b := whole.Transcript(), chunked.Transcript(); a != b {
			t.Fatalf("Transcript() whole = %q, chunked = %q", a, b)
		}
		ar, ac := whole.Cursor()
		br, bc := chunked.Cursor()
		if ar != br || ac != bc || whole.Title() != chunked.Title() ||
			whole.AltScreenActive() != chunked.AltScreenActive() || whole.InGround() != chunked.InGround() {
			t.Fatalf("whole and chunked writes differ: cursor %d,%d vs %d,%d, title %q vs %q, alt %v vs %v, ground %v vs %v",
				ar, ac, br, bc, whole.Title(), chunked.Title(), whole.AltScreenActive(), chunked.AltScreenActive(), whole.InGround(), chunked.InGround())
		}
	})
}

// boundsChecker is a dispatcher that checks what the parser hands out
// against the parser's limits.
type boundsChecker struct {
	t *testing.T
}

func (b boundsChecker) params(params []int, inter []byte) {
	b.t.Helper()
	if len(params) > MaxParams || len(inter) > MaxIntermediates {
		b.t.Fatalf("dispatch with %d params and %d intermediates", len(params), len(inter))
	}
	for _, p := range params {
		if p < 0 || p > MaxParamValue {
			b.t.Fatalf("parameter %d outside 0..%d", p, MaxParamValue)
		}
	}
	for _, c := range inter {
		if c < 0x20 || c > 0x3f {
			b.t.Fatalf("intermediate %#02x is neither an intermediate nor a private marker", c)
		}
	}
}

func (b boundsChecker) printASCII(run []byte) {
	for _, c := range run {
		if c < 0x20 || c > 0x7e {
			b.t.Fatalf("printASCII(%q) holds %#02x", run, c)
		}
	}
}

func (b boundsChecker) print(r rune) {
	if r < 0xa0 || !utf8.ValidRune(r) {
		b.t.Fatalf("print(%U)", r)
	}
}

func (b boundsChecker) execute(c byte) {
	if c >= 0x20 {
		b.t.Fatalf("execute(%#02x)", c)
	}
}

func (b boundsChecker) escDispatch(inter []byte, final byte) {
	b.params(nil, inter)
	if final < 0x30 || final > 0x7e {
		b.t.Fatalf("escDispatch final %#02x", final)
	}
}

func (b boundsChecker) csiDispatch(params []int, inter []byte, final byte) {
	b.params(params, inter)
	if final < 0x40 || final > 0x7e {
		b.t.Fatalf("csiDispatch final %#02x", final)
	}
}

func (b boundsChecker) oscDispatch(data []byte) {
	if len(data) > MaxStringBytes {
		b.t.Fatalf("oscDispatch with %d bytes", len(data))
	}
}

func (b boundsChecker) dcsDispatch(params []int, inter []byte, final byte, data []byte) {
	b.params(params, inter)
	if len(data) > MaxStringBytes || final < 0x40 || final > 0x7e {
		b.t.Fatalf("dcsDispatch final %#02x with %d bytes", final, len(data))
	}
}

// FuzzVTParser checks the parser alone: everything it dispatches is within
// its limits, the events do not depend on how the input is split, and CAN
// always returns it to ground.
func FuzzVTParser(f *testing.F) {
	for i, s := range fuzzSeeds(f) {
		f.Add(s, uint8(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		var p parser
		p.parse(boundsChecker{t}, data)
		p.parse(boundsChecker{t}, []byte{0x18})
		if p.state != stateGround || p.need != 0 {
			t.Fatalf("after CAN: state %v, %d UTF-8 bytes pending", p.state, p.need)
		}

		whole, wholeState := parseEvents(string(data), 0)
		split, splitState := parseEvents(string(data), 1+int(chunk)%16)
		if !slices.Equal(whole, split) || wholeState != splitState {
			t.Fatalf("parse(%q) whole = %q, %v; in chunks of %d = %q, %v", data, whole, wholeState, 1+int(chunk)%16, split, splitState)
		}
	})
}
