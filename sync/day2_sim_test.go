package reconcile_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/otc"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
	"github.com/mcsps/rds-lambda-controller/test/metacontroller"
	"github.com/mcsps/rds-lambda-controller/test/testutil"
)

// day2World is one Rds object driven through the sync hook, the real adapter and the simulator,
// with the Metacontroller stand-in feeding each answer back as the next request.
type day2World struct {
	t      *testing.T
	clock  *otcsim.ManualClock
	srv    *otcsim.Server
	sim    *otcsim.Sim
	client *otc.Client
	r      *reconcile.Reconciler
	// mc is the object as Metacontroller and the cluster hold it.
	mc   *metacontroller.Object
	last *hook.SyncResponse
}

// newDay2World creates the instance through the hooks and returns once it is ACTIVE, with the
// simulator's counters reset. wrap, if set, wraps the adapter's HTTP transport.
func newDay2World(t *testing.T, spec func(*v1alpha1.RdsSpec), wrap func(http.RoundTripper) http.RoundTripper) *day2World {
	t.Helper()
	clock := otcsim.NewManualClock(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))
	srv := otcsim.NewServer(otcsim.Options{Clock: clock})
	t.Cleanup(srv.Close)
	client := testutil.Login(t, srv, func(cfg *otc.Config) {
		if wrap != nil {
			cfg.Transport = wrap(http.DefaultTransport.(*http.Transport).Clone())
		}
	})

	w := &day2World{
		t: t, clock: clock, srv: srv, sim: srv.Sim, client: client,
		r: reconcile.New(reconcile.Config{Cloud: client, Now: clock.Now, CallTimeout: 5 * time.Second}),
	}
	obj := v1alpha1.Rds{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "team-a", UID: "uid-day2", Generation: 1},
		Spec: v1alpha1.RdsSpec{
			Datastoretype: "MySQL", Datastoreversion: "8.0", Flavorref: "rds.mysql.n1.large.2",
			Volumetype: "CLOUDSSD", Volumesize: 40, Availabilityzone: "eu-de-01", Region: "eu-de",
			Vpc: otcsim.SeedVPCName, Subnet: otcsim.SeedSubnetName, Securitygroup: otcsim.SeedSecurityGroupName,
			Backupstarttime: "01:00-02:00", Backupkeepdays: 7, Password: "Sim-Passw0rd!",
		},
	}
	if spec != nil {
		spec(&obj.Spec)
	}
	w.mc = metacontroller.NewRds(obj)
	w.sync() // stores the password
	w.sync() // creates
	clock.Advance(otcsim.DefaultDurations().Create)
	w.sync()
	require.Equal(t, "ACTIVE", w.status().Status, "the instance is up")
	require.Equal(t, metav1.ConditionTrue, w.condition(v1alpha1.ConditionReady).Status)
	srv.Sim.ResetCounters()
	return w
}

// sync makes one hook call and feeds its answer back.
func (w *day2World) sync() *hook.SyncResponse {
	w.t.Helper()
	resp, err := w.mc.Sync(context.Background(), w.r)
	require.NoError(w.t, err)
	w.last = resp
	return resp
}

// status is the stored status.
func (w *day2World) status() v1alpha1.RdsStatus { return w.mc.Status() }

// statusRef is a copy of the stored status, for checks that take a pointer.
func (w *day2World) statusRef() *v1alpha1.RdsStatus {
	st := w.mc.Status()
	return &st
}

// settle makes n calls, moving the clock on by the answer's resync (at most 10 s) after each.
func (w *day2World) settle(n int) {
	w.t.Helper()
	for range n {
		resp := w.sync()
		w.clock.Advance(min(time.Duration(resp.ResyncAfterSeconds)*time.Second, 10*time.Second))
	}
}

// edit changes the spec as a user would: a new generation.
func (w *day2World) edit(change func(*v1alpha1.RdsSpec)) {
	w.mc.EditRds(change)
}

