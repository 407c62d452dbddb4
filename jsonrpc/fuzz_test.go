package jsonrpc

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"
)

// FuzzDecodeMessage checks that DecodeMessage never panics, that its errors
// are wire errors, and that whatever it accepts encodes and decodes back to
// the same message, with the id byte for byte.
func FuzzDecodeMessage(f *testing.F) {
	for _, tt := range decodeTests {
		f.Add([]byte(tt.in))
	}
	for _, tt := range decodeErrorTests {
		f.Add([]byte(tt.in))
	}
	for _, tt := range encodeTests {
		f.Add([]byte(tt.want))
	}
	f.Add([]byte(`{"jsonrpc":"2.0","id":"\ud800","method":"\xff","params":{"a":"\u2028<>&"}}`))
	f.Add([]byte(`{"JSONRPC":"2.0","ID":1,"Method":"m","jsonrpc":"1.0"}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":1,"error":null}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":null}}`))

	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeMessage(data)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || de.Err == nil {
				t.Fatalf("DecodeMessage(%q) error = %#v, want *DecodeError with a wire error", data, err)
			}
			if c := de.Err.Code; c != CodeParseError && c != CodeInvalidRequest {
				t.Fatalf("DecodeMessage(%q) code = %d, want %d or %d", data, c, CodeParseError, CodeInvalidRequest)
			}
			if de.ID.IsValid() {
				if back, err := parseID([]byte(de.ID.raw)); err != nil || back != de.ID {
					t.Fatalf("DecodeMessage(%q) error id %s does not parse back: %v", data, de.ID, err)
				}
			}
			if _, err := EncodeMessage(&Response{ID: de.ID, Error: de.Err}); err != nil {
				t.Fatalf("encoding the error response for %q: %v", data, err)
			}
			return
		}

		switch m := m.(type) {
		case *Request:
			if m.Method == "" {
				t.Fatalf("DecodeMessage(%q) = request without method", data)
			}
			if p := bytes.TrimSpace(m.Params); m.Params != nil && (len(p) == 0 || p[0] != '{' && p[0] != '[') {
				t.Fatalf("DecodeMessage(%q) params = %q, want an object or an array", data, m.Params)
			}
		case *Response:
			if (m.Result == nil) == (m.Error == nil) {
				t.Fatalf("DecodeMessage(%q) = %s, want exactly one of result and error", data, describe(m))
			}
			if m.Result != nil && !m.ID.IsValid() {
				t.Fatalf("DecodeMessage(%q) = %s, a result with id null", data, describe(m))
			}
		default:
			t.Fatalf("DecodeMessage(%q) = %T, want *Request or *Response", data, m)
		}

		first, err := EncodeMessage(m)
		if err != nil {
			t.Fatalf("EncodeMessage(DecodeMessage(%q)) error = %v", data, err)
		}
		if bytes.IndexByte(first, '\n') >= 0 {
			t.Fatalf("EncodeMessage(DecodeMessage(%q)) = %q, holds a newline", data, first)
		}
		again, err := DecodeMessage(first)
		if err != nil {
			t.Fatalf("DecodeMessage(%q) (re-encoded from %q) error = %v", first, data, err)
		}
		if !sameMessage(again, m) {
			t.Fatalf("DecodeMessage(EncodeMessage(m)) = %s, want %s", describe(again), describe(m))
		}
		second, err := EncodeMessage(again)
		if err != nil || !bytes.Equal(second, first) {
			t.Fatalf("second encoding = %q, %v, want %q", second, err, first)
		}
	})
}

