package jsonrpc

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"
)

// recordingWriter keeps every Write call's slice as it was passed, so a
// test can see whether a part was copied before it was written.
type recordingWriter struct {
	writes [][]byte
	all    bytes.Buffer
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	w.writes = append(w.writes, p)
	w.all.Write(p)
	return len(p), nil
}

// partsMessages are messages of every shape, the large result over
// coalesceLimit so it is written on its own.
func partsMessages(t *testing.T) []Message {
	t.Helper()
	big, err := json.Marshal(map[string]string{"text": strings.Repeat("line of text\t\"quoted\"\n", 4000)})
	if err != nil {
		t.Fatal(err)
	}
	call, err := NewCall(StringID("a-1"), "tools/call", map[string]int{"n": 1})
	if err != nil {
		t.Fatal(err)
	}
	return []Message{
		call,
		&Response{ID: Int64ID(7), Result: json.RawMessage(`{"ok":true}`)},
		&Response{ID: StringID("big"), Result: big, Encoded: true},
		&Response{ID: Int64ID(8)},
		&Response{ID: Int64ID(9), Error: NewError(CodeInvalidParams, "bad")},
	}
}

// TestEncodeMessagePartsMatchEncodeMessage: the parts joined are exactly
// EncodeMessage's bytes, and an invalid result is refused the same way.
func TestEncodeMessagePartsMatchEncodeMessage(t *testing.T) {
	for _, m := range partsMessages(t) {
		want, err := EncodeMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		parts, err := EncodeMessageParts(m)
		if err != nil {
			t.Fatal(err)
		}
		if got := bytes.Join(parts, nil); !bytes.Equal(got, want) {
			t.Errorf("parts of %T:\n got %.200s\nwant %.200s", m, got, want)
		}
	}
	bad := &Response{ID: Int64ID(1), Result: json.RawMessage(`{"a":`)}
	if _, err := EncodeMessageParts(bad); err == nil {
		t.Error("EncodeMessageParts accepted an invalid result")
	}
}

// TestFramersWriteLargeResultUncopied: through a Conn's framers a large
// result reaches the writer as the handler's own bytes, not a copy, and the
// stream is byte for byte what the framers wrote before (frame + newline,
// or length prefix + frame).
func TestFramersWriteLargeResultUncopied(t *testing.T) {
	for _, m := range partsMessages(t) {
		frame, err := EncodeMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		parts, err := EncodeMessageParts(m)
		if err != nil {
			t.Fatal(err)
		}
		var lw recordingWriter
		if err := NewLineWriter(&lw).writeParts(parts); err != nil {
			t.Fatal(err)
		}
		if want := append(append([]byte{}, frame...), '\n'); !bytes.Equal(lw.all.Bytes(), want) {
			t.Errorf("line framing of %T differs", m)
		}
		var fw recordingWriter
		if err := NewLengthWriter(&fw, 0).writeParts(parts); err != nil {
			t.Fatal(err)
		}
		want := binary.BigEndian.AppendUint32(nil, uint32(len(frame)))
		if want = append(want, frame...); !bytes.Equal(fw.all.Bytes(), want) {
			t.Errorf("length framing of %T differs", m)
		}
		r, ok := m.(*Response)
		if !ok || len(r.Result) < 64<<10 {
			if len(lw.writes) != 1 || len(fw.writes) != 1 {
				t.Errorf("small %T took %d and %d writes, want one each", m, len(lw.writes), len(fw.writes))
			}
			continue
		}
		for name, w := range map[string]*recordingWriter{"line": &lw, "length": &fw} {
			found := false
			for _, p := range w.writes {
				found = found || (len(p) == len(r.Result) && &p[0] == &r.Result[0])
			}
			if !found {
				t.Errorf("%s framer copied the large result before writing it", name)
			}
		}
	}
}

// TestLineWriterPartsRefuseNewline: a newline in any part is refused before
// anything is written, as WriteFrame refuses a frame holding one.
func TestLineWriterPartsRefuseNewline(t *testing.T) {
	var w recordingWriter
	err := NewLineWriter(&w).writeParts([][]byte{[]byte(`{"a":`), []byte("1\n"), []byte("}")})
	if err == nil || w.all.Len() != 0 {
		t.Fatalf("err %v, wrote %q", err, w.all.Bytes())
	}
}
