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
// Idle keep-alive connections give way to a client held back: with the
// listener's ConnState set as the http.Server's ConnState, the connection
// idle longest is closed for it, or the next one to go idle, so that a
// new client (a health probe) does not wait for the server's idle
// timeout. Connections reading or answering a request are never closed.
type Limited struct {
	net.Listener
	sem       chan struct{}
	done      chan struct{}
	closeOnce sync.Once

	mu      sync.Mutex
	idle    map[*limitConn]time.Time // idle connections, since when
	waiting bool                     // Accept holds a client back
}

// LimitListener returns a listener that accepts at most n connections at
// once from l.
func LimitListener(l net.Listener, n int) *Limited {
	return &Limited{Listener: l, sem: make(chan struct{}, max(1, n)), done: make(chan struct{}),
		idle: make(map[*limitConn]time.Time)}
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
		l.mu.Lock()
		oldest := l.oldestIdle()
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
		case <-l.done:
			c.Close()
			return nil, net.ErrClosed
		}
		l.mu.Lock()
		l.waiting = false
		l.mu.Unlock()
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

// oldestIdle returns the connection idle longest, nil if none; l.mu is
// held.
func (l *Limited) oldestIdle() *limitConn {
	var oldest *limitConn
	var since time.Time
	for c, t := range l.idle {
		if oldest == nil || t.Before(since) {
			oldest, since = c, t
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
	if state != http.StateIdle {
		delete(l.idle, lc)
		l.mu.Unlock()
		return
	}
	if !l.waiting {
		l.idle[lc] = time.Now()
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
