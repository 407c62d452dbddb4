package codemap

// Repository maps: the symbols of many files, ranked for relevance and cut
// to a token budget, continued page by page with an opaque cursor.
//
// Ranking, best first:
//  1. priority: MapRequest.Priority in the caller's order (the files the
//     session just worked on), then the files MapRequest.Touched accepts;
//  2. query: files whose path contains a query word, more words first; then
//     files with a symbol whose name contains a query word;
//  3. structure: everything else.
//
// Inside every tier files come in structural order: source before tests
// (_test files, test_ files, .spec./.test. files and test, tests, testdata,
// __tests__ directories), then shallower paths first, then a directory's
// entry file (named like its directory, or main, index, lib, mod,
// __init__), then lexical path order. Files without symbols and generated
// files are left out.
//
// Within a file at most MaxMapSymbolsPerFile symbols are shown, chosen in
// this order: symbols matching the query, top-level exported ones, other
// top-level ones, then members; they are listed in line order and the
// number left out is given, so the caller can outline that file for all.
//
// The map is computed lazily: files are parsed in ranked order, a batch
// at a time, only until the page is full. A cold map of a large tree thus
// parses a few dozen files, not all of them; a query reads every file once
// but parses only those that contain a query word.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Repository map limits.
const (
	// DefaultMapTokens is the token budget of a page when none is asked.
	DefaultMapTokens = 4000
	// MaxMapTokens is the largest budget a page may ask for.
	MaxMapTokens = 20000
	// MinMapTokens is the smallest; smaller asks are raised to it.
	MinMapTokens = 256
	// MaxMapSymbolsPerFile bounds the symbols shown for one file.
	MaxMapSymbolsPerFile = 40
	// MaxQueryBytes bounds MapRequest.Query.
	MaxQueryBytes = 256
)

// ErrBadCursor is wrapped by *CursorError.
var ErrBadCursor = errors.New("codemap: invalid cursor")

// CursorError is a cursor that is malformed or belongs to another request.
type CursorError struct{ Reason string }

func (e *CursorError) Error() string { return ErrBadCursor.Error() + ": " + e.Reason }
func (e *CursorError) Unwrap() error { return ErrBadCursor }

// ErrBadRequest is wrapped by *RequestError.
var ErrBadRequest = errors.New("codemap: invalid request")

// RequestError is a request field that cannot be used.
type RequestError struct{ Field, Reason string }

func (e *RequestError) Error() string {
	return fmt.Sprintf("%v: %s %s", ErrBadRequest, e.Field, e.Reason)
}
func (e *RequestError) Unwrap() error { return ErrBadRequest }

// MapRequest asks for one page of a repository map.
type MapRequest struct {
	// Dir is the directory to map, relative to the index root ("" for the
	// root).
	Dir string
	// Query ranks files and symbols whose names contain one of its words
	// (case-insensitive) first.
	Query string
	// Priority are paths (absolute, or relative to the root) ranked before
	// everything else, most important first. Paths outside Dir or not
	// walked are ignored.
	Priority []string
	// Touched, if set, ranks the files it accepts (by path relative to the
	// root) right after Priority.
	Touched func(rel string) bool
	// Tokens is the page budget: 0 means DefaultMapTokens; it is clamped
	// to MinMapTokens..MaxMapTokens.
	Tokens int
	// MaxFiles bounds the files of a page; 0 means no bound but the budget.
	MaxFiles int
	// Cursor continues an earlier page of the same request.
	Cursor string
}

// MapFile is one file of a map page.
type MapFile struct {
	Path    string // relative to the root, slash-separated
	Lang    string
	Reason  string   // "priority", "query" or "structure"
	Symbols []Symbol // shown, in line order
	Omitted int      // symbols of the file not shown
}

// Map is one page of a repository map.
type Map struct {
	Files []MapFile
	// Text renders Files: a path line per file, then one line per symbol.
	Text string
	// Tokens estimates Text's size (bytes/4, rounded up); it is at most
	// Budget.
	Tokens int
	Budget int
	// Offset is the rank of Files[0] among all files of the map.
	Offset int
	// Candidates is the number of source files walked under Dir.
	Candidates int
	// NextCursor continues the map; "" on the last page.
	NextCursor string
}

// Reasons a file is in a map.
const (
	ReasonPriority  = "priority"
	ReasonQuery     = "query"
	ReasonStructure = "structure"
)

// EstimateTokens is the token estimate used for budgets: a token per four
// bytes, rounded up.
func EstimateTokens(s string) int { return (len(s) + 3) / 4 }

