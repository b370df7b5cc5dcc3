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

func TestFinalize(t *testing.T) {
	finalName := FinalBackupName(InstanceName("rds1", "my-rds-single"))
	active := func(context.Context, string) (*cloud.Instance, error) { return activeInstance(), nil }
	backups := func(status string) func(context.Context, string) ([]cloud.Backup, error) {
		return func(context.Context, string) ([]cloud.Backup, error) {
			return []cloud.Backup{
				{ID: "auto-1", Name: "auto", Type: "auto", Status: cloud.BackupCompleted},
				{ID: "b-1", Name: finalName, Type: "manual", Status: status},
			}, nil
		}
	}
	noBackups := func(context.Context, string) ([]cloud.Backup, error) {
		return []cloud.Backup{{ID: "auto-1", Name: "auto", Type: "auto", Status: cloud.BackupCompleted}}, nil
	}
	cases := map[string]struct {
		reason        string
		spec          func(*v1alpha1.RdsSpec)
		status        v1alpha1.RdsStatus
		fake          cloudtest.Fake
		wantCalls     []string
		wantFinalized bool
		wantReason    string
	}{
		"retain finalizes at once without a cloud call": {
			reason:        "deletionpolicy Retain leaves the instance alone",
			spec:          func(s *v1alpha1.RdsSpec) { s.Deletionpolicy = v1alpha1.DeletionPolicyRetain },
			status:        v1alpha1.RdsStatus{ID: "inst-1"},
			wantFinalized: true,
			wantReason:    ReasonRetained,
		},
		"first call starts the final backup": {
			reason: "no completed final backup yet: start one and do nothing else",
			status: v1alpha1.RdsStatus{ID: "inst-1"},
			fake: cloudtest.Fake{
				GetInstanceFn: active,
				ListBackupsFn: noBackups,
				CreateBackupFn: func(_ context.Context, id, name, _ string) (*cloud.Backup, error) {
					return &cloud.Backup{ID: "b-1", InstanceID: id, Name: name, Status: cloud.BackupBuilding}, nil
				},
			},
			wantCalls:  []string{"GetInstance", "ListBackups", "CreateBackup"},
			wantReason: ReasonFinalBackup,
		},
		"backup building: wait": {
			reason:     "never delete before the backup completed",
			status:     v1alpha1.RdsStatus{ID: "inst-1"},
			fake:       cloudtest.Fake{GetInstanceFn: active, ListBackupsFn: backups(cloud.BackupBuilding)},
			wantCalls:  []string{"GetInstance", "ListBackups"},
			wantReason: ReasonFinalBackup,
		},
		"backup failed: keep the instance and the object": {
			reason:     "a failed final backup stops the deletion",
			status:     v1alpha1.RdsStatus{ID: "inst-1"},
			fake:       cloudtest.Fake{GetInstanceFn: active, ListBackupsFn: backups(cloud.BackupFailed)},
			wantCalls:  []string{"GetInstance", "ListBackups"},
			wantReason: ReasonFinalBackupFailed,
		},
		"backup completed: delete": {
			reason: "the one change of this call is the delete",
			status: v1alpha1.RdsStatus{ID: "inst-1"},
			fake: cloudtest.Fake{
				GetInstanceFn:    active,
				ListBackupsFn:    backups(cloud.BackupCompleted),
				DeleteInstanceFn: func(context.Context, string) (string, error) { return "job-d", nil },
			},
			wantCalls:  []string{"GetInstance", "ListBackups", "DeleteInstance"},
			wantReason: ReasonDeleting,
		},
		"delete issued: wait until the instance is gone": {
			reason:     "no second delete while OTC still lists the instance",
			status:     v1alpha1.RdsStatus{ID: "inst-1", Operation: &v1alpha1.Operation{Type: OpDelete, JobID: "job-d"}},
			fake:       cloudtest.Fake{GetInstanceFn: active},
			wantCalls:  []string{"GetInstance"},
			wantReason: ReasonDeleting,
		},
		"gone: finalized": {
			reason:        "only a fresh observation of absence releases the object",
			status:        v1alpha1.RdsStatus{ID: "inst-1", Operation: &v1alpha1.Operation{Type: OpDelete}},
			fake:          cloudtest.Fake{GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) { return nil, cloud.ErrNotFound }},
			wantCalls:     []string{"GetInstance"},
			wantFinalized: true,
			wantReason:    ReasonDeleting,
		},
		"never created: finalized after looking by name": {
			reason:        "an object whose create never happened has nothing to clean up",
			fake:          cloudtest.Fake{FindInstanceByNameFn: func(context.Context, string) (*cloud.Instance, error) { return nil, cloud.ErrNotFound }},
			wantCalls:     []string{"FindInstanceByName"},
			wantFinalized: true,
			wantReason:    ReasonDeleting,
		},
		"skipfinalbackup deletes without a backup": {
			reason: "the user chose otherwise",
			spec:   func(s *v1alpha1.RdsSpec) { s.Skipfinalbackup = true },
			status: v1alpha1.RdsStatus{ID: "inst-1"},
			fake: cloudtest.Fake{
				GetInstanceFn:    active,
				DeleteInstanceFn: func(context.Context, string) (string, error) { return "job-d", nil },
			},
			wantCalls:  []string{"GetInstance", "DeleteInstance"},
			wantReason: ReasonDeleting,
		},
		"busy instance: the backup waits": {
			reason: "an automated backup in progress refuses ours; retry later without an error",
			status: v1alpha1.RdsStatus{ID: "inst-1"},
			fake: cloudtest.Fake{
				GetInstanceFn: active,
				ListBackupsFn: noBackups,
				CreateBackupFn: func(context.Context, string, string, string) (*cloud.Backup, error) {
					return nil, &cloud.Error{Kind: cloud.KindBusy, Code: "DBS.201205"}
				},
			},
			wantCalls:  []string{"GetInstance", "ListBackups", "CreateBackup"},
			wantReason: ReasonDeleting,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := sampleSpec()
			if tc.spec != nil {
				tc.spec(&spec)
			}
			f := tc.fake
			req := request(spec, tc.status, storedSecret("A12345678+"))
			req.Finalizing = true
			resp, err := newReconciler(&f).Finalize(context.Background(), req)
			require.NoError(t, err, tc.reason)
			assert.Equal(t, tc.wantCalls, f.Calls(), tc.reason)
			assert.Equal(t, tc.wantFinalized, resp.Finalized, tc.reason)
			assert.Equal(t, tc.wantReason, condition(t, resp.Status, v1alpha1.ConditionReady).Reason, tc.reason)
			assert.Len(t, resp.Children, 1, "the connection Secret stays until the object is gone")
			if !resp.Finalized {
				assert.Positive(t, resp.ResyncAfterSeconds)
			}
		})
	}
}

