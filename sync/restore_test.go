package reconcile

import (
	"context"
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

const (
	restoreAt       = "2026-11-22T09:30:00Z"
	restoreAdoptID  = "0123456789abcdef0123456789abcdefin01"
	restoreSourceID = "fedcba9876543210fedcba9876543210in01"
)

// restoreCase is one decision of restore.go, restore_new.go or adopt.go, through Sync.
type restoreCase struct {
	reason    string
	spec      func(*v1alpha1.RdsSpec)
	status    v1alpha1.RdsStatus
	secrets   []*corev1.Secret
	fake      cloudtest.Fake
	wantCalls []string
	check     func(t *testing.T, resp *hook.SyncResponse)
}

func runRestoreCases(t *testing.T, cases map[string]restoreCase) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := sampleSpec()
			if tc.spec != nil {
				tc.spec(&spec)
			}
			f := tc.fake
			resp, err := newReconciler(&f).Sync(context.Background(), request(spec, tc.status, tc.secrets...))
			require.NoError(t, err, tc.reason)
			assert.Equal(t, tc.wantCalls, f.Calls(), tc.reason)
			if tc.check != nil {
				tc.check(t, resp)
			}
		})
	}
}

func restoreTimeSpec(v string) func(*v1alpha1.RdsSpec) {
	return func(s *v1alpha1.RdsSpec) { s.Backuprestoretime = v }
}

func restoreInstance(status string) func(context.Context, string) (*cloud.Instance, error) {
	return func(context.Context, string) (*cloud.Instance, error) {
		i := activeInstance()
		i.Status = status
		return i, nil
	}
}

// restoreRanges answers the restorable periods: the last day up to t0.
func restoreRanges(context.Context, string) ([]cloud.TimeRange, error) {
	return []cloud.TimeRange{{Start: t0.Add(-24 * time.Hour), End: t0}}, nil
}

func restoreHandled(time, result string) *v1alpha1.RestoreStatus {
	return &v1alpha1.RestoreStatus{Time: time, Result: result}
}

func restoreSynced(t *testing.T, resp *hook.SyncResponse) v1alpha1.Condition {
	return condition(t, resp.Status, v1alpha1.ConditionSynced)
}

