package otcsim

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/instances"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/logs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func logDates(e *env) (string, string) {
	return t0.Add(-time.Hour).Format(logDateLayout), e.clock.Now().Add(time.Hour).Format(logDateLayout)
}

func TestErrorLogPagingAndLevels(t *testing.T) {
	e := newEnv(t, Options{})
	id := e.createActive(t, createOpts("logs-01"))
	e.clock.Advance(time.Hour)
	for i := range 23 {
		require.NoError(t, e.sim.AddErrorLog(id, t0.Add(time.Duration(10+i)*time.Minute), "error", fmt.Sprintf("failure %02d", i)))
	}
	from, to := logDates(e)

	all, err := logs.ListErrorLog(e.rds, logs.DbErrorlogOpts{InstanceId: id, StartDate: from, EndDate: to})
	require.NoError(t, err)
	assert.Equal(t, 25, all.TotalRecord, "2 startup lines + 23 added")
	require.Len(t, all.ErrorLogList, 10, "limit defaults to 10")
	assert.Equal(t, "failure 22", all.ErrorLogList[0].Content, "newest first")
	assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$`, all.ErrorLogList[0].Time)

	// offset is a PAGE number: page 3 of 10 holds items 21..25.
	p3, err := logs.ListErrorLog(e.rds, logs.DbErrorlogOpts{InstanceId: id, StartDate: from, EndDate: to, Offset: "3", Limit: "10"})
	require.NoError(t, err)
	assert.Len(t, p3.ErrorLogList, 5)
	assert.Equal(t, 25, p3.TotalRecord)

	warn, err := logs.ListErrorLog(e.rds, logs.DbErrorlogOpts{InstanceId: id, StartDate: from, EndDate: to, Level: "WARNING"})
	require.NoError(t, err)
	require.Equal(t, 1, warn.TotalRecord)
	assert.Contains(t, warn.ErrorLogList[0].Content, "Aborted connection")

	for name, opts := range map[string]logs.DbErrorlogOpts{
		"bad date":   {InstanceId: id, StartDate: "yesterday", EndDate: to},
		"reversed":   {InstanceId: id, StartDate: to, EndDate: from},
		"two months": {InstanceId: id, StartDate: t0.Add(-60 * 24 * time.Hour).Format(logDateLayout), EndDate: to},
		"limit":      {InstanceId: id, StartDate: from, EndDate: to, Limit: "101"},
		"page zero":  {InstanceId: id, StartDate: from, EndDate: to, Offset: "0"},
		"level":      {InstanceId: id, StartDate: from, EndDate: to, Level: "DEBUG"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := logs.ListErrorLog(e.rds, opts)
			status, code := rdsErrorCode(t, err)
			assert.Equal(t, http.StatusBadRequest, status)
			assert.Equal(t, "DBS.200001", code)
		})
	}
}

func TestSlowLog(t *testing.T) {
	e := newEnv(t, Options{})
	id := e.createActive(t, createOpts("slow-01"))
	e.clock.Advance(time.Hour)
	from, to := logDates(e)

	res, err := logs.ListSlowLog(e.rds, logs.DbSlowLogOpts{InstanceId: id, StartDate: from, EndDate: to})
	require.NoError(t, err)
	require.Equal(t, 3, res.TotalRecord)
	first := res.Slowloglist[0]
	assert.Equal(t, "INSERT", first.Type)
	assert.Equal(t, "2.60000 s", first.Time)
	assert.Equal(t, "0.00003 s", first.LockTime)
	assert.Equal(t, "192.*.*.12", first.ClientIp)

	// The SDK sends the statement type as "level"; the docs call it "type". Both work.
	sel, err := logs.ListSlowLog(e.rds, logs.DbSlowLogOpts{InstanceId: id, StartDate: from, EndDate: to, Level: "SELECT"})
	require.NoError(t, err)
	assert.Equal(t, 1, sel.TotalRecord)
	var viaType logs.SlowLogResp
	_, err = e.rds.Get(e.rds.ServiceURL("instances", id, "slowlog")+"?start_date="+urlEncode(from)+"&end_date="+urlEncode(to)+"&type=UPDATE", &viaType, nil)
	require.NoError(t, err)
	assert.Equal(t, 1, viaType.TotalRecord)
	assert.Equal(t, "UPDATE", viaType.Slowloglist[0].Type)

	require.NoError(t, e.sim.AddSlowLog(id, SlowLogEntry{Time: e.clock.Now().Add(-time.Minute), Duration: 3 * time.Second, Type: "delete", Query: "DELETE FROM t"}))
	res, err = logs.ListSlowLog(e.rds, logs.DbSlowLogOpts{InstanceId: id, StartDate: from, EndDate: to, Level: "DELETE"})
	require.NoError(t, err)
	assert.Equal(t, 1, res.TotalRecord)

	// PostgreSQL has no lock_time; SQL Server has no slow log.
	pg := createOpts("slow-pg")
	pg.Datastore = &instances.Datastore{Type: "PostgreSQL", Version: "14"}
	pg.FlavorRef, pg.Port = "rds.pg.n1.medium.2", ""
	pgID := e.createActive(t, pg)
	e.clock.Advance(time.Hour)
	from, to = logDates(e)
	res, err = logs.ListSlowLog(e.rds, logs.DbSlowLogOpts{InstanceId: pgID, StartDate: from, EndDate: to})
	require.NoError(t, err)
	require.NotEmpty(t, res.Slowloglist)
	assert.Empty(t, res.Slowloglist[0].LockTime)

	ms := createOpts("slow-mssql")
	ms.Datastore = &instances.Datastore{Type: "SQLServer", Version: "2019_SE"}
	ms.FlavorRef, ms.Port = "rds.mssql.se.s3.large.4", ""
	msID := e.createActive(t, ms)
	_, err = logs.ListSlowLog(e.rds, logs.DbSlowLogOpts{InstanceId: msID, StartDate: from, EndDate: to})
	status, _ := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusBadRequest, status)
}
