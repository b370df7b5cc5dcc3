package reconcile

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/cloudtest"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
)

// TestCloudRefusalIsStableAcrossOTCMessages: OTC may word the same refusal differently on every
// call; the status must not follow, or Metacontroller writes status in a loop.
func TestCloudRefusalIsStableAcrossOTCMessages(t *testing.T) {
	msgs := []string{"Spec does not exist. Request id 1a2b.", "Spec does not exist. Request id 3c4d."}
	var answers []*hook.SyncResponse
	req := request(sampleSpec(), v1alpha1.RdsStatus{}, storedSecret("A12345678+"))
	for _, msg := range msgs {
		f := &cloudtest.Fake{
			FindInstanceByNameFn: func(context.Context, string) (*cloud.Instance, error) { return nil, cloud.ErrNotFound },
			ResolveNetworkFn: func(context.Context, string, string, string) (cloud.Network, error) {
				return cloud.Network{VpcID: "v", SubnetID: "s", SecurityGroupID: "g"}, nil
			},
			CreateInstanceFn: func(context.Context, cloud.CreateInstanceOpts) (string, string, error) {
				return "", "", &cloud.Error{Kind: cloud.KindInvalid, Op: "CreateInstance", Code: "DBS.200053", Sentence: "the flavor does not exist", Message: msg}
			},
		}
		resp, err := newReconciler(f).Sync(context.Background(), req)
		require.NoError(t, err)
		answers = append(answers, resp)
		req = fedBack(t, req, resp)
	}
	assert.Equal(t, answers[0], answers[1], "the same refusal must give the same answer")
	c := condition(t, answers[1].Status, v1alpha1.ConditionSynced)
	assert.Equal(t, ReasonCloudRefused, c.Reason)
	assert.Equal(t, "OTC refused the request: the flavor does not exist (DBS.200053).", c.Message, "the adapter's sentence, not OTC's message")
}

func TestCloudErrorResync(t *testing.T) {
	cases := map[string]struct {
		reason     string
		err        error
		wantReason string
		wantResync float64
	}{
		"refused credentials": {
			reason:     "asking IAM again soon does not fix a refused credential",
			err:        &cloud.Error{Kind: cloud.KindUnauthorized, Code: "IAM.1108"},
			wantReason: ReasonCloudUnauthorized, wantResync: 300,
		},
		"refused request": {
			reason:     "the same request would be refused again",
			err:        &cloud.Error{Kind: cloud.KindInvalid, Code: "DBS.200053"},
			wantReason: ReasonCloudRefused, wantResync: 300,
		},
		"busy": {
			reason:     "the instance will be free soon",
			err:        &cloud.Error{Kind: cloud.KindBusy, Code: "DBS.200019"},
			wantReason: ReasonInstanceBusy, wantResync: 10,
		},
		"no answer": {
			reason:     "OTC may answer the next call",
			err:        &cloud.Error{Kind: cloud.KindUnavailable},
			wantReason: ReasonCloudUnavailable, wantResync: 10,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := &cloudtest.Fake{GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) { return nil, tc.err }}
			resp, err := newReconciler(f).Sync(context.Background(), request(sampleSpec(), v1alpha1.RdsStatus{ID: "inst-1"}))
			require.NoError(t, err, tc.reason)
			assert.Equal(t, tc.wantReason, condition(t, resp.Status, v1alpha1.ConditionSynced).Reason, tc.reason)
			assert.Equal(t, tc.wantResync, resp.ResyncAfterSeconds, tc.reason)
		})
	}
}

func TestWaitingForAPasswordSecretLooksAgainAtTheSteadyPace(t *testing.T) {
	spec := sampleSpec()
	spec.Password = ""
	spec.Passwordsecretref = &v1alpha1.SecretKeyRef{Name: "root-pw"}
	f := &cloudtest.Fake{FindInstanceByNameFn: func(context.Context, string) (*cloud.Instance, error) { return nil, cloud.ErrNotFound }}
	resp, err := newReconciler(f).Sync(context.Background(), request(spec, v1alpha1.RdsStatus{}))
	require.NoError(t, err)
	c := condition(t, resp.Status, v1alpha1.ConditionSynced)
	assert.Equal(t, ReasonWaitingForPasswordSecret, c.Reason)
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Equal(t, 300.0, resp.ResyncAfterSeconds,
		"Metacontroller calls again when the related Secret appears; polling OTC meanwhile is waste")
}

func TestNodeOrderDoesNotChangeStatus(t *testing.T) {
	nodes := []cloud.Node{
		{ID: "n2", Name: "node1", Role: "slave", Status: "ACTIVE", AvailabilityZone: "eu-de-02"},
		{ID: "n1", Name: "node0", Role: "master", Status: "ACTIVE", AvailabilityZone: "eu-de-01"},
		{ID: "n3", Name: "node2", Role: "readreplica", Status: "ACTIVE", AvailabilityZone: "eu-de-03"},
	}
	answer := func(order []int) *hook.SyncResponse {
		f := &cloudtest.Fake{GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) {
			i := activeInstance()
			i.Nodes = nil
			for _, k := range order {
				i.Nodes = append(i.Nodes, nodes[k])
			}
			return i, nil
		}}
		resp, err := newReconciler(f).Sync(context.Background(), request(sampleSpec(), v1alpha1.RdsStatus{ID: "inst-1"}, storedSecret("A12345678+")))
		require.NoError(t, err)
		return resp
	}
	first, second := answer([]int{0, 1, 2}), answer([]int{2, 1, 0})
	assert.Equal(t, first.Status, second.Status, "OTC's node order is not documented as stable")
	var roles []string
	for _, n := range first.Status.Nodes {
		roles = append(roles, n.Role)
	}
	assert.Equal(t, []string{"master", "readreplica", "slave"}, roles, "sorted by role, then name")
}

func TestCloudOutcome(t *testing.T) {
	tests := []struct {
		err       *cloud.Error
		want      outcome
		throttled time.Duration
	}{
		{err: &cloud.Error{Kind: cloud.KindThrottled, RetryAfter: 7 * time.Second}, throttled: 7 * time.Second},
		{err: &cloud.Error{Kind: cloud.KindThrottled}, throttled: 30 * time.Second},
		{err: &cloud.Error{Kind: cloud.KindBusy}, want: syncedOK(ReasonInstanceBusy, "The instance is busy with another operation; the change will be retried.", retry)},
		{err: &cloud.Error{Kind: cloud.KindInvalid}, want: notSynced(ReasonCloudRefused, "OTC refused the request.", waitsForUser)},
		{err: &cloud.Error{Kind: cloud.KindUnauthorized}, want: notSynced(ReasonCloudUnauthorized, "OTC refused the controller's credentials.", waitsForUser)},
		{err: &cloud.Error{Kind: cloud.KindUnavailable}, want: notSynced(ReasonCloudUnavailable, "OTC did not answer as expected; the call will be retried.", retry)},
		{err: &cloud.Error{Kind: cloud.KindUnknown}, want: notSynced(ReasonCloudUnavailable, "OTC did not answer as expected; the call will be retried.", retry)},
	}
	for _, tc := range tests {
		t.Run(tc.err.Kind.String(), func(t *testing.T) {
			got, throttled := cloudOutcome(tc.err)
			if tc.throttled > 0 {
				assert.Equal(t, &ThrottledError{RetryAfter: tc.throttled}, throttled)
				return
			}
			assert.Nil(t, throttled)
			assert.Equal(t, tc.want, got)
		})
	}
}
