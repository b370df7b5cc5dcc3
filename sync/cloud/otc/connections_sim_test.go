package otc_test

import (
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/otc"
	"github.com/mcsps/rds-lambda-controller/test/testutil"
)

// TestSimCallsKeepTheirConnection: calls to OTC reuse the connections of the calls before them,
// answered well or not, alone or several at once. The SDK asks for a connection per request and
// leaves most answers unread to their end; against OTC each new connection is a TLS handshake.
func TestSimCallsKeepTheirConnection(t *testing.T) {
	srv := otcsim.NewServer(otcsim.Options{})
	t.Cleanup(srv.Close)
	var dials atomic.Int64
	transport := otc.NewTransport()
	var d net.Dialer
	transport.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return d.DialContext(ctx, network, addr)
	}
	c := testutil.Login(t, srv, func(cfg *otc.Config) { cfg.Transport = transport })
	require.EqualValues(t, 1, dials.Load(), "the login opens the first connection")

	_, _, err := c.CreateInstance(ctxT(t), mysqlOpts("rds-keep-01"))
	require.NoError(t, err)
	bad := mysqlOpts("rds-keep-02")
	bad.VolumeSize = 45
	for range 5 {
		found, err := c.FindInstancesByName(ctxT(t), "rds-keep-01")
		require.NoError(t, err)
		require.Len(t, found, 1)
		all, err := c.ListInstances(ctxT(t))
		require.NoError(t, err)
		require.Len(t, all, 1)
		_, _, err = c.CreateInstance(ctxT(t), bad)
		requireKind(t, cloud.KindInvalid, err) // an error's answer keeps the connection too
	}
	assert.EqualValues(t, 1, dials.Load(), "16 calls one after the other, on the login's connection")

	// A page of 1 MiB goes to the SDK as it arrives (not read ahead), which reads it to its end.
	logged, err := srv.Sim.AddInstance(otcsim.InstanceSpec{Name: "rds-keep-logs", Engine: "MySQL"})
	require.NoError(t, err)
	now := time.Now()
	for i := range 16 {
		require.NoError(t, srv.Sim.AddErrorLog(logged, now.Add(-time.Duration(i+1)*time.Minute), "ERROR", strings.Repeat("e", 64<<10)))
	}
	for range 3 {
		entries, _, err := c.ListErrorLogs(ctxT(t), logged, cloud.LogQuery{Start: now.Add(-time.Hour), End: now})
		require.NoError(t, err)
		require.Len(t, entries, 16)
	}
	assert.EqualValues(t, 1, dials.Load(), "large answers keep the connection too")

	// The simulator holds the first answers until all four calls have their connection: a call
	// that ends while another waits for a new connection hands that one its own, and opens one
	// more for its next call (five connections in one run of eight without the hold).
	const at = 4
	srv.Sim.AddFault(otcsim.Fault{Op: otcsim.OpListInstances, Kind: otcsim.FaultLatency, Delay: 200 * time.Millisecond, Count: at})
	var wg sync.WaitGroup
	for range at {
		wg.Go(func() {
			for range 25 {
				_, err := c.FindInstancesByName(context.Background(), "rds-keep-01")
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	assert.EqualValues(t, at, dials.Load(), "%d calls at once keep %d connections", at, at)
}

// balancedConn is a connection through a load balancer that closes connections idle for
// idleAfter, and whose close crosses the next request: the request is written, never arrives,
// and the client reads the end of the connection, as when OTC's balancer closes a kept
// connection just as a request leaves.
type balancedConn struct {
	net.Conn
	idleAfter time.Duration

	mu      sync.Mutex
	last    time.Time // when the last answer's bytes arrived; zero before the first request
	dropped bool
}

func (c *balancedConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dropped && !c.last.IsZero() && time.Since(c.last) >= c.idleAfter {
		c.dropped = true
		_ = c.Conn.Close()
	}
	if c.dropped {
		return len(p), nil
	}
	return c.Conn.Write(p)
}

func (c *balancedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped {
		return 0, io.EOF
	}
	if n > 0 {
		c.last = time.Now()
	}
	return n, err
}

// TestSimKeptConnectionClosedByTheBalancer: a request sent on a kept connection that the load
// balancer closes meanwhile is lost before OTC sees it. A read is sent again on a new connection
// (net/http resends idempotent requests); a change is not, fails as OTC unavailable, and the next
// call makes it once; a login is sent again, since a failed one is remembered for the retry time
// (DefaultReauthRetry) and fails every call of its credentials until then.
func TestSimKeptConnectionClosedByTheBalancer(t *testing.T) {
	srv := otcsim.NewServer(otcsim.Options{})
	t.Cleanup(srv.Close)
	const idle = 50 * time.Millisecond
	transport := otc.NewTransport()
	var d net.Dialer
	transport.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &balancedConn{Conn: conn, idleAfter: idle}, nil
	}
	env := srv.Env()
	cfg, err := otc.ConfigFromEnv(func(k string) string { return env[k] })
	require.NoError(t, err)
	cfg.RequestTimeout = 5 * time.Second
	cfg.Transport = transport
	c, err := otc.New(ctxT(t), cfg)
	require.NoError(t, err)

	time.Sleep(2 * idle)
	all, err := c.ListInstances(ctxT(t))
	require.NoError(t, err, "a read is sent again")
	assert.Empty(t, all)

	time.Sleep(2 * idle)
	_, _, err = c.CreateInstance(ctxT(t), mysqlOpts("rds-balanced-01"))
	requireKind(t, cloud.KindUnavailable, err)
	assert.Zero(t, srv.Sim.Calls(otcsim.OpCreateInstance), "the create never reached OTC, and is not sent again")
	_, _, err = c.CreateInstance(ctxT(t), mysqlOpts("rds-balanced-01"))
	require.NoError(t, err)
	found, err := c.FindInstancesByName(ctxT(t), "rds-balanced-01")
	require.NoError(t, err)
	assert.Len(t, found, 1, "one instance")

	time.Sleep(2 * idle)
	logins := srv.Sim.Calls(otcsim.OpCreateToken)
	_, err = otc.New(ctxT(t), cfg)
	require.NoError(t, err, "a login is sent again")
	assert.Equal(t, logins+1, srv.Sim.Calls(otcsim.OpCreateToken), "once")
}