// FuzzLineReader compares LineReader with modelLines on arbitrary bytes, a
// small limit and a small read buffer, so long lines arrive in pieces.
func FuzzLineReader(f *testing.F) {
	for _, tt := range lineReaderTests {
		f.Add([]byte(tt.in), uint16(tt.max), uint8(0))
		f.Add([]byte(tt.in), uint16(tt.max), uint8(1))
	}
	f.Add([]byte("\r\n\r\r\n\n\r"), uint16(1), uint8(0))
	f.Add(bytes.Repeat([]byte("0123456789abcdef\r"), 3), uint16(17), uint8(0))
	f.Add([]byte("\xc2\xa0\n\xe2\x80\xa8\n \x85\n"), uint16(4), uint8(0))

	f.Fuzz(func(t *testing.T, data []byte, maxLen uint16, size uint8) {
		limit := max(int(maxLen)%512, 1)
		lr := newLineReaderSize(bytes.NewReader(data), limit, 16+int(size))
		var got []string
		total := 0
		for {
			if len(got) > len(data) {
				t.Fatalf("more frames than input bytes from %q", data)
			}
			frame, err := lr.ReadFrame()
			var tl *FrameTooLargeError
			if err == io.EOF {
				break
			}
			if errors.As(err, &tl) {
				if tl.Limit != limit {
					t.Fatalf("FrameTooLargeError.Limit = %d, want %d", tl.Limit, limit)
				}
				got = append(got, tooLarge)
				continue
			}
			if err != nil {
				t.Fatalf("ReadFrame() error = %v, want a frame or io.EOF", err)
			}
			if len(frame) > limit {
				t.Fatalf("frame of %d bytes over the limit %d", len(frame), limit)
			}
			if bytes.IndexByte(frame, '\n') >= 0 {
				t.Fatalf("frame %q holds a newline", frame)
			}
			total += len(frame)
			got = append(got, string(frame))
		}
		if total > len(data) {
			t.Fatalf("frames hold %d bytes, input has %d", total, len(data))
		}
		if want := modelLines(data, limit); !slices.Equal(got, want) {
			t.Fatalf("frames of %q (max %d) = %q, want %q", data, limit, got, want)
		}
	})
}

// FuzzLengthReader checks that LengthReader never returns a frame over its
// limit, that writing back what it read reproduces a prefix of the input (all
// of it on a clean end), and that its errors are sticky.
func FuzzLengthReader(f *testing.F) {
	for _, tt := range lengthTests {
		f.Add(tt.in, uint16(tt.limit))
	}
	f.Add([]byte{0, 0, 1, 0}, uint16(256))
	f.Add([]byte{0x80, 0, 0, 0, 0}, uint16(1))

	f.Fuzz(func(t *testing.T, data []byte, maxLen uint16) {
		limit := max(int(maxLen)%1024, 1)
		lr := NewLengthReader(bytes.NewReader(data), limit)
		var out bytes.Buffer
		lw := NewLengthWriter(&out, limit)
		var err error
		for {
			var frame []byte
			if frame, err = lr.ReadFrame(); err != nil {
				break
			}
			if len(frame) > limit {
				t.Fatalf("frame of %d bytes over the limit %d", len(frame), limit)
			}
			if err := lw.WriteFrame(frame); err != nil {
				t.Fatalf("WriteFrame(%d bytes) error = %v", len(frame), err)
			}
		}
		if !bytes.HasPrefix(data, out.Bytes()) {
			t.Fatalf("rewritten frames % x are not a prefix of % x", out.Bytes(), data)
		}
		switch {
		case err == io.EOF:
			if !bytes.Equal(out.Bytes(), data) {
				t.Fatalf("clean end after % x, want all of % x", out.Bytes(), data)
			}
		case errors.Is(err, ErrFrameTooLarge), errors.Is(err, io.ErrUnexpectedEOF):
		default:
			t.Fatalf("ReadFrame() error = %v, want io.EOF, ErrFrameTooLarge or io.ErrUnexpectedEOF", err)
		}
		if again, err2 := lr.ReadFrame(); again != nil || err2 != err {
			t.Fatalf("ReadFrame() after %v = %q, %v, want the same error", err, again, err2)
		}
	})
}
