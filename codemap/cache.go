package codemap

import (
	"container/list"
	"sync"
)

// lru is a size-bounded least-recently-used map, safe for concurrent use.
// Values are immutable once stored; a caller replaces, never mutates, so a
// value handed out stays valid after its eviction.
type lru[K comparable, V any] struct {
	maxEntries int
	maxBytes   int64

	mu    sync.Mutex
	items map[K]*list.Element // guarded by mu; values are *lruItem[K, V]
	order list.List           // guarded by mu; front is the most recently used
	bytes int64               // guarded by mu; sum of the items' sizes
}

type lruItem[K comparable, V any] struct {
	key  K
	val  V
	size int64
}

func newLRU[K comparable, V any](maxEntries int, maxBytes int64) *lru[K, V] {
	return &lru[K, V]{maxEntries: maxEntries, maxBytes: maxBytes, items: make(map[K]*list.Element)}
}

func (c *lru[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[k]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*lruItem[K, V]).val, true
}

// put stores v under k, evicting the least recently used items beyond the
// bounds. An item bigger than maxBytes on its own is not stored.
func (c *lru[K, V]) put(k K, v V, size int64) {
	if size > c.maxBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[k]; ok {
		it := el.Value.(*lruItem[K, V])
		c.bytes += size - it.size
		it.val, it.size = v, size
		c.order.MoveToFront(el)
	} else {
		c.items[k] = c.order.PushFront(&lruItem[K, V]{key: k, val: v, size: size})
		c.bytes += size
	}
	for c.order.Len() > c.maxEntries || c.bytes > c.maxBytes {
		old := c.order.Back()
		it := old.Value.(*lruItem[K, V])
		c.order.Remove(old)
		delete(c.items, it.key)
		c.bytes -= it.size
	}
}

func (c *lru[K, V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
