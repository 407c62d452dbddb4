package codemap

// References: where a name is defined and used across a tree. Only
// identifiers count (Identifiers never reports a word inside a string or a
// comment), the name must match exactly, and definitions come first. A file
// is parsed only if its bytes hold the name as a whole word, and its
// identifier table is cached by revision, so a second search of the same
// tree reads files but parses none that did not change.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"
)

// References limits.
const (
	// DefaultMaxReferences is the page size when none is asked.
	DefaultMaxReferences = 100
	// MaxReferences is the largest page.
	MaxReferences = 1000
	// MaxReferenceHits bounds the hits one search counts; beyond it the
	// answer says it was truncated.
	MaxReferenceHits = 1 << 20
	// MaxNameBytes bounds the searched name.
	MaxNameBytes = 256
	// MaxLineTextBytes bounds the source line shown with a hit.
	MaxLineTextBytes = 200
)

// ReferencesRequest asks for one page of the references to a name.
type ReferencesRequest struct {
	Dir        string // relative to the index root; "" for the root
	Name       string // an identifier, matched exactly
	MaxResults int    // page size: 0 means DefaultMaxReferences; at most MaxReferences
	Cursor     string
}

// Reference is one identifier occurrence.
type Reference struct {
	Path       string // relative to the root, slash-separated
	Line       int    // 1-based
	Column     int    // 1-based, in bytes
	Definition bool
	Text       string // the source line, trimmed and bounded
}

// References is one page of a search.
type References struct {
	Hits        []Reference
	Total       int  // hits of the whole search
	Definitions int  // definitions among Total
	Truncated   bool // the search stopped counting at MaxReferenceHits
	Offset      int  // rank of Hits[0]
	Files       int  // source files walked
	Searched    int  // files parsed or answered from the cache
	NextCursor  string
}

// fileHits are the positions of the name in one file.
type fileHits struct {
	rev revision
	pos []identPos // in source order; shares the cached table
}

// References returns one page of the references to req.Name under req.Dir.
func (ix *Index) References(ctx context.Context, req ReferencesRequest) (*References, error) {
	if !Available() {
		return nil, ErrUnavailable
	}
	dir, err := ix.cleanDir(req.Dir)
	if err != nil {
		return nil, err
	}
	name := req.Name
	switch {
	case name == "":
		return nil, &RequestError{Field: "name", Reason: "is required"}
	case len(name) > MaxNameBytes:
		return nil, &RequestError{Field: "name", Reason: fmt.Sprintf("is longer than %d bytes", MaxNameBytes)}
	case strings.ContainsFunc(name, func(r rune) bool { return r <= ' ' || r == utf8.RuneError }):
		return nil, &RequestError{Field: "name", Reason: "must be one identifier, without spaces"}
	}
	limit := req.MaxResults
	if limit <= 0 {
		limit = DefaultMaxReferences
	}
	limit = min(limit, MaxReferences)
	digest := requestDigest("references", ix.root, dir, name, strconv.Itoa(limit))
	offset, err := decodeCursor(req.Cursor, digest)
	if err != nil {
		return nil, err
	}
	files, err := Walk(ctx, ix.root, dir)
	if err != nil {
		return nil, err
	}
	hits := make([]fileHits, len(files))
	searched := make([]bool, len(files))
	var unavailable atomic.Bool
	err = ix.parallel(ctx, len(files), func(i int) {
		h, ok, err := ix.fileHits(files[i], name)
		if errors.Is(err, ErrUnavailable) {
			unavailable.Store(true)
		}
		hits[i], searched[i] = h, ok
	})
	if unavailable.Load() {
		return nil, ErrUnavailable
	}
	if err != nil {
		return nil, err
	}
	out := &References{Offset: offset, Files: len(files)}
	for i := range files {
		if searched[i] {
			out.Searched++
		}
		for _, p := range hits[i].pos {
			if out.Total == MaxReferenceHits {
				out.Truncated = true
				break
			}
			out.Total++
			if p.def {
				out.Definitions++
			}
		}
	}
	if offset > out.Total || (offset == out.Total && offset > 0) {
		return nil, &CursorError{Reason: "the search has fewer hits than the cursor skips; start again without a cursor"}
	}
	// Rank r < Definitions is the r-th definition in file order, the rest
	// the uses; walk both passes and keep the page.
	rank := 0
	for _, wantDef := range []bool{true, false} {
		for i := range files {
			for _, p := range hits[i].pos {
				if p.def != wantDef {
					continue
				}
				if rank >= offset && len(out.Hits) < limit && rank < out.Total {
					out.Hits = append(out.Hits, Reference{Path: files[i].Rel, Line: int(p.line), Column: int(p.col), Definition: p.def})
				}
				rank++
			}
		}
	}
	if next := offset + len(out.Hits); next < out.Total {
		out.NextCursor = encodeCursor(next, digest)
	}
	ix.fillLineText(out.Hits)
	return out, nil
}