func (w *day2World) condition(typ string) v1alpha1.Condition {
	w.t.Helper()
	for _, c := range w.status().Conditions {
		if c.Type == typ {
			return c
		}
	}
	w.t.Fatalf("no condition %s", typ)
	return v1alpha1.Condition{}
}

func (w *day2World) view() otcsim.InstanceView {
	w.t.Helper()
	v, ok := w.sim.Instance(w.status().ID)
	require.True(w.t, ok)
	return v
}

// requireSettled checks that the object reports a finished, truthful state and that one more call
// changes nothing in the cloud.
func (w *day2World) requireSettled(reason string) {
	w.t.Helper()
	assert.Nil(w.t, w.status().Operation, reason)
	assert.Equal(w.t, "ACTIVE", w.status().Status, reason)
	ready, synced := w.condition(v1alpha1.ConditionReady), w.condition(v1alpha1.ConditionSynced)
	assert.Equal(w.t, metav1.ConditionTrue, ready.Status, reason)
	assert.Equal(w.t, metav1.ConditionTrue, synced.Status, "%s: %s", reason, synced.Message)
	assert.Equal(w.t, reconcile.ReasonReconcileSuccess, synced.Reason, reason)
	before, status := w.sim.MutatingCalls(), w.status()
	w.sync()
	assert.Equal(w.t, before, w.sim.MutatingCalls(), "%s: a repeated call makes no change", reason)
	assert.Equal(w.t, status, w.status(), "%s: a repeated call gives the same status", reason)
}

