package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
)

// haSpec is a MySQL primary/standby instance on CLOUDSSD storage, async replication.
func haSpec(s *v1alpha1.RdsSpec) {
	s.Hamode, s.Hareplicationmode = "Ha", "async"
	s.Flavorref, s.Availabilityzone = "rds.mysql.n1.large.2.ha", "eu-de-01,eu-de-02"
}

// TestSettingsEndToEnd: each setting changed in place through the real SDK and the simulator.
// One call issues it once, the next calls report it in flight, status then shows the new value,
// and no further change is made.
func TestSettingsEndToEnd(t *testing.T) {
	cases := map[string]struct {
		reason string
		create func(*v1alpha1.RdsSpec)
		edit   func(*v1alpha1.RdsSpec)
		simOp  string
		op     string // status.operation.type while it runs; "" for changes made at once
		// statusShows: OTC lists a transitional status while it runs (else ACTIVE)
		statusShows string
		// reads: calls of the step before it acts (the backup policy's days)
		reads int
		// refusedAfterLoss: after a lost answer, requests sent again that OTC refuses as busy: a
		// change OTC shows no sign of while it runs (the replication mode) is asked again once the
		// instance looks idle, and OTC refuses it while its workflow runs (409 DBS.200019).
		refusedAfterLoss int
		check            func(t *testing.T, v otcsim.InstanceView, st *v1alpha1.RdsStatus)
	}{
		"storage type": {
			reason: "a primary/standby instance moves from CLOUDSSD to ESSD once",
			create: haSpec,
			edit:   func(s *v1alpha1.RdsSpec) { s.Volumetype = "ESSD" },
			simOp:  otcsim.OpChangeStorageType, op: reconcile.OpStorageType, statusShows: "MODIFYING",
			check: func(t *testing.T, v otcsim.InstanceView, st *v1alpha1.RdsStatus) {
				assert.Equal(t, "ESSD", v.VolumeType)
				assert.Equal(t, "ESSD", st.Volume.Type)
			},
		},
		"replication mode": {
			reason: "hareplicationmode semisync switches the replication once",
			create: haSpec,
			edit:   func(s *v1alpha1.RdsSpec) { s.Hareplicationmode = "semisync" },
			simOp:  otcsim.OpChangeFailoverMode, op: reconcile.OpReplicationMode, statusShows: "ACTIVE", refusedAfterLoss: 1,
			check: func(t *testing.T, v otcsim.InstanceView, st *v1alpha1.RdsStatus) {
				assert.Equal(t, "semisync", v.ReplicationMode)
				assert.Equal(t, "semisync", st.ReplicationMode)
			},
		},
		"maintenance window": {
			reason: "a new maintenancewindow is set once, at once",
			edit:   func(s *v1alpha1.RdsSpec) { s.Maintenancewindow = "22:00-02:00" },
			simOp:  otcsim.OpChangeOpsWindow,
			check: func(t *testing.T, v otcsim.InstanceView, st *v1alpha1.RdsStatus) {
				assert.Equal(t, "22:00-02:00", v.MaintenanceWindow)
				assert.Equal(t, "22:00-02:00", st.MaintenanceWindow)
			},
		},
		"backup period": {
			reason: "backupperiod is written once with the backup policy, after one read of its days",
			edit:   func(s *v1alpha1.RdsSpec) { s.Backupperiod = "5,1,3" },
			simOp:  otcsim.OpUpdateBackupPolicy, reads: 1,
			check: func(t *testing.T, v otcsim.InstanceView, st *v1alpha1.RdsStatus) {
				assert.Equal(t, "1,3,5", v.BackupPeriod)
				assert.Equal(t, &v1alpha1.BackupPolicy{StartTime: "01:00-02:00", KeepDays: 7, Period: "1,3,5"}, st.BackupPolicy)
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := newDay2World(t, tc.create, nil)
			w.edit(tc.edit)
			w.sync()
			assert.Equal(t, 1, w.sim.Calls(tc.simOp), "issued at once")
			assert.Equal(t, tc.reads, w.sim.Calls(otcsim.OpShowBackupPolicy))
			if tc.op != "" {
				op := w.status().Operation
				require.NotNil(t, op, "the operation shows while it runs")
				assert.Equal(t, tc.op, op.Type)
				assert.Equal(t, int64(2), op.Generation)
				assert.Equal(t, reconcile.ReasonChangeInProgress, w.condition(v1alpha1.ConditionSynced).Reason)
				w.sync()
				assert.Equal(t, tc.statusShows, w.status().Status)
				assert.Equal(t, reconcile.ReasonChangeInProgress, w.condition(v1alpha1.ConditionSynced).Reason, "still in flight")
				assert.Equal(t, tc.op, w.status().Operation.Type, "still shown")
				assert.Equal(t, 1, w.sim.Calls(tc.simOp), "not sent again while it runs")
			}
			w.settle(8)
			assert.Equal(t, 1, w.sim.Calls(tc.simOp), "%s: exactly once", tc.reason)
			tc.check(t, w.view(), w.statusRef())
			w.requireSettled(tc.reason)
		})
		t.Run(name+"/lost answer", func(t *testing.T) {
			w := newDay2World(t, tc.create, nil)
			w.sim.AddFault(otcsim.Fault{Op: tc.simOp, Kind: otcsim.FaultCommitThenDrop, Count: 1})
			w.edit(tc.edit)
			w.sync()
			assert.Equal(t, 1, w.sim.Calls(tc.simOp))
			assert.Equal(t, reconcile.ReasonCloudUnavailable, w.condition(v1alpha1.ConditionSynced).Reason, "the lost answer is reported")
			w.settle(8)
			accepted := w.sim.Calls(tc.simOp) - tc.refusedAfterLoss
			assert.Equal(t, 1, accepted, "%s: OTC acted on the lost request; it is not made again", tc.reason)
			tc.check(t, w.view(), w.statusRef())
			w.requireSettled(tc.reason)
		})
	}
}

