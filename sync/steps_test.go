package reconcile

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/cloudtest"
)

// TestStepsNeverDelayAnEarlierStepsResync: a later step that finds a problem for the user must
// not push the next call out to the steady pace while an earlier step follows a change in flight.
func TestStepsNeverDelayAnEarlierStepsResync(t *testing.T) {
	inst := activeInstance()
	inst.Status = cloud.StatusModifying
	f := &cloudtest.Fake{GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) { return inst, nil }}
	r := New(Config{Cloud: f, Now: newReconciler(f).cfg.Now, JobImage: "img:1"})
	spec := sampleSpec()
	spec.Flavorref = "rds.mysql.c2.large"
	spec.Logs = &v1alpha1.LogsRequest{Request: "r1", Since: "1d"} // invalid: the logs step refuses it
	st := v1alpha1.RdsStatus{ID: "inst-1", Operation: &v1alpha1.Operation{Type: OpResize, Target: "rds.mysql.c2.large", Generation: 1}}
	resp, err := r.Sync(t.Context(), request(spec, st, storedSecret("A12345678+")))
	require.NoError(t, err)
	assert.Equal(t, 10.0, resp.ResyncAfterSeconds, "the resize in flight is followed at the pending pace")
}

// TestAdoptedNameSurvivesACloudError: an adopted instance keeps its own OTC name in status even
// when a call cannot observe it.
func TestAdoptedNameSurvivesACloudError(t *testing.T) {
	f := &cloudtest.Fake{GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) {
		return nil, &cloud.Error{Kind: cloud.KindUnavailable, Op: "GetInstance"}
	}}
	spec := sampleSpec()
	spec.Instanceid = "0123456789abcdef0123456789abcdefin01"
	st := v1alpha1.RdsStatus{ID: spec.Instanceid, Name: "legacy-db", Adopted: true}
	resp, err := newReconciler(f).Sync(t.Context(), request(spec, st, storedSecret("A12345678+")))
	require.NoError(t, err)
	assert.Equal(t, "legacy-db", resp.Status.Name)
}
