package server

import (
	"net"
	"sync"
)

// LimitPerClient bounds the connections one client address holds open on l at once: a connection
// beyond n is closed as soon as it is accepted, before a byte of it is read. Any pod that can
// reach a port can open connections and hold them; this keeps one of them from holding them all.
func LimitPerClient(l net.Listener, n int) net.Listener {
	return &perClientListener{Listener: l, max: n, open: map[string]int{}}
}

type perClientListener struct {
	net.Listener
	max int

	mu   sync.Mutex
	open map[string]int
}

func (l *perClientListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		host := clientHost(c.RemoteAddr())
		l.mu.Lock()
		if l.open[host] >= l.max {
			l.mu.Unlock()
			_ = c.Close()
			continue
		}
		l.open[host]++
		l.mu.Unlock()
		return &countedConn{Conn: c, release: func() { l.release(host) }}, nil
	}
}

func (l *perClientListener) release(host string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[host]--; l.open[host] <= 0 {
		delete(l.open, host)
	}
}

func clientHost(a net.Addr) string {
	if host, _, err := net.SplitHostPort(a.String()); err == nil {
		return host
	}
	return a.String()
}

type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
