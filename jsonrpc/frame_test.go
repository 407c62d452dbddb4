package jsonrpc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
)

// tooLarge stands for a *FrameTooLargeError in a list of frames. It holds
// newlines, so no real frame can equal it.
const tooLarge = "\n<frame too large>\n"

// lineReaderTests seed FuzzLineReader; lines longer than the read buffer are
// in TestLineReaderLongLines.
var lineReaderTests = []struct {
	name string
	in   string
	max  int
	want []string
}{
	{"empty input", "", 8, nil},
	{"one line", "abc\n", 8, []string{"abc"}},
	{"several lines", "a\nbb\nccc\n", 8, []string{"a", "bb", "ccc"}},
	{"crlf", "a\r\nbb\r\n", 8, []string{"a", "bb"}},
	{"only one cr removed", "a\r\r\n", 8, []string{"a\r"}},
	{"cr inside kept", "a\rb\n", 8, []string{"a\rb"}},
	{"empty lines skipped", "\n\na\n\n\nb\n\n", 8, []string{"a", "b"}},
	{"blank lines skipped", " \t\n\r\n \r\na\n", 8, []string{"a"}},
	{"inner spaces kept", "  a b \n", 8, []string{"  a b "}},
	{"only newlines", "\n\r\n\n", 8, nil},
	{"last line without newline", "a\nbc", 8, []string{"a", "bc"}},
	{"last line with cr only", "a\r", 8, []string{"a"}},
	{"exactly max", "abcd\n", 4, []string{"abcd"}},
	{"exactly max with crlf", "abcd\r\n", 4, []string{"abcd"}},
	{"exactly max at eof", "abcd", 4, []string{"abcd"}},
	{"max plus one", "abcde\nxy\n", 4, []string{tooLarge, "xy"}},
	{"max plus one with crlf", "abcde\r\nxy\r\n", 4, []string{tooLarge, "xy"}},
	{"max plus one at eof", "abcde", 4, []string{tooLarge}},
	{"max plus one before eof line", "ab\nabcde", 4, []string{"ab", tooLarge}},
	{"oversize between lines", "a\n0123456789\nb\n", 4, []string{"a", tooLarge, "b"}},
	{"two oversize in a row", "0123456789\n0123456789\nz\n", 4, []string{tooLarge, tooLarge, "z"}},
	{"oversize blank line", "          \nz\n", 4, []string{tooLarge, "z"}},
	{"json messages", `{"jsonrpc":"2.0","method":"a"}` + "\n" + `{"jsonrpc":"2.0","id":1,"result":{}}` + "\r\n", 64,
		[]string{`{"jsonrpc":"2.0","method":"a"}`, `{"jsonrpc":"2.0","id":1,"result":{}}`}},
}

// readerShapes deliver the same bytes in differently sized reads.
var readerShapes = []struct {
	name string
	wrap func(io.Reader) io.Reader
}{
	{"whole", func(r io.Reader) io.Reader { return r }},
	{"one byte", iotest.OneByteReader},
	{"half", iotest.HalfReader},
	{"eof with data", iotest.DataErrReader},
}

