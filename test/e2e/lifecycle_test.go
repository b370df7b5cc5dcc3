// Package e2e drives the hooks end to end: Metacontroller's requests over HTTP into the gin server,
// the reconciler, the real OTC adapter and SDK, and the OTC simulator over HTTP on a manual clock.
package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// TestLifecycle is the walking skeleton: the original operator's example object is created,
// becomes Ready with a connection Secret, and is deleted only after a completed final backup.
func TestLifecycle(t *testing.T) {
	w := newWorld(t)
	mc := w.newObject(nil)
	durations := otcsim.DefaultDurations()

	// 1. The password is persisted in the connection Secret before the cloud sees it.
	resp := mc.sync()
	assert.Zero(t, w.sim.MutatingCalls(), "nothing is created before the Secret holding the password is observed")
	require.NotNil(t, mc.secret("my-rds-single-connection"))
	assert.Equal(t, "A12345678+", string(mc.secret("my-rds-single-connection").Data[reconcile.KeyPassword]))
	assert.Equal(t, metav1.ConditionFalse, condition(resp.Status, v1alpha1.ConditionReady).Status)

	// 2. The create is issued once the Secret is observed.
	resp = mc.sync()
	require.Equal(t, 1, w.sim.Calls(otcsim.OpCreateInstance))
	require.NotEmpty(t, resp.Status.ID)
	assert.Equal(t, cloud.StatusBuild, resp.Status.Status)
	assert.Equal(t, reconcile.ReasonCreating, condition(resp.Status, v1alpha1.ConditionReady).Reason)
	assert.Equal(t, float64(10), resp.ResyncAfterSeconds, "a short resync while OTC works")
	instances := w.sim.Instances()
	require.Len(t, instances, 1)
	assert.Equal(t, resp.Status.Name, instances[0].Name, "the deterministic name")

	// 3. The ownership tags are the first change after the create; then, while BUILD, calls only
	// observe.
	mc.sync()
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpTagsAction), "the ownership tags")
	assert.Equal(t, map[string]string{
		reconcile.TagOwnerCluster: "local", reconcile.TagOwnerNamespace: "rds1", reconcile.TagOwnerName: "my-rds-single",
		reconcile.TagOwnerUID: "6a3c7f0e-1d2b-4c5a-9e8f-0123456789ab",
	}, w.sim.Instances()[0].Tags)
	w.clock.Advance(durations.Create / 2)
	resp = mc.sync()
	assert.Equal(t, cloud.StatusBuild, resp.Status.Status)
	assert.Equal(t, 2, w.sim.MutatingCalls())

	// 4. ACTIVE: Ready, the endpoint in status, the connection Secret complete.
	w.clock.Advance(durations.Create)
	resp = mc.sync()
	assert.Equal(t, cloud.StatusActive, resp.Status.Status)
	ready := condition(resp.Status, v1alpha1.ConditionReady)
	require.NotNil(t, ready)
	assert.Equal(t, metav1.ConditionTrue, ready.Status)
	assert.Equal(t, reconcile.ReasonAvailable, ready.Reason)
	assert.Equal(t, metav1.ConditionTrue, condition(resp.Status, v1alpha1.ConditionSynced).Status)
	assert.NotEmpty(t, resp.Status.Endpoint)
	assert.Equal(t, 3306, resp.Status.Port)
	assert.Equal(t, "rds.mysql.c2.medium", resp.Status.Flavor)
	assert.Equal(t, &v1alpha1.Volume{Type: "COMMON", Size: 40}, resp.Status.Volume)
	assert.True(t, strings.HasPrefix(resp.Status.Version, "8.0"), resp.Status.Version)
	require.Len(t, resp.Status.Nodes, 1)
	assert.Equal(t, "eu-de-01", resp.Status.Nodes[0].Availabilityzone)
	assert.Equal(t, float64(300), resp.ResyncAfterSeconds, "a long resync when steady")
	conn := mc.secret("my-rds-single-connection")
	require.NotNil(t, conn)
	assert.Equal(t, resp.Status.IP, string(conn.Data[reconcile.KeyHost]))
	assert.Equal(t, "3306", string(conn.Data[reconcile.KeyPort]))
	assert.Equal(t, "root", string(conn.Data[reconcile.KeyUsername]))
	assert.Equal(t, "A12345678+", string(conn.Data[reconcile.KeyPassword]))
	assert.Contains(t, string(conn.Data[reconcile.KeyDSN]), "tcp("+resp.Status.Endpoint+")")
	assert.NotContains(t, string(mustMarshal(t, resp.Status)), "A12345678+", "no password in status")

	// 5. Steady: the same request twice gives the same answer, to the byte, and no change in the
	// cloud; feeding the answer back changes nothing either.
	w.sim.ResetCounters()
	_, _, first := w.post("/sync", mc.envelope())
	_, _, second := w.post("/sync", mc.envelope())
	assert.JSONEq(t, string(first), string(second))
	a := mc.sync()
	b := mc.sync()
	assert.Equal(t, a, b, "the same observation gives the same answer")
	assert.Zero(t, w.sim.MutatingCalls())
	assert.Equal(t, ready.LastTransitionTime, condition(b.Status, v1alpha1.ConditionReady).LastTransitionTime,
		"a condition keeps its transition time while it holds")

	// 6. Delete: a final backup first.
	resp = mc.finalize()
	assert.False(t, resp.Finalized)
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpCreateBackup))
	assert.Zero(t, w.sim.Calls(otcsim.OpDeleteInstance), "no delete before the final backup completed")
	require.NotNil(t, resp.Status.FinalBackup)
	assert.Equal(t, reconcile.ReasonFinalBackupInProgress, condition(resp.Status, v1alpha1.ConditionReady).Reason)

	resp = mc.finalize()
	assert.False(t, resp.Finalized)
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpCreateBackup), "the running backup is not started again")
	assert.Zero(t, w.sim.Calls(otcsim.OpDeleteInstance))

	// 7. The backup completes: the instance is deleted, and finalized only once it is gone.
	w.clock.Advance(durations.Backup)
	resp = mc.finalize()
	assert.False(t, resp.Finalized)
	assert.Equal(t, cloud.BackupCompleted, resp.Status.FinalBackup.Status)
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpDeleteInstance))
	assert.Equal(t, reconcile.ReasonDeleting, condition(resp.Status, v1alpha1.ConditionReady).Reason)

	w.clock.Advance(durations.Delete)
	resp = mc.finalize()
	assert.True(t, resp.Finalized)
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpDeleteInstance))
	assert.Empty(t, w.sim.Instances())
	var kept bool
	for _, b := range w.sim.Backups() {
		if b.Name == resp.Status.FinalBackup.Name && b.Status == cloud.BackupCompleted {
			kept = true
		}
	}
	assert.True(t, kept, "the final backup outlives the instance")

	assert.NotContains(t, w.logText(), "A12345678+", "no password in the logs")
}

