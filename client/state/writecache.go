package state

import (
	"crypto/sha256"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// writeCache remembers a hash of the last committed value of each key so
// that a Put of byte-identical data can skip its transaction (and fsync).
//
// Correctness rests on bbolt running write transactions one at a time:
// every write records its key's new hash, as pending, from inside its
// transaction, so the cache's order of writes is the file's. A commit
// handler then marks the entry committed only if no later write replaced
// it. A Put is skipped only against a committed entry, so a skipped Put's
// value is on disk. Rolled-back writes leave a pending entry that never
// matches.
type writeCache struct {
	mu      sync.Mutex                       // guards the fields below
	gen     uint64                           // last generation handed out
	entries map[string]map[string]cacheEntry // alloc ID ("" for the node) -> key
}

type cacheEntry struct {
	sum       [sha256.Size]byte
	gen       uint64
	committed bool
}

func newWriteCache() *writeCache {
	return &writeCache{entries: make(map[string]map[string]cacheEntry)}
}

// unchanged reports whether data is what is committed for the key.
func (c *writeCache) unchanged(allocID, key string, data []byte) bool {
	sum := sha256.Sum256(data)
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[allocID][key]
	return ok && e.committed && e.sum == sum
}

// staged records, from inside tx, that tx writes data to the key.
func (c *writeCache) staged(tx *bolt.Tx, allocID, key string, data []byte) {
	sum := sha256.Sum256(data)
	c.mu.Lock()
	c.gen++
	gen := c.gen
	m := c.entries[allocID]
	if m == nil {
		m = make(map[string]cacheEntry)
		c.entries[allocID] = m
	}
	m[key] = cacheEntry{sum: sum, gen: gen}
	c.mu.Unlock()

	tx.OnCommit(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if e, ok := c.entries[allocID][key]; ok && e.gen == gen {
			e.committed = true
			c.entries[allocID][key] = e
		}
	})
}

// forgetPrefix drops the alloc's keys starting with prefix ("" for all of
// them); called from inside the transaction that deletes them.
func (c *writeCache) forgetPrefix(allocID, prefix string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if prefix == "" {
		delete(c.entries, allocID)
		return
	}
	for k := range c.entries[allocID] {
		if len(k) >= len(prefix) && k[:len(prefix)] == prefix {
			delete(c.entries[allocID], k)
		}
	}
}

// taskCacheKey is a task value's key in the cache; taskCacheKey(name, nil)
// is the prefix of all of the task's keys.
func taskCacheKey(taskName string, key []byte) string {
	return taskBucketPrefix + taskName + "\x00" + string(key)
}
