package session

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"winx/auth"
	"winx/edit"
	"winx/edit/atomicfile"
	"winx/evidence"
	"winx/evidence/redact"
)

// Per-session state the tools keep between calls. Each piece lives in its
// Session, is created with it (or on its first use) and goes with it, and
// is bounded on its own, so no tool keeps a map keyed by session.

// Bounds of per-session state.
const (
	// MaxRecentFiles bounds a session's recently outlined files.
	MaxRecentFiles = 32
	// MaxMapChains bounds a session's remembered map rankings.
	MaxMapChains = 8
	// MaxImagesPerThread is how many images one thread remembers having
	// been shown, least recently used first out.
	MaxImagesPerThread = 32
	// MaxImageThreads bounds how many threads of a session have an image
	// memory at all; the least recently used thread's is dropped first.
	MaxImageThreads = 256
	// maxResumeRecords bounds the memory of which saved contexts a session
	// was shown; past it the record starts over, and a context may be
	// shown a second time.
	maxResumeRecords = 4096
)

// EditConfig is how a session's edit engine is built: the catalog's
// extra allowed roots, its state directory and the path locks shared by
// every engine of the process.
type EditConfig struct {
	AllowPaths []string
	Protected  *auth.Protected // the server's deny list (auth.PathPolicy.WithProtected)
	StateDir   string          // receipts and undo records go under StateDir/edits; "" disables both
	Locks      *edit.PathLocks
	// LockDir holds the cross-process locks of edit targets; every
	// adapter of every principal should name the same one
	// (edit.EngineOptions.LockDir).
	LockDir string
	// Redactor is the one file reads are shown through (edit.EngineOptions.Redactor).
	Redactor *redact.Redactor
}

// editState is a session's edit engine, built on its first edit: building
// it touches the state directory, which a session that never edits should
// not pay for or fail on.
type editState struct {
	mu     sync.Mutex   // guards engine
	engine *edit.Engine // nil until the first successful build
}

// EditEngine returns the session's edit engine, building it from cfg on
// first use. An engine owns its conflict counts, so one session keeps one
// engine; the catalog passes the same cfg on every call.
func (s *Session) EditEngine(cfg EditConfig) (*edit.Engine, error) {
	s.edits.mu.Lock()
	defer s.edits.mu.Unlock()
	if s.edits.engine != nil {
		return s.edits.engine, nil
	}
	policy, err := auth.NewPathPolicy(s.Root, cfg.AllowPaths)
	if err != nil {
		return nil, err
	}
	policy = policy.WithProtected(cfg.Protected)
	state := EngineStateDir(cfg.StateDir)
	e, err := edit.NewEngine(edit.EngineOptions{Ledger: s.Ledger, Paths: policy, StateDir: state, Session: s.Key.Legacy(), Locks: cfg.Locks, LockDir: cfg.LockDir, Redactor: cfg.Redactor})
	if err != nil {
		return nil, err
	}
	s.edits.engine = e
	return e, nil
}

// EngineStateDir is where an edit engine configured with EditConfig's
// StateDir keeps its receipts, undo records and batch intents ("" for
// none).
func EngineStateDir(stateDir string) string {
	if stateDir == "" {
		return ""
	}
	return stateDir + "/edits"
}

// Navigation is a session's code-navigation memory: the files it outlined
// recently and the frozen ranking inputs of its repository maps, so a map's
// cursor pages keep the order of its first page. It is safe for concurrent
// use.
type Navigation struct {
	mu     sync.Mutex           // guards the fields below
	recent []string             // canonical paths, most recent first; at most MaxRecentFiles
	chains map[string]*MapChain // by the caller's chain key; at most MaxMapChains
	order  []string             // chain keys, oldest first
}

// MapChain is the frozen ranking input of one repository map and its
// cursor pages. A stored chain is never modified again.
type MapChain struct {
	Priority []string
	Touched  map[string]bool // relative paths the ledger knew at page one
}

// NoteRecent records that the session outlined path.
func (n *Navigation) NoteRecent(path string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	recent := []string{path}
	for _, p := range n.recent {
		if p != path && len(recent) < MaxRecentFiles {
			recent = append(recent, p)
		}
	}
	n.recent = recent
}

// Recent returns the session's recently outlined files, newest first.
func (n *Navigation) Recent() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.recent...)
}

// Chain returns the remembered ranking input of a map, nil if none.
func (n *Navigation) Chain(key string) *MapChain {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.chains[key]
}

// StoreChain remembers a map's ranking input for its cursor pages,
// forgetting the oldest beyond MaxMapChains.
func (n *Navigation) StoreChain(key string, c *MapChain) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.chains == nil {
		n.chains = make(map[string]*MapChain)
	}
	if _, ok := n.chains[key]; !ok {
		n.order = append(n.order, key)
	}
	n.chains[key] = c
	for len(n.order) > MaxMapChains {
		delete(n.chains, n.order[0])
		n.order = n.order[1:]
	}
}

