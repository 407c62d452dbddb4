package codemap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// Cache bounds of an Index, used when IndexOptions leaves them zero.
const (
	// DefaultMaxCachedFiles bounds the files whose outline an Index keeps.
	DefaultMaxCachedFiles = 100_000
	// DefaultMaxOutlineBytes bounds the estimated memory of cached outlines.
	DefaultMaxOutlineBytes = 32 << 20
	// DefaultMaxIdentBytes bounds the estimated memory of cached
	// identifier tables (a table costs about 12 bytes per identifier).
	DefaultMaxIdentBytes = 64 << 20
)

// IndexOptions tune an Index; zero fields mean the defaults.
type IndexOptions struct {
	MaxCachedFiles  int
	MaxOutlineBytes int64
	MaxIdentBytes   int64
	// Workers is the number of files parsed at once; 0 means GOMAXPROCS.
	Workers int
}

// Index answers navigation questions about one repository root and caches
// each file's outline and identifiers by file revision (path, size and
// modification time), so a repeated map or search parses only what changed.
// It is safe for concurrent use; the caches are bounded and forget the
// least recently used files first.
type Index struct {
	root    string // absolute, symlinks resolved; immutable
	workers int    // immutable

	outlines *lru[string, *outlineEntry]
	idents   *lru[string, *identEntry]
}

// NewIndex returns an Index for the directory root (absolute; its symlinks
// are resolved once, here).
func NewIndex(root string, opts *IndexOptions) (*Index, error) {
	if !filepath.IsAbs(root) {
		return nil, fmt.Errorf("codemap: index root %q is not absolute", root)
	}
	canonical, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	info, err := os.Stat(canonical)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("codemap: index root %q is not a directory", root)
	}
	var o IndexOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxCachedFiles <= 0 {
		o.MaxCachedFiles = DefaultMaxCachedFiles
	}
	if o.MaxOutlineBytes <= 0 {
		o.MaxOutlineBytes = DefaultMaxOutlineBytes
	}
	if o.MaxIdentBytes <= 0 {
		o.MaxIdentBytes = DefaultMaxIdentBytes
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	return &Index{
		root:     canonical,
		workers:  o.Workers,
		outlines: newLRU[string, *outlineEntry](o.MaxCachedFiles, o.MaxOutlineBytes),
		idents:   newLRU[string, *identEntry](o.MaxCachedFiles, o.MaxIdentBytes),
	}, nil
}

// Root returns the canonical root directory.
func (ix *Index) Root() string { return ix.root }

// Rel turns p (absolute, or relative to the root) into the slash-separated
// path relative to the root; ok is false when p lies outside it.
func (ix *Index) Rel(p string) (rel string, ok bool) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(ix.root, p)
	}
	r, err := filepath.Rel(ix.root, filepath.Clean(p))
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", false
	}
	if r == "." {
		r = ""
	}
	return filepath.ToSlash(r), true
}

// revision identifies one version of a file without reading it.
type revision struct {
	size    int64
	modTime int64
}

func revisionOf(info os.FileInfo) revision {
	return revision{size: info.Size(), modTime: info.ModTime().UnixNano()}
}

// outlineEntry is a file's outline at one revision. Immutable.
type outlineEntry struct {
	rev       revision
	generated bool
	symbols   []Symbol
	err       error // why there are no symbols (unsupported, too large, parse)
}

func (e *outlineEntry) size() int64 {
	n := int64(64)
	for _, s := range e.symbols {
		n += 72 + int64(len(s.Name)+len(s.Kind)+len(s.Container))
	}
	return n
}

// identEntry is a file's identifier table at one revision. Immutable.
type identEntry struct {
	rev       revision
	generated bool
	table     identTable
}

// identTable holds a file's identifiers grouped by name, compactly.
// Invariant: names sorted and unique; len(spans) == len(names)+1; the
// positions of names[i] are pos[spans[i]:spans[i+1]], in source order.
type identTable struct {
	names []string
	spans []uint32
	pos   []identPos
}