func TestDay2EndToEnd(t *testing.T) {
	cases := map[string]struct {
		reason string
		edit   func(*v1alpha1.RdsSpec)
		simOp  string
		op     string // status.operation.type while it runs; "" for changes made at once
		// writeAhead: the first call only records what it will change (status.managedTags, or the
		// tag of a one-shot request).
		writeAhead bool
		check      func(t *testing.T, v otcsim.InstanceView, st *v1alpha1.RdsStatus)
	}{
		"resize": {
			reason: "a new flavorref resizes the instance once",
			edit:   func(s *v1alpha1.RdsSpec) { s.Flavorref = "rds.mysql.n1.xlarge.2" },
			simOp:  otcsim.OpResize, op: reconcile.OpResize,
			check: func(t *testing.T, v otcsim.InstanceView, st *v1alpha1.RdsStatus) {
				assert.Equal(t, "rds.mysql.n1.xlarge.2", v.Flavor)
				assert.Equal(t, "rds.mysql.n1.xlarge.2", st.Flavor)
			},
		},
		"storage growth": {
			reason: "a larger volumesize grows the volume once",
			edit:   func(s *v1alpha1.RdsSpec) { s.Volumesize = 60 },
			simOp:  otcsim.OpEnlargeVolume, op: reconcile.OpStorage,
			check: func(t *testing.T, v otcsim.InstanceView, st *v1alpha1.RdsStatus) {
				assert.Equal(t, 60, v.VolumeSize)
				assert.Equal(t, 60, st.Volume.Size)
			},
		},
		"backup policy": {
			reason: "a new window and retention are written once",
			edit:   func(s *v1alpha1.RdsSpec) { s.Backupstarttime, s.Backupkeepdays = "03:15-04:15", 30 },
			simOp:  otcsim.OpUpdateBackupPolicy,
			check: func(t *testing.T, v otcsim.InstanceView, _ *v1alpha1.RdsStatus) {
				assert.Equal(t, "03:15-04:15", v.BackupStartTime)
				assert.Equal(t, 30, v.BackupKeepDays)
			},
		},
		"tags": {
			reason: "spec.tags are recorded, then set in one call",
			edit: func(s *v1alpha1.RdsSpec) {
				s.Tags = []v1alpha1.Tag{{Key: "team", Value: "a"}, {Key: "env", Value: "prod"}}
			},
			simOp:      otcsim.OpTagsAction,
			writeAhead: true,
			check: func(t *testing.T, v otcsim.InstanceView, st *v1alpha1.RdsStatus) {
				assert.Equal(t, map[string]string{"team": "a", "env": "prod"}, userTags(t, v.Tags))
				assert.Equal(t, []string{"env", "team"}, st.ManagedTags)
			},
		},
		"restart": {
			reason: "a new restartrequest is marked in OTC, then restarts once and is remembered",
			edit:   func(s *v1alpha1.RdsSpec) { s.Restartrequest = "2026-05-01" },
			simOp:  otcsim.OpRestart, op: reconcile.OpRestart,
			writeAhead: true,
			check: func(t *testing.T, v otcsim.InstanceView, st *v1alpha1.RdsStatus) {
				assert.Equal(t, "2026-05-01", st.RestartRequest)
				assert.Equal(t, reconcile.RestartSeal("uid-day2", "2026-05-01"), v.Tags[reconcile.TagRestartRequest], "sealed once status records it")
			},
		},
		"minor upgrade": {
			reason: "8.0.32 asked while 8.0.28 runs is marked in OTC, then upgrades once",
			edit:   func(s *v1alpha1.RdsSpec) { s.Datastoreversion = "8.0.32" },
			simOp:  otcsim.OpUpgradeDbVersion, op: reconcile.OpMinorUpgrade,
			writeAhead: true,
			check: func(t *testing.T, v otcsim.InstanceView, st *v1alpha1.RdsStatus) {
				assert.Equal(t, reconcile.RequestMark("uid-day2", "8.0.32")+"-8.0.28", v.Tags[reconcile.TagUpgradeRequest])
				assert.Equal(t, "8.0.32", v.CompleteVersion)
				assert.Equal(t, "8.0.32", st.Version)
				assert.Equal(t, "8.0.32", st.UpgradeRequest)
			},
		},
		"single to HA": {
			reason: "hamode Ha with the .ha flavor and a second AZ adds a standby once",
			edit: func(s *v1alpha1.RdsSpec) {
				s.Hamode, s.Flavorref, s.Availabilityzone = "Ha", "rds.mysql.n1.large.2.ha", "eu-de-01,eu-de-02"
			},
			simOp: otcsim.OpSingleToHa, op: reconcile.OpSingleToHA,
			check: func(t *testing.T, v otcsim.InstanceView, st *v1alpha1.RdsStatus) {
				assert.Equal(t, "Ha", v.Type)
				assert.Equal(t, "rds.mysql.n1.large.2.ha", v.Flavor)
				assert.Equal(t, []string{"eu-de-01", "eu-de-02"}, v.AvailabilityZones)
				assert.Len(t, st.Nodes, 2)
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := newDay2World(t, nil, nil)
			w.edit(tc.edit)
			if tc.writeAhead {
				w.sync()
				assert.Zero(t, w.sim.Calls(tc.simOp), "recorded first")
			}
			w.sync()
			assert.Equal(t, 1, w.sim.Calls(tc.simOp), "issued at once")
			if tc.op != "" {
				op := w.status().Operation
				require.NotNil(t, op, "the operation shows while it runs")
				assert.Equal(t, tc.op, op.Type)
				assert.Equal(t, int64(2), op.Generation)
				assert.Equal(t, reconcile.ReasonChangeInProgress, w.condition(v1alpha1.ConditionSynced).Reason)
				w.sync()
				assert.NotEqual(t, "ACTIVE", w.status().Status, "OTC reports the change")
				assert.Equal(t, metav1.ConditionFalse, w.condition(v1alpha1.ConditionReady).Status, "Ready follows OTC's status")
				assert.Equal(t, metav1.ConditionTrue, w.condition(v1alpha1.ConditionSynced).Status)
				assert.Equal(t, tc.op, w.status().Operation.Type, "still shown")
			}
			w.settle(8)
			assert.Equal(t, 1, w.sim.Calls(tc.simOp), "%s: exactly once", tc.reason)
			tc.check(t, w.view(), w.statusRef())
			w.requireSettled(tc.reason)
		})
		t.Run(name+"/lost answer", func(t *testing.T) {
			w := newDay2World(t, nil, nil)
			w.sim.AddFault(otcsim.Fault{Op: tc.simOp, Kind: otcsim.FaultCommitThenDrop, Count: 1})
			w.edit(tc.edit)
			if tc.writeAhead {
				w.sync()
			}
			w.sync()
			assert.Equal(t, 1, w.sim.Calls(tc.simOp))
			synced := w.condition(v1alpha1.ConditionSynced)
			assert.Equal(t, reconcile.ReasonCloudUnavailable, synced.Reason, "the lost answer is reported")
			w.settle(8)
			assert.Equal(t, 1, w.sim.Calls(tc.simOp), "%s: OTC acted on the lost request; it is not sent again", tc.reason)
			tc.check(t, w.view(), w.statusRef())
			w.requireSettled(tc.reason)
		})
	}
}