// TestLostCreateResponse: OTC creates the instance but the answer never arrives. The next call
// finds the instance by its deterministic name: exactly one instance.
func TestLostCreateResponse(t *testing.T) {
	w := newWorld(t)
	mc := w.newObject(nil)
	mc.sync() // the Secret
	w.sim.AddFault(otcsim.Fault{Op: otcsim.OpCreateInstance, Kind: otcsim.FaultCommitThenDrop, Count: 1})

	resp := mc.sync()
	require.Len(t, w.sim.Instances(), 1, "OTC committed the create")
	assert.Empty(t, resp.Status.ID, "the answer was lost")
	assert.Equal(t, metav1.ConditionFalse, condition(resp.Status, v1alpha1.ConditionSynced).Status)

	resp = mc.sync()
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpCreateInstance), "no second create")
	assert.Equal(t, w.sim.Instances()[0].ID, resp.Status.ID, "the instance is taken over")

	w.clock.Advance(otcsim.DefaultDurations().Create)
	resp = mc.sync()
	assert.Equal(t, cloud.StatusActive, resp.Status.Status)
	assert.Len(t, w.sim.Instances(), 1)
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpCreateInstance))
}

// TestGeneratedPassword: without a password in spec, one is generated, persisted in the Secret,
// and used for the create only after the Secret was observed; it never changes afterwards.
func TestGeneratedPassword(t *testing.T) {
	w := newWorld(t)
	mc := w.newObject(func(spec map[string]any) { delete(spec, "password") })

	mc.sync()
	assert.Zero(t, w.sim.MutatingCalls())
	stored := string(mc.secret("my-rds-single-connection").Data[reconcile.KeyPassword])
	require.NotEmpty(t, stored)

	resp := mc.sync()
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpCreateInstance))
	assert.True(t, resp.Status.PasswordGenerated)
	w.clock.Advance(otcsim.DefaultDurations().Create)
	mc.sync()
	assert.Equal(t, stored, string(mc.secret("my-rds-single-connection").Data[reconcile.KeyPassword]),
		"the Secret keeps the password the instance was created with")
	assert.NotContains(t, w.logText(), stored)
}

