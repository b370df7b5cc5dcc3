package pgusers

import (
	"net"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"
)

// pgListener is a fake PostgreSQL server's listener on 127.0.0.1: it serves each connection with
// its own function, under a deadline of 5 s, until the test ends.
type pgListener struct {
	port int
	wg   sync.WaitGroup
}

func listenPG(t *testing.T, serve func(net.Conn)) *pgListener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	pl := &pgListener{port: l.Addr().(*net.TCPAddr).Port}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			pl.wg.Add(1)
			go func() {
				defer pl.wg.Done()
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				serve(c)
			}()
		}
	}()
	return pl
}

// wait waits for the connections served so far to end.
func (pl *pgListener) wait() { pl.wg.Wait() }

// startupRefusingTLS reads a client's startup message, answering "N" to each SSLRequest before
// it; false when the client went away.
func startupRefusingTLS(b *pgproto3.Backend, c net.Conn) bool {
	for {
		msg, err := b.ReceiveStartupMessage()
		if err != nil {
			return false
		}
		if _, ok := msg.(*pgproto3.SSLRequest); !ok {
			return true
		}
		if _, err := c.Write([]byte("N")); err != nil {
			return false
		}
	}
}
