package evidence

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkReadRender is the evidence part of ReadFiles on a 2,000-line
// file: stable snapshot, render within the coding budget, record.
func BenchmarkReadRender(b *testing.B) {
	var sb strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&sb, "\tif err := doSomething(ctx, item%d); err != nil { return err }\n", i)
	}
	p := filepath.Join(b.TempDir(), "f.go")
	if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	l := NewLedger(0)
	b.SetBytes(int64(sb.Len()))
	b.ReportAllocs()
	for b.Loop() {
		s, err := ReadSnapshot(p, 0)
		if err != nil {
			b.Fatal(err)
		}
		v := Render(s, All, 1<<20)
		if v.Shown.End != 2000 {
			b.Fatalf("Shown = %v", v.Shown)
		}
		l.Record(s.Path, s.Revision, v.Shown)
	}
}

// BenchmarkRender2000 is Render alone on the same shape of file.
func BenchmarkRender2000(b *testing.B) {
	var sb strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&sb, "\tif err := doSomething(ctx, item%d); err != nil { return err }\n", i)
	}
	s := snap(sb.String())
	b.ReportAllocs()
	for b.Loop() {
		Render(s, All, 24000)
	}
}

// BenchmarkLedgerMissing asks for a 2,000-line file read in 200 pieces with
// holes between them.
func BenchmarkLedgerMissing(b *testing.B) {
	l := NewLedger(0)
	for i := range 200 {
		l.Record("/w/f.go", revA, Range{i*10 + 1, i*10 + 8})
	}
	for i := range 1000 {
		l.Record(fmt.Sprintf("/w/other%d.go", i), revA, All)
	}
	b.ReportAllocs()
	for b.Loop() {
		missing, _, _ := l.Missing("/w/f.go", revA, Range{1, 2000})
		if len(missing) != 200 {
			b.Fatalf("len(missing) = %d", len(missing))
		}
	}
}
