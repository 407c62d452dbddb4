//go:build cgo

package codemap

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
)

// TestConcurrentParses runs every entry point on every fixture from many
// goroutines at once and checks each answer equals the sequential one:
// parsers are pooled per language and must never be shared by two parses.
func TestConcurrentParses(t *testing.T) {
	type answer struct {
		syms   []Symbol
		ids    []Ident
		syntax *SyntaxIssue
	}
	run := func(path string, src []byte) (answer, error) {
		var a answer
		var err error
		if a.syms, err = Outline(path, src); err != nil {
			return a, err
		}
		if a.ids, err = Identifiers(path, src); err != nil {
			return a, err
		}
		a.syntax, err = FirstSyntaxError(path, src)
		return a, err
	}
	files := fixtureFiles(t)
	srcs := map[string][]byte{}
	want := map[string]answer{}
	for _, f := range files {
		srcs[f] = readFixture(t, f)
		a, err := run(f, srcs[f])
		if err != nil {
			t.Fatal(err)
		}
		want[f] = a
	}
	const workers, rounds = 8, 3
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds*len(files))
	for w := range workers {
		wg.Go(func() {
			for r := range rounds {
				for i := range files {
					f := files[(i+w+r)%len(files)]
					got, err := run(f, srcs[f])
					if err != nil {
						errs <- err
						continue
					}
					if !reflect.DeepEqual(got, want[f]) {
						errs <- fmt.Errorf("%s: a concurrent parse gave a different answer", f)
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
