package evidence

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestLedgerEncodeDecode(t *testing.T) {
	r1, r2 := RevisionOf([]byte("a")), RevisionOf([]byte("b"))
	l := NewLedger(0)
	l.Record("/w/a", r1, Range{Start: 1, End: 3})
	l.Record("/w/a", r2, Range{Start: 2, End: 0})
	l.Record("/w/b", r1, Range{})
	got := NewLedger(0)
	got.Record("/w/b", r2, Range{Start: 1, End: 1}) // newer here: kept
	if err := got.Decode(l.Encode()); err != nil {
		t.Fatal(err)
	}
	if !got.Covers("/w/a", r2, Range{Start: 2, End: 900}) || got.Covers("/w/a", r2, Range{Start: 1, End: 1}) {
		t.Errorf("decoded coverage of /w/a is wrong")
	}
	if !got.WasShown("/w/a", r1) {
		t.Errorf("earlier revision lost in the round trip")
	}
	if _, _, seen := got.Missing("/w/b", r2, Range{}); seen != r2 {
		t.Errorf("decode replaced a newer entry: seen %s", seen)
	}
}

func TestLedgerDecodeRefusesMalformed(t *testing.T) {
	rev := string(RevisionOf([]byte("a")))
	for name, in := range map[string]string{
		"not json":      "{",
		"version":       `{"version":2,"entries":[]}`,
		"relative path": `{"version":1,"entries":[{"path":"a","rev":"` + rev + `"}]}`,
		"bad revision":  `{"version":1,"entries":[{"path":"/a","rev":"sha256:zz"}]}`,
		"bad span":      `{"version":1,"entries":[{"path":"/a","rev":"` + rev + `","spans":[[5,2]]}]}`,
		"huge line":     `{"version":1,"entries":[{"path":"/a","rev":"` + rev + `","spans":[[1,` + fmt.Sprint(MaxLineNumber+1) + `]]}]}`,
		"too large":     strings.Repeat(" ", MaxLedgerBytes+1),
	} {
		l := NewLedger(0)
		if err := l.Decode([]byte(in)); !errors.Is(err, ErrLedgerFormat) || l.Len() != 0 {
			t.Errorf("%s: Decode = %v with %d paths, want ErrLedgerFormat and nothing added", name, err, l.Len())
		}
	}
}

func TestLedgerEncodeBounded(t *testing.T) {
	l := NewLedger(0)
	rev := RevisionOf([]byte("a"))
	long := strings.Repeat("d", 900)
	for i := range DefaultLedgerPaths {
		l.Record(fmt.Sprintf("/%s/%d", long, i), rev, Range{Start: 1, End: 1})
	}
	b := l.Encode()
	if len(b) > MaxLedgerBytes {
		t.Fatalf("Encode = %d bytes, limit %d", len(b), MaxLedgerBytes)
	}
	got := NewLedger(0)
	if err := got.Decode(b); err != nil || got.Len() == 0 {
		t.Fatalf("Decode = %v, %d paths", err, got.Len())
	}
	// The most recently recorded path is kept.
	if !got.Covers(fmt.Sprintf("/%s/%d", long, DefaultLedgerPaths-1), rev, Range{Start: 1, End: 1}) {
		t.Errorf("the most recent path was dropped")
	}
}
