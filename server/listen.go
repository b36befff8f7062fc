package server

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// DefaultMaxConns is the most connections serve holds open at once when
// --max-conns is not given.
const DefaultMaxConns = 512

// A Limited listener holds at most n connections open at once. When all n
// places are taken, Accept takes the next client's connection and holds
// it back until a place is free, so that further clients wait in the
// kernel's backlog rather than take the process's file descriptors.
//
// Idle connections give way to a client held back (keep-alive ones
// between requests, and new ones that have not sent a request yet): with
// the listener's ConnState set as the http.Server's ConnState, the
// connection idle longest is closed for it, or the next one to go idle,
// so that a new client (a health probe) does not wait for the server's
// idle or read timeout. Connections reading or answering a request are
// never closed.
type Limited struct {
	net.Listener
	sem       chan struct{}
	done      chan struct{}
	closeOnce sync.Once

	mu      sync.Mutex
	idle    map[*limitConn]idleConn // idle connections
	waiting bool                    // Accept holds a client back
}

// idleConn is when a connection went idle, and whether it is new (has
// not sent a request yet).
type idleConn struct {
	since time.Time
	fresh bool
}

// silentGrace is how long a new connection may stay silent before it
// gives way to a client held back: its first request may be on its way.
const silentGrace = time.Second

// LimitListener returns a listener that accepts at most n connections at
// once from l.
func LimitListener(l net.Listener, n int) *Limited {
	return &Limited{Listener: l, sem: make(chan struct{}, max(1, n)), done: make(chan struct{}),
		idle: make(map[*limitConn]idleConn)}
}

// Accept waits for a client and, while n connections are open, for a
// place, closing an idle connection to make one.
func (l *Limited) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	select {
	case l.sem <- struct{}{}:
	default:
		if err := l.makeRoom(); err != nil {
			c.Close()
			return nil, err
		}
	}
	lc := &limitConn{Conn: c}
	lc.release = func() {
		l.mu.Lock()
		delete(l.idle, lc)
		l.mu.Unlock()
		<-l.sem
	}
	return lc, nil
}

// makeRoom takes a place for a client held back: it closes the
// connection idle longest, or waits for a place, looking again as new
// connections outstay silentGrace.
func (l *Limited) makeRoom() error {
	defer func() {
		l.mu.Lock()
		l.waiting = false
		l.mu.Unlock()
	}()
	tick := time.NewTicker(silentGrace / 4)
	defer tick.Stop()
	for {
		l.mu.Lock()
		oldest := l.oldestIdle(time.Now())
		if oldest != nil {
			delete(l.idle, oldest)
		} else {
			l.waiting = true
		}
		l.mu.Unlock()
		if oldest != nil {
			oldest.Close()
		}
		select {
		case l.sem <- struct{}{}:
			return nil
		case <-l.done:
			return net.ErrClosed
		case <-tick.C:
		}
	}
}

// oldestIdle returns the connection idle longest, of those idle between
// requests and those new and silent for silentGrace by now; nil if none.
// l.mu is held.
func (l *Limited) oldestIdle(now time.Time) *limitConn {
	var oldest *limitConn
	var since time.Time
	for c, t := range l.idle {
		if t.fresh && now.Sub(t.since) < silentGrace {
			continue
		}
		if oldest == nil || t.since.Before(since) {
			oldest, since = c, t.since
		}
	}
	return oldest
}

// ConnState follows which of the listener's connections are idle; it is
// meant as the http.Server's ConnState. A connection that goes idle while
// a client is held back is closed for it.
func (l *Limited) ConnState(c net.Conn, state http.ConnState) {
	lc := unwrapConn(c)
	if lc == nil {
		return
	}
	l.mu.Lock()
	if state != http.StateIdle && state != http.StateNew {
		delete(l.idle, lc)
		l.mu.Unlock()
		return
	}
	if !l.waiting || state == http.StateNew {
		l.idle[lc] = idleConn{since: time.Now(), fresh: state == http.StateNew}
		l.mu.Unlock()
		return
	}
	l.waiting = false // one place is enough for the client held back
	l.mu.Unlock()
	lc.Close()
}

// unwrapConn finds the listener's connection under c (a TLS connection's
// underlying one), nil if it is not one.
func unwrapConn(c net.Conn) *limitConn {
	for {
		switch x := c.(type) {
		case *limitConn:
			return x
		case interface{ NetConn() net.Conn }:
			c = x.NetConn()
		default:
			return nil
		}
	}
}

// Close closes the listener; an Accept holding a client back returns.
func (l *Limited) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.done) })
	return err
}

// limitConn gives its place back once, on its first Close.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
