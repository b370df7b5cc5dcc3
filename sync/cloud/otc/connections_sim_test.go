package otc_test

import (
	"context"
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
	env := srv.Env()
	cfg, err := otc.ConfigFromEnv(func(k string) string { return env[k] })
	require.NoError(t, err)
	cfg.RequestTimeout = 5 * time.Second
	cfg.Transport = transport
	c, err := otc.New(ctxT(t), cfg)
	require.NoError(t, err)
	require.EqualValues(t, 1, dials.Load(), "the login opens the first connection")

	_, _, err = c.CreateInstance(ctxT(t), mysqlOpts("rds-keep-01"))
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