func TestLineReader(t *testing.T) {
	for _, tt := range lineReaderTests {
		for _, shape := range readerShapes {
			t.Run(tt.name+"/"+shape.name, func(t *testing.T) {
				lr := NewLineReader(shape.wrap(strings.NewReader(tt.in)), tt.max)
				got, err := readLines(lr, tt.max)
				if err != nil {
					t.Fatalf("reading %q: %v", tt.in, err)
				}
				if !slices.Equal(got, tt.want) {
					t.Errorf("frames of %q (max %d) = %q, want %q", tt.in, tt.max, got, tt.want)
				}
			})
		}
		// The fuzz oracle must agree with the hand-written expectations.
		if got := modelLines([]byte(tt.in), tt.max); !slices.Equal(got, tt.want) {
			t.Errorf("modelLines(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}

// TestLineReaderLongLines covers lines longer than the 64 KiB read buffer,
// which arrive in several pieces.
func TestLineReaderLongLines(t *testing.T) {
	const buf = 64 << 10
	huge := strings.Repeat("x", 200_000)
	tests := []struct {
		name string
		in   string
		max  int
		want []string
	}{
		{"huge line small max", huge + "\nnext\n", 100, []string{tooLarge, "next"}},
		{"huge line crlf small max", huge + "\r\nnext\r\n", 100, []string{tooLarge, "next"}},
		{"huge line at eof", "first\n" + huge, 100, []string{"first", tooLarge}},
		{"huge lines interleaved", "a\n" + huge + "\nb\n" + huge + "\nc", 100, []string{"a", tooLarge, "b", tooLarge, "c"}},
		{"huge line fits default max", huge + "\nnext\n", 0, []string{huge, "next"}},
		{"huge line fits exactly", huge + "\nnext\n", len(huge), []string{huge, "next"}},
		{"huge line one over", huge + "\nnext\n", len(huge) - 1, []string{tooLarge, "next"}},
		{"buffer size fits", strings.Repeat("y", buf) + "\nnext\n", buf, []string{strings.Repeat("y", buf), "next"}},
		{"buffer size with crlf fits", strings.Repeat("y", buf) + "\r\nnext\n", buf, []string{strings.Repeat("y", buf), "next"}},
		{"buffer size plus one", strings.Repeat("y", buf+1) + "\nnext\n", buf, []string{tooLarge, "next"}},
		{"buffer size minus one", strings.Repeat("y", buf-1) + "\nnext\n", buf - 1, []string{strings.Repeat("y", buf-1), "next"}},
		{"buffer size at eof", strings.Repeat("y", buf+1), buf, []string{tooLarge}},
	}
	for _, tt := range tests {
		for _, shape := range readerShapes[:3] {
			t.Run(tt.name+"/"+shape.name, func(t *testing.T) {
				lr := NewLineReader(shape.wrap(strings.NewReader(tt.in)), tt.max)
				got, err := readLines(lr, lr.max)
				if err != nil {
					t.Fatalf("reading: %v", err)
				}
				if !slices.Equal(got, tt.want) {
					t.Errorf("frames = %s, want %s", summarize(got), summarize(tt.want))
				}
			})
		}
	}
}

func TestLineReaderDefaultMax(t *testing.T) {
	fits := strings.Repeat("z", DefaultMaxLineSize)
	in := fits + "\n" + fits + "z\nend\n"
	lr := NewLineReader(strings.NewReader(in), 0)
	got, err := readLines(lr, DefaultMaxLineSize)
	if err != nil {
		t.Fatalf("reading: %v", err)
	}
	if want := []string{fits, tooLarge, "end"}; !slices.Equal(got, want) {
		t.Errorf("frames = %s, want %s", summarize(got), summarize(want))
	}
}

func TestLineReaderEOF(t *testing.T) {
	lr := NewLineReader(strings.NewReader("a\n"), 0)
	if got, err := lr.ReadFrame(); string(got) != "a" || err != nil {
		t.Fatalf("ReadFrame() = %q, %v, want \"a\", nil", got, err)
	}
	for i := range 3 {
		if got, err := lr.ReadFrame(); got != nil || err != io.EOF {
			t.Errorf("ReadFrame() #%d after end = %q, %v, want nil, io.EOF", i, got, err)
		}
	}
}

func TestLineReaderError(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name string
		in   string
		max  int
		want []string
	}{
		{"error after a line", "a\n", 8, []string{"a"}},
		{"error inside a line", "a\nbc", 8, []string{"a"}},
		{"error inside an oversize line", "a\n0123456789", 4, []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := io.MultiReader(strings.NewReader(tt.in), iotest.ErrReader(boom))
			got, err := readLines(NewLineReader(r, tt.max), tt.max)
			if !errors.Is(err, boom) {
				t.Errorf("reading %q then an error: error = %v, want %v", tt.in, err, boom)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("frames of %q = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestLineWriter(t *testing.T) {
	tests := []struct {
		name    string
		frame   string
		want    string
		wantErr bool
	}{
		{"frame", `{"a":1}`, "{\"a\":1}\n", false},
		{"empty frame", "", "\n", false},
		{"cr kept", "a\r", "a\r\n", false},
		{"newline refused", "a\nb", "", true},
		{"trailing newline refused", "a\n", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := NewLineWriter(&out).WriteFrame([]byte(tt.frame))
			if (err != nil) != tt.wantErr {
				t.Errorf("WriteFrame(%q) error = %v, want error %v", tt.frame, err, tt.wantErr)
			}
			if out.String() != tt.want {
				t.Errorf("WriteFrame(%q) wrote %q, want %q", tt.frame, out.String(), tt.want)
			}
		})
	}
}

func TestLineWriterError(t *testing.T) {
	boom := errors.New("boom")
	err := NewLineWriter(failWriter{boom}).WriteFrame([]byte("x"))
	if !errors.Is(err, boom) {
		t.Errorf("WriteFrame on a failing writer = %v, want %v", err, boom)
	}
}

// TestLineWriterConcurrent checks that concurrent frames never interleave.
func TestLineWriterConcurrent(t *testing.T) {
	const writers, frames = 8, 50
	var out bytes.Buffer
	lw := NewLineWriter(&out)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range frames {
				frame := fmt.Sprintf("%d-%d-%s", w, i, strings.Repeat(string(rune('a'+w)), 1000))
				if err := lw.WriteFrame([]byte(frame)); err != nil {
					t.Errorf("WriteFrame error = %v, want nil", err)
				}
			}
		})
	}
	wg.Wait()
	got, err := readLines(NewLineReader(&out, 0), DefaultMaxLineSize)
	if err != nil {
		t.Fatalf("reading back: %v", err)
	}
	if len(got) != writers*frames {
		t.Fatalf("read %d frames, want %d", len(got), writers*frames)
	}
	seen := make(map[string]bool)
	for _, frame := range got {
		var w, i int
		var body string
		if _, err := fmt.Sscanf(frame, "%d-%d-%s", &w, &i, &body); err != nil || body != strings.Repeat(string(rune('a'+w)), 1000) {
			t.Fatalf("frame %.40q... is torn", frame)
		}
		seen[frame[:strings.LastIndexByte(frame, '-')]] = true
	}
	if len(seen) != writers*frames {
		t.Errorf("read %d distinct frames, want %d", len(seen), writers*frames)
	}
}

// lengthTests seed FuzzLengthReader. wantErr is the final error, matched
// with errors.Is.
var lengthTests = []struct {
	name    string
	in      []byte
	limit   int
	want    []string
	wantErr error
}{
	{"empty", nil, 16, nil, io.EOF},
	{"one frame", lengthFrames("hello"), 16, []string{"hello"}, io.EOF},
	{"empty frame", lengthFrames(""), 16, []string{""}, io.EOF},
	{"several frames", lengthFrames("a", "", "b\nc", "\x00\xff"), 16, []string{"a", "", "b\nc", "\x00\xff"}, io.EOF},
	{"exactly the limit", lengthFrames("abcd"), 4, []string{"abcd"}, io.EOF},
	{"one over the limit", lengthFrames("ok", "abcde", "never"), 4, []string{"ok"}, ErrFrameTooLarge},
	{"huge length", []byte{0xff, 0xff, 0xff, 0xff, 'x'}, 16, nil, ErrFrameTooLarge},
	{"short header", []byte{0, 0}, 16, nil, io.ErrUnexpectedEOF},
	{"header only", []byte{0, 0, 0, 5}, 16, nil, io.ErrUnexpectedEOF},
	{"short payload", []byte{0, 0, 0, 5, 'a', 'b'}, 16, nil, io.ErrUnexpectedEOF},
	{"frame then short header", append(lengthFrames("a"), 0), 16, []string{"a"}, io.ErrUnexpectedEOF},
}

func TestLengthReader(t *testing.T) {
	for _, tt := range lengthTests {
		for _, shape := range readerShapes {
			t.Run(tt.name+"/"+shape.name, func(t *testing.T) {
				lr := NewLengthReader(shape.wrap(bytes.NewReader(tt.in)), tt.limit)
				var got []string
				var err error
				for {
					var frame []byte
					if frame, err = lr.ReadFrame(); err != nil {
						break
					}
					got = append(got, string(frame))
				}
				if !slices.Equal(got, tt.want) {
					t.Errorf("frames of %q = %q, want %q", tt.in, got, tt.want)
				}
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("final error = %v, want %v", err, tt.wantErr)
				}
				if tt.wantErr != io.EOF && errors.Is(err, io.EOF) {
					t.Errorf("final error = %v, a clean end of stream; want a truncation or size error", err)
				}
				if again, err2 := lr.ReadFrame(); again != nil || err2 != err {
					t.Errorf("ReadFrame() after %v = %q, %v, want the same error again", err, again, err2)
				}
			})
		}
	}
}

func TestLengthWriter(t *testing.T) {
	var out bytes.Buffer
	lw := NewLengthWriter(&out, 0)
	for _, frame := range []string{"abc", ""} {
		if err := lw.WriteFrame([]byte(frame)); err != nil {
			t.Fatalf("WriteFrame(%q) error = %v, want nil", frame, err)
		}
	}
	if want := []byte{0, 0, 0, 3, 'a', 'b', 'c', 0, 0, 0, 0}; !bytes.Equal(out.Bytes(), want) {
		t.Errorf("wrote % x, want % x", out.Bytes(), want)
	}

	boom := errors.New("boom")
	if err := NewLengthWriter(failWriter{boom}, 0).WriteFrame([]byte("x")); !errors.Is(err, boom) {
		t.Errorf("WriteFrame on a failing writer = %v, want %v", err, boom)
	}
}

func TestLengthLimits(t *testing.T) {
	payload := bytes.Repeat([]byte{'p'}, MaxFrameSize+1)
	tests := []struct {
		name    string
		limit   int // passed to both constructors
		size    int
		wantErr bool
		wantLim int // Limit in the error
	}{
		{"default allows MaxFrameSize", 0, MaxFrameSize, false, 0},
		{"default refuses MaxFrameSize+1", 0, MaxFrameSize + 1, true, MaxFrameSize},
		{"negative means default", -1, MaxFrameSize + 1, true, MaxFrameSize},
		{"limit above MaxFrameSize clamped", 2 * MaxFrameSize, MaxFrameSize + 1, true, MaxFrameSize},
		{"explicit MaxFrameSize allows it", MaxFrameSize, MaxFrameSize, false, 0},
		{"small limit allows it", 4, 4, false, 0},
		{"small limit refuses one more", 4, 5, true, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			frame := payload[:tt.size]

			var out bytes.Buffer
			err := NewLengthWriter(&out, tt.limit).WriteFrame(frame)
			checkTooLarge(t, "WriteFrame", err, tt.wantErr, tt.wantLim)
			if tt.wantErr && out.Len() != 0 {
				t.Errorf("refused WriteFrame wrote %d bytes, want 0", out.Len())
			}

			// Build the stream by hand so the reader sees a header the
			// writer would refuse.
			stream := binary.BigEndian.AppendUint32(nil, uint32(tt.size))
			stream = append(stream, frame...)
			src := bytes.NewReader(stream)
			lr := NewLengthReader(src, tt.limit)
			got, err := lr.ReadFrame()
			checkTooLarge(t, "ReadFrame", err, tt.wantErr, tt.wantLim)
			if !tt.wantErr {
				if len(got) != tt.size {
					t.Errorf("ReadFrame() returned %d bytes, want %d", len(got), tt.size)
				}
				return
			}
			if src.Len() != tt.size {
				t.Errorf("refused ReadFrame consumed %d payload bytes, want 0", tt.size-src.Len())
			}
			if _, again := lr.ReadFrame(); again != err {
				t.Errorf("ReadFrame() after %v = %v, want the same error (sticky)", err, again)
			}
		})
	}
}

func checkTooLarge(t *testing.T, op string, err error, want bool, limit int) {
	t.Helper()
	if !want {
		if err != nil {
			t.Errorf("%s error = %v, want nil", op, err)
		}
		return
	}
	var tl *FrameTooLargeError
	if !errors.As(err, &tl) || !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("%s error = %v, want *FrameTooLargeError", op, err)
		return
	}
	if tl.Limit != limit {
		t.Errorf("%s error limit = %d, want %d", op, tl.Limit, limit)
	}
}