func TestDay2EndToEndSoldOutFlavor(t *testing.T) {
	w := newDay2World(t, func(s *v1alpha1.RdsSpec) { s.Availabilityzone = "eu-de-03" }, nil)
	w.edit(func(s *v1alpha1.RdsSpec) { s.Flavorref = "rds.mysql.n1.2xlarge.4" })
	w.settle(3)
	assert.Equal(t, 0, w.sim.Calls(otcsim.OpResize), "no call for a flavor sold out in the instance's AZ")
	synced := w.condition(v1alpha1.ConditionSynced)
	assert.Equal(t, metav1.ConditionFalse, synced.Status)
	assert.Equal(t, reconcile.ReasonFlavorUnavailable, synced.Reason)
	assert.Equal(t, "The flavor rds.mysql.n1.2xlarge.4 is not available in eu-de-03 (sellout).", synced.Message)
	assert.Equal(t, metav1.ConditionTrue, w.condition(v1alpha1.ConditionReady).Status, "the instance is fine")
	assert.Equal(t, "rds.mysql.n1.large.2", w.view().Flavor)

	// The user picks one that is on sale: it is applied.
	w.edit(func(s *v1alpha1.RdsSpec) { s.Flavorref = "rds.mysql.n1.xlarge.4" })
	w.settle(6)
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpResize))
	assert.Equal(t, "rds.mysql.n1.xlarge.4", w.view().Flavor)
	w.requireSettled("the second flavor is applied")
}

// busyOnce starts a manual backup just before the first resize request leaves: the instance was
// ACTIVE when the hook looked, and is busy when the resize arrives (409 DBS.200019).
type busyOnce struct {
	base  http.RoundTripper
	w     **day2World
	once  sync.Once
	fired bool
}

func (b *busyOnce) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/action") && *b.w != nil {
		b.once.Do(func() {
			w := *b.w
			_, err := w.client.CreateBackup(req.Context(), w.status().ID, "someone-else", "")
			b.fired = err == nil
		})
	}
	return b.base.RoundTrip(req)
}

func TestDay2EndToEndBusy(t *testing.T) {
	var w *day2World
	busy := &busyOnce{w: &w}
	w = newDay2World(t, nil, func(base http.RoundTripper) http.RoundTripper { busy.base = base; return busy })
	w.edit(func(s *v1alpha1.RdsSpec) { s.Flavorref = "rds.mysql.n1.xlarge.2" })

	resp := w.sync()
	require.True(t, busy.fired, "the backup started in between")
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpResize))
	synced := w.condition(v1alpha1.ConditionSynced)
	assert.Equal(t, metav1.ConditionTrue, synced.Status, "busy is no error")
	assert.Equal(t, reconcile.ReasonInstanceBusy, synced.Reason)
	assert.Equal(t, 10.0, resp.ResyncAfterSeconds, "a short resync")
	assert.Nil(t, w.status().Operation, "nothing was started")

	// While the backup runs the hook waits without calling; then the resize goes through once.
	w.sync()
	assert.Equal(t, "BACKING UP", w.status().Status)
	assert.Equal(t, reconcile.ReasonWaitingForInstance, w.condition(v1alpha1.ConditionSynced).Reason)
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpResize), "no call while the backup runs")
	w.settle(8)
	assert.Equal(t, 2, w.sim.Calls(otcsim.OpResize), "one refused, one accepted")
	assert.Equal(t, "rds.mysql.n1.xlarge.2", w.view().Flavor)
	w.requireSettled("the resize after the backup")
}

