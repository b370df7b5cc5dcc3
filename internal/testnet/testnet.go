// Package testnet serves the fake servers of tests on loopback.
package testnet

import (
	"net"
	"sync"
	"testing"
	"time"
)

// Listener is a fake server's listener on 127.0.0.1: it serves each connection with its own
// function, under a deadline of 5 s, until the test ends.
type Listener struct {
	Port int
	wg   sync.WaitGroup
}

// Serve listens on a free port of 127.0.0.1 and serves each connection with serve, which need not
// close it.
func Serve(t testing.TB, serve func(net.Conn)) *Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tl := &Listener{Port: l.Addr().(*net.TCPAddr).Port}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			tl.wg.Add(1)
			go func() {
				defer tl.wg.Done()
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				serve(c)
			}()
		}
	}()
	return tl
}

// Wait waits for the connections served so far to end.
func (l *Listener) Wait() { l.wg.Wait() }
