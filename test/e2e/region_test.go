package e2e

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
)

// TestWrongRegionMakesNoCloudCallAndNoChild: a region this controller does not serve is judged
// before any cloud call and before the password Secret is written.
func TestWrongRegionMakesNoCloudCallAndNoChild(t *testing.T) {
	w := newWorld(t)
	mc := w.newObject(func(spec map[string]any) { spec["region"] = "eu-nl" })
	first := mc.sync()
	second := mc.sync()
	synced := condition(first.Status, v1alpha1.ConditionSynced)
	require.NotNil(t, synced)
	assert.Equal(t, metav1.ConditionFalse, synced.Status)
	assert.Equal(t, reconcile.ReasonInvalidSpec, synced.Reason)
	assert.Contains(t, synced.Message, `region "eu-nl"`)
	assert.Empty(t, first.Children, "no new child")
	assert.Equal(t, first, second, "the same problem gives the same answer")
	assert.Empty(t, w.sim.CallCounts(), "no call to OTC at all")
}