// MapRanking returns the ranking inputs of a repository map of root: the
// files to rank first (most important first) and the relative paths to
// rank right after them. key names the map and its cursor pages (the
// caller's identity of "the same call"). A first page (continued false),
// or a continued one whose inputs are no longer remembered, gets fresh
// inputs: the files the session outlined recently, and every walked file
// the read ledger knows, which the ledger is asked about one file at a
// time (it cannot list its paths) while the map is built. keep freezes
// fresh inputs under key once their page is built, so reading files
// between pages does not reshuffle the pages that follow; for remembered
// inputs it does nothing. touched must not be called after keep.
func (s *Session) MapRanking(key, root string, continued bool) (priority []string, touched func(rel string) bool, keep func()) {
	var c *MapChain
	if continued {
		c = s.nav.Chain(key)
	}
	if c != nil {
		return c.Priority, func(rel string) bool { return c.Touched[rel] }, func() {}
	}
	c = &MapChain{Priority: s.nav.Recent(), Touched: map[string]bool{}}
	touched = func(rel string) bool {
		_, known, _ := s.Ledger.Missing(filepath.Join(root, filepath.FromSlash(rel)), "", evidence.Range{})
		if known {
			c.Touched[rel] = true
		}
		return known
	}
	return c.Priority, touched, func() { s.nav.StoreChain(key, c) }
}

// ShownImage is what a thread was shown of one image: its canonical path
// and revision identify it; Answer is the showing tool's answer data,
// opaque here, from which an unchanged repeat is answered by reference.
type ShownImage struct {
	Path     string
	Revision string
	Answer   any
}

// ImageCache remembers, per thread of a session, which revision of which
// image was last shown, so an unchanged repeat can answer with a reference.
// It is per thread rather than per session because several conversations
// may share one workspace session, and a reference means something only to
// the conversation that saw the image. It is safe for concurrent use.
type ImageCache struct {
	mu sync.Mutex // guards the fields below
	// threads holds per normalized thread id what it was shown, least
	// recently used first: at most MaxImagesPerThread entries, one per
	// canonical path.
	threads map[string][]ShownImage
	// order lists the keys of threads, least recently used first.
	// Invariant: order and the keys of threads are the same set, so
	// len(order) == len(threads) <= MaxImageThreads.
	order []string
}

// touchLocked makes thread the most recently used. c.mu is held.
func (c *ImageCache) touchLocked(thread string) {
	if i := slices.Index(c.order, thread); i >= 0 {
		c.order = slices.Delete(c.order, i, i+1)
	}
	c.order = append(c.order, thread)
}

// Lookup returns what thread was last shown of the image at path, if it
// was shown at revision rev, and marks it used.
func (c *ImageCache) Lookup(thread, path, rev string) (ShownImage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	shown := c.threads[thread]
	i := slices.IndexFunc(shown, func(d ShownImage) bool { return d.Path == path })
	if i < 0 || shown[i].Revision != rev {
		return ShownImage{}, false
	}
	c.touchLocked(thread)
	d := shown[i]
	c.threads[thread] = append(slices.Delete(shown, i, i+1), d)
	return d, true
}

// Remember records that thread was shown d, replacing what it was shown
// of d.Path before.
func (c *ImageCache) Remember(thread string, d ShownImage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.threads == nil {
		c.threads = make(map[string][]ShownImage)
	}
	shown, ok := c.threads[thread]
	if !ok && len(c.threads) >= MaxImageThreads {
		delete(c.threads, c.order[0])
		c.order = slices.Delete(c.order, 0, 1)
	}
	c.touchLocked(thread)
	shown = slices.DeleteFunc(shown, func(e ShownImage) bool { return e.Path == d.Path })
	if len(shown) >= MaxImagesPerThread {
		shown = slices.Delete(shown, 0, len(shown)-MaxImagesPerThread+1)
	}
	c.threads[thread] = append(shown, d)
}

// resumeState is which saved contexts (by task id) a session was shown.
type resumeState struct {
	mu    sync.Mutex      // guards shown
	shown map[string]bool // at most maxResumeRecords
}

// MarkResumeShown records that the session was shown the saved context of
// taskID and reports whether it had been shown it already.
func (s *Session) MarkResumeShown(taskID string) (seen bool) {
	r := &s.resume
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.shown[taskID] {
		return true
	}
	if r.shown == nil || len(r.shown) >= maxResumeRecords {
		r.shown = make(map[string]bool)
	}
	r.shown[taskID] = true
	return false
}

// Navigation returns the session's code-navigation memory.
func (s *Session) Navigation() *Navigation { return &s.nav }

