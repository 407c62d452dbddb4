package evidence

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// FuzzLineRange: ParsePathSpec never panics; a parsed range is valid, its
// String parses back to the same range on any path, and the path part is a
// prefix of the spec.
func FuzzLineRange(f *testing.F) {
	for _, s := range []string{
		"a.go", "a.go:7", "a.go:3-9", "a.go:90-", "a.go:-12", "x:", "x:-", ":5", "a:0", "a:5-3",
		"notes:12:1-", "x:1-2-3", "a:99999999999999999999999", "a:1073741825", "a:0007-0009", "::::", "\x00:1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		path, r, has, err := ParsePathSpec(spec)
		if err != nil {
			if _, ok := err.(*RangeError); !ok {
				t.Fatalf("ParsePathSpec(%q) error %T, want *RangeError", spec, err)
			}
			return
		}
		if path == "" || !strings.HasPrefix(spec, path) {
			t.Fatalf("ParsePathSpec(%q) path = %q", spec, path)
		}
		if !has {
			if path != spec || r != All {
				t.Fatalf("ParsePathSpec(%q) without range = %q, %v", spec, path, r)
			}
			return
		}
		if r.Start < 1 || r.Start > MaxLineNumber || r.End < 0 || r.End > MaxLineNumber || (r.End != 0 && r.End < r.Start) {
			t.Fatalf("ParsePathSpec(%q) range %#v invalid", spec, r)
		}
		again := path + ":" + r.String()
		p2, r2, has2, err := ParsePathSpec(again)
		if err != nil || p2 != path || r2 != r || !has2 {
			t.Fatalf("round trip %q -> %q = %q, %v, %v, %v", spec, again, p2, r2, has2, err)
		}
	})
}

// FuzzLedger drives a Ledger of 2 paths with random Record and Missing
// calls over 3 paths and 2 revisions, against a model: a bitmap of lines
// 1..modelLines per path plus a flag for "everything after modelLines", and
// an LRU list.
func FuzzLedger(f *testing.F) {
	f.Add([]byte{0, 1, 5, 0, 1, 3, 9})
	f.Add([]byte{0, 0, 1, 0, 4, 8, 1, 0, 2, 0, 1, 2, 3, 0, 2, 9, 0, 3, 4, 0, 1, 0, 0})
	f.Add([]byte{0, 0, 1, 40, 0, 4, 0, 0, 1, 0, 0, 1, 10, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		const (
			modelLines = 64
			maxStart   = 48
			limit      = 2
		)
		type model struct {
			rev  Revision
			bits [modelLines + 1]bool
			tail bool // all lines > modelLines covered
		}
		models := map[string]*model{}
		var lru []string // most recent last
		revs := []Revision{revA, revB}
		l := NewLedger(limit)
		next := func() byte {
			if len(ops) == 0 {
				return 0
			}
			b := ops[0]
			ops = ops[1:]
			return b
		}
		for len(ops) > 0 {
			op, pi, ri := next(), next(), next()
			path := fmt.Sprint(int(pi) % 3)
			rev := revs[int(ri)%2]
			start := int(next()) % (maxStart + 1) // 0 is the zero range
			end := 0
			if e := int(next()) % (maxStart + 2); e != 0 {
				end = max(start, e) // closed: start..end within the bitmap
			}
			r := Range{start, end}
			if op%2 == 0 {
				l.Record(path, rev, r)
				m := models[path]
				if m == nil || m.rev != rev {
					m = &model{rev: rev}
					models[path] = m
				}
				lru = slices.DeleteFunc(lru, func(p string) bool { return p == path })
				lru = append(lru, path)
				if len(lru) > limit {
					delete(models, lru[0])
					lru = lru[1:]
				}
				if start >= 1 {
					hi := end
					if end == 0 {
						hi = modelLines
						m.tail = true
					}
					for i := start; i <= hi; i++ {
						m.bits[i] = true
					}
				}
				continue
			}
			if start == 0 {
				start = 1
			}
			r.Start = start
			got, known, seen := l.Missing(path, rev, r)
			m := models[path]
			var want []Range
			wantKnown, wantSeen := m != nil, Revision("")
			if m != nil {
				wantSeen = m.rev
			}
			if m == nil || m.rev != rev {
				want = []Range{r}
			} else {
				hi := end
				if end == 0 {
					hi = modelLines
				}
				for i := start; i <= hi; i++ {
					if m.bits[i] {
						continue
					}
					if n := len(want); n > 0 && want[n-1].End == i-1 {
						want[n-1].End = i
					} else {
						want = append(want, Range{i, i})
					}
				}
				if end == 0 && !m.tail {
					if n := len(want); n > 0 && want[n-1].End == modelLines {
						want[n-1].End = 0
					} else {
						want = append(want, Range{modelLines + 1, 0})
					}
				}
			}
			if !slices.Equal(got, want) || known != wantKnown || seen != wantSeen {
				t.Fatalf("Missing(%s, %.12s, %v) = %v, %v, %.12s, want %v, %v, %.12s", path, rev, r, got, known, seen, want, wantKnown, wantSeen)
			}
			if l.Covers(path, rev, r) != (wantKnown && wantSeen == rev && len(want) == 0) {
				t.Fatalf("Covers(%s, %v) disagrees with Missing", path, r)
			}
		}
	})
}
