package otc_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// restoreSource adds an ACTIVE MySQL instance with its automated backup and lets an hour pass.
func restoreSource(t *testing.T, e *simEnv) string {
	t.Helper()
	id, err := e.sim.AddInstance(otcsim.InstanceSpec{Name: "source-01", VolumeSize: 40})
	require.NoError(t, err)
	e.clock.Advance(time.Hour)
	return id
}

func TestSimRestoreInPlace(t *testing.T) {
	e := newSimEnv(t)
	ctx := ctxT(t)
	id := restoreSource(t, e)

	ranges, err := e.c.ListRestoreTimes(ctx, id)
	require.NoError(t, err)
	require.Len(t, ranges, 1)
	assert.Equal(t, e.clock.Now().UTC().Truncate(time.Millisecond), ranges[0].End, "restorable until now")
	assert.True(t, ranges[0].Start.Before(ranges[0].End))
	at := ranges[0].End.Add(-30 * time.Minute)
	assert.True(t, ranges[0].Contains(at))

	// A time outside every range is refused by OTC too.
	_, err = e.c.RestoreInPlace(ctx, id, ranges[0].Start.Add(-time.Hour))
	requireKind(t, cloud.KindInvalid, err)

	jobID, err := e.c.RestoreInPlace(ctx, id, at)
	require.NoError(t, err)
	assert.NotEmpty(t, jobID)
	in, err := e.c.GetInstance(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, cloud.StatusRestoring, in.Status)

	// A second restore while the first runs: busy.
	_, err = e.c.RestoreInPlace(ctx, id, at)
	requireKind(t, cloud.KindBusy, err)

	e.clock.Advance(otcsim.DefaultDurations().Restore + 2*time.Second)
	job, err := e.c.GetJob(ctx, jobID)
	require.NoError(t, err)
	assert.Equal(t, cloud.JobCompleted, job.Status)
	in, err = e.c.GetInstance(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, cloud.StatusActive, in.Status)
	assert.Equal(t, 3, e.sim.Calls(otcsim.OpRestorePITR), "out of range, issued, busy: every arrival counts")

	_, err = e.c.ListRestoreTimes(ctx, "0123456789abcdef0123456789abcdefin01")
	requireKind(t, cloud.KindNotFound, err)
	_, err = e.c.RestoreInPlace(ctx, "", at)
	requireKind(t, cloud.KindInvalid, err)
}

func TestSimRestoreToNew(t *testing.T) {
	e := newSimEnv(t)
	ctx := ctxT(t)
	src := restoreSource(t, e)
	backups, err := e.c.ListBackups(ctx, src)
	require.NoError(t, err)
	require.NotEmpty(t, backups)

	cases := map[string]struct {
		reason string
		from   cloud.RestorePoint
		size   int
		want   cloud.Kind // 0: success
	}{
		"from a backup": {
			reason: "a completed backup of the source makes a new instance",
			from:   cloud.RestorePoint{InstanceID: src, BackupID: backups[0].ID},
		},
		"from a point in time": {
			reason: "a time within the source's ranges makes a new instance",
			from:   cloud.RestorePoint{InstanceID: src, Time: e.clock.Now().Add(-10 * time.Minute)},
		},
		"time before any backup": {
			reason: "OTC refuses a time outside the ranges",
			from:   cloud.RestorePoint{InstanceID: src, Time: e.clock.Now().Add(-48 * time.Hour)},
			want:   cloud.KindInvalid,
		},
		"unknown backup": {
			reason: "a backup that does not exist",
			from:   cloud.RestorePoint{InstanceID: src, BackupID: "0123456789abcdef0123456789abcdefbr01"},
			want:   cloud.KindNotFound,
		},
		"both a backup and a time": {
			reason: "refused before sending",
			from:   cloud.RestorePoint{InstanceID: src, BackupID: backups[0].ID, Time: e.clock.Now()},
			want:   cloud.KindInvalid,
		},
		"neither": {
			reason: "refused before sending",
			from:   cloud.RestorePoint{InstanceID: src},
			want:   cloud.KindInvalid,
		},
	}
	n := 0
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			n++
			opts := mysqlOpts("restored-" + string(rune('a'+n)) + "-01")
			opts.Engine, opts.Version = "", "" // taken from the source
			id, jobID, err := e.c.RestoreToNew(ctx, cloud.RestoreToNewOpts{CreateInstanceOpts: opts, From: tc.from})
			if tc.want != 0 {
				requireKind(t, tc.want, err)
				return
			}
			require.NoError(t, err, tc.reason)
			assert.NotEmpty(t, jobID)
			in, err := e.c.GetInstance(ctx, id)
			require.NoError(t, err)
			assert.Equal(t, cloud.StatusBuild, in.Status)
			assert.Equal(t, "MySQL", in.Engine)
			assert.Equal(t, opts.Name, in.Name)
		})
	}
	e.clock.Advance(otcsim.DefaultDurations().Restore + time.Second)
	for _, in := range e.sim.Instances() {
		assert.Equal(t, otcsim.StatusActive, in.Status, in.Name)
	}
	assert.Len(t, e.sim.Instances(), 3, "the source and two restored instances")
}

func TestSimRestoreToNewLostAnswer(t *testing.T) {
	e := newSimEnv(t)
	ctx := ctxT(t)
	src := restoreSource(t, e)
	e.sim.AddFault(otcsim.Fault{Op: otcsim.OpRestoreToNew, Kind: otcsim.FaultCommitThenDrop, Count: 1})
	opts := mysqlOpts("restored-01")
	_, _, err := e.c.RestoreToNew(ctx, cloud.RestoreToNewOpts{CreateInstanceOpts: opts, From: cloud.RestorePoint{InstanceID: src, Time: e.clock.Now().Add(-time.Minute)}})
	requireKind(t, cloud.KindUnavailable, err)
	in, err := e.c.FindInstancesByName(ctx, "restored-01")
	require.NoError(t, err, "the restore went through: the deterministic name finds it")
	require.Len(t, in, 1)
	assert.Equal(t, cloud.StatusBuild, in[0].Status)
}