func TestLengthReaderError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(bytes.NewReader([]byte{0, 0, 0, 9, 'a'}), iotest.ErrReader(boom))
	lr := NewLengthReader(r, 0)
	if _, err := lr.ReadFrame(); !errors.Is(err, boom) {
		t.Errorf("ReadFrame() = %v, want %v", err, boom)
	}
}

// TestFramerRoundTrip sends encoded messages through each framer pair.
func TestFramerRoundTrip(t *testing.T) {
	framers := []struct {
		name string
		make func(io.ReadWriter) (FrameReader, FrameWriter)
	}{
		{"line", func(rw io.ReadWriter) (FrameReader, FrameWriter) {
			return NewLineReader(rw, 0), NewLineWriter(rw)
		}},
		{"length", func(rw io.ReadWriter) (FrameReader, FrameWriter) {
			return NewLengthReader(rw, 0), NewLengthWriter(rw, 0)
		}},
	}
	for _, f := range framers {
		t.Run(f.name, func(t *testing.T) {
			var stream bytes.Buffer
			r, w := f.make(&stream)
			var sent []Message
			for _, tt := range decodeTests {
				m, err := DecodeMessage([]byte(tt.in))
				if err != nil {
					t.Fatalf("DecodeMessage(%q) error = %v", tt.in, err)
				}
				b, err := EncodeMessage(m)
				if err != nil {
					t.Fatalf("EncodeMessage(%s) error = %v", describe(m), err)
				}
				if err := w.WriteFrame(b); err != nil {
					t.Fatalf("WriteFrame(%s) error = %v", b, err)
				}
				sent = append(sent, m)
			}
			for i, want := range sent {
				frame, err := r.ReadFrame()
				if err != nil {
					t.Fatalf("ReadFrame() #%d error = %v, want nil", i, err)
				}
				got, err := DecodeMessage(frame)
				if err != nil || !sameMessage(got, want) {
					t.Errorf("frame #%d = %s, %v, want %s", i, describe(got), err, describe(want))
				}
			}
			if _, err := r.ReadFrame(); err != io.EOF {
				t.Errorf("ReadFrame() at end = %v, want io.EOF", err)
			}
		})
	}
}