func TestRestoreInPlace(t *testing.T) {
	stored := []*corev1.Secret{storedSecret("A12345678+")}
	restoreOp := &v1alpha1.Operation{Type: OpRestore, JobID: "job-r", Target: restoreAt}
	runRestoreCases(t, map[string]restoreCase{
		"value seen first is recorded, not restored": {
			reason:    "a backuprestoretime set before the hooks first saw the instance is not a request",
			spec:      restoreTimeSpec(restoreAt),
			status:    v1alpha1.RdsStatus{ID: "inst-1"},
			secrets:   stored,
			fake:      cloudtest.Fake{GetInstanceFn: restoreInstance(cloud.StatusActive)},
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Equal(t, restoreHandled(restoreAt, v1alpha1.RestoreSkipped), resp.Status.Restore)
				assert.Nil(t, resp.Status.Operation)
			},
		},
		"new value within range restores once": {
			reason:  "a changed value, an ACTIVE idle instance and a time in range: exactly one restore",
			spec:    restoreTimeSpec(restoreAt),
			status:  v1alpha1.RdsStatus{ID: "inst-1", Restore: restoreHandled("", v1alpha1.RestoreSkipped)},
			secrets: stored,
			fake: cloudtest.Fake{GetInstanceFn: restoreInstance(cloud.StatusActive), RestoreFns: cloudtest.RestoreFns{
				ListRestoreTimesFn: restoreRanges,
				RestoreInPlaceFn: func(_ context.Context, id string, at time.Time) (string, error) {
					if id != "inst-1" || !at.Equal(t0.Add(-30*time.Minute)) {
						return "", cloud.ErrInvalid
					}
					return "job-r", nil
				},
			}},
			wantCalls: []string{"GetInstance", "ListRestoreTimes", "RestoreInPlace"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				st := resp.Status
				assert.Equal(t, &v1alpha1.RestoreStatus{Time: restoreAt, Result: v1alpha1.RestoreIssued, JobID: "job-r"}, st.Restore)
				assert.Equal(t, &v1alpha1.Operation{Type: OpRestore, JobID: "job-r", Generation: 1, Target: restoreAt}, st.Operation)
				assert.Equal(t, ReasonRestoring, condition(t, st, v1alpha1.ConditionReady).Reason)
				assert.Equal(t, 10.0, resp.ResyncAfterSeconds)
			},
		},
		"handled value is not restored again": {
			reason:    "the same request twice makes no second change",
			spec:      restoreTimeSpec(restoreAt),
			status:    v1alpha1.RdsStatus{ID: "inst-1", Restore: restoreHandled(restoreAt, v1alpha1.RestoreCompleted)},
			secrets:   stored,
			fake:      cloudtest.Fake{GetInstanceFn: restoreInstance(cloud.StatusActive)},
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Equal(t, restoreHandled(restoreAt, v1alpha1.RestoreCompleted), resp.Status.Restore)
				assert.Equal(t, metav1.ConditionTrue, restoreSynced(t, resp).Status)
			},
		},
		"cleared value does nothing": {
			reason:    "removing backuprestoretime is not a request",
			status:    v1alpha1.RdsStatus{ID: "inst-1", Restore: restoreHandled(restoreAt, v1alpha1.RestoreCompleted)},
			secrets:   stored,
			fake:      cloudtest.Fake{GetInstanceFn: restoreInstance(cloud.StatusActive)},
			wantCalls: []string{"GetInstance"},
		},
		"out of range: condition and no restore": {
			reason:  "a time before the oldest backup cannot be restored; OTC is not asked to",
			spec:    restoreTimeSpec("2026-11-01T00:00:00Z"),
			status:  v1alpha1.RdsStatus{ID: "inst-1", Restore: restoreHandled("", v1alpha1.RestoreSkipped)},
			secrets: stored,
			fake: cloudtest.Fake{GetInstanceFn: restoreInstance(cloud.StatusActive), RestoreFns: cloudtest.RestoreFns{
				ListRestoreTimesFn: restoreRanges,
			}},
			wantCalls: []string{"GetInstance", "ListRestoreTimes"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Equal(t, restoreHandled("2026-11-01T00:00:00Z", v1alpha1.RestoreOutOfRange), resp.Status.Restore)
				c := restoreSynced(t, resp)
				assert.Equal(t, metav1.ConditionFalse, c.Status)
				assert.Equal(t, ReasonRestoreTimeOutOfRange, c.Reason)
				assert.Contains(t, c.Message, "backuprestoretime 2026-11-01T00:00:00Z lies outside")
				assert.Nil(t, resp.Status.Operation)
			},
		},
		"future time is out of range": {
			reason:  "OTC's periods end now: a time to come is refused, and never restored later",
			spec:    restoreTimeSpec("2026-12-01T00:00:00Z"),
			status:  v1alpha1.RdsStatus{ID: "inst-1", Restore: restoreHandled("", v1alpha1.RestoreSkipped)},
			secrets: stored,
			fake: cloudtest.Fake{GetInstanceFn: restoreInstance(cloud.StatusActive), RestoreFns: cloudtest.RestoreFns{
				ListRestoreTimesFn: restoreRanges,
			}},
			wantCalls: []string{"GetInstance", "ListRestoreTimes"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Equal(t, v1alpha1.RestoreOutOfRange, resp.Status.Restore.Result)
			},
		},
		"out of range is remembered": {
			reason:    "the refusal is stated again from status, without asking OTC, in the same words",
			spec:      restoreTimeSpec("2026-11-01T00:00:00Z"),
			status:    v1alpha1.RdsStatus{ID: "inst-1", Restore: restoreHandled("2026-11-01T00:00:00Z", v1alpha1.RestoreOutOfRange)},
			secrets:   stored,
			fake:      cloudtest.Fake{GetInstanceFn: restoreInstance(cloud.StatusActive)},
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Equal(t, ReasonRestoreTimeOutOfRange, restoreSynced(t, resp).Reason)
				assert.Contains(t, restoreSynced(t, resp).Message, "backuprestoretime 2026-11-01T00:00:00Z lies outside")
			},
		},
		"unparseable time is an invalid spec": {
			reason:    "bad input gets InvalidSpec and no cloud call at all",
			spec:      restoreTimeSpec("yesterday"),
			status:    v1alpha1.RdsStatus{ID: "inst-1", Restore: restoreHandled("", v1alpha1.RestoreSkipped)},
			secrets:   stored,
			wantCalls: nil,
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Equal(t, ReasonInvalidSpec, restoreSynced(t, resp).Reason)
				assert.Contains(t, restoreSynced(t, resp).Message, `backuprestoretime "yesterday" is not an RFC3339 time`)
				assert.Equal(t, restoreHandled("", v1alpha1.RestoreSkipped), resp.Status.Restore)
			},
		},
		"busy instance: the restore waits": {
			reason:    "only an ACTIVE instance takes a restore",
			spec:      restoreTimeSpec(restoreAt),
			status:    v1alpha1.RdsStatus{ID: "inst-1", Restore: restoreHandled("", v1alpha1.RestoreSkipped)},
			secrets:   stored,
			fake:      cloudtest.Fake{GetInstanceFn: restoreInstance(cloud.StatusBackingUp)},
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Equal(t, restoreHandled("", v1alpha1.RestoreSkipped), resp.Status.Restore, "not handled yet")
				assert.Equal(t, ReasonRestoreWaiting, restoreSynced(t, resp).Reason)
				assert.Equal(t, 10.0, resp.ResyncAfterSeconds)
			},
		},
		"operation in flight: the restore waits": {
			reason:    "no restore while another change runs",
			spec:      restoreTimeSpec(restoreAt),
			status:    v1alpha1.RdsStatus{ID: "inst-1", Restore: restoreHandled("", v1alpha1.RestoreSkipped), Operation: &v1alpha1.Operation{Type: "Resize"}},
			secrets:   stored,
			fake:      cloudtest.Fake{GetInstanceFn: restoreInstance(cloud.StatusModifying)},
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Equal(t, "Resize", resp.Status.Operation.Type)
				assert.Equal(t, ReasonRestoreWaiting, restoreSynced(t, resp).Reason)
			},
		},
		"lost answer is recorded as issued": {
			reason:  "OTC may have restored: never send the same restore twice",
			spec:    restoreTimeSpec(restoreAt),
			status:  v1alpha1.RdsStatus{ID: "inst-1", Restore: restoreHandled("", v1alpha1.RestoreSkipped)},
			secrets: stored,
			fake: cloudtest.Fake{GetInstanceFn: restoreInstance(cloud.StatusActive), RestoreFns: cloudtest.RestoreFns{
				ListRestoreTimesFn: restoreRanges,
				RestoreInPlaceFn: func(context.Context, string, time.Time) (string, error) {
					return "", &cloud.Error{Kind: cloud.KindUnavailable, Op: "RestoreInPlace", Message: "connection closed before the answer"}
				},
			}},
			wantCalls: []string{"GetInstance", "ListRestoreTimes", "RestoreInPlace"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Equal(t, restoreHandled(restoreAt, v1alpha1.RestoreIssued), resp.Status.Restore)
				assert.Equal(t, OpRestore, resp.Status.Operation.Type)
				assert.Empty(t, resp.Status.Operation.JobID)
			},
		},
		"busy answer is retried later": {
			reason:  "OTC answered that it did nothing: the request stays open",
			spec:    restoreTimeSpec(restoreAt),
			status:  v1alpha1.RdsStatus{ID: "inst-1", Restore: restoreHandled("", v1alpha1.RestoreSkipped)},
			secrets: stored,
			fake: cloudtest.Fake{GetInstanceFn: restoreInstance(cloud.StatusActive), RestoreFns: cloudtest.RestoreFns{
				ListRestoreTimesFn: restoreRanges,
				RestoreInPlaceFn: func(context.Context, string, time.Time) (string, error) {
					return "", &cloud.Error{Kind: cloud.KindBusy, Code: "DBS.200019"}
				},
			}},
			wantCalls: []string{"GetInstance", "ListRestoreTimes", "RestoreInPlace"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Equal(t, restoreHandled("", v1alpha1.RestoreSkipped), resp.Status.Restore)
				assert.Nil(t, resp.Status.Operation)
				assert.Equal(t, ReasonInstanceBusy, restoreSynced(t, resp).Reason)
			},
		},
		"refusal is remembered": {
			reason:  "OTC refused the content: the same request would be refused again",
			spec:    restoreTimeSpec(restoreAt),
			status:  v1alpha1.RdsStatus{ID: "inst-1", Restore: restoreHandled("", v1alpha1.RestoreSkipped)},
			secrets: stored,
			fake: cloudtest.Fake{GetInstanceFn: restoreInstance(cloud.StatusActive), RestoreFns: cloudtest.RestoreFns{
				ListRestoreTimesFn: restoreRanges,
				RestoreInPlaceFn: func(context.Context, string, time.Time) (string, error) {
					return "", &cloud.Error{Kind: cloud.KindInvalid, Code: "DBS.200001", Message: "Parameter error."}
				},
			}},
			wantCalls: []string{"GetInstance", "ListRestoreTimes", "RestoreInPlace"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Equal(t, restoreHandled(restoreAt, v1alpha1.RestoreRefused), resp.Status.Restore)
				assert.Equal(t, ReasonRestoreRefused, restoreSynced(t, resp).Reason)
			},
		},
		"PostgreSQL cannot restore in place": {
			reason: "OTC restores PostgreSQL only into another instance: say so, send nothing",
			spec: func(s *v1alpha1.RdsSpec) {
				s.Datastoretype, s.Datastoreversion, s.Flavorref, s.Port = "PostgreSQL", "16", "rds.pg.n1.large.2", nil
				s.Backuprestoretime = restoreAt
			},
			status:  v1alpha1.RdsStatus{ID: "inst-1", Restore: restoreHandled("", v1alpha1.RestoreSkipped)},
			secrets: stored,
			fake: cloudtest.Fake{GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) {
				i := activeInstance()
				postgresInstance("16", "rds.pg.n1.large.2")(i)
				return i, nil
			}},
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Equal(t, restoreHandled(restoreAt, v1alpha1.RestoreRefused), resp.Status.Restore)
				assert.Contains(t, restoreSynced(t, resp).Message, "restorefrom")
			},
		},
		"restore running: the call stops": {
			reason:    "while OTC shows RESTORING nothing else is done",
			spec:      restoreTimeSpec(restoreAt),
			status:    v1alpha1.RdsStatus{ID: "inst-1", Restore: restoreHandled(restoreAt, v1alpha1.RestoreIssued), Operation: restoreOp},
			secrets:   stored,
			fake:      cloudtest.Fake{GetInstanceFn: restoreInstance(cloud.StatusRestoring)},
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Equal(t, restoreOp, resp.Status.Operation)
				assert.Equal(t, "Restoring", condition(t, resp.Status, v1alpha1.ConditionReady).Reason)
				assert.Equal(t, 10.0, resp.ResyncAfterSeconds)
			},
		},
		"ACTIVE but the job still runs": {
			reason:  "OTC may list ACTIVE before RESTORING: the job decides",
			spec:    restoreTimeSpec(restoreAt),
			status:  v1alpha1.RdsStatus{ID: "inst-1", Restore: restoreHandled(restoreAt, v1alpha1.RestoreIssued), Operation: restoreOp},
			secrets: stored,
			fake: cloudtest.Fake{GetInstanceFn: restoreInstance(cloud.StatusActive), GetJobFn: func(context.Context, string) (*cloud.Job, error) {
				return &cloud.Job{ID: "job-r", Status: cloud.JobRunning}, nil
			}},
			wantCalls: []string{"GetInstance", "GetJob"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Equal(t, restoreOp, resp.Status.Operation)
				assert.Equal(t, ReasonRestoring, condition(t, resp.Status, v1alpha1.ConditionReady).Reason)
			},
		},
		"job completed": {
			reason:  "the restore is over: record it and go on",
			spec:    restoreTimeSpec(restoreAt),
			status:  v1alpha1.RdsStatus{ID: "inst-1", Restore: restoreHandled(restoreAt, v1alpha1.RestoreIssued), Operation: restoreOp},
			secrets: stored,
			fake: cloudtest.Fake{GetInstanceFn: restoreInstance(cloud.StatusActive), GetJobFn: func(context.Context, string) (*cloud.Job, error) {
				return &cloud.Job{ID: "job-r", Status: cloud.JobCompleted}, nil
			}},
			wantCalls: []string{"GetInstance", "GetJob"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Nil(t, resp.Status.Operation)
				assert.Equal(t, restoreHandled(restoreAt, v1alpha1.RestoreCompleted), resp.Status.Restore)
				assert.Equal(t, metav1.ConditionTrue, condition(t, resp.Status, v1alpha1.ConditionReady).Status)
				assert.Equal(t, metav1.ConditionTrue, restoreSynced(t, resp).Status)
			},
		},
		"job failed": {
			reason:  "a failed restore is reported, not retried",
			spec:    restoreTimeSpec(restoreAt),
			status:  v1alpha1.RdsStatus{ID: "inst-1", Restore: restoreHandled(restoreAt, v1alpha1.RestoreIssued), Operation: restoreOp},
			secrets: stored,
			fake: cloudtest.Fake{GetInstanceFn: restoreInstance(cloud.StatusActive), GetJobFn: func(context.Context, string) (*cloud.Job, error) {
				return &cloud.Job{ID: "job-r", Status: cloud.JobFailed}, nil
			}},
			wantCalls: []string{"GetInstance", "GetJob"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Nil(t, resp.Status.Operation)
				assert.Equal(t, restoreHandled(restoreAt, v1alpha1.RestoreFailed), resp.Status.Restore)
				assert.Equal(t, ReasonRestoreFailed, restoreSynced(t, resp).Reason)
			},
		},
		"MODIFYING after the job completed is not a restore": {
			reason:  "a repeat of the call that saw the restore end and issued a resize: the job, not the busy status, says the restore is over",
			spec:    restoreTimeSpec(restoreAt),
			status:  v1alpha1.RdsStatus{ID: "inst-1", Restore: restoreHandled(restoreAt, v1alpha1.RestoreIssued), Operation: restoreOp},
			secrets: stored,
			fake: cloudtest.Fake{GetInstanceFn: restoreInstance(cloud.StatusModifying), GetJobFn: func(context.Context, string) (*cloud.Job, error) {
				return &cloud.Job{ID: "job-r", Status: cloud.JobCompleted}, nil
			}},
			wantCalls: []string{"GetInstance", "GetJob"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Nil(t, resp.Status.Operation, "the restore is over")
				assert.Equal(t, restoreHandled(restoreAt, v1alpha1.RestoreCompleted), resp.Status.Restore)
				assert.NotContains(t, restoreSynced(t, resp).Message, "restored")
				assert.NotEqual(t, ReasonRestoring, condition(t, resp.Status, v1alpha1.ConditionReady).Reason)
				assert.Equal(t, 10.0, resp.ResyncAfterSeconds, "the instance is busy")
			},
		},
		"lost answer, instance busy": {
			reason:    "no job to ask: a busy instance is taken as restoring",
			spec:      restoreTimeSpec(restoreAt),
			status:    v1alpha1.RdsStatus{ID: "inst-1", Restore: restoreHandled(restoreAt, v1alpha1.RestoreIssued), Operation: &v1alpha1.Operation{Type: OpRestore, Target: restoreAt}},
			secrets:   stored,
			fake:      cloudtest.Fake{GetInstanceFn: restoreInstance(cloud.StatusModifying)},
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Equal(t, OpRestore, resp.Status.Operation.Type)
				assert.Contains(t, restoreSynced(t, resp).Message, "being restored")
			},
		},
		"lost answer, instance ACTIVE again": {
			reason:    "no job to ask: the result stays Issued and nothing is sent",
			spec:      restoreTimeSpec(restoreAt),
			status:    v1alpha1.RdsStatus{ID: "inst-1", Restore: restoreHandled(restoreAt, v1alpha1.RestoreIssued), Operation: &v1alpha1.Operation{Type: OpRestore, Target: restoreAt}},
			secrets:   stored,
			fake:      cloudtest.Fake{GetInstanceFn: restoreInstance(cloud.StatusActive)},
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Nil(t, resp.Status.Operation)
				assert.Equal(t, restoreHandled(restoreAt, v1alpha1.RestoreIssued), resp.Status.Restore)
			},
		},
	})
}