// RepoMap returns one page of the map of req.Dir.
func (ix *Index) RepoMap(ctx context.Context, req MapRequest) (*Map, error) {
	if !Available() {
		return nil, ErrUnavailable
	}
	dir, err := ix.cleanDir(req.Dir)
	if err != nil {
		return nil, err
	}
	if len(req.Query) > MaxQueryBytes {
		return nil, &RequestError{Field: "query", Reason: fmt.Sprintf("is longer than %d bytes", MaxQueryBytes)}
	}
	budget := req.Tokens
	if budget <= 0 {
		budget = DefaultMapTokens
	}
	budget = min(max(budget, MinMapTokens), MaxMapTokens)
	digest := requestDigest("map", ix.root, dir, req.Query, strconv.Itoa(budget), strconv.Itoa(req.MaxFiles))
	offset, err := decodeCursor(req.Cursor, digest)
	if err != nil {
		return nil, err
	}
	files, err := Walk(ctx, ix.root, dir)
	if err != nil {
		return nil, err
	}
	r := &ranker{ix: ix, ctx: ctx, dir: dir, files: files, words: queryWords(req.Query)}
	m := &Map{Budget: budget, Offset: offset, Candidates: len(files)}
	var text strings.Builder
	rank := 0
	full := false
	err = r.each(req, func(f File, e *outlineEntry, reason string) bool {
		if rank < offset {
			rank++
			return true
		}
		if req.MaxFiles > 0 && len(m.Files) >= req.MaxFiles {
			full = true
			return false
		}
		mf := r.selectSymbols(f, e, reason)
		block := renderFile(mf)
		if EstimateTokens(text.String()+block) > budget {
			if len(m.Files) > 0 {
				full = true
				return false
			}
			// The first file alone is over the budget: show fewer symbols.
			for len(mf.Symbols) > 0 && EstimateTokens(block) > budget {
				cut := max(1, len(mf.Symbols)/4)
				mf.Symbols, mf.Omitted = mf.Symbols[:len(mf.Symbols)-cut], mf.Omitted+cut
				block = renderFile(mf)
			}
			if EstimateTokens(block) > budget {
				rank++ // not even its path fits: pass over it rather than loop
				return true
			}
		}
		text.WriteString(block)
		m.Files = append(m.Files, mf)
		rank++
		return true
	})
	if err != nil {
		return nil, err
	}
	if offset > 0 && len(m.Files) == 0 && rank < offset {
		return nil, &CursorError{Reason: "the map has fewer files than the cursor skips; start again without a cursor"}
	}
	m.Text = text.String()
	m.Tokens = EstimateTokens(m.Text)
	if full {
		m.NextCursor = encodeCursor(rank, digest)
	}
	return m, nil
}

// cleanDir checks a directory relative to the root.
func (ix *Index) cleanDir(dir string) (string, error) {
	rel, ok := ix.Rel(dir)
	if !ok {
		return "", &RequestError{Field: "path", Reason: "is outside the index root"}
	}
	return rel, nil
}

// ranker produces a map's files in ranked order (see the file comment).
type ranker struct {
	ix    *Index
	ctx   context.Context
	dir   string
	files []File   // walk order
	words []string // lower-case query words
}

// batchSize is how many files are parsed ahead at once: enough to keep
// every worker busy, few enough that a full page wastes little.
func (r *ranker) batchSize() int { return max(8, 4*r.ix.workers) }

// each calls yield for every file of the map in ranked order until yield
// returns false.
func (r *ranker) each(req MapRequest, yield func(File, *outlineEntry, string) bool) error {
	byRel := make(map[string]int, len(r.files))
	for i, f := range r.files {
		byRel[f.Rel] = i
	}
	used := make([]bool, len(r.files))
	var tier []int
	for _, p := range req.Priority {
		rel, ok := r.ix.Rel(p)
		if i, found := byRel[rel]; ok && found && !used[i] {
			used[i] = true
			tier = append(tier, i)
		}
	}
	if req.Touched != nil {
		var touched []int
		for i, f := range r.files {
			if !used[i] && req.Touched(f.Rel) {
				used[i] = true
				touched = append(touched, i)
			}
		}
		tier = append(tier, r.structural(touched)...)
	}
	more, err := r.emit(tier, ReasonPriority, nil, yield)
	if err != nil || !more {
		return err
	}
	rest := make([]int, 0, len(r.files))
	for i := range r.files {
		if !used[i] {
			rest = append(rest, i)
		}
	}
	rest = r.structural(rest)
	if len(r.words) > 0 {
		// Paths first: more matching words, then structure.
		var byPath []int
		score := make(map[int]int)
		for _, i := range rest {
			if n := pathScore(r.files[i].Rel, r.words); n > 0 {
				byPath = append(byPath, i)
				score[i] = n
			}
		}
		slices.SortStableFunc(byPath, func(a, b int) int { return score[b] - score[a] })
		for _, i := range byPath {
			used[i] = true
		}
		if more, err = r.emit(byPath, ReasonQuery, nil, yield); err != nil || !more {
			return err
		}
		// Then files with a matching symbol, found lazily.
		rest = slices.DeleteFunc(rest, func(i int) bool { return used[i] })
		matched := make([]bool, len(r.files))
		if more, err = r.emit(rest, ReasonQuery, matched, yield); err != nil || !more {
			return err
		}
		rest = slices.DeleteFunc(rest, func(i int) bool { return matched[i] })
	}
	_, err = r.emit(rest, ReasonStructure, nil, yield)
	return err
}

