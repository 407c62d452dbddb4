package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"

	"winx/jsonrpc"
)

// countingReader counts the reads that reach the connection.
type countingReader struct {
	r     io.Reader
	reads int
}

func (c *countingReader) Read(p []byte) (int, error) {
	c.reads++
	return c.r.Read(p)
}

func frame(payload string) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(payload)))
	return append(b, payload...)
}

// TestFrameReaderOneReadPerSmallFrame: a frame's length prefix and a small
// payload come from one read of the connection (a read is a system call
// per frame saved on every request and answer), a payload larger than the
// buffer still arrives whole, and the framer's typed errors are kept.
func TestFrameReaderOneReadPerSmallFrame(t *testing.T) {
	small := `{"jsonrpc":"2.0","id":1,"method":"session.run","params":{"command":"echo hi"}}`
	large := `"` + strings.Repeat("x", 3*frameReadBuffer) + `"`
	var in bytes.Buffer
	in.Write(frame(small))
	in.Write(frame(large))
	cr := &countingReader{r: &in}
	fr := newFrameReader(cr)
	got, err := fr.ReadFrame()
	if err != nil || string(got) != small {
		t.Fatalf("ReadFrame = %q, %v", got, err)
	}
	if cr.reads != 1 {
		t.Errorf("a small frame took %d reads of the connection, want 1", cr.reads)
	}
	if got, err := fr.ReadFrame(); err != nil || string(got) != large {
		t.Fatalf("large ReadFrame = %d bytes, %v; want %d", len(got), err, len(large))
	}
	if _, err := fr.ReadFrame(); !errors.Is(err, io.EOF) {
		t.Errorf("at the end = %v, want io.EOF", err)
	}

	over := binary.BigEndian.AppendUint32(nil, jsonrpc.MaxFrameSize+1)
	fr = newFrameReader(bytes.NewReader(over))
	var tooLarge *jsonrpc.FrameTooLargeError
	if _, err := fr.ReadFrame(); !errors.As(err, &tooLarge) {
		t.Errorf("oversized prefix = %v, want a *jsonrpc.FrameTooLargeError", err)
	}
}