// readLines reads frames until io.EOF, recording *FrameTooLargeError as
// tooLarge and checking every frame against the limit.
func readLines(lr *LineReader, max int) ([]string, error) {
	var frames []string
	for {
		frame, err := lr.ReadFrame()
		var tl *FrameTooLargeError
		switch {
		case err == io.EOF:
			return frames, nil
		case errors.As(err, &tl):
			if tl.Limit != max {
				return frames, fmt.Errorf("FrameTooLargeError.Limit = %d, want %d", tl.Limit, max)
			}
			frames = append(frames, tooLarge)
		case err != nil:
			return frames, err
		case len(frame) > max:
			return frames, fmt.Errorf("frame of %d bytes over the limit %d", len(frame), max)
		default:
			frames = append(frames, string(frame))
		}
	}
}

// modelLines is the specification of LineReader: split at "\n", drop one
// trailing "\r", report lines over max, skip blank lines.
func modelLines(data []byte, max int) []string {
	var frames []string
	for len(data) > 0 {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		switch {
		case len(line) > max:
			frames = append(frames, tooLarge)
		case len(bytes.TrimSpace(line)) == 0:
		default:
			frames = append(frames, string(line))
		}
	}
	return frames
}

// lengthFrames encodes frames with 4-byte big-endian prefixes.
func lengthFrames(frames ...string) []byte {
	var b []byte
	for _, f := range frames {
		b = binary.BigEndian.AppendUint32(b, uint32(len(f)))
		b = append(b, f...)
	}
	return b
}

// summarize renders frames by length and prefix, for failures with huge lines.
func summarize(frames []string) string {
	parts := make([]string, len(frames))
	for i, f := range frames {
		if f == tooLarge {
			parts[i] = "<too large>"
			continue
		}
		parts[i] = fmt.Sprintf("%d bytes %.8q", len(f), f)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

type failWriter struct{ err error }

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }

func BenchmarkLineRoundTrip(b *testing.B) {
	var stream bytes.Buffer
	lw := NewLineWriter(&stream)
	lr := NewLineReader(&stream, 0)
	b.ReportAllocs()
	b.SetBytes(int64(len(benchRequest)))
	for b.Loop() {
		if err := lw.WriteFrame(benchRequest); err != nil {
			b.Fatal(err)
		}
		if _, err := lr.ReadFrame(); err != nil {
			b.Fatal(err)
		}
	}
}