func TestRestoreToNew(t *testing.T) {
	stored := []*corev1.Secret{storedSecret("A12345678+")}
	ourName := InstanceName("local", "rds1", "my-rds-single")
	source := func() *cloud.Instance {
		i := activeInstance()
		i.ID, i.Name = restoreSourceID, "source-db"
		return i
	}
	byName := func(_ context.Context, name string) (*cloud.Instance, error) {
		if name == "source-db" {
			return source(), nil
		}
		return nil, cloud.ErrNotFound
	}
	byID := func(_ context.Context, id string) (*cloud.Instance, error) {
		if id == restoreSourceID {
			return source(), nil
		}
		return nil, cloud.ErrNotFound
	}
	network := func(context.Context, string, string, string) (cloud.Network, error) {
		return cloud.Network{VpcID: "vpc-1", SubnetID: "sub-1", SecurityGroupID: "sg-1"}, nil
	}
	backups := func(status string) func(context.Context, string) ([]cloud.Backup, error) {
		return func(_ context.Context, id string) ([]cloud.Backup, error) {
			return []cloud.Backup{{ID: "backup-1", InstanceID: id, Status: status}}, nil
		}
	}
	fromBackup := func(s *v1alpha1.RdsSpec) {
		s.Restorefrom = &v1alpha1.RestoreFrom{Instance: restoreSourceID, Backupid: "backup-1"}
	}
	fromTime := func(s *v1alpha1.RdsSpec) {
		s.Restorefrom = &v1alpha1.RestoreFrom{Instance: "source-db", Restoretime: restoreAt}
	}
	var got cloud.RestoreToNewOpts
	restored := func(_ context.Context, o cloud.RestoreToNewOpts) (string, string, error) {
		got = o
		return "inst-new", "job-new", nil
	}
	runRestoreCases(t, map[string]restoreCase{
		"password first, source later": {
			reason:    "the password is persisted before anything else, as for a create",
			spec:      fromBackup,
			fake:      cloudtest.Fake{FindInstanceByNameFn: byName},
			wantCalls: []string{"FindInstancesByName", "FindInstancesByName"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Equal(t, ReasonCreating, condition(t, resp.Status, v1alpha1.ConditionReady).Reason)
				assert.Empty(t, resp.Status.ID)
			},
		},
		"from a backup: one restore instead of a create": {
			reason:  "a completed backup of the source: exactly one RestoreToNew, never CreateInstance",
			spec:    restoreBoth(fromBackup, restoreTimeSpec(restoreAt)),
			secrets: stored,
			fake: cloudtest.Fake{FindInstanceByNameFn: byName, GetInstanceFn: byID, ListBackupsFn: backups(cloud.BackupCompleted),
				ResolveNetworkFn: network, RestoreFns: cloudtest.RestoreFns{RestoreToNewFn: restored}},
			wantCalls: []string{"FindInstancesByName", "FindInstancesByName", "GetInstance", "ListBackups", "ResolveNetwork", "RestoreToNew"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				st := resp.Status
				assert.Equal(t, "inst-new", st.ID)
				assert.Equal(t, &v1alpha1.Operation{Type: OpRestoreToNew, JobID: "job-new", Generation: 1, Target: "backup backup-1 of " + restoreSourceID}, st.Operation)
				assert.Equal(t, cloud.RestorePoint{InstanceID: restoreSourceID, BackupID: "backup-1"}, got.From)
				assert.Equal(t, ourName, got.Name, "the deterministic name, found again after a lost answer")
				assert.Equal(t, "A12345678+", got.Password.Reveal())
				assert.Equal(t, "vpc-1", got.VpcID)
				assert.Equal(t, restoreHandled(restoreAt, v1alpha1.RestoreSkipped), st.Restore, "backuprestoretime set at creation is not a request")
			},
		},
		"from a point in time, source by name": {
			reason:  "a time within the source's periods",
			spec:    fromTime,
			secrets: stored,
			fake: cloudtest.Fake{FindInstanceByNameFn: byName, ResolveNetworkFn: network,
				RestoreFns: cloudtest.RestoreFns{ListRestoreTimesFn: restoreRanges, RestoreToNewFn: restored}},
			wantCalls: []string{"FindInstancesByName", "FindInstancesByName", "FindInstancesByName", "ListRestoreTimes", "ResolveNetwork", "RestoreToNew"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Equal(t, cloud.RestorePoint{InstanceID: restoreSourceID, Time: t0.Add(-30 * time.Minute)}, got.From)
				assert.Equal(t, restoreSourceID+" at "+restoreAt, resp.Status.Operation.Target)
			},
		},
		"source missing": {
			reason:    "nothing is created from a source that does not exist; with the controller's credentials it is refused like another namespace's, which tells no tenant what exists",
			spec:      func(s *v1alpha1.RdsSpec) { s.Restorefrom = &v1alpha1.RestoreFrom{Instance: "nowhere", Backupid: "b-1"} },
			secrets:   stored,
			fake:      cloudtest.Fake{FindInstanceByNameFn: byName},
			wantCalls: []string{"FindInstancesByName", "FindInstancesByName", "FindInstancesByName"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Equal(t, ReasonRestoreSourceRefused, restoreSynced(t, resp).Reason)
				assert.Equal(t, `The source instance in restorefrom is refused: no instance of an Rds object of this namespace has that id or name, and only such an instance can be restored from with the controller's credentials.`, restoreSynced(t, resp).Message)
				assert.Empty(t, resp.Status.ID)
			},
		},
		"source of another engine": {
			reason:  "OTC keeps the source's engine: a PostgreSQL source cannot make this MySQL instance",
			spec:    fromBackup,
			secrets: stored,
			fake: cloudtest.Fake{FindInstanceByNameFn: byName, GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) {
				i := source()
				i.Engine, i.Version = "PostgreSQL", "16"
				return i, nil
			}},
			wantCalls: []string{"FindInstancesByName", "FindInstancesByName", "GetInstance"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Equal(t, ReasonRestoreSourceInvalid, restoreSynced(t, resp).Reason)
				assert.Contains(t, restoreSynced(t, resp).Message, "it runs PostgreSQL, the spec asks for MySQL.")
			},
		},
		"source of another major version": {
			reason:  "5.7 data does not make an 8.0 instance",
			spec:    fromBackup,
			secrets: stored,
			fake: cloudtest.Fake{FindInstanceByNameFn: byName, GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) {
				i := source()
				i.Version = "5.7"
				return i, nil
			}},
			wantCalls: []string{"FindInstancesByName", "FindInstancesByName", "GetInstance"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Contains(t, restoreSynced(t, resp).Message, "it runs version 5.7")
			},
		},
		"backup still building": {
			reason:    "only a completed backup restores",
			spec:      fromBackup,
			secrets:   stored,
			fake:      cloudtest.Fake{FindInstanceByNameFn: byName, GetInstanceFn: byID, ListBackupsFn: backups(cloud.BackupBuilding)},
			wantCalls: []string{"FindInstancesByName", "FindInstancesByName", "GetInstance", "ListBackups"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Equal(t, "The backup backup-1 in restorefrom is BUILDING, not COMPLETED.", restoreSynced(t, resp).Message)
			},
		},
		"backup of another instance": {
			reason: "the backup must belong to the source",
			spec: func(s *v1alpha1.RdsSpec) {
				s.Restorefrom = &v1alpha1.RestoreFrom{Instance: restoreSourceID, Backupid: "other"}
			},
			secrets:   stored,
			fake:      cloudtest.Fake{FindInstanceByNameFn: byName, GetInstanceFn: byID, ListBackupsFn: backups(cloud.BackupCompleted)},
			wantCalls: []string{"FindInstancesByName", "FindInstancesByName", "GetInstance", "ListBackups"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Contains(t, restoreSynced(t, resp).Message, "is not a backup of instance "+restoreSourceID)
			},
		},
		"time out of range": {
			reason: "checked against the source's periods before anything is created",
			spec: func(s *v1alpha1.RdsSpec) {
				s.Restorefrom = &v1alpha1.RestoreFrom{Instance: "source-db", Restoretime: "2026-01-01T00:00:00Z"}
			},
			secrets:   stored,
			fake:      cloudtest.Fake{FindInstanceByNameFn: byName, RestoreFns: cloudtest.RestoreFns{ListRestoreTimesFn: restoreRanges}},
			wantCalls: []string{"FindInstancesByName", "FindInstancesByName", "FindInstancesByName", "ListRestoreTimes"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Equal(t, ReasonRestoreTimeOutOfRange, restoreSynced(t, resp).Reason)
				assert.Empty(t, resp.Status.ID)
			},
		},
		"volume smaller than the source's": {
			reason:  "OTC needs at least the source's storage",
			spec:    func(s *v1alpha1.RdsSpec) { fromTime(s); s.Volumesize = 40 },
			secrets: stored,
			fake: cloudtest.Fake{FindInstanceByNameFn: func(ctx context.Context, name string) (*cloud.Instance, error) {
				i, err := byName(ctx, name)
				if i != nil {
					i.Volume.Size = 100
				}
				return i, err
			}},
			wantCalls: []string{"FindInstancesByName", "FindInstancesByName", "FindInstancesByName"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Contains(t, restoreSynced(t, resp).Message, "volumesize 40 is smaller than its 100 GB.")
			},
		},
		"restored instance found by name is not restored again": {
			reason:  "a lost RestoreToNew answer: the deterministic name finds the instance",
			spec:    fromBackup,
			secrets: stored,
			fake: cloudtest.Fake{FindInstanceByNameFn: func(_ context.Context, name string) (*cloud.Instance, error) {
				i := activeInstance()
				i.Status = cloud.StatusBuild
				return i, nil
			}},
			wantCalls: []string{"FindInstancesByName", "FindInstancesByName"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Equal(t, "inst-1", resp.Status.ID)
				assert.Equal(t, restoreHandled("", v1alpha1.RestoreSkipped), resp.Status.Restore)
			},
		},
		"restorefrom with both a backup and a time": {
			reason: "an invalid restorefrom makes no call",
			spec: func(s *v1alpha1.RdsSpec) {
				s.Restorefrom = &v1alpha1.RestoreFrom{Instance: restoreSourceID, Backupid: "b-1", Restoretime: restoreAt}
			},
			wantCalls: nil,
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Equal(t, ReasonInvalidSpec, restoreSynced(t, resp).Reason)
				assert.Contains(t, restoreSynced(t, resp).Message, "restorefrom needs exactly one of backupid and restoretime.")
			},
		},
	})
}

