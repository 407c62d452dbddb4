package codemap

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// MaxCachedIndexes bounds the indexes an IndexCache keeps, one per root:
// each holds up to DefaultMaxOutlineBytes+DefaultMaxIdentBytes of parsed
// files, so a server that navigates many roots forgets the least recently
// used one rather than grow.
const MaxCachedIndexes = 4

// IndexCache shares one Index per repository root between every caller, so
// a repeated map or search of a root parses only what changed. It keeps at
// most MaxCachedIndexes and drops the least recently used beyond that. Its
// zero value is ready to use and it is safe for concurrent use.
type IndexCache struct {
	mu    sync.Mutex
	clock uint64                // guarded by mu; ticks once per Get, for the LRU order
	slots map[string]*indexSlot // guarded by mu; by the root Get was given; at most MaxCachedIndexes
}

type indexSlot struct {
	ix   *Index
	used uint64 // the clock of the last Get that returned ix
}

// Get returns the shared index of root (absolute; see NewIndex), creating
// it on first use. Creation happens under the cache's lock, so concurrent
// first calls for one root share one Index.
func (c *IndexCache) Get(root string) (*Index, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clock++
	if s, ok := c.slots[root]; ok {
		s.used = c.clock
		return s.ix, nil
	}
	ix, err := NewIndex(root, nil)
	if err != nil {
		return nil, err
	}
	if c.slots == nil {
		c.slots = make(map[string]*indexSlot)
	}
	if len(c.slots) >= MaxCachedIndexes {
		c.evictLocked()
	}
	c.slots[root] = &indexSlot{ix: ix, used: c.clock}
	return ix, nil
}

// evictLocked drops the least recently used index.
func (c *IndexCache) evictLocked() {
	var oldest string
	var least uint64
	found := false
	for root, s := range c.slots {
		if !found || s.used < least {
			oldest, least, found = root, s.used, true
		}
	}
	if found {
		delete(c.slots, oldest)
	}
}

// RepoRoot picks the root an index is built for, given a navigation target
// (absolute, clean, symlinks resolved; a directory when isDir), the
// session's workspace and the roots the caller may use: the workspace when
// the target lies in it; otherwise the nearest ancestor of the target that
// holds a .git entry, not above the longest allowed root that holds the
// target; otherwise the target's own directory.
func RepoRoot(target string, isDir bool, workspace string, roots []string) string {
	dir := target
	if !isDir {
		dir = filepath.Dir(target)
	}
	if within(workspace, target) {
		return workspace
	}
	limit := ""
	for _, r := range roots {
		if within(r, target) && len(r) > len(limit) {
			limit = r
		}
	}
	for d := dir; limit != "" && within(limit, d); d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if d == limit || d == filepath.Dir(d) {
			break
		}
	}
	return dir
}

// within reports whether path is root or below it (both clean, absolute).
func within(root, path string) bool {
	if root == string(filepath.Separator) {
		return true
	}
	return path == root || strings.HasPrefix(path, root+string(filepath.Separator))
}