// fileHits finds name in f: from the cached identifier table when f is
// unchanged, else by reading f and parsing it if the name appears in it as
// a whole word. searched is false for a file that could not be read or
// parsed.
func (ix *Index) fileHits(f File, name string) (h fileHits, searched bool, err error) {
	rev := revision{size: f.Size, modTime: f.ModTime}
	if e, ok := ix.idents.get(f.Rel); ok && e.rev == rev {
		if e.generated {
			return fileHits{}, true, nil
		}
		return fileHits{rev: rev, pos: e.table.lookup(name)}, true, nil
	}
	src, got, err := ix.readSource(f.Rel)
	if err != nil {
		return fileHits{}, false, nil
	}
	if isGenerated(src) {
		ix.idents.put(f.Rel, &identEntry{rev: got, generated: true}, 96)
		return fileHits{}, true, nil
	}
	if !containsWord(src, name) {
		return fileHits{}, true, nil
	}
	ids, err := Identifiers(f.Rel, src)
	if err != nil {
		return fileHits{}, false, err
	}
	e := &identEntry{rev: got, table: newIdentTable(ids)}
	ix.idents.put(f.Rel, e, e.size())
	return fileHits{rev: got, pos: e.table.lookup(name)}, true, nil
}

// containsWord reports whether name occurs in src not directly preceded or
// followed by an identifier byte: a necessary condition for an identifier
// token with that name.
func containsWord(src []byte, name string) bool {
	n := []byte(name)
	for off := 0; ; {
		i := bytes.Index(src[off:], n)
		if i < 0 {
			return false
		}
		start, end := off+i, off+i+len(n)
		if (start == 0 || !isIdentByte(src[start-1])) && (end == len(src) || !isIdentByte(src[end])) {
			return true
		}
		off = start + 1
	}
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 0x80 || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// fillLineText sets each hit's Text from its file as it is now. Hits are
// grouped by file, so each file is read once.
func (ix *Index) fillLineText(hits []Reference) {
	for start := 0; start < len(hits); {
		end := start
		for end < len(hits) && hits[end].Path == hits[start].Path {
			end++
		}
		src, _, err := ix.readSource(hits[start].Path)
		if err == nil {
			lines := lineOffsets(src)
			for k := start; k < end; k++ {
				hits[k].Text = lineText(src, lines, hits[k].Line)
			}
		}
		start = end
	}
}

// lineOffsets returns the byte offset of each line's start.
func lineOffsets(src []byte) []int {
	offs := []int{0}
	for i, c := range src {
		if c == '\n' {
			offs = append(offs, i+1)
		}
	}
	return offs
}

// lineText returns line (1-based) of src, trimmed and cut to
// MaxLineTextBytes on a UTF-8 boundary.
func lineText(src []byte, offs []int, line int) string {
	if line < 1 || line > len(offs) {
		return ""
	}
	end := len(src)
	if line < len(offs) {
		end = offs[line] - 1
	}
	s := strings.TrimSpace(string(src[offs[line-1]:end]))
	if len(s) > MaxLineTextBytes {
		s = truncateUTF8(s, MaxLineTextBytes) + "..."
	}
	return s
}
