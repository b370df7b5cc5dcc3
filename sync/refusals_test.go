package sync

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/cloudtest"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
)

func TestRefusalNeverShowsOTCText(t *testing.T) {
	cases := map[string]struct {
		reason string
		err    *cloud.Error
		want   string
	}{
		"known code": {
			reason: "a code we know reads as our own sentence, with the code for support",
			err:    &cloud.Error{Kind: cloud.KindInvalid, Code: "DBS.200053", Message: "Spec rds.x does not exist. (request 8f2c)"},
			want:   "OTC refused the request: the flavor does not exist (DBS.200053).",
		},
		"unknown code": {
			reason: "an unknown code shows only the code, never OTC's message",
			err:    &cloud.Error{Kind: cloud.KindInvalid, Code: "DBS.123456", Message: "Something odd happened at 10:41:07."},
			want:   "OTC refused the request (code DBS.123456).",
		},
		"IAM code": {
			reason: "IAM refusals are translated too",
			err:    &cloud.Error{Kind: cloud.KindInvalid, Code: "IAM.0007", Message: "The request body is invalid: duration_seconds"},
			want:   "OTC refused the request: IAM refused the request for temporary credentials (IAM.0007).",
		},
		"adapter's own message": {
			reason: "a codeless error is the adapter's own stable sentence about the spec",
			err:    &cloud.Error{Kind: cloud.KindInvalid, Message: `VPC "frank-test" not found`},
			want:   `OTC refused the request: VPC "frank-test" not found.`,
		},
		"nothing to say": {
			reason: "no code and no message",
			err:    &cloud.Error{Kind: cloud.KindNotFound},
			want:   "OTC refused the request.",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, refusal(tc.err), tc.reason)
		})
	}
}

// TestRefusalsCoverTheDocumentedCodes: every refusal code otc-api.md lists for the calls the hooks
// make has a sentence of its own.
func TestRefusalsCoverTheDocumentedCodes(t *testing.T) {
	for _, code := range []string{
		"DBS.200001", "DBS.200021", "DBS.200025", "DBS.200026", "DBS.200052", "DBS.200053", "DBS.290002",
		"DBS.280450", "DBS.201101", "DBS.201103", "DBS.201106", "DBS.200046", "DBS.200503", "DBS.200501",
		"DBS.200050", "DBS.200002", "DBS.201010", "DBS.212001", "DBS.200022", "DBS.201204", "DBS.200306",
		"DBS.200027", "DBS.200023",
	} {
		assert.Contains(t, refusals, code, "a refusal OTC documents must read as our own sentence")
	}
}

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
				return "", "", &cloud.Error{Kind: cloud.KindInvalid, Op: "CreateInstance", Code: "DBS.200053", Message: msg}
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
	assert.NotContains(t, c.Message, "Request id")
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