// emit outlines the files of order a batch at a time and yields those with
// symbols. With filter set, only files having a symbol that matches the
// query are yielded, and they are marked in filter. It reports whether
// yield wants more.
func (r *ranker) emit(order []int, reason string, filter []bool, yield func(File, *outlineEntry, string) bool) (bool, error) {
	for start := 0; start < len(order); start += r.batchSize() {
		batch := order[start:min(start+r.batchSize(), len(order))]
		entries := make([]*outlineEntry, len(batch))
		err := r.ix.parallel(r.ctx, len(batch), func(k int) {
			f := r.files[batch[k]]
			if filter != nil {
				entries[k] = r.ix.outlineIfMatch(f, r.words)
			} else {
				entries[k] = r.ix.outline(f)
			}
		})
		if err != nil {
			return false, err
		}
		for k, e := range entries {
			if e != nil && errors.Is(e.err, ErrUnavailable) {
				return false, ErrUnavailable
			}
			if e == nil || e.generated || len(e.symbols) == 0 {
				continue
			}
			if filter != nil {
				if !symbolsMatch(e.symbols, r.words) {
					continue
				}
				filter[batch[k]] = true
			}
			if !yield(r.files[batch[k]], e, reason) {
				return false, nil
			}
		}
	}
	return true, nil
}

// outlineIfMatch returns f's outline if the file may have a symbol
// matching words, nil if it cannot: a cached outline answers directly, an
// uncached file is read and parsed only if its bytes contain a word.
func (ix *Index) outlineIfMatch(f File, words []string) *outlineEntry {
	rev := revision{size: f.Size, modTime: f.ModTime}
	if e, ok := ix.outlines.get(f.Rel); ok && e.rev == rev {
		return e
	}
	src, got, err := ix.readSource(f.Rel)
	if err != nil || !containsAnyFold(src, words) {
		return nil
	}
	return ix.storeOutline(f.Rel, src, got, nil)
}

// structural sorts file indices in structural order (see the file comment).
func (r *ranker) structural(idx []int) []int {
	type key struct {
		test  bool
		depth int
		entry bool
	}
	keys := make(map[int]key, len(idx))
	for _, i := range idx {
		rel := r.files[i].Rel
		sub := strings.TrimPrefix(strings.TrimPrefix(rel, r.dir), "/")
		keys[i] = key{test: isTestPath(rel), depth: strings.Count(sub, "/"), entry: isEntryFile(rel)}
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		ka, kb := keys[a], keys[b]
		switch {
		case ka.test != kb.test:
			return boolCmp(ka.test, kb.test)
		case ka.depth != kb.depth:
			return ka.depth - kb.depth
		case ka.entry != kb.entry:
			return boolCmp(kb.entry, ka.entry)
		}
		return strings.Compare(r.files[a].Rel, r.files[b].Rel)
	})
	return idx
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// isTestPath reports test code and fixtures.
func isTestPath(rel string) bool {
	dir, base := path.Split(rel)
	for _, seg := range strings.Split(strings.Trim(dir, "/"), "/") {
		switch seg {
		case "test", "tests", "testdata", "__tests__", "spec":
			return true
		}
	}
	stem := strings.TrimSuffix(base, path.Ext(base))
	return strings.HasSuffix(stem, "_test") || strings.HasPrefix(stem, "test_") ||
		strings.HasSuffix(stem, ".test") || strings.HasSuffix(stem, ".spec") || strings.HasSuffix(stem, "_spec")
}

// isEntryFile reports a directory's conventional entry file.
func isEntryFile(rel string) bool {
	dir, base := path.Split(rel)
	stem := strings.TrimSuffix(base, path.Ext(base))
	switch stem {
	case "main", "index", "lib", "mod", "__init__":
		return true
	}
	return dir != "" && stem == path.Base(dir)
}

// queryWords splits a query into lower-case words at anything that is not
// a letter, digit or underscore.
func queryWords(q string) []string {
	words := strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
	})
	slices.Sort(words)
	return slices.Compact(words)
}