func TestAdoption(t *testing.T) {
	adopted := func(_ context.Context, id string) (*cloud.Instance, error) {
		if id != restoreAdoptID {
			return nil, cloud.ErrNotFound
		}
		i := activeInstance()
		i.ID, i.Name, i.Region = restoreAdoptID, "legacy-db", "eu-de"
		return i, nil
	}
	adopt := func(s *v1alpha1.RdsSpec) { s.Instanceid = restoreAdoptID }
	runRestoreCases(t, map[string]restoreCase{
		"matching instance is adopted without a create": {
			reason:    "adoption looks the instance up by id and changes nothing in OTC",
			spec:      restoreBoth(adopt, restoreTimeSpec(restoreAt)),
			fake:      cloudtest.Fake{GetInstanceFn: adopted},
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				st := resp.Status
				assert.Equal(t, restoreAdoptID, st.ID)
				assert.True(t, st.Adopted)
				assert.Equal(t, "legacy-db", st.Name, "the adopted instance's own name")
				assert.False(t, st.PasswordGenerated)
				assert.Equal(t, restoreHandled(restoreAt, v1alpha1.RestoreSkipped), st.Restore, "no restore of a just adopted instance")
				assert.Equal(t, metav1.ConditionTrue, condition(t, st, v1alpha1.ConditionReady).Status)
				s := secretChild(t, resp.Children)
				assert.Equal(t, "A12345678+", string(s.Data[KeyPassword]), "the password the user gave")
				assert.Equal(t, "192.168.0.10", string(s.Data[KeyHost]))
			},
		},
		"adopted instance is observed by its id": {
			reason:    "after adoption the object follows the instance like one it created",
			spec:      adopt,
			status:    v1alpha1.RdsStatus{ID: restoreAdoptID, Adopted: true, Restore: restoreHandled("", v1alpha1.RestoreSkipped)},
			secrets:   []*corev1.Secret{storedSecret("A12345678+")},
			fake:      cloudtest.Fake{GetInstanceFn: adopted},
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.True(t, resp.Status.Adopted)
				assert.Equal(t, metav1.ConditionTrue, restoreSynced(t, resp).Status)
			},
		},
		"unknown password is said, not invented": {
			reason:    "no password given: no connection Secret, a condition that says what to do",
			spec:      func(s *v1alpha1.RdsSpec) { adopt(s); s.Password = "" },
			fake:      cloudtest.Fake{GetInstanceFn: adopted},
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Equal(t, restoreAdoptID, resp.Status.ID)
				assert.False(t, resp.Status.PasswordGenerated)
				assert.Equal(t, ReasonPasswordUnknown, restoreSynced(t, resp).Reason)
				assert.Empty(t, resp.Children, "no Secret with a made-up password")
			},
		},
		"missing instance: nothing is created": {
			reason:    "an id that does not exist is reported; creating something instead would surprise",
			spec:      func(s *v1alpha1.RdsSpec) { s.Instanceid = restoreSourceID },
			fake:      cloudtest.Fake{GetInstanceFn: adopted},
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Empty(t, resp.Status.ID)
				assert.Equal(t, ReasonAdoptionRefused, restoreSynced(t, resp).Reason)
				assert.NotContains(t, restoreSynced(t, resp).Message, restoreSourceID, "no instance is named")
				assert.Empty(t, resp.Children)
			},
		},
		"engine mismatch is not adopted": {
			reason: "an instance of another engine is not what the spec describes",
			spec:   adopt,
			fake: cloudtest.Fake{GetInstanceFn: func(ctx context.Context, id string) (*cloud.Instance, error) {
				i, _ := adopted(ctx, id)
				i.Engine, i.Version = "PostgreSQL", "16"
				return i, nil
			}},
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Empty(t, resp.Status.ID, "not taken over: a later delete must not touch it")
				c := restoreSynced(t, resp)
				assert.Equal(t, ReasonAdoptionMismatch, c.Reason)
				assert.Equal(t, "The OTC instance "+restoreAdoptID+" does not match the spec, so it is not adopted: it runs PostgreSQL, the spec asks for MySQL.", c.Message)
				assert.Equal(t, ReasonAdoptionMismatch, condition(t, resp.Status, v1alpha1.ConditionReady).Reason)
			},
		},
		"region and HA mismatch is not adopted": {
			reason: "another region or HA mode is not what the spec describes",
			spec:   adopt,
			fake: cloudtest.Fake{GetInstanceFn: func(ctx context.Context, id string) (*cloud.Instance, error) {
				i, _ := adopted(ctx, id)
				i.Region, i.Type = "eu-nl", "Ha"
				return i, nil
			}},
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Empty(t, resp.Status.ID)
				assert.Contains(t, restoreSynced(t, resp).Message, "it is in region eu-nl, the spec asks for eu-de. it is of type Ha, the spec's hamode asks for Single.")
			},
		},
		"instanceid cannot move to another instance": {
			reason:    "an object manages one instance for its life",
			spec:      adopt,
			status:    v1alpha1.RdsStatus{ID: restoreSourceID, Adopted: true},
			wantCalls: nil,
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Equal(t, ReasonInvalidSpec, restoreSynced(t, resp).Reason)
				assert.Equal(t, restoreSourceID, resp.Status.ID)
			},
		},
		"malformed instanceid": {
			reason:    "adoption takes an OTC id",
			spec:      func(s *v1alpha1.RdsSpec) { s.Instanceid = "legacy-db" },
			wantCalls: nil,
			check: func(t *testing.T, resp *hook.SyncResponse) {
				assert.Contains(t, restoreSynced(t, resp).Message, `instanceid "legacy-db" is not an OTC instance id`)
			},
		},
	})
}

