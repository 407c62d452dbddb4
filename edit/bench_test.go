package edit

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"winx/evidence"
)

// BenchmarkLinePatch2000 is one one-line line_patch on a 2,000-line file,
// Plan and Commit, with fsync of the file and the directory and the undo
// record and receipt written.
func BenchmarkLinePatch2000(b *testing.B) {
	f := newFixture(b)
	p := f.write("big.go", numbered(2000))
	rev := f.show(p, evidence.All)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		plan, err := f.eng.Plan([]FileEdit{{Path: p, Mode: ModeLinePatch, ExpectedRevision: rev, Patches: []Patch{{1000, 1, fmt.Sprintf("line %d changed\n", i)}}}})
		if err != nil {
			b.Fatal(err)
		}
		res, err := f.eng.Commit(ctx, plan)
		if err != nil {
			b.Fatal(err)
		}
		rev = res.Files[0].NewRevision
	}
}

// BenchmarkBatch100 is one batch of 100 one-line patches on 100 files of
// 200 lines in one directory.
func BenchmarkBatch100(b *testing.B) { benchBatch(b, 100) }

// BenchmarkBatch2 is the smallest batch that writes an intent record (a
// one-file batch needs none: its replacement is one rename).
func BenchmarkBatch2(b *testing.B) { benchBatch(b, 2) }

// benchBatch is one batch of one-line patches on n files of 200 lines.
func benchBatch(b *testing.B, n int) {
	f := newFixture(b)
	revs := make([]evidence.Revision, n)
	paths := make([]string, n)
	for i := range paths {
		paths[i] = f.write(filepath.Join("pkg", fmt.Sprintf("f%03d.go", i)), numbered(200))
		revs[i] = f.show(paths[i], evidence.All)
	}
	ctx := context.Background()
	b.ResetTimer()
	for round := 0; b.Loop(); round++ {
		edits := make([]FileEdit, n)
		for i := range edits {
			edits[i] = FileEdit{Path: paths[i], Mode: ModeLinePatch, ExpectedRevision: revs[i], Patches: []Patch{{100, 1, fmt.Sprintf("changed %d\n", round)}}}
		}
		plan, err := f.eng.Plan(edits)
		if err != nil {
			b.Fatal(err)
		}
		res, err := f.eng.Commit(ctx, plan)
		if err != nil {
			b.Fatal(err)
		}
		for i := range revs {
			revs[i] = res.Files[i].NewRevision
		}
	}
}
