package reconcile_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/test/metacontroller"
	"github.com/mcsps/rds-lambda-controller/test/testutil"
)

// TestPortChangeOTCDoesNotMakeIsNotALoop (review #19 A): a port change whose job ends without OTC
// showing the port (the simulator's real servers keep their own; OTC's job failed) is one change,
// told, asked again at the next steady look: not a new UpdatePort at every pending resync, each a
// MODIFYING DATABASE PORT of the instance, for ever.
func TestPortChangeOTCDoesNotMakeIsNotALoop(t *testing.T) {
	clock := otcsim.NewManualClock(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))
	srv := otcsim.NewServer(otcsim.Options{Clock: clock, Endpoints: map[string]string{"*": "127.0.0.1:3399"}})
	t.Cleanup(srv.Close)
	client := testutil.Login(t, srv, nil)
	w := &day2World{t: t, clock: clock, srv: srv, sim: srv.Sim, client: client,
		r: reconcile.New(reconcile.Config{Cloud: client, Now: clock.Now, CallTimeout: 5 * time.Second})}
	obj := v1alpha1.Rds{}
	obj.Name, obj.Namespace, obj.UID, obj.Generation = "shop", "team-a", "uid-port", 1
	obj.Spec = v1alpha1.RdsSpec{
		Datastoretype: "MySQL", Datastoreversion: "8.0", Flavorref: "rds.mysql.n1.large.2",
		Volumetype: "CLOUDSSD", Volumesize: 40, Availabilityzone: "eu-de-01", Region: "eu-de",
		Vpc: otcsim.SeedVPCName, Subnet: otcsim.SeedSubnetName, Securitygroup: otcsim.SeedSecurityGroupName,
		Backupstarttime: "01:00-02:00", Backupkeepdays: 7, Password: "Sim-Passw0rd!",
	}
	w.mc = metacontroller.NewRds(obj)
	w.sync()
	w.sync()
	clock.Advance(otcsim.DefaultDurations().Create)
	w.settle(3)
	require.Equal(t, "ACTIVE", w.status().Status)
	require.Equal(t, 3399, w.status().Port, "the real server's port")
	srv.Sim.ResetCounters()

	w.edit(func(s *v1alpha1.RdsSpec) { s.Port = ptr.To(intstr.FromInt32(3307)) })
	// Metacontroller calls again when the answer asks: each pending look follows a few seconds
	// after the last, the steady look after minutes.
	start, calls := clock.Now(), 0
	for ; clock.Now().Sub(start) < 10*time.Minute && calls < 200; calls++ {
		resp := w.sync()
		clock.Advance(time.Duration(resp.ResyncAfterSeconds * float64(time.Second)))
	}
	changes := w.sim.Calls(otcsim.OpUpdatePort)
	t.Logf("%d calls, %d port changes in 10 minutes", calls, changes)
	assert.LessOrEqual(t, changes, 3, "a port change per steady look at most, not one per pending look")
	synced := w.condition(v1alpha1.ConditionSynced)
	assert.Contains(t, []string{reconcile.ReasonChangeFailed, reconcile.ReasonChangeInProgress}, synced.Reason, synced.Message)
}

// TestSSLSwitchFollowsItsJob (review #19 A): OTC answers an SSL switch with a job id (the SDK v0.9.8
// reads no body); status.operation records it, so that a call whose listing does not show the
// switch yet (ACTIVE, enable_ssl as before) follows the job instead of ending the operation and
// switching again: a second switch, a second restart of the database.
func TestSSLSwitchFollowsItsJob(t *testing.T) {
	w := newDay2World(t, nil, nil)
	w.edit(func(s *v1alpha1.RdsSpec) { s.Ssl = ptr.To(true) })
	w.sync()
	require.Equal(t, 1, w.sim.Calls(otcsim.OpSwitchSSL))
	op := w.status().Operation
	require.NotNil(t, op)
	assert.Equal(t, reconcile.OpSSL, op.Type)
	assert.NotEmpty(t, op.JobID, "OTC's job of the switch")
}