func TestFinalizeAdoption(t *testing.T) {
	cases := map[string]struct {
		reason    string
		spec      func(*v1alpha1.RdsSpec)
		status    v1alpha1.RdsStatus
		fake      cloudtest.Fake
		wantCalls []string
	}{
		"adopted and Retain: handed back untouched": {
			reason: "deletionpolicy Retain only looks: the instance is released already",
			spec: func(s *v1alpha1.RdsSpec) {
				s.Instanceid, s.Deletionpolicy = restoreAdoptID, v1alpha1.DeletionPolicyRetain
			},
			status: v1alpha1.RdsStatus{ID: restoreAdoptID, Adopted: true},
			fake: cloudtest.Fake{GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) {
				in := activeInstance()
				in.ID, in.Name = restoreAdoptID, "legacy-db"
				in.Tags[TagReleasedBy] = "uid-1"
				return in, nil
			}},
			wantCalls: []string{"GetInstance"},
		},
		"never adopted: nothing to delete": {
			reason: "a mismatched instance was never taken over (no tags name the object), so deleting the object must not touch it",
			spec:   func(s *v1alpha1.RdsSpec) { s.Instanceid = restoreAdoptID },
			fake: cloudtest.Fake{GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) {
				in := activeInstance()
				in.ID, in.Name, in.Tags = restoreAdoptID, "legacy-db", nil
				return in, nil
			}, FindInstancesByNameFn: func(context.Context, string) ([]*cloud.Instance, error) { return nil, nil },
				ListInstancesFn: func(context.Context) ([]cloud.Instance, error) { return nil, nil }},
			wantCalls: []string{"FindInstancesByName", "FindInstancesByName", "GetInstance", "ListInstances"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := sampleSpec()
			tc.spec(&spec)
			f := &tc.fake
			resp, err := newReconciler(f).Finalize(context.Background(), request(spec, tc.status))
			require.NoError(t, err)
			assert.True(t, resp.Finalized, tc.reason)
			assert.Equal(t, tc.wantCalls, f.Calls(), tc.reason)
		})
	}
}