type identPos struct {
	line, col uint32
	def       bool
}

func newIdentTable(ids []Ident) identTable {
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(ids[a].Name, ids[b].Name) })
	var t identTable
	t.pos = make([]identPos, 0, len(ids))
	for _, i := range order {
		id := ids[i]
		if len(t.names) == 0 || t.names[len(t.names)-1] != id.Name {
			t.names = append(t.names, strings.Clone(id.Name))
			t.spans = append(t.spans, uint32(len(t.pos)))
		}
		t.pos = append(t.pos, identPos{line: uint32(id.Line), col: uint32(id.Column), def: id.Definition})
	}
	t.spans = append(t.spans, uint32(len(t.pos)))
	return t
}

// lookup returns the positions of name, in source order.
func (t *identTable) lookup(name string) []identPos {
	i, ok := slices.BinarySearch(t.names, name)
	if !ok {
		return nil
	}
	return t.pos[t.spans[i]:t.spans[i+1]]
}

func (e *identEntry) size() int64 {
	n := int64(96 + 12*len(e.table.pos) + 4*len(e.table.spans))
	for _, s := range e.table.names {
		n += 16 + int64(len(s))
	}
	return n
}

// readSource reads the file rel of the root, bounded by MaxSourceBytes, and
// returns its revision as seen by the open file (so the cache never pairs
// new bytes with an old revision). Symlinks are refused.
func (ix *Index) readSource(rel string) ([]byte, revision, error) {
	abs := filepath.Join(ix.root, filepath.FromSlash(rel))
	f, err := os.OpenFile(abs, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, revision{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, revision{}, err
	}
	if !info.Mode().IsRegular() {
		return nil, revision{}, fmt.Errorf("codemap: %s is not a regular file", rel)
	}
	if info.Size() > MaxSourceBytes {
		return nil, revisionOf(info), &TooLargeError{Path: rel, Size: int(info.Size())}
	}
	src, err := io.ReadAll(io.LimitReader(f, MaxSourceBytes+1))
	if err != nil {
		return nil, revision{}, err
	}
	if len(src) > MaxSourceBytes {
		return nil, revisionOf(info), &TooLargeError{Path: rel, Size: len(src)}
	}
	return src, revisionOf(info), nil
}

// outline returns the outline of f, from the cache when its revision is
// unchanged.
func (ix *Index) outline(f File) *outlineEntry {
	rev := revision{size: f.Size, modTime: f.ModTime}
	if e, ok := ix.outlines.get(f.Rel); ok && e.rev == rev {
		return e
	}
	src, got, err := ix.readSource(f.Rel)
	return ix.storeOutline(f.Rel, src, got, err)
}

// storeOutline outlines rel from one readSource result (src at revision
// rev, or err) and caches the entry.
func (ix *Index) storeOutline(rel string, src []byte, rev revision, err error) *outlineEntry {
	e := &outlineEntry{rev: rev}
	switch {
	case err != nil:
		e.err = err
	case isGenerated(src):
		e.generated = true
	default:
		e.symbols, e.err = Outline(rel, src)
	}
	if errors.Is(e.err, ErrUnavailable) {
		return e // never cache a build limitation
	}
	ix.outlines.put(rel, e, e.size())
	return e
}

// outlineAll returns the outlines of files, in order, parsing misses in
// parallel.
func (ix *Index) outlineAll(ctx context.Context, files []File) ([]*outlineEntry, error) {
	out := make([]*outlineEntry, len(files))
	err := ix.parallel(ctx, len(files), func(i int) { out[i] = ix.outline(files[i]) })
	return out, err
}

// parallel calls fn(0..n-1) on ix.workers goroutines and stops handing
// out work when ctx is done.
func (ix *Index) parallel(ctx context.Context, n int, fn func(i int)) error {
	workers := min(ix.workers, n)
	if workers <= 1 {
		for i := range n {
			if err := ctx.Err(); err != nil {
				return err
			}
			fn(i)
		}
		return nil
	}
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}