func TestFinalBackupFailureIsStable(t *testing.T) {
	f := &cloudtest.Fake{
		GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) { return activeInstance(), nil },
		ListBackupsFn: func(context.Context, string) ([]cloud.Backup, error) {
			return []cloud.Backup{{ID: "b-1", Name: FinalBackupName(InstanceName("rds1", "my-rds-single")), Status: cloud.BackupFailed}}, nil
		},
	}
	req := request(sampleSpec(), v1alpha1.RdsStatus{ID: "inst-1"})
	req.Finalizing = true
	r := newReconciler(f)
	first, err := r.Finalize(context.Background(), req)
	require.NoError(t, err)
	req.Parent.Status = *first.Status
	second, err := r.Finalize(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, first, second)
	assert.Equal(t, metav1.ConditionFalse, condition(t, second.Status, v1alpha1.ConditionSynced).Status)
	assert.NotContains(t, f.Calls(), "DeleteInstance")
}

func TestCustomizeAsksForTheReferencedSecret(t *testing.T) {
	spec := sampleSpec()
	spec.Password = ""
	spec.Passwordsecretref = &v1alpha1.SecretKeyRef{Name: "root-pw", Key: "pw"}
	resp := Customize(&hook.CustomizeRequest{Parent: request(spec, v1alpha1.RdsStatus{}).Parent})
	assert.Equal(t, []hook.ResourceRule{{APIVersion: "v1", Resource: "secrets", Namespace: "rds1", Names: []string{"root-pw"}}}, resp.RelatedResources)

	resp = Customize(&hook.CustomizeRequest{Parent: request(sampleSpec(), v1alpha1.RdsStatus{}).Parent})
	assert.Empty(t, resp.RelatedResources)
	assert.NotNil(t, resp.RelatedResources, "an empty list, not null")
}