func TestRestoreProblems(t *testing.T) {
	cases := map[string]struct {
		reason string
		spec   func(*v1alpha1.RdsSpec)
		want   []string
	}{
		"none":   {reason: "no restore, no adoption", spec: func(*v1alpha1.RdsSpec) {}},
		"backup": {reason: "a source and a backup", spec: func(s *v1alpha1.RdsSpec) { s.Restorefrom = &v1alpha1.RestoreFrom{Instance: "src-1", Backupid: "b-1"} }},
		"time": {reason: "a source and a time", spec: func(s *v1alpha1.RdsSpec) {
			s.Restorefrom = &v1alpha1.RestoreFrom{Instance: restoreSourceID, Restoretime: restoreAt}
		}},
		"adopt": {reason: "an OTC id", spec: func(s *v1alpha1.RdsSpec) { s.Instanceid = restoreAdoptID }},
		"wildcard source": {reason: "a wildcard would list many instances", spec: func(s *v1alpha1.RdsSpec) { s.Restorefrom = &v1alpha1.RestoreFrom{Instance: "*db", Backupid: "b-1"} },
			want: []string{`restorefrom.instance "*db" is not an OTC instance id or name.`}},
		"neither": {reason: "a point is needed", spec: func(s *v1alpha1.RdsSpec) { s.Restorefrom = &v1alpha1.RestoreFrom{Instance: "src-1"} },
			want: []string{"restorefrom needs exactly one of backupid and restoretime."}},
		"bad time": {reason: "RFC3339 only", spec: func(s *v1alpha1.RdsSpec) {
			s.Restorefrom = &v1alpha1.RestoreFrom{Instance: "src-1", Restoretime: "2026-11-22"}
		},
			want: []string{`restorefrom.restoretime "2026-11-22" is not an RFC3339 time such as 2026-11-22T10:00:00Z.`}},
		"bad backup id": {reason: "no spaces or wildcards", spec: func(s *v1alpha1.RdsSpec) { s.Restorefrom = &v1alpha1.RestoreFrom{Instance: "src-1", Backupid: "a b"} },
			want: []string{`restorefrom.backupid "a b" is not a backup id.`}},
		"adopt and restore": {reason: "one or the other", spec: func(s *v1alpha1.RdsSpec) {
			s.Instanceid = restoreAdoptID
			s.Restorefrom = &v1alpha1.RestoreFrom{Instance: "src-1", Backupid: "b-1"}
		}, want: []string{"restorefrom and instanceid are both set: a new instance is restored or an existing one adopted, not both."}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := sampleSpec()
			tc.spec(&spec)
			assert.Equal(t, tc.want, Validate(&spec), tc.reason)
		})
	}
}

