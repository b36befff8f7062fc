package kvcache

import "slices"

// This file holds the Manager's prefix cache: a radix tree over token ids
// at block granularity, and the heap that orders its evictable leaves.
//
// Every block of the pool has a node, indexed by block id; one more node,
// the last, is the root of the tree and holds no block. A block holding a
// cached prefix is a node of the tree: its n tokens (1..blockSize) are the
// tokens of positions k*blockSize.. of every prompt whose path reaches it,
// and they are kept in the Manager's tok rows of the block. A node of fewer
// than blockSize tokens is always a leaf.
//
// A node is held when a sequence references its block, when a sequence
// extends its own path through it without referencing it (an anchor: the
// sequence holds a private duplicate of the block), or when one of its
// children is held. A node that is not held has no held node below it, so
// its whole subtree can be evicted, leaves first; the unheld leaves are
// the eviction heap, least recently used first.

// none marks a missing node.
const none int32 = -1

// A node is one block of the pool, and its place in the prefix tree while
// it holds a cached prefix.
type node struct {
	hash    uint64 // hash of the tokens, while in the tree
	lastUse uint64 // the Manager's clock when last matched, filled or released

	parent, child, next, prev int32 // parent, first child, and siblings
	hnext                     int32 // next child of the parent with the same hash

	n        int32 // tokens held while in the tree, 1..blockSize; 0 when not in it
	ref      int32 // sequences whose table holds the block
	kids     int32 // children
	heldKids int32 // children that are held
	anchors  int32 // sequences extending their path through the node unreferenced
	heap     int32 // index in the eviction heap, or none
}

// A kidKey finds the children of a node with tokens of one hash.
type kidKey struct {
	parent int32
	hash   uint64
}

// reset makes b a block outside the tree, referenced by no one.
func (m *Manager) reset(b int32) {
	m.nodes[b] = node{parent: none, child: none, next: none, prev: none, hnext: none, heap: none}
}

// hashTokens returns a hash of the token ids t, their number included.
func hashTokens(t []int32) uint64 {
	h := 0xcbf29ce484222325 ^ uint64(len(t))*0x9e3779b97f4a7c15
	for _, v := range t {
		h ^= uint64(uint32(v))
		h *= 0x100000001b3
		h ^= h >> 29
	}
	return h
}

// tokens returns the tokens node b holds in the tree.
func (m *Manager) tokens(b int32) []int32 {
	i := int(b) * m.bs
	return m.tok[i : i+int(m.nodes[b].n)]
}

// held reports whether node b is held: referenced, anchored, or above a
// held node.
func (m *Manager) held(b int32) bool {
	x := &m.nodes[b]
	return x.ref > 0 || x.heldKids > 0 || x.anchors > 0
}

// findChild returns the child of p that holds exactly the tokens t, of hash
// h, or none.
func (m *Manager) findChild(p int32, h uint64, t []int32) int32 {
	c, ok := m.kids[kidKey{p, h}]
	if !ok {
		return none
	}
	for ; c != none; c = m.nodes[c].hnext {
		if slices.Equal(m.tokens(c), t) {
			return c
		}
	}
	return none
}

// longestChild returns the child of p whose tokens share the longest
// common prefix with q, and the length of that prefix (0 and none when no
// child starts with q[0]).
func (m *Manager) longestChild(p int32, q []int32) (int32, int) {
	best, bl := none, 0
	for c := m.nodes[p].child; c != none && bl < len(q); c = m.nodes[c].next {
		t := m.tokens(c)
		l := 0
		for l < len(t) && l < len(q) && t[l] == q[l] {
			l++
		}
		if l > bl {
			best, bl = c, l
		}
	}
	return best, bl
}

// link enters block b, referenced by a sequence, into the tree as a child
// of p holding its first n token rows, of hash h.
func (m *Manager) link(b, p int32, h uint64, n int) {
	x := &m.nodes[b]
	x.n, x.hash, x.parent = int32(n), h, p
	key := kidKey{p, h}
	if head, ok := m.kids[key]; ok {
		x.hnext = head
	} else {
		x.hnext = none
	}
	m.kids[key] = b
	pn := &m.nodes[p]
	x.prev, x.next = none, pn.child
	if pn.child != none {
		m.nodes[pn.child].prev = b
	}
	pn.child = b
	pn.kids++
	was := m.held(p)
	pn.heldKids++
	m.fix(p, was)
}

