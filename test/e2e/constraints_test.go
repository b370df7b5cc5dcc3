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

// TestRefusalShowsOurSentence: a create OTC refuses reads as our own sentence with OTC's code,
// never OTC's text, and the same refusal seen again gives the same answer.
func TestRefusalShowsOurSentence(t *testing.T) {
	w := newWorld(t)
	mc := w.newObject(func(spec map[string]any) { spec["flavorref"] = "rds.mysql.x9.huge" })
	mc.sync() // stores the password
	first := mc.sync()
	require.Equal(t, 1, w.sim.Calls(otcsim.OpCreateInstance))
	synced := condition(first.Status, v1alpha1.ConditionSynced)
	require.NotNil(t, synced)
	assert.Equal(t, metav1.ConditionFalse, synced.Status)
	assert.Equal(t, reconcile.ReasonCloudRefused, synced.Reason)
	assert.Equal(t, "OTC refused the request: the flavor does not exist (DBS.200053).", synced.Message)
	assert.Equal(t, 300.0, first.ResyncAfterSeconds, "the same request would be refused again")
	assert.Contains(t, w.logText(), "DBS.200053", "the details stay in the log")

	second := mc.sync()
	assert.Equal(t, first, second, "the same refusal gives the same answer")
}

// TestConstraintsAgreeWithOTC: what the hook's validation lets through, the simulator takes, and
// what OTC would refuse never reaches it.
func TestConstraintsAgreeWithOTC(t *testing.T) {
	t.Run("comma in the root password", func(t *testing.T) {
		w := newWorld(t)
		mc := w.newObject(func(spec map[string]any) { spec["password"] = "Abcdef1,x" })
		mc.sync()
		resp := mc.sync()
		assert.Equal(t, 1, w.sim.Calls(otcsim.OpCreateInstance))
		assert.Equal(t, reconcile.ReasonCreating, condition(resp.Status, v1alpha1.ConditionReady).Reason,
			"OTC takes ',' in a MySQL root password")
	})
	t.Run("SQL Server port 5355", func(t *testing.T) {
		w := newWorld(t)
		mc := w.newObject(func(spec map[string]any) {
			spec["datastoretype"], spec["datastoreversion"] = "SQLServer", "2022_SE"
			spec["flavorref"], spec["port"] = "rds.mssql.spec.se.s3.large.2", "5355"
		})
		resp := mc.sync()
		synced := condition(resp.Status, v1alpha1.ConditionSynced)
		require.NotNil(t, synced)
		assert.Equal(t, reconcile.ReasonInvalidSpec, synced.Reason)
		assert.Contains(t, synced.Message, "port 5355")
		assert.Empty(t, w.sim.CallCounts(), "no call to OTC at all")
	})
}
