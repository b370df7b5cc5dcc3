package otcsim

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCloseClosesConnectionsThatSentNothing: a client that keeps connections (the adapter's) can
// hold one it opened ahead of a request and never used; Close closes it at once instead of letting
// Shutdown wait 5 s for it, which made one campaign seed in fifty take 5 s.
func TestCloseClosesConnectionsThatSentNothing(t *testing.T) {
	srv := NewServer(Options{})
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	require.Eventually(t, func() bool {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		return len(srv.fresh) == 1
	}, 2*time.Second, 5*time.Millisecond, "the server sees the connection")

	closed := make(chan struct{})
	go func() { srv.Close(); close(closed) }()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(3*time.Second)))
	_, err = conn.Read(make([]byte, 1))
	require.Error(t, err)
	assert.False(t, isTimeout(err), "the server closes the connection (%v)", err)
	select {
	case <-closed:
	case <-time.After(3 * time.Second):
		t.Fatal("Close waits for a connection that sent nothing")
	}
}
