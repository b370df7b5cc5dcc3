package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/dbusers"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// A restore waiting on a STORAGE FULL instance does not hold the storage growth (the way out of
// STORAGE FULL) nor a log request; once the instance is ACTIVE again the restore runs.
func TestE2ERestoreWaitingOnStorageFullLetsLaterStepsRun(t *testing.T) {
	w := newRestoreWorldWith(t, func(c *reconcile.Config) { c.JobImage, c.PasswordKey = "img:1", secret.New("restore key") })
	id := w.created()
	w.clock.Advance(time.Hour)
	w.sync()
	w.sim.SetInstanceStatus(id, otcsim.StatusStorageFull)
	at := w.clock.Now().Add(-30 * time.Minute).UTC().Format(time.RFC3339)
	w.edit(func(s *v1alpha1.RdsSpec) {
		s.Backuprestoretime = at
		s.Volumesize = 100
		s.Logs = &v1alpha1.LogsRequest{Request: "why-full"}
	})
	w.sim.ResetCounters()

	resp := w.sync()
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpEnlargeVolume), "the storage growth is issued although a restore waits")
	assert.Zero(t, w.sim.Calls(otcsim.OpRestorePITR), "no restore on a STORAGE FULL instance")
	assert.Equal(t, reconcile.ReasonChangeInProgress, w.synced().Reason, "the issued change reports, not the waiting restore")
	assert.LessOrEqual(t, resp.ResyncAfterSeconds, 10.0, "followed at the pending pace, or sooner for the log request's Secret")

	for range 10 {
		w.clock.Advance(time.Minute)
		w.sync()
	}
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpEnlargeVolume))
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpRestorePITR), "the restore runs once the instance is ACTIVE")
	assert.Equal(t, v1alpha1.RestoreCompleted, w.status().Restore.Result)
	assert.NotNil(t, w.status().Logs, "the log request was taken")
}

// A waiting restore on an unusable instance with nothing else to do keeps saying so, at the steady
// pace, and the same call twice gives the same answer.
func TestE2ERestoreWaitingOnFrozenInstanceIsSteady(t *testing.T) {
	w := newRestoreWorld(t)
	id := w.created()
	w.sim.SetInstanceStatus(id, otcsim.StatusFrozen)
	w.edit(func(s *v1alpha1.RdsSpec) {
		s.Backuprestoretime = w.clock.Now().Add(-30 * time.Minute).UTC().Format(time.RFC3339)
	})
	w.sim.ResetCounters()
	first := w.sync()
	second := w.sync()
	assert.Equal(t, reconcile.ReasonRestoreWaiting, w.synced().Reason)
	assert.Equal(t, first.Status, second.Status, "the same answer twice")
	assert.Greater(t, second.ResyncAfterSeconds, 10.0, "nothing ends by itself: the steady pace")
	assert.Zero(t, w.sim.MutatingCalls())
}

// A restore in place rolls back databases and users too: the first ACTIVE call after it applies
// them again, and only that one.
func TestE2ERestoreInPlaceAppliesDatabasesAgain(t *testing.T) {
	applies := 0
	w := newRestoreWorldWith(t, func(c *reconcile.Config) {
		c.Databases.DriftCheck = 24 * time.Hour // only the restore may cause a second apply
		c.Databases.Apply = func(_ context.Context, _ dbusers.Conn, d dbusers.Desired, _ dbusers.ManagedState) (dbusers.Result, error) {
			applies++
			return dbusers.Result{Managed: dbusers.ManagedState{Databases: d.Databases}}, nil
		}
	})
	spec := restoreSpec()
	spec.Databases = []string{"shop"}
	w.object("orders", spec)
	w.syncUntilActive()
	w.clock.Advance(2 * time.Hour)
	w.sync()
	require.Equal(t, 1, applies, "applied once, the drift check is not due")
	w.edit(func(s *v1alpha1.RdsSpec) {
		s.Backuprestoretime = w.clock.Now().Add(-90 * time.Minute).UTC().Format(time.RFC3339)
	})
	w.sync()
	require.Equal(t, v1alpha1.RestoreIssued, w.status().Restore.Result)
	w.clock.Advance(otcsim.DefaultDurations().Restore + 2*time.Second)
	w.syncUntilActive()
	w.sync()
	assert.Equal(t, v1alpha1.RestoreCompleted, w.status().Restore.Result)
	assert.Equal(t, 2, applies, "applied again after the restore, once")
	require.NotNil(t, w.status().DatabasesAndUsers)
	assert.Equal(t, []string{"shop"}, w.status().DatabasesAndUsers.Databases, "the managed list is kept")
}
