package reconcile

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/cloudtest"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
)

// finalizeCase is one finalize call against a Fake.
type finalizeCase struct {
	reason        string
	spec          func(*v1alpha1.RdsSpec)
	status        v1alpha1.RdsStatus
	annotations   map[string]string
	secrets       []*corev1.Secret // observed besides the connection Secret
	noConnection  bool             // the connection Secret is not observed
	fake          cloudtest.Fake
	wantCalls     []string
	wantFinalized bool
	wantReason    string
	wantResync    time.Duration // checked when set
	wantChildren  int           // 1 (the connection Secret) unless set; -1 for none
}

func TestFinalize(t *testing.T) {
	finalName := FinalBackupName(InstanceName("local", "rds1", "my-rds-single"), "inst-1")
	active := func(context.Context, string) (*cloud.Instance, error) { return activeInstance(), nil }
	inState := func(status string) func(context.Context, string) (*cloud.Instance, error) {
		return func(context.Context, string) (*cloud.Instance, error) {
			inst := activeInstance()
			inst.Status = status
			return inst, nil
		}
	}
	deleted := func(context.Context, string) (string, error) { return "job-d", nil }
	none := func(context.Context, string) ([]*cloud.Instance, error) { return nil, nil }
	// noneListed: the project holds no instance whose ownership tags name the object.
	noneListed := func(context.Context) ([]cloud.Instance, error) {
		other := activeInstance()
		other.ID, other.Tags = "inst-9", ownerTags("uid-other")
		return []cloud.Instance{*other}, nil
	}
	released := func(context.Context, string) (*cloud.Instance, error) {
		inst := activeInstance()
		inst.Tags[TagReleasedBy] = "uid-1"
		return inst, nil
	}
	otherOwner := func(context.Context, string) (*cloud.Instance, error) {
		inst := activeInstance()
		inst.ID, inst.Name, inst.Tags = "inst-9", "rds-team-b-db-0123456789abcdef", ownerTags("uid-other")
		return inst, nil
	}
	var setTags map[string]string
	recordTags := func(_ context.Context, _ string, tags map[string]string) error { setTags = tags; return nil }
	retain := func(s *v1alpha1.RdsSpec) { s.Deletionpolicy = v1alpha1.DeletionPolicyRetain }
	generatedRoot := func(s *v1alpha1.RdsSpec) { retain(s); s.Password = "" }
	appSecret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: UserSecretName("my-rds-single", "app", "%"), Namespace: "rds1"},
		Data:       map[string][]byte{KeyPassword: []byte("Generated-1")},
	}
	const pending, steady = 10 * time.Second, 5 * time.Minute
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
	cases := map[string]finalizeCase{
		"retain finalizes once the instance is released": {
			reason:        "deletionpolicy Retain leaves the instance in OTC, released by this object",
			spec:          func(s *v1alpha1.RdsSpec) { s.Deletionpolicy = v1alpha1.DeletionPolicyRetain },
			status:        v1alpha1.RdsStatus{ID: "inst-1"},
			fake:          cloudtest.Fake{GetInstanceFn: released},
			wantCalls:     []string{"GetInstance"},
			wantFinalized: true,
			wantReason:    ReasonRetained,
		},
		"retain releases the instance first": {
			reason:     "one SetTags with the ownership tags and rds-released-by, then look again",
			spec:       func(s *v1alpha1.RdsSpec) { s.Deletionpolicy = v1alpha1.DeletionPolicyRetain },
			status:     v1alpha1.RdsStatus{ID: "inst-1"},
			fake:       cloudtest.Fake{GetInstanceFn: active, Day2: cloudtest.Day2{SetTagsFn: recordTags}},
			wantCalls:  []string{"GetInstance", "SetTags"},
			wantReason: ReasonRetained,
			wantResync: pending,
		},
		"retain of a gone instance finalizes": {
			reason:        "nothing to release",
			spec:          func(s *v1alpha1.RdsSpec) { s.Deletionpolicy = v1alpha1.DeletionPolicyRetain },
			status:        v1alpha1.RdsStatus{ID: "inst-1"},
			fake:          cloudtest.Fake{GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) { return nil, cloud.ErrNotFound }, FindInstancesByNameFn: none, ListInstancesFn: noneListed},
			wantCalls:     []string{"GetInstance", "FindInstancesByName", "FindInstancesByName", "ListInstances"},
			wantFinalized: true,
			wantReason:    ReasonRetained,
		},
		"forged status.id deletes nothing": {
			reason:        "the instance's tags name another object: no backup, no delete; the object's names find none of its own",
			status:        v1alpha1.RdsStatus{ID: "inst-9"},
			fake:          cloudtest.Fake{GetInstanceFn: otherOwner, FindInstancesByNameFn: none, ListInstancesFn: noneListed},
			wantCalls:     []string{"GetInstance", "FindInstancesByName", "FindInstancesByName", "ListInstances"},
			wantFinalized: true,
			wantReason:    ReasonDeleting,
		},
		"forged status.id under retain releases nothing": {
			reason:        "another object's instance is not released either",
			spec:          func(s *v1alpha1.RdsSpec) { s.Deletionpolicy = v1alpha1.DeletionPolicyRetain },
			status:        v1alpha1.RdsStatus{ID: "inst-9"},
			fake:          cloudtest.Fake{GetInstanceFn: otherOwner, FindInstancesByNameFn: none, ListInstancesFn: noneListed},
			wantCalls:     []string{"GetInstance", "FindInstancesByName", "FindInstancesByName", "ListInstances"},
			wantFinalized: true,
			wantReason:    ReasonRetained,
		},
		"forged status.id, the object's instance found by its name": {
			reason: "status.id proves nothing: the object's own instance is backed up before it goes",
			status: v1alpha1.RdsStatus{ID: "inst-9"},
			fake: cloudtest.Fake{
				GetInstanceFn: func(_ context.Context, id string) (*cloud.Instance, error) {
					if id == "inst-9" {
						return otherOwner(nil, id)
					}
					return activeInstance(), nil
				},
				FindInstancesByNameFn: func(_ context.Context, name string) ([]*cloud.Instance, error) {
					if name == InstanceName("local", "rds1", "my-rds-single") {
						return []*cloud.Instance{activeInstance()}, nil
					}
					return nil, nil
				},
				ListBackupsFn: noBackups,
				CreateBackupFn: func(_ context.Context, _, name, _ string) (*cloud.Backup, error) {
					return &cloud.Backup{ID: "b-1", Name: name, Status: cloud.BackupBuilding}, nil
				},
			},
			wantCalls:  []string{"GetInstance", "FindInstancesByName", "FindInstancesByName", "ListBackups", "CreateBackup"},
			wantReason: ReasonFinalBackupInProgress,
			wantResync: pending,
		},
		"released instance is not deleted by a new object": {
			reason: "a retained instance found under status.id of an object with another uid is left alone",
			status: v1alpha1.RdsStatus{ID: "inst-1"},
			fake: cloudtest.Fake{GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) {
				i := activeInstance()
				i.Tags = ownerTags("uid-0")
				i.Tags[TagReleasedBy] = "uid-0"
				return i, nil
			}, FindInstancesByNameFn: none, ListInstancesFn: noneListed},
			wantCalls:     []string{"GetInstance", "FindInstancesByName", "FindInstancesByName", "ListInstances"},
			wantFinalized: true,
			wantReason:    ReasonDeleting,
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
			wantReason: ReasonFinalBackupInProgress,
		},
		"backup building: wait": {
			reason:     "never delete before the backup completed",
			status:     v1alpha1.RdsStatus{ID: "inst-1"},
			fake:       cloudtest.Fake{GetInstanceFn: active, ListBackupsFn: backups(cloud.BackupBuilding)},
			wantCalls:  []string{"GetInstance", "ListBackups"},
			wantReason: ReasonFinalBackupInProgress,
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
			reason:        "only a fresh observation of absence releases the object: by id, then by the object's names",
			status:        v1alpha1.RdsStatus{ID: "inst-1", Operation: &v1alpha1.Operation{Type: OpDelete}},
			fake:          cloudtest.Fake{GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) { return nil, cloud.ErrNotFound }, FindInstancesByNameFn: none, ListInstancesFn: noneListed},
			wantCalls:     []string{"GetInstance", "FindInstancesByName", "FindInstancesByName", "ListInstances"},
			wantFinalized: true,
			wantReason:    ReasonDeleting,
		},
		"never created: finalized after looking by name and tags": {
			reason:        "an object whose create never happened has nothing to clean up; an empty status.id and instanceid prove nothing, so its tags are looked for too",
			fake:          cloudtest.Fake{FindInstanceByNameFn: func(context.Context, string) (*cloud.Instance, error) { return nil, cloud.ErrNotFound }, ListInstancesFn: noneListed},
			wantCalls:     []string{"FindInstancesByName", "FindInstancesByName", "FindInstancesByName", "FindInstancesByName", "ListInstances"},
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
		"retain holds a generated root password": {
			reason:     "the connection Secret holds the only copy and would be garbage-collected with the object",
			spec:       generatedRoot,
			status:     v1alpha1.RdsStatus{ID: "inst-1", PasswordGenerated: true},
			wantReason: ReasonPasswordWouldBeLost,
			wantResync: steady,
		},
		"retain finalizes once the password is saved": {
			reason:        "the annotation acknowledges that the user copied the Secret",
			spec:          generatedRoot,
			annotations:   map[string]string{AnnotationPasswordSaved: "true"},
			status:        v1alpha1.RdsStatus{ID: "inst-1", PasswordGenerated: true},
			fake:          cloudtest.Fake{GetInstanceFn: released},
			wantCalls:     []string{"GetInstance"},
			wantFinalized: true,
			wantReason:    ReasonRetained,
		},
		"retain holds on an annotation other than true": {
			reason:      "only an explicit true acknowledges",
			spec:        generatedRoot,
			annotations: map[string]string{AnnotationPasswordSaved: "later"},
			status:      v1alpha1.RdsStatus{ID: "inst-1", PasswordGenerated: true},
			wantReason:  ReasonPasswordWouldBeLost,
			wantResync:  steady,
		},
		"retain finalizes once passwordsecretref names the root password": {
			reason: "the user keeps the password in a Secret of their own",
			spec: func(s *v1alpha1.RdsSpec) {
				generatedRoot(s)
				s.Passwordsecretref = &v1alpha1.SecretKeyRef{Name: "root-pw"}
			},
			status:        v1alpha1.RdsStatus{ID: "inst-1", PasswordGenerated: true},
			fake:          cloudtest.Fake{GetInstanceFn: released},
			wantCalls:     []string{"GetInstance"},
			wantFinalized: true,
			wantReason:    ReasonRetained,
		},
		"retain finalizes when the generated password is already gone": {
			reason:        "without the connection Secret there is nothing left to save",
			spec:          generatedRoot,
			status:        v1alpha1.RdsStatus{ID: "inst-1", PasswordGenerated: true},
			noConnection:  true,
			fake:          cloudtest.Fake{GetInstanceFn: released},
			wantCalls:     []string{"GetInstance"},
			wantFinalized: true,
			wantReason:    ReasonRetained,
			wantChildren:  -1,
		},
		"retain holds a generated user password": {
			reason: "a user Secret holds the only copy of a generated account password",
			spec: func(s *v1alpha1.RdsSpec) {
				retain(s)
				s.Users = []v1alpha1.User{{Name: "app", Host: "%"}}
			},
			status:       v1alpha1.RdsStatus{ID: "inst-1"},
			secrets:      []*corev1.Secret{appSecret},
			wantReason:   ReasonPasswordWouldBeLost,
			wantResync:   steady,
			wantChildren: 2,
		},
		"retain does not hold a user password from the spec": {
			reason: "the user has the password in the spec",
			spec: func(s *v1alpha1.RdsSpec) {
				retain(s)
				s.Users = []v1alpha1.User{{Name: "app", Host: "%", Password: "A12345678+"}}
			},
			status:        v1alpha1.RdsStatus{ID: "inst-1"},
			secrets:       []*corev1.Secret{appSecret},
			fake:          cloudtest.Fake{GetInstanceFn: released},
			wantCalls:     []string{"GetInstance"},
			wantFinalized: true,
			wantReason:    ReasonRetained,
			wantChildren:  2,
		},
		"name taken by another instance's backup: a stable condition": {
			reason: "409 DBS.201204 for a name this instance's list does not show never resolves by waiting",
			status: v1alpha1.RdsStatus{ID: "inst-1"},
			fake: cloudtest.Fake{
				GetInstanceFn: active,
				ListBackupsFn: noBackups,
				CreateBackupFn: func(context.Context, string, string, string) (*cloud.Backup, error) {
					return nil, &cloud.Error{Kind: cloud.KindConflict, Code: "DBS.201204"}
				},
			},
			wantCalls:  []string{"GetInstance", "ListBackups", "CreateBackup"},
			wantReason: ReasonFinalBackupNameTaken,
			wantResync: steady,
		},
		"status.finalBackup naming a backup of another name is not the final backup": {
			reason: "status vouches for nothing: only the backup under the name the controller gives it counts, so one is started",
			status: v1alpha1.RdsStatus{ID: "inst-1", FinalBackup: &v1alpha1.Backup{ID: "b-old", Name: "rds-old-final", Status: cloud.BackupCompleted}},
			fake: cloudtest.Fake{
				GetInstanceFn: active,
				ListBackupsFn: func(context.Context, string) ([]cloud.Backup, error) {
					return []cloud.Backup{{ID: "b-old", Name: "rds-old-final", Type: "manual", Status: cloud.BackupCompleted}}, nil
				},
				CreateBackupFn: func(_ context.Context, _, name, _ string) (*cloud.Backup, error) {
					return &cloud.Backup{ID: "b-1", Name: name, Status: cloud.BackupBuilding}, nil
				},
			},
			wantCalls:  []string{"GetInstance", "ListBackups", "CreateBackup"},
			wantReason: ReasonFinalBackupInProgress,
			wantResync: pending,
		},
		"status.finalBackup naming an automated backup is not the final backup": {
			reason: "a forged status.finalBackup does not let the instance go without its final backup",
			status: v1alpha1.RdsStatus{ID: "inst-1", FinalBackup: &v1alpha1.Backup{ID: "auto-1", Name: "auto", Status: cloud.BackupCompleted}},
			fake: cloudtest.Fake{
				GetInstanceFn: active,
				ListBackupsFn: noBackups,
				CreateBackupFn: func(_ context.Context, _, name, _ string) (*cloud.Backup, error) {
					return &cloud.Backup{ID: "b-1", Name: name, Status: cloud.BackupBuilding}, nil
				},
			},
			wantCalls:  []string{"GetInstance", "ListBackups", "CreateBackup"},
			wantReason: ReasonFinalBackupInProgress,
			wantResync: pending,
		},
		"transitional instance: the backup waits": {
			reason:     "MODIFYING passes by itself",
			status:     v1alpha1.RdsStatus{ID: "inst-1"},
			fake:       cloudtest.Fake{GetInstanceFn: inState(cloud.StatusModifying), ListBackupsFn: noBackups},
			wantCalls:  []string{"GetInstance", "ListBackups"},
			wantReason: ReasonDeleting,
			wantResync: pending,
		},
		"transitional instance with a completed backup: the delete waits": {
			reason:     "OTC refuses a delete while the instance changes",
			status:     v1alpha1.RdsStatus{ID: "inst-1"},
			fake:       cloudtest.Fake{GetInstanceFn: inState(cloud.StatusRebooting), ListBackupsFn: backups(cloud.BackupCompleted)},
			wantCalls:  []string{"GetInstance", "ListBackups"},
			wantReason: ReasonDeleting,
			wantResync: pending,
		},
		"FAILED with a completed backup: delete": {
			reason: "OTC deletes a FAILED instance",
			status: v1alpha1.RdsStatus{ID: "inst-1"},
			fake: cloudtest.Fake{
				GetInstanceFn: inState(cloud.StatusFailed), ListBackupsFn: backups(cloud.BackupCompleted), DeleteInstanceFn: deleted,
			},
			wantCalls:  []string{"GetInstance", "ListBackups", "DeleteInstance"},
			wantReason: ReasonDeleting,
		},
		"CREATE FAIL deletes without a backup": {
			reason:     "an instance that was never created holds no data",
			status:     v1alpha1.RdsStatus{ID: "inst-1"},
			fake:       cloudtest.Fake{GetInstanceFn: inState(cloud.StatusCreateFail), DeleteInstanceFn: deleted},
			wantCalls:  []string{"GetInstance", "DeleteInstance"},
			wantReason: ReasonDeleting,
		},
	}
	mssqlStopped := func(context.Context, string) (*cloud.Instance, error) {
		inst := activeInstance()
		inst.Status, inst.Engine = cloud.StatusShutdown, v1alpha1.EngineSQLServer
		return inst, nil
	}
	pgStopped := func(context.Context, string) (*cloud.Instance, error) {
		inst := activeInstance()
		inst.Status, inst.Engine = cloud.StatusShutdown, v1alpha1.EnginePostgreSQL
		return inst, nil
	}
	started := func(context.Context, string) (string, error) { return "job-s", nil }
	cases["SHUTDOWN: started for the final backup"] = finalizeCase{
		reason:     "a stopped MySQL instance is started first: OTC backs up only a running instance",
		status:     v1alpha1.RdsStatus{ID: "inst-1"},
		fake:       cloudtest.Fake{GetInstanceFn: inState(cloud.StatusShutdown), SettingsFns: cloudtest.SettingsFns{StartInstanceFn: started}},
		wantCalls:  []string{"GetInstance", "StartInstance"},
		wantReason: ReasonDeleting,
	}
	startJob := func(status string) func(context.Context, string) (*cloud.Job, error) {
		return func(context.Context, string) (*cloud.Job, error) { return &cloud.Job{ID: "job-s", Status: status}, nil }
	}
	startSent := v1alpha1.RdsStatus{ID: "inst-1", Operation: &v1alpha1.Operation{Type: OpStart, JobID: "job-s", Target: cloud.StatusActive}}
	cases["SHUTDOWN: a start in flight is waited for"] = finalizeCase{
		reason:     "the start was sent by an earlier call and its job runs: nothing is sent again while OTC starts it",
		status:     startSent,
		fake:       cloudtest.Fake{GetInstanceFn: inState(cloud.StatusShutdown), GetJobFn: startJob(cloud.JobRunning)},
		wantCalls:  []string{"GetInstance", "GetJob"},
		wantReason: ReasonDeleting,
	}
	cases["SHUTDOWN: a start whose job failed is sent again"] = finalizeCase{
		reason:     "the instance is still stopped and OTC's start ended: the deletion does not wait for ever",
		status:     startSent,
		fake:       cloudtest.Fake{GetInstanceFn: inState(cloud.StatusShutdown), GetJobFn: startJob(cloud.JobFailed), SettingsFns: cloudtest.SettingsFns{StartInstanceFn: started}},
		wantCalls:  []string{"GetInstance", "GetJob", "StartInstance"},
		wantReason: ReasonDeleting,
	}
	cases["SHUTDOWN PostgreSQL with skipfinalbackup: started, then deleted"] = finalizeCase{
		reason:     "OTC does not delete a stopped PostgreSQL instance: it is started first, backup or not",
		spec:       func(s *v1alpha1.RdsSpec) { s.Skipfinalbackup = true },
		status:     v1alpha1.RdsStatus{ID: "inst-1"},
		fake:       cloudtest.Fake{GetInstanceFn: pgStopped, SettingsFns: cloudtest.SettingsFns{StartInstanceFn: started}},
		wantCalls:  []string{"GetInstance", "StartInstance"},
		wantReason: ReasonDeleting,
	}
	cases["SHUTDOWN SQLServer: no backup call, a condition for the user"] = finalizeCase{
		reason:     "OTC starts no SQL Server instance through its API, and cannot back up a stopped one",
		status:     v1alpha1.RdsStatus{ID: "inst-1"},
		fake:       cloudtest.Fake{GetInstanceFn: mssqlStopped, ListBackupsFn: noBackups},
		wantCalls:  []string{"GetInstance", "ListBackups"},
		wantReason: ReasonFinalBackupImpossible,
		wantResync: steady,
	}
	for _, status := range []string{cloud.StatusFailed, cloud.StatusFrozen, cloud.StatusStorageFull} {
		cases[status+": no backup call, a condition for the user"] = finalizeCase{
			reason:     "OTC cannot back up a " + status + " instance and the state does not pass by itself: waiting silently would wait for ever",
			status:     v1alpha1.RdsStatus{ID: "inst-1"},
			fake:       cloudtest.Fake{GetInstanceFn: inState(status), ListBackupsFn: noBackups},
			wantCalls:  []string{"GetInstance", "ListBackups"},
			wantReason: ReasonFinalBackupImpossible,
			wantResync: steady,
		}
	}
	for _, status := range []string{cloud.StatusFailed, cloud.StatusShutdown, cloud.StatusFrozen, cloud.StatusStorageFull} {
		cases[status+" with skipfinalbackup: delete"] = finalizeCase{
			reason:     "the user chose to delete the " + status + " instance without a backup",
			spec:       func(s *v1alpha1.RdsSpec) { s.Skipfinalbackup = true },
			status:     v1alpha1.RdsStatus{ID: "inst-1"},
			fake:       cloudtest.Fake{GetInstanceFn: inState(status), DeleteInstanceFn: deleted},
			wantCalls:  []string{"GetInstance", "DeleteInstance"},
			wantReason: ReasonDeleting,
		}
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := sampleSpec()
			if tc.spec != nil {
				tc.spec(&spec)
			}
			f := tc.fake
			observed := append([]*corev1.Secret{storedSecret("A12345678+")}, tc.secrets...)
			if tc.noConnection {
				observed = tc.secrets
			}
			req := request(spec, tc.status, observed...)
			req.Parent.Annotations = tc.annotations
			req.Finalizing = true
			resp, err := newReconciler(&f).Finalize(context.Background(), req)
			require.NoError(t, err, tc.reason)
			assert.Equal(t, tc.wantCalls, f.Calls(), tc.reason)
			assert.Equal(t, tc.wantFinalized, resp.Finalized, tc.reason)
			assert.Equal(t, tc.wantReason, condition(t, resp.Status, v1alpha1.ConditionReady).Reason, tc.reason)
			wantChildren := tc.wantChildren
			switch wantChildren {
			case 0:
				wantChildren = 1
			case -1:
				wantChildren = 0
			}
			assert.Len(t, resp.Children, wantChildren, "every observed Secret stays until the object is gone")
			if !resp.Finalized {
				assert.Positive(t, resp.ResyncAfterSeconds)
			}
			if tc.wantResync != 0 {
				assert.Equal(t, tc.wantResync.Seconds(), resp.ResyncAfterSeconds, tc.reason)
			}
		})
	}
	want := ownerTags("uid-1")
	want[TagReleasedBy] = "uid-1"
	assert.Equal(t, want, setTags, "the release writes the ownership tags and rds-released-by in one request")
}