// Images returns the session's memory of images shown to its threads.
func (s *Session) Images() *ImageCache { return &s.images }

// maxLedgerFile bounds a ledger file read back from the state directory.
const maxLedgerFile = evidence.MaxLedgerBytes

// LedgerTTL is how long a session's saved read ledger is kept after its
// last save; older ones are removed when a session of the principal first
// uses its ledger directory.
const LedgerTTL = 30 * 24 * time.Hour

// maxLedgerSweep bounds the directory entries one sweep looks at.
const maxLedgerSweep = 4096

// ledgerStore is where a session's read ledger is kept on disk, so the
// next adapter process that serves the session knows what the model was
// shown. It is set, and the file loaded, on the first UseLedgerDir.
type ledgerStore struct {
	mu   sync.Mutex // guards path and serializes saves
	path string     // "" until UseLedgerDir, or when persistence is off
	set  bool
	// onDisk: a file was loaded or saved, so an empty ledger must be
	// saved too (it may have been emptied); otherwise an empty one is not
	// worth a file.
	onDisk bool
	// saved is what was last written: a ledger that did not change (the
	// same file read again) is not written again. savedAt is the ledger's
	// Changes count when saved matched it: at the same count the ledger is
	// not even encoded again.
	saved   []byte
	savedAt uint64
}

// UseLedgerDir keeps the session's read ledger in dir (a principal's
// state directory): on the first call it loads the ledger a previous
// adapter process saved for this session (principal, workspace and
// affinity scope), later calls do nothing. An empty dir turns
// persistence off. A missing, unreadable or malformed file is ignored:
// the model then reads again, which is safe.
func (s *Session) UseLedgerDir(dir string) {
	st := &s.ledgerFile
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.set {
		return
	}
	st.set = true
	if dir == "" {
		return
	}
	st.path = s.stateFile(dir, "ledgers")
	b, ok := readStateFile(st.path, maxLedgerFile)
	if !ok {
		return
	}
	st.onDisk = true
	s.Ledger.Decode(b) // all or nothing; an error leaves the ledger as it is
}

// SaveLedger writes the session's read ledger where UseLedgerDir set
// (0600 in a 0700 directory, replaced atomically). It is best effort: a
// ledger that was not saved costs the next adapter process a re-read.
func (s *Session) SaveLedger() {
	st := &s.ledgerFile
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.path == "" || (!st.onDisk && s.Ledger.Len() == 0) {
		return
	}
	st.onDisk = true
	// Read before encoding: a change racing with the encoding leaves a
	// count that is older than what was saved, which only costs another
	// encoding later.
	at := s.Ledger.Changes()
	if st.saved != nil && at == st.savedAt {
		return
	}
	b := s.Ledger.Encode()
	if st.saved != nil && bytes.Equal(b, st.saved) {
		st.savedAt = at
		return
	}
	if atomicfile.MkdirPrivate(filepath.Dir(st.path)) != nil {
		return
	}
	if atomicfile.WriteFile(st.path, b, 0o600, atomicfile.Durability{}) == nil {
		st.saved, st.savedAt = b, at
	}
}

// sweepLedgers removes saved ledgers older than LedgerTTL from dir, except
// keep, so the files of sessions that never come back do not pile up.
func sweepLedgers(dir, keep string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	defer d.Close()
	names, _ := d.Readdirnames(maxLedgerSweep)
	cutoff := time.Now().Add(-LedgerTTL)
	for _, n := range names {
		p := filepath.Join(dir, n)
		if p == keep || filepath.Ext(n) != ".json" {
			continue
		}
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && fi.ModTime().Before(cutoff) {
			os.Remove(p)
		}
	}
}

// stateFile is the session's file of kind (ledgers, commands) in dir, a
// principal's state directory, named by a hash of the session key; the
// files of sessions long gone are swept from its directory first.
func (s *Session) stateFile(dir, kind string) string {
	sum := sha256.Sum256([]byte(s.Key.Legacy()))
	path := filepath.Join(dir, kind, hex.EncodeToString(sum[:16])+".json")
	sweepLedgers(filepath.Dir(path), path)
	return path
}

// readStateFile reads a session state file of at most limit bytes; ok is
// false for a missing, oversized or unreadable file, and for anything but
// a regular file. Neither the file nor its directory (the kind's, which
// MkdirPrivate made) is reached through a symbolic link: the directory is
// opened with O_NOFOLLOW and the file relative to it, also without
// following a link and without blocking, so a FIFO under the name costs
// nothing.
func readStateFile(path string, limit int64) (b []byte, ok bool) {
	f, err := openStateFile(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > limit {
		return nil, false
	}
	b, err = io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil || int64(len(b)) > limit {
		return nil, false
	}
	return b, true
}
