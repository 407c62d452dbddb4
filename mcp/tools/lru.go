package tools

// evictLeastUsed deletes the entry of m with the smallest use stamp, as
// given by used; an empty m is left alone.
func evictLeastUsed[V any](m map[string]V, used func(V) uint64) {
	var oldest string
	var least uint64
	found := false
	for k, v := range m {
		if u := used(v); !found || u < least {
			oldest, least, found = k, u, true
		}
	}
	if found {
		delete(m, oldest)
	}
}