func TestFinalBackupFailureIsStable(t *testing.T) {
	f := &cloudtest.Fake{
		GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) { return activeInstance(), nil },
		ListBackupsFn: func(context.Context, string) ([]cloud.Backup, error) {
			return []cloud.Backup{{ID: "b-1", Name: FinalBackupName(InstanceName("local", "rds1", "my-rds-single"), "inst-1"), Status: cloud.BackupFailed}}, nil
		},
	}
	req := request(sampleSpec(), v1alpha1.RdsStatus{ID: "inst-1"})
	req.Finalizing, req.Parent.DeletionTimestamp = true, &metav1.Time{Time: t0}
	r := newReconciler(f)
	first, err := r.Finalize(context.Background(), req)
	require.NoError(t, err)
	second, err := r.Finalize(context.Background(), fedBack(t, req, first))
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

// backupNameRe is OTC's rule for backup names: 4 to 64 characters, a letter first, then letters,
// digits, hyphens and underscores.
var backupNameRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{3,63}$`)

func TestFinalBackupName(t *testing.T) {
	const id1, id2 = "0123456789abcdef0123456789abcdefin01", "fedcba9876543210fedcba9876543210in01"
	short := LegacyInstanceName("rds1", "x")
	// Two long objects whose 64-character instance names differ only in the hash that a cut drops.
	longA := LegacyInstanceName("rds1", strings.Repeat("a", 70)+"1")
	longB := LegacyInstanceName("rds1", strings.Repeat("a", 70)+"2")
	require.Len(t, longA, 64)
	require.NotEqual(t, longA, longB)
	cases := map[string]struct {
		reason   string
		a, b     string
		wantSame bool
	}{
		"deterministic": {
			reason: "every call for the same instance finds the backup an earlier call started",
			a:      FinalBackupName(short, id1), b: FinalBackupName(short, id1), wantSame: true,
		},
		"recreated object": {
			reason: "the same namespace/name created again is a new instance: its final backup must not collide with the one kept from before",
			a:      FinalBackupName(short, id1), b: FinalBackupName(short, id2),
		},
		"long names cut short": {
			reason: "cutting a 64-character instance name drops its hash; the id keeps the backups apart",
			a:      FinalBackupName(longA, id1), b: FinalBackupName(longB, id2),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for _, n := range []string{tc.a, tc.b} {
				assert.Regexp(t, backupNameRe, n, "a valid OTC backup name")
			}
			assert.Equal(t, tc.wantSame, tc.a == tc.b, tc.reason)
		})
	}
	assert.Equal(t, short+"-final-01234567", FinalBackupName(short, id1))
	assert.Equal(t, strings.TrimRight(longA[:49], "-")+"-final-01234567", FinalBackupName(longA, id1))
}

// TestFinalizeHoldsAreStable: every state in which the deletion waits for the user answers the
// same request with the same answer, at the steady pace, with no change in the cloud.
func TestFinalizeHoldsAreStable(t *testing.T) {
	failed := func(context.Context, string) (*cloud.Instance, error) {
		inst := activeInstance()
		inst.Status = cloud.StatusFailed
		return inst, nil
	}
	noBackups := func(context.Context, string) ([]cloud.Backup, error) { return nil, nil }
	cases := map[string]struct {
		reason string
		spec   func(*v1alpha1.RdsSpec)
		status v1alpha1.RdsStatus
		fake   *cloudtest.Fake
	}{
		"password would be lost": {
			reason: "Retain with a generated root password",
			spec: func(s *v1alpha1.RdsSpec) {
				s.Deletionpolicy, s.Password = v1alpha1.DeletionPolicyRetain, ""
			},
			status: v1alpha1.RdsStatus{ID: "inst-1", PasswordGenerated: true},
			fake:   &cloudtest.Fake{},
		},
		"final backup impossible": {
			reason: "a FAILED instance cannot be backed up",
			status: v1alpha1.RdsStatus{ID: "inst-1"},
			fake:   &cloudtest.Fake{GetInstanceFn: failed, ListBackupsFn: noBackups},
		},
		"final backup name taken": {
			reason: "another instance's backup has the name",
			status: v1alpha1.RdsStatus{ID: "inst-1"},
			fake: &cloudtest.Fake{
				GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) { return activeInstance(), nil },
				ListBackupsFn: noBackups,
				CreateBackupFn: func(context.Context, string, string, string) (*cloud.Backup, error) {
					return nil, &cloud.Error{Kind: cloud.KindConflict, Code: "DBS.201204"}
				},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := sampleSpec()
			if tc.spec != nil {
				tc.spec(&spec)
			}
			req := request(spec, tc.status, storedSecret("A12345678+"))
			req.Finalizing, req.Parent.DeletionTimestamp = true, &metav1.Time{Time: t0}
			r := newReconciler(tc.fake)
			first, err := r.Finalize(context.Background(), req)
			require.NoError(t, err, tc.reason)
			second, err := r.Finalize(context.Background(), fedBack(t, req, first))
			require.NoError(t, err, tc.reason)
			assert.Equal(t, first, second, tc.reason)
			assert.False(t, second.Finalized)
			assert.Equal(t, (5 * time.Minute).Seconds(), second.ResyncAfterSeconds)
			assert.Equal(t, metav1.ConditionFalse, condition(t, second.Status, v1alpha1.ConditionSynced).Status)
			assert.NotContains(t, tc.fake.Calls(), "DeleteInstance")
		})
	}
}