func TestSettingsEndToEndRefusedStorageMove(t *testing.T) {
	w := newDay2World(t, nil, nil)
	w.edit(func(s *v1alpha1.RdsSpec) { s.Volumetype = "ESSD" })
	w.settle(3)
	assert.Zero(t, w.sim.Calls(otcsim.OpChangeStorageType), "no call for a move OTC does not offer")
	synced := w.condition(v1alpha1.ConditionSynced)
	assert.Equal(t, metav1.ConditionFalse, synced.Status)
	assert.Equal(t, reconcile.ReasonStorageTypeUnavailable, synced.Reason)
	assert.Equal(t, "volumetype ESSD: OTC moves the storage of a single MySQL instance only between CLOUDSSD and Flexible SSD; CLOUDSSD to ESSD needs a primary/standby instance (hamode Ha).", synced.Message)
	assert.Equal(t, "CLOUDSSD", w.view().VolumeType)
}

func TestStopStartEndToEnd(t *testing.T) {
	w := newDay2World(t, nil, nil)
	w.edit(func(s *v1alpha1.RdsSpec) { s.Stopped = true })
	w.sync()
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpStopInstance), "issued at once")
	op := w.status().Operation
	require.NotNil(t, op)
	assert.Equal(t, reconcile.OpStop, op.Type)
	require.NotNil(t, w.status().Stopped, "status records the stop")
	since := w.status().Stopped.Since
	w.sync()
	assert.Equal(t, "ACTIVE", w.status().Status, "OTC lists the instance ACTIVE while the stop runs")
	assert.Equal(t, reconcile.ReasonChangeInProgress, w.condition(v1alpha1.ConditionSynced).Reason)
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpStopInstance), "not sent again while it runs")
	w.settle(6)

	st := w.status()
	assert.Equal(t, "SHUTDOWN", st.Status)
	assert.Nil(t, st.Operation)
	require.NotNil(t, st.Stopped)
	assert.Equal(t, since, st.Stopped.Since, "kept")
	assert.Equal(t, time.Date(2026, 5, 9, 2, 0, 0, 0, time.UTC), st.Stopped.AutoStart.UTC(), "OTC starts it in the first maintenance window (02:00-06:00) seven days later")
	ready, synced := w.condition(v1alpha1.ConditionReady), w.condition(v1alpha1.ConditionSynced)
	assert.Equal(t, metav1.ConditionFalse, ready.Status)
	assert.Equal(t, reconcile.ReasonStopped, ready.Reason)
	assert.Equal(t, metav1.ConditionTrue, synced.Status, synced.Message)
	before := w.sim.MutatingCalls()
	w.settle(2)
	assert.Equal(t, before, w.sim.MutatingCalls(), "no further change while it is stopped")

	// Nothing else is changed while it is stopped.
	w.edit(func(s *v1alpha1.RdsSpec) { s.Volumesize = 60 })
	w.settle(2)
	assert.Zero(t, w.sim.Calls(otcsim.OpEnlargeVolume))
	synced = w.condition(v1alpha1.ConditionSynced)
	assert.Equal(t, reconcile.ReasonInstanceStopped, synced.Reason)
	assert.Equal(t, "The instance is stopped (spec.stopped); the pending storage growth to 60GB waits until stopped is false.", synced.Message)

	// stopped false starts it; the storage growth follows.
	w.edit(func(s *v1alpha1.RdsSpec) { s.Stopped = false })
	w.sync()
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpStartupInstance), "the start first")
	assert.Equal(t, reconcile.OpStart, w.status().Operation.Type)
	w.settle(10)
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpStartupInstance), "once")
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpEnlargeVolume), "then the waiting change")
	assert.Nil(t, w.status().Stopped)
	w.requireSettled("started, and the storage grown")
}