func pathScore(rel string, words []string) int {
	lower := strings.ToLower(rel)
	n := 0
	for _, w := range words {
		if strings.Contains(lower, w) {
			n++
		}
	}
	return n
}

func nameMatches(name string, words []string) bool {
	if len(words) == 0 {
		return false
	}
	lower := strings.ToLower(name)
	for _, w := range words {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

func symbolsMatch(syms []Symbol, words []string) bool {
	for _, s := range syms {
		if nameMatches(s.Name, words) {
			return true
		}
	}
	return false
}

// containsAnyFold reports whether src contains one of the lower-case words,
// ignoring ASCII case (non-ASCII bytes compare exactly).
func containsAnyFold(src []byte, words []string) bool {
	lower := bytes.ToLower(src)
	for _, w := range words {
		if bytes.Contains(lower, []byte(w)) {
			return true
		}
	}
	return false
}

// selectSymbols picks the symbols of e to show for f.
func (r *ranker) selectSymbols(f File, e *outlineEntry, reason string) MapFile {
	mf := MapFile{Path: f.Rel, Lang: f.Lang, Reason: reason}
	syms := e.symbols
	if len(syms) <= MaxMapSymbolsPerFile {
		mf.Symbols = slices.Clone(syms)
		return mf
	}
	goLang := f.Lang == "go"
	order := make([]int, len(syms))
	score := make([]int, len(syms))
	for i, s := range syms {
		order[i] = i
		if nameMatches(s.Name, r.words) {
			score[i] += 4
		}
		if s.Container == "" {
			score[i] += 2
		}
		if exported(s.Name, goLang) {
			score[i]++
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return score[b] - score[a] })
	order = order[:MaxMapSymbolsPerFile]
	slices.Sort(order)
	for _, i := range order {
		mf.Symbols = append(mf.Symbols, syms[i])
	}
	mf.Omitted = len(syms) - len(mf.Symbols)
	return mf
}

// exported guesses whether a symbol is part of its module's interface: an
// upper-case initial in Go, no leading underscore elsewhere.
func exported(name string, goLang bool) bool {
	r, _ := utf8.DecodeRuneInString(name)
	if goLang {
		return unicode.IsUpper(r)
	}
	return r != '_' && r != '#'
}

// renderFile renders one file of a map.
func renderFile(mf MapFile) string {
	var b strings.Builder
	b.WriteString(mf.Path)
	b.WriteByte('\n')
	for _, s := range mf.Symbols {
		b.WriteString("  ")
		b.WriteString(strconv.Itoa(s.Line))
		b.WriteByte(' ')
		b.WriteString(s.Kind)
		b.WriteByte(' ')
		if s.Container != "" {
			b.WriteString(s.Container)
			b.WriteByte('.')
		}
		b.WriteString(s.Name)
		b.WriteByte('\n')
	}
	if mf.Omitted > 0 {
		fmt.Fprintf(&b, "  (+%d more symbols)\n", mf.Omitted)
	}
	return b.String()
}

// cursorVersion prefixes every cursor so a format change refuses old ones.
const cursorVersion = "c1"

// requestDigest identifies a request for its cursors: a cursor is only
// valid for the request it came from.
func requestDigest(parts ...string) [8]byte {
	h := sha256.New()
	for _, p := range parts {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	var d [8]byte
	copy(d[:], h.Sum(nil))
	return d
}

func encodeCursor(offset int, digest [8]byte) string {
	raw := fmt.Sprintf("%s.%d.%x", cursorVersion, offset, digest[:])
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// maxCursorBytes bounds a cursor before it is decoded.
const maxCursorBytes = 128

// decodeCursor returns the offset a cursor continues at; "" is offset 0.
func decodeCursor(cursor string, digest [8]byte) (int, error) {
	if cursor == "" {
		return 0, nil
	}
	if len(cursor) > maxCursorBytes {
		return 0, &CursorError{Reason: "too long"}
	}
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return 0, &CursorError{Reason: "not a cursor this server issued"}
	}
	parts := strings.Split(string(raw), ".")
	if len(parts) != 3 || parts[0] != cursorVersion {
		return 0, &CursorError{Reason: "not a cursor this server issued"}
	}
	offset, err := strconv.Atoi(parts[1])
	if err != nil || offset < 0 {
		return 0, &CursorError{Reason: "not a cursor this server issued"}
	}
	if parts[2] != fmt.Sprintf("%x", digest[:]) {
		return 0, &CursorError{Reason: "it belongs to another request; repeat the same operation, path, name and query, or drop the cursor"}
	}
	return offset, nil
}