func TestDay2EndToEndOneChangeAtATime(t *testing.T) {
	w := newDay2World(t, nil, nil)
	w.edit(func(s *v1alpha1.RdsSpec) {
		s.Flavorref, s.Volumesize, s.Backupkeepdays = "rds.mysql.n1.xlarge.2", 60, 14
		s.Tags, s.Restartrequest = []v1alpha1.Tag{{Key: "team", Value: "a"}}, "r1"
	})
	w.sync()
	assert.Equal(t, 1, w.sim.MutatingCalls(), "one change per call")
	w.settle(20)
	for _, op := range []string{otcsim.OpResize, otcsim.OpEnlargeVolume, otcsim.OpUpdateBackupPolicy, otcsim.OpRestart} {
		assert.Equal(t, 1, w.sim.Calls(op), op)
	}
	assert.Equal(t, 3, w.sim.Calls(otcsim.OpTagsAction), "spec.tags, the restart's mark ahead of it and its seal after it")
	v := w.view()
	assert.Equal(t, "rds.mysql.n1.xlarge.2", v.Flavor)
	assert.Equal(t, 60, v.VolumeSize)
	assert.Equal(t, 14, v.BackupKeepDays)
	assert.Equal(t, map[string]string{"team": "a"}, userTags(t, v.Tags))
	w.requireSettled("all changes made, each once")

	// Removing the tag removes it in OTC; a tag someone else set stays.
	require.NoError(t, w.client.SetTags(context.Background(), w.status().ID, map[string]string{"owner": "ops"}))
	w.edit(func(s *v1alpha1.RdsSpec) { s.Tags = nil })
	w.settle(3)
	assert.Equal(t, map[string]string{"owner": "ops"}, userTags(t, w.view().Tags))
	assert.Empty(t, w.status().ManagedTags)
	w.requireSettled("the tag is gone")
}

func TestDay2EndToEndUnavailableInstance(t *testing.T) {
	w := newDay2World(t, nil, nil)
	w.sim.SetInstanceStatus(w.status().ID, "STORAGE FULL")
	w.edit(func(s *v1alpha1.RdsSpec) { s.Flavorref, s.Volumesize = "rds.mysql.n1.xlarge.2", 50 })
	w.sync()
	assert.Equal(t, 0, w.sim.Calls(otcsim.OpResize), "no resize while the storage is full")
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpEnlargeVolume), "growing the storage is the way out")
	w.settle(6)
	assert.Equal(t, 50, w.view().VolumeSize)
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpEnlargeVolume))
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpResize), "the resize follows once the instance is ACTIVE")
	w.requireSettled("both changes made")

	w.sim.SetInstanceStatus(w.status().ID, "FAILED")
	w.edit(func(s *v1alpha1.RdsSpec) { s.Volumesize = 60 })
	w.settle(3)
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpEnlargeVolume), "no change to a FAILED instance")
	synced := w.condition(v1alpha1.ConditionSynced)
	assert.Equal(t, metav1.ConditionFalse, synced.Status)
	assert.Equal(t, reconcile.ReasonInstanceUnavailable, synced.Reason)
	assert.Equal(t, "The instance is FAILED in OTC; the pending storage growth to 60GB waits until it is ACTIVE again.", synced.Message)
}

// userTags are the tags besides the ownership tags, which it requires to be there, and the marks
// of one-shot requests.
func userTags(t *testing.T, tags map[string]string) map[string]string {
	t.Helper()
	out := map[string]string{}
	owners := 0
	for k, v := range tags {
		switch {
		case strings.HasPrefix(k, "rds-owner-"):
			owners++
		case k != reconcile.TagRestartRequest && k != reconcile.TagUpgradeRequest:
			out[k] = v
		}
	}
	require.Equal(t, 4, owners, "the four ownership tags stay: %v", tags)
	return out
}
