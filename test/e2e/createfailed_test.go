package e2e

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
)

// TestRefusedCreateSaysCreateFailed: once OTC refuses the create (a flavor it does not sell, a VPC
// that does not exist), Ready says CreateFailed and Synced says why in our own sentence, on that
// call and on every later one, until the spec changes; a fixed spec then creates the instance.
func TestRefusedCreateSaysCreateFailed(t *testing.T) {
	for name, tc := range map[string]struct {
		bad, fix func(spec map[string]any)
		want     string
	}{
		"unknown flavor": {
			bad:  func(spec map[string]any) { spec["flavorref"] = "rds.mysql.n1.huge.2" },
			fix:  func(spec map[string]any) { spec["flavorref"] = "rds.mysql.n1.large.2" },
			want: "OTC refused the request: the flavor does not exist (DBS.200053).",
		},
		"vpc not found": {
			bad:  func(spec map[string]any) { spec["vpc"] = "no-such-vpc" },
			fix:  func(spec map[string]any) { spec["vpc"] = otcsim.SeedVPCName },
			want: "no-such-vpc",
		},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			mc := w.newObject(tc.bad)
			first := mc.sync() // the connection Secret
			assert.Equal(t, "Storing the root password in the connection Secret before creating the instance.",
				condition(first.Status, v1alpha1.ConditionReady).Message)

			refused := mc.sync()
			ready, synced := condition(refused.Status, v1alpha1.ConditionReady), condition(refused.Status, v1alpha1.ConditionSynced)
			require.NotNil(t, ready)
			require.NotNil(t, synced)
			assert.Equal(t, metav1.ConditionFalse, ready.Status)
			assert.Equal(t, reconcile.ReasonCreateFailed, ready.Reason)
			assert.Equal(t, "OTC refused to create the instance; see the Synced condition.", ready.Message)
			assert.Equal(t, metav1.ConditionFalse, synced.Status)
			assert.Equal(t, reconcile.ReasonCloudRefused, synced.Reason)
			assert.Contains(t, synced.Message, tc.want)
			assert.NotContains(t, synced.Message, "http", "no raw OTC text")
			assert.Empty(t, w.sim.Instances())

			// Later calls for the same spec say the same, also after a transient error.
			w.sim.AddFault(otcsim.Fault{Op: otcsim.OpListInstances, Kind: otcsim.FaultStatus, Status: 503, Count: 1})
			transient := mc.sync()
			assert.Equal(t, reconcile.ReasonCreateFailed, condition(transient.Status, v1alpha1.ConditionReady).Reason)
			assert.Equal(t, reconcile.ReasonCloudUnavailable, condition(transient.Status, v1alpha1.ConditionSynced).Reason)
			again := mc.sync()
			assert.Equal(t, refused.Status.Conditions, again.Status.Conditions, "a stable status: no sync loop")

			// A changed spec is tried again and created.
			mc.editSpec(tc.fix)
			created := mc.sync()
			assert.Equal(t, reconcile.ReasonCreating, condition(created.Status, v1alpha1.ConditionReady).Reason)
			assert.Equal(t, "The instance is being created.", condition(created.Status, v1alpha1.ConditionReady).Message)
			assert.Equal(t, metav1.ConditionTrue, condition(created.Status, v1alpha1.ConditionSynced).Status)
			assert.Len(t, w.sim.Instances(), 1)
		})
	}
}

// TestChangedSpecForgetsCreateFailed: a refused create is not reported for a spec that was never
// sent to OTC.
func TestChangedSpecForgetsCreateFailed(t *testing.T) {
	w := newWorld(t)
	mc := w.newObject(func(spec map[string]any) { spec["flavorref"] = "rds.mysql.n1.huge.2" })
	mc.sync()
	require.Equal(t, reconcile.ReasonCreateFailed, condition(mc.sync().Status, v1alpha1.ConditionReady).Reason)

	// The new spec names a password Secret that does not exist yet: the create waits for it.
	mc.editSpec(func(spec map[string]any) {
		spec["flavorref"] = "rds.mysql.n1.large.2"
		delete(spec, "password")
		spec["passwordsecretref"] = map[string]any{"name": "not-there-yet"}
	})
	resp := mc.sync()
	assert.Equal(t, reconcile.ReasonCreating, condition(resp.Status, v1alpha1.ConditionReady).Reason)
	assert.Equal(t, reconcile.ReasonWaitingForPasswordSecret, condition(resp.Status, v1alpha1.ConditionSynced).Reason)
}

// editSpec changes the spec as a user would: the API server raises the generation.
func (m *metacontroller) editSpec(edit func(spec map[string]any)) { m.obj.Edit(edit) }