// evict removes the least recently used unheld leaf from the tree and
// returns its block, or none when there is no such leaf.
func (m *Manager) evict() int32 {
	if len(m.heap) == 0 {
		return none
	}
	b := m.heap[0]
	m.heapRemove(0)
	x := &m.nodes[b]
	key := kidKey{x.parent, x.hash}
	if head := m.kids[key]; head == b {
		if x.hnext == none {
			delete(m.kids, key)
		} else {
			m.kids[key] = x.hnext
		}
	} else {
		c := head
		for m.nodes[c].hnext != b {
			c = m.nodes[c].hnext
		}
		m.nodes[c].hnext = x.hnext
	}
	if x.prev != none {
		m.nodes[x.prev].next = x.next
	} else {
		m.nodes[x.parent].child = x.next
	}
	if x.next != none {
		m.nodes[x.next].prev = x.prev
	}
	p := x.parent
	m.nodes[p].kids--
	m.detach(b)
	m.reset(b)
	m.cached--
	m.reclaimable--
	m.evictions++
	m.heapSync(p)
	return b
}

// fix restores the held counts, the reclaimable count and the heap after
// node b, which was held or not as was says, changed its reference count,
// anchors or held children. It walks up only while held states flip.
func (m *Manager) fix(b int32, was bool) {
	for {
		m.heapSync(b)
		now := m.held(b)
		if now == was || b == m.root {
			return
		}
		if now {
			m.reclaimable--
		} else {
			m.reclaimable++
		}
		p := m.nodes[b].parent
		pw := m.held(p)
		if now {
			m.nodes[p].heldKids++
		} else {
			m.nodes[p].heldKids--
		}
		b, was = p, pw
	}
}

// incRef adds a reference to block b, a node of the tree.
func (m *Manager) incRef(b int32) {
	x := &m.nodes[b]
	was := m.held(b)
	if x.ref == 0 {
		m.used++
		m.cached--
	}
	x.ref++
	m.fix(b, was)
}

// decRef drops a reference to block b, a node of the tree.
func (m *Manager) decRef(b int32) {
	x := &m.nodes[b]
	was := m.held(b)
	x.ref--
	if x.ref == 0 {
		m.used--
		m.cached++
	}
	m.fix(b, was)
}

// pin adds an anchor to node b, holding it without a reference.
func (m *Manager) pin(b int32) {
	was := m.held(b)
	m.nodes[b].anchors++
	m.fix(b, was)
}

// unpin drops an anchor from node b.
func (m *Manager) unpin(b int32) {
	m.nodes[b].anchors--
	m.fix(b, true)
}

// touch records that node b was used now.
func (m *Manager) touch(b int32) {
	x := &m.nodes[b]
	x.lastUse = m.clock
	if x.heap != none {
		m.heapFix(int(x.heap))
	}
}

// heapSync puts node b in the eviction heap when it is an unheld leaf of
// the tree, and takes it out otherwise.
func (m *Manager) heapSync(b int32) {
	if b == m.root {
		return
	}
	x := &m.nodes[b]
	want := x.n > 0 && x.kids == 0 && !m.held(b)
	switch {
	case want && x.heap == none:
		x.heap = int32(len(m.heap))
		m.heap = append(m.heap, b)
		m.up(len(m.heap) - 1)
	case !want && x.heap != none:
		m.heapRemove(int(x.heap))
	}
}

// less orders the heap: least recently used first, then lower block ids.
func (m *Manager) less(i, j int) bool {
	a, b := m.heap[i], m.heap[j]
	x, y := m.nodes[a].lastUse, m.nodes[b].lastUse
	if x != y {
		return x < y
	}
	return a < b
}

func (m *Manager) swap(i, j int) {
	h := m.heap
	h[i], h[j] = h[j], h[i]
	m.nodes[h[i]].heap = int32(i)
	m.nodes[h[j]].heap = int32(j)
}

func (m *Manager) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !m.less(i, p) {
			return
		}
		m.swap(i, p)
		i = p
	}
}

// down moves element i down and reports whether it moved.
func (m *Manager) down(i0 int) bool {
	i, n := i0, len(m.heap)
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && m.less(r, c) {
			c = r
		}
		if !m.less(c, i) {
			break
		}
		m.swap(i, c)
		i = c
	}
	return i > i0
}

func (m *Manager) heapFix(i int) {
	if !m.down(i) {
		m.up(i)
	}
}

// heapRemove takes element i out of the heap.
func (m *Manager) heapRemove(i int) {
	last := len(m.heap) - 1
	b := m.heap[i]
	if i != last {
		m.swap(i, last)
	}
	m.heap = m.heap[:last]
	m.nodes[b].heap = none
	if i != last {
		m.heapFix(i)
	}
}