func restoreBoth(changes ...func(*v1alpha1.RdsSpec)) func(*v1alpha1.RdsSpec) {
	return func(s *v1alpha1.RdsSpec) {
		for _, c := range changes {
			c(s)
		}
	}
}

// TestRestoreRefusalIsStable: a refusal stated again on every call must not change the status
// (Synced is set True before the steps and False again by the restore step within one call).
func TestRestoreRefusalIsStable(t *testing.T) {
	f := &cloudtest.Fake{GetInstanceFn: restoreInstance(cloud.StatusActive), RestoreFns: cloudtest.RestoreFns{ListRestoreTimesFn: restoreRanges}}
	r := newReconciler(f)
	spec := sampleSpec()
	spec.Backuprestoretime = "2026-11-01T00:00:00Z"
	req := request(spec, v1alpha1.RdsStatus{ID: "inst-1", Restore: restoreHandled("", v1alpha1.RestoreSkipped)}, storedSecret("A12345678+"))
	first, err := r.Sync(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, ReasonRestoreTimeOutOfRange, restoreSynced(t, first).Reason)
	for i := 1; i <= 2; i++ {
		r.cfg.Now = func() time.Time { return t0.Add(time.Duration(i) * time.Minute) }
		next, err := r.Sync(context.Background(), fedBack(t, req, first))
		require.NoError(t, err)
		assert.Equal(t, first, next, "call %d: the same observation gives the same answer", i+1)
	}
	assert.Equal(t, []string{"GetInstance", "ListRestoreTimes", "GetInstance", "GetInstance"}, f.Calls())
}
