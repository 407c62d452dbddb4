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
func BenchmarkBatch100(b *testing.B) {
	f := newFixture(b)
	revs := make([]evidence.Revision, 100)
	paths := make([]string, 100)
	for i := range paths {
		paths[i] = f.write(filepath.Join("pkg", fmt.Sprintf("f%03d.go", i)), numbered(200))
		revs[i] = f.show(paths[i], evidence.All)
	}
	ctx := context.Background()
	b.ResetTimer()
	for n := 0; b.Loop(); n++ {
		edits := make([]FileEdit, 100)
		for i := range edits {
			edits[i] = FileEdit{Path: paths[i], Mode: ModeLinePatch, ExpectedRevision: revs[i], Patches: []Patch{{100, 1, fmt.Sprintf("changed %d\n", n)}}}
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

// BenchmarkBatch2 is one batch of one-line patches on two files of 200
// lines: the smallest batch that writes an intent record (a one-file
// batch needs none: its replacement is one rename).
func BenchmarkBatch2(b *testing.B) {
	f := newFixture(b)
	var revs [2]evidence.Revision
	var paths [2]string
	for i := range paths {
		paths[i] = f.write(fmt.Sprintf("f%d.go", i), numbered(200))
		revs[i] = f.show(paths[i], evidence.All)
	}
	ctx := context.Background()
	b.ResetTimer()
	for n := 0; b.Loop(); n++ {
		edits := make([]FileEdit, 2)
		for i := range edits {
			edits[i] = FileEdit{Path: paths[i], Mode: ModeLinePatch, ExpectedRevision: revs[i], Patches: []Patch{{100, 1, fmt.Sprintf("changed %d\n", n)}}}
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
