package constrain

import (
	"container/list"
	"sync"

	"inferno/grammar"
)

// Cache holds compiled grammars keyed by their source text (a schema, a
// GBNF grammar), least recently used first out. Concurrent Gets of one key
// compile it once. It is safe for concurrent use.
type Cache struct {
	v   *Vocab
	max int

	mu  sync.Mutex
	m   map[string]*list.Element
	lru list.List // of *cacheEntry, most recent first
}

type cacheEntry struct {
	key   string
	ready chan struct{}
	c     *Compiled
	err   error
}

// NewCache returns a cache of at most size grammars compiled against v
// (size < 1 means 1).
func NewCache(v *Vocab, size int) *Cache {
	return &Cache{v: v, max: max(size, 1), m: map[string]*list.Element{}}
}

// Get returns the grammar compiled for key, calling build and Compile if it
// is not cached. Failures are returned and not cached.
func (c *Cache) Get(key string, build func() (*grammar.Grammar, error)) (*Compiled, error) {
	c.mu.Lock()
	if el, ok := c.m[key]; ok {
		c.lru.MoveToFront(el)
		e := el.Value.(*cacheEntry)
		c.mu.Unlock()
		<-e.ready
		return e.c, e.err
	}
	e := &cacheEntry{key: key, ready: make(chan struct{})}
	c.m[key] = c.lru.PushFront(e)
	c.mu.Unlock()

	g, err := build()
	if err == nil {
		e.c, e.err = Compile(g, c.v)
	} else {
		e.err = err
	}
	close(e.ready)
	c.mu.Lock()
	if e.err != nil {
		if el, ok := c.m[key]; ok && el.Value == e {
			c.lru.Remove(el)
			delete(c.m, key)
		}
	}
	for c.lru.Len() > c.max {
		old := c.lru.Back()
		c.lru.Remove(old)
		delete(c.m, old.Value.(*cacheEntry).key)
	}
	c.mu.Unlock()
	return e.c, e.err
}

// Len returns the number of grammars cached or being compiled.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}
