package otc_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/otc"
)

// logsInstance adds an ACTIVE instance of the engine whose logs before t0 hold only what the test
// adds (the simulator writes its start-up lines at t0).
func logsInstance(t *testing.T, e *simEnv, engine string) string {
	t.Helper()
	spec := otcsim.InstanceSpec{Name: "logs-" + engine, Engine: engine}
	if engine == "SQLServer" {
		spec.Version, spec.Flavor = "2022_SE", "rds.mssql.se.s3.large.4"
	}
	id, err := e.sim.AddInstance(spec)
	require.NoError(t, err)
	return id
}

func TestSimLogPaging(t *testing.T) {
	e := newSimEnv(t)
	ctx := ctxT(t)
	id := logsInstance(t, e, "MySQL")
	base := t0.Add(-10 * time.Hour)
	for i := range 250 {
		require.NoError(t, e.sim.AddErrorLog(id, base.Add(time.Duration(i)*time.Minute), "WARNING", fmt.Sprintf("line %03d", i)))
	}
	q := cloud.LogQuery{Start: base, End: t0.Add(-time.Minute)}

	cases := map[string]struct {
		reason    string
		max       int
		wantLen   int
		wantPages int
	}{
		"all":        {reason: "no cap: every page up to the total", max: 0, wantLen: 250, wantPages: 3},
		"capped":     {reason: "stops paging once the cap is reached", max: 120, wantLen: 120, wantPages: 2},
		"one page":   {reason: "a cap within the first page reads one page", max: 5, wantLen: 5, wantPages: 1},
		"exact page": {reason: "a full page that reaches the cap ends paging", max: 100, wantLen: 100, wantPages: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e.sim.ResetCounters()
			q.Max = tc.max
			got, total, err := e.c.ListErrorLogs(ctx, id, q)
			require.NoError(t, err, tc.reason)
			assert.Equal(t, 250, total, tc.reason)
			require.Len(t, got, tc.wantLen, tc.reason)
			assert.Equal(t, "line 249", got[0].Content, "newest first")
			assert.Equal(t, fmt.Sprintf("line %03d", 250-tc.wantLen), got[len(got)-1].Content, tc.reason)
			assert.Equal(t, tc.wantPages, e.sim.Calls(otcsim.OpListErrorLogs), tc.reason)
		})
	}
}

func TestSimSlowLogs(t *testing.T) {
	e := newSimEnv(t)
	ctx := ctxT(t)
	id := logsInstance(t, e, "MySQL")
	at := t0.Add(-30 * time.Minute)
	require.NoError(t, e.sim.AddSlowLog(id, otcsim.SlowLogEntry{
		Time: at, Duration: 2500 * time.Millisecond, Type: "select", Database: "shop", User: "app",
		Query: "SELECT * FROM orders", ClientIP: "10.1.2.3",
	}))
	got, total, err := e.c.ListSlowLogs(ctx, id, cloud.LogQuery{Start: t0.Add(-time.Hour), End: t0.Add(-time.Minute)})
	require.NoError(t, err)
	assert.Equal(t, 1, total)
	assert.Equal(t, []cloud.SlowLogEntry{{
		StartTime: at.Format("2006-01-02T15:04:05"), Duration: "2.50000 s", LockTime: "0.00003 s", RowsSent: "0", RowsExamined: "0",
		Count: "1", Type: "SELECT", Database: "shop", User: "app", ClientIP: "10.*.*.3", Query: "SELECT * FROM orders",
	}}, got)

	empty, total, err := e.c.ListSlowLogs(ctx, id, cloud.LogQuery{Start: t0.Add(-10 * time.Hour), End: t0.Add(-9 * time.Hour)})
	require.NoError(t, err, "an empty window is no error")
	assert.Empty(t, empty)
	assert.Zero(t, total)
}

func TestSimLogErrors(t *testing.T) {
	e := newSimEnv(t)
	ctx := ctxT(t)
	id := logsInstance(t, e, "MySQL")
	mssql := logsInstance(t, e, "SQLServer")
	q := cloud.LogQuery{Start: t0.Add(-time.Hour), End: t0}

	_, _, err := e.c.ListErrorLogs(ctx, "0123456789abcdef0123456789abcdefin01", q)
	requireKind(t, cloud.KindNotFound, err)

	_, _, err = e.c.ListSlowLogs(ctx, mssql, q)
	requireKind(t, cloud.KindBusy, err) // DBS.200086: the engine has no slow log

	_, _, err = e.c.ListErrorLogs(ctx, id, cloud.LogQuery{Start: t0, End: t0.Add(-time.Hour)})
	requireKind(t, cloud.KindInvalid, err)

	e.sim.AddFault(otcsim.Fault{Op: otcsim.OpListErrorLogs, Kind: otcsim.FaultStatus, Status: 500, Count: 1})
	_, _, err = e.c.ListErrorLogs(ctx, id, q)
	requireKind(t, cloud.KindUnavailable, err)
}

// A tenant writes its own instance's logs (a slow query with a megabyte of comment): what a read
// keeps is bounded per entry, and a page too large to hold is refused, not decoded, so that one
// tenant's log Job cannot exhaust the memory of the hooks every tenant shares.
func TestSimLogsBoundedByEntryAndPage(t *testing.T) {
	e := newSimEnv(t)
	ctx := ctxT(t)
	id := logsInstance(t, e, "MySQL")
	base := t0.Add(-10 * time.Hour)
	big := strings.Repeat("x", 64<<10)
	for i := range 150 {
		require.NoError(t, e.sim.AddSlowLog(id, otcsim.SlowLogEntry{Time: base.Add(time.Duration(i) * time.Minute), Duration: 2 * time.Second, Query: big, Type: "SELECT"}))
	}
	got, _, err := e.c.ListSlowLogs(ctx, id, cloud.LogQuery{Start: base, End: t0.Add(-time.Minute)})
	require.NoError(t, err)
	require.Len(t, got, 150)
	for _, entry := range got {
		assert.LessOrEqual(t, len(entry.Query), otc.MaxLogFieldBytes, "each field is cut")
	}

	huge := strings.Repeat("y", 300<<10) // 100 of these make a page of 30 MiB
	for i := range 100 {
		require.NoError(t, e.sim.AddErrorLog(id, base.Add(time.Duration(i)*time.Minute), "ERROR", huge))
	}
	_, _, err = e.c.ListErrorLogs(ctx, id, cloud.LogQuery{Start: base, End: t0.Add(-time.Minute)})
	var ce *cloud.Error
	require.ErrorAs(t, err, &ce, "a page beyond the response limit is refused")
	assert.NotContains(t, err.Error(), "yyyy", "no content in the error")
}
