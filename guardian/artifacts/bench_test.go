package artifacts

import (
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkScan measures one scan of a workspace with a session at its file
// budget (128 files, a quarter of them in each of four helpers) and two
// smaller sessions beside it.
func BenchmarkScan(b *testing.B) {
	root := b.TempDir()
	for i := range MaxSessionFiles {
		dir := SessionDir(root, idA)
		if i%2 == 0 {
			dir = filepath.Join(dir, fmt.Sprintf("helper%d", i%8/2))
		}
		sparse(b, filepath.Join(dir, fmt.Sprint(i)), int64(i)<<10)
	}
	for _, id := range []string{idB, idC} {
		for i := range 8 {
			sparse(b, filepath.Join(SessionDir(root, id), "h", fmt.Sprint(i)), 1<<20)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		u, err := Scan(root)
		if err != nil {
			b.Fatal(err)
		}
		if u.Sessions[idA].Files != MaxSessionFiles {
			b.Fatalf("scan saw %d files", u.Sessions[idA].Files)
		}
	}
}