// TestInvalidSpecMakesNoCloudCall: a spec the hook refuses gets a stable condition and OTC never
// hears of it.
func TestInvalidSpecMakesNoCloudCall(t *testing.T) {
	w := newWorld(t)
	mc := w.newObject(func(spec map[string]any) { spec["volumesize"] = 45; spec["datastoretype"] = "Oracle" })
	first := mc.sync()
	second := mc.sync()
	synced := condition(first.Status, v1alpha1.ConditionSynced)
	require.NotNil(t, synced)
	assert.Equal(t, metav1.ConditionFalse, synced.Status)
	assert.Equal(t, reconcile.ReasonInvalidSpec, synced.Reason)
	assert.Contains(t, synced.Message, "volumesize")
	assert.Equal(t, first, second, "the same problem gives the same answer")
	assert.Empty(t, w.sim.CallCounts(), "no call to OTC at all")
}

// TestMalformedRequests: bodies that are not hook requests answer 400 with a one-line reason.
func TestMalformedRequests(t *testing.T) {
	w := newWorld(t)
	for name, body := range map[string]string{
		"not JSON":        `{"parent": `,
		"no parent":       `{"children": {}}`,
		"another kind":    `{"parent": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "y"}}}`,
		"wrong spec type": `{"parent": {"apiVersion": "otc.mcsps.de/v1alpha1", "kind": "Rds", "metadata": {"name": "x", "namespace": "y"}, "spec": {"volumesize": "big"}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			for _, path := range []string{"/sync", "/finalize"} {
				code, _, out := w.post(path, []byte(body))
				assert.Equal(t, http.StatusBadRequest, code, path)
				assert.NotContains(t, strings.TrimSpace(string(out)), "\n")
			}
		})
	}
	assert.Empty(t, w.sim.CallCounts())
}

// TestThrottlingAnswers429: OTC's 429 reaches Metacontroller as a 429 with Retry-After, so that it
// retries after exactly that long without touching status.
func TestThrottlingAnswers429(t *testing.T) {
	w := newWorld(t)
	mc := w.newObject(nil)
	mc.sync()
	w.sim.AddFault(otcsim.Fault{Op: otcsim.OpListInstances, Kind: otcsim.FaultThrottle, RetryAfter: 7e9, Count: 1})
	code, header, _ := w.post("/sync", mc.envelope())
	assert.Equal(t, http.StatusTooManyRequests, code)
	assert.Equal(t, "7", header.Get("Retry-After"))
	resp := mc.sync()
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpCreateInstance), "the next call goes on")
	assert.NotEmpty(t, resp.Status.ID)
}

// TestFinalBackupFailureKeepsTheInstance: a failed final backup stops the deletion with a
// condition; the object stays.
func TestFinalBackupFailureKeepsTheInstance(t *testing.T) {
	w := newWorld(t)
	mc := w.newObject(nil)
	mc.sync()
	resp := mc.sync()
	w.clock.Advance(otcsim.DefaultDurations().Create)
	mc.sync()
	w.sim.FailNextBackup(resp.Status.ID)

	mc.finalize()
	w.clock.Advance(otcsim.DefaultDurations().Backup)
	resp = mc.finalize()
	assert.False(t, resp.Finalized)
	assert.Equal(t, reconcile.ReasonFinalBackupFailed, condition(resp.Status, v1alpha1.ConditionReady).Reason)
	again := mc.finalize()
	assert.False(t, again.Finalized)
	assert.Zero(t, w.sim.Calls(otcsim.OpDeleteInstance), "never deleted without a completed final backup")
	assert.Len(t, w.sim.Instances(), 1)
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpCreateBackup), "a failed backup is not retried behind the user's back")
}

// TestRetainFinalizesAtOnce: deletionpolicy Retain leaves the instance; its one change is the
// release tag, so that no later object takes it over by name.
func TestRetainFinalizesAtOnce(t *testing.T) {
	w := newWorld(t)
	mc := w.newObject(func(spec map[string]any) { spec["deletionpolicy"] = "Retain" })
	mc.sync()
	mc.sync()
	w.clock.Advance(otcsim.DefaultDurations().Create)
	mc.sync()
	w.sim.ResetCounters()
	resp := mc.finalize()
	assert.False(t, resp.Finalized, "released first")
	resp = mc.finalize()
	assert.True(t, resp.Finalized)
	assert.Equal(t, 1, w.sim.MutatingCalls(), "only the release tag")
	require.Len(t, w.sim.Instances(), 1)
	assert.Equal(t, "6a3c7f0e-1d2b-4c5a-9e8f-0123456789ab", w.sim.Instances()[0].Tags[reconcile.TagReleasedBy])
}
