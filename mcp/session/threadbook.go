package session

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"

	"winx/edit/atomicfile"
)

// A thread id must outlive the adapter that handed it out: a client that
// restarts its server comes back with Initialize and only its thread_id,
// and must find its workspace (not a new playground). The registry's
// bindings live in memory, so each principal's state directory keeps a
// small book of thread id -> workspace root, written when Initialize binds
// a thread.

// MaxRememberedThreads bounds a principal's thread book; the least
// recently bound threads are dropped first.
const MaxRememberedThreads = 256

// maxThreadBookBytes bounds the thread book read back from disk.
const maxThreadBookBytes = 256 << 10

// threadBookName is the book's file in a principal's state directory.
const threadBookName = "threads.json"

// ThreadRecord is what the book keeps of a thread.
type ThreadRecord struct {
	Root    string    `json:"root"` // canonical workspace root
	Scratch bool      `json:"scratch,omitempty"`
	Used    time.Time `json:"used"`
}

// threadBookMu serializes this process's updates of every book; another
// adapter writing the same book at the same moment may drop one update,
// which costs that thread a workspace path on its next Initialize.
var threadBookMu sync.Mutex

// RememberThreads records that the threads (normalized here; "" skipped)
// are bound to rec.Root, in the thread book of dir (a principal's state
// directory: a 0600 file in a 0700 directory, replaced atomically). It is
// best effort: an unwritable state directory only costs the recall.
func RememberThreads(dir string, rec ThreadRecord, threadIDs ...string) {
	if dir == "" || !filepath.IsAbs(rec.Root) {
		return
	}
	threadBookMu.Lock()
	defer threadBookMu.Unlock()
	book := readThreadBook(dir)
	changed := false
	for _, id := range threadIDs {
		if tid := NormalizeThreadID(id); tid != "" {
			book[tid] = rec
			changed = true
		}
	}
	if !changed {
		return
	}
	if len(book) > MaxRememberedThreads {
		ids := make([]string, 0, len(book))
		for id := range book {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return book[ids[i]].Used.Before(book[ids[j]].Used) })
		for _, id := range ids[:len(ids)-MaxRememberedThreads] {
			delete(book, id)
		}
	}
	b, err := json.Marshal(book)
	if err != nil || atomicfile.MkdirPrivate(dir) != nil {
		return
	}
	atomicfile.WriteFile(filepath.Join(dir, threadBookName), b, 0o600, atomicfile.Durability{})
}

// RecallThread returns what the thread book of dir keeps of threadID.
func RecallThread(dir, threadID string) (ThreadRecord, bool) {
	tid := NormalizeThreadID(threadID)
	if dir == "" || tid == "" {
		return ThreadRecord{}, false
	}
	threadBookMu.Lock()
	defer threadBookMu.Unlock()
	rec, ok := readThreadBook(dir)[tid]
	return rec, ok
}

// readThreadBook reads the book of dir; a missing, oversized or malformed
// book is empty, and entries that are not absolute clean roots are dropped.
func readThreadBook(dir string) map[string]ThreadRecord {
	book := make(map[string]ThreadRecord)
	f, err := os.OpenFile(filepath.Join(dir, threadBookName), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return book
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxThreadBookBytes {
		return book
	}
	b, err := io.ReadAll(io.LimitReader(f, maxThreadBookBytes+1))
	if err != nil || len(b) > maxThreadBookBytes {
		return book
	}
	var raw map[string]ThreadRecord
	if json.Unmarshal(b, &raw) != nil {
		return book
	}
	for id, rec := range raw {
		if NormalizeThreadID(id) == id && id != "" && filepath.IsAbs(rec.Root) && filepath.Clean(rec.Root) == rec.Root {
			book[id] = rec
		}
	}
	return book
}