func TestFinalizeStoppedInstanceEndToEnd(t *testing.T) {
	w := newDay2World(t, func(s *v1alpha1.RdsSpec) { s.Stopped = true }, nil)
	w.settle(6)
	require.Equal(t, "SHUTDOWN", w.status().Status)

	w.mc.Delete(w.clock.Now())
	for range 20 {
		resp, err := w.mc.Finalize(context.Background(), w.r)
		require.NoError(t, err)
		if resp.Finalized {
			break
		}
		w.clock.Advance(min(time.Duration(resp.ResyncAfterSeconds)*time.Second, 10*time.Second))
	}
	assert.True(t, w.mc.Gone(), "deleted")
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpStartupInstance), "started once for the final backup")
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpCreateBackup), "one final backup, of the running instance")
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpDeleteInstance))
	var final []otcsim.BackupView
	for _, b := range w.sim.Backups() {
		if b.Type == "manual" {
			final = append(final, b)
		}
	}
	require.Len(t, final, 1)
	assert.Equal(t, "COMPLETED", final[0].Status)
}

// TestStoppedAgainAfterOTCStartsIt: OTC starts an instance stopped for seven days in its next
// maintenance window; while the spec says stopped, the controller stops it again, once, and
// status.stopped begins anew.
func TestStoppedAgainAfterOTCStartsIt(t *testing.T) {
	w := newDay2World(t, func(s *v1alpha1.RdsSpec) { s.Stopped = true }, nil)
	w.settle(6)
	require.Equal(t, "SHUTDOWN", w.status().Status)
	require.Equal(t, 1, w.sim.Calls(otcsim.OpStopInstance))
	autoStart := w.status().Stopped.AutoStart.Time

	w.clock.Advance(autoStart.Sub(w.clock.Now()) + time.Minute)
	w.sync() // OTC starts it now, in its maintenance window
	w.clock.Advance(otcsim.DefaultDurations().Restart)
	w.sync()
	assert.Equal(t, 2, w.sim.Calls(otcsim.OpStopInstance), "stopped again once OTC started it")
	w.settle(6)
	assert.Equal(t, 2, w.sim.Calls(otcsim.OpStopInstance), "once")
	st := w.status()
	assert.Equal(t, "SHUTDOWN", st.Status)
	require.NotNil(t, st.Stopped)
	assert.True(t, st.Stopped.Since.After(autoStart), "stopped anew: %s", st.Stopped.Since)
	assert.Equal(t, reconcile.ReasonStopped, w.condition(v1alpha1.ConditionReady).Reason)
}
