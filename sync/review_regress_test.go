package reconcile

// Regression tests from the review of the observe-decide-act refactor (#11): each pins the
// behaviour before it, which the refactor had changed.

import (
	"context"
	mrand "math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/cloudtest"
)

type rvClouds struct{ c cloud.Cloud }

func (r rvClouds) For(context.Context, *cloud.Credentials) (cloud.Cloud, error) { return r.c, nil }

// A deletion whose namespace login Secret is gone waits with the pending resync.
func TestFinalizeWaitingForCredentialsLooksAgainSoon(t *testing.T) {
	f := &cloudtest.Fake{}
	r := New(Config{Cloud: f, Clouds: rvClouds{f}, Now: func() time.Time { return t0 }, Random: mrand.NewChaCha8([32]byte{7})})
	st := v1alpha1.RdsStatus{ID: "inst-1", Status: cloud.StatusActive, CredentialsSecret: "team-otc",
		Operation: &v1alpha1.Operation{Type: OpBackup, Generation: 1, Target: "final"}}
	req := request(sampleSpec(), st, storedSecret("A12345678+"))
	now := metav1.NewTime(t0)
	req.Parent.DeletionTimestamp = &now
	resp, err := r.Finalize(context.Background(), req)
	require.NoError(t, err)
	assert.False(t, resp.Finalized)
	assert.Equal(t, ReasonWaitingForCredentials, condition(t, resp.Status, v1alpha1.ConditionSynced).Reason)
	assert.Empty(t, f.Calls())
	assert.Equal(t, 10.0, resp.ResyncAfterSeconds, "a deletion that waits for its login looks again at the pending resync")
}

// Autopilot grows the volume of a STORAGE FULL instance while a spec change waits (here a
// restartrequest), and OTC refuses the growth (quota): Synced says so, not the day-2 step's
// earlier finding ("Grow volumesize to free it").
func TestAutopilotGrowthRefusedInStorageFullShows(t *testing.T) {
	inst := activeInstance()
	inst.Status = cloud.StatusStorageFull
	f := &cloudtest.Fake{
		GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) { c := *inst; return &c, nil },
	}
	f.EnlargeVolumeFn = func(context.Context, string, int) (string, error) {
		return "", &cloud.Error{Kind: cloud.KindInvalid, Op: "EnlargeVolume", Message: "quota"}
	}
	spec := sampleSpec()
	spec.Autopilot = true
	spec.Restartrequest = "r1"
	resp, err := newReconciler(f).Sync(context.Background(), request(spec, v1alpha1.RdsStatus{ID: "inst-1", Restore: &v1alpha1.RestoreStatus{Result: v1alpha1.RestoreSkipped}}, storedSecret("A12345678+")))
	require.NoError(t, err)
	assert.Contains(t, f.Calls(), "EnlargeVolume")
	synced := condition(t, resp.Status, v1alpha1.ConditionSynced)
	assert.Equal(t, ReasonCloudRefused, synced.Reason, "OTC's refusal of autopilot's growth, the call's change, is shown")
}

// A restore record that stays refused (backuprestoretime out of range, handled once) does not hide
// a day-2 change OTC refuses on every call (here a resize).
func TestRestoreRecordDoesNotHideARefusedChange(t *testing.T) {
	inst := activeInstance()
	f := &cloudtest.Fake{
		GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) { c := *inst; return &c, nil },
		ListFlavorsFn: func(context.Context, string, string) ([]cloud.Flavor, error) {
			return []cloud.Flavor{{SpecCode: "rds.mysql.c2.large", VCPUs: "4", RAMGB: 8, Mode: "single", AZStatus: map[string]string{"eu-de-01": "normal"}}}, nil
		},
	}
	f.ResizeFlavorFn = func(context.Context, string, string) (string, error) {
		return "", &cloud.Error{Kind: cloud.KindInvalid, Op: "ResizeFlavor", Message: "quota"}
	}
	spec := sampleSpec()
	spec.Flavorref = "rds.mysql.c2.large"
	spec.Backuprestoretime = "2026-11-01T09:00:00Z"
	st := v1alpha1.RdsStatus{ID: "inst-1", Restore: &v1alpha1.RestoreStatus{Time: spec.Backuprestoretime, Result: v1alpha1.RestoreOutOfRange}}
	resp, err := newReconciler(f).Sync(context.Background(), request(spec, st, storedSecret("A12345678+")))
	require.NoError(t, err)
	assert.Contains(t, f.Calls(), "ResizeFlavor")
	synced := condition(t, resp.Status, v1alpha1.ConditionSynced)
	assert.Equal(t, ReasonCloudRefused, synced.Reason, "OTC's refusal of the resize, the call's change, is shown")
}

// A call whose flavor list read fails still writes status.managedTags (and a one-shot record
// planDay2 found): the write-ahead of spec.tags' keys does not wait for a later call.
func TestManagedTagsRecordedWhenFlavorReadFails(t *testing.T) {
	inst := activeInstance()
	f := &cloudtest.Fake{
		GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) { c := *inst; return &c, nil },
		ListFlavorsFn: func(context.Context, string, string) ([]cloud.Flavor, error) {
			return nil, &cloud.Error{Kind: cloud.KindUnavailable, Op: "ListFlavors", Message: "no answer"}
		},
	}
	spec := sampleSpec()
	spec.Flavorref = "rds.mysql.c2.large"
	spec.Tags = []v1alpha1.Tag{{Key: "team", Value: "a"}}
	resp, err := newReconciler(f).Sync(context.Background(), request(spec, v1alpha1.RdsStatus{ID: "inst-1", Restore: &v1alpha1.RestoreStatus{Result: v1alpha1.RestoreSkipped}}, storedSecret("A12345678+")))
	require.NoError(t, err)
	assert.Equal(t, []string{"team"}, resp.Status.ManagedTags, "the key is recorded ahead although the flavor read failed")
}

// An instance of this object whose tags need a change (claimInstance) while its generated root
// password's Secret is gone (PasswordSecretMissing): the password problem shows, not the tag write.
func TestTagWriteDoesNotHideAPasswordProblem(t *testing.T) {
	inst := activeInstance()
	delete(inst.Tags, TagReleasedBy)
	inst.Tags[TagReleasedBy] = "someone" // Ours, but with an earlier owner's release tag: DeleteTags
	f := &cloudtest.Fake{
		GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) { c := *inst; return &c, nil },
	}
	f.DeleteTagsFn = func(context.Context, string, []string) error { return nil }
	spec := sampleSpec()
	spec.Password = "" // generated
	st := v1alpha1.RdsStatus{ID: "inst-1", PasswordGenerated: true, Restore: &v1alpha1.RestoreStatus{Result: v1alpha1.RestoreSkipped}}
	resp, err := newReconciler(f).Sync(context.Background(), request(spec, st)) // no connection Secret observed
	require.NoError(t, err)
	synced := condition(t, resp.Status, v1alpha1.ConditionSynced)
	assert.Equal(t, ReasonPasswordSecretMissing, synced.Reason, "the password problem stays reported, as with adoption")
}

// The same while OTC answers the tag write with "busy" (a long backup): every call shows the
// password problem only the user can fix, not the wait.
func TestBusyTagWriteDoesNotHideAPasswordProblem(t *testing.T) {
	inst := activeInstance()
	inst.Status = "BACKING UP"
	inst.Tags[TagReleasedBy] = "someone"
	f := &cloudtest.Fake{
		GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) { c := *inst; return &c, nil },
	}
	f.DeleteTagsFn = func(context.Context, string, []string) error { return &cloud.Error{Kind: cloud.KindBusy} }
	spec := sampleSpec()
	spec.Password = ""
	st := v1alpha1.RdsStatus{ID: "inst-1", PasswordGenerated: true, Restore: &v1alpha1.RestoreStatus{Result: v1alpha1.RestoreSkipped}}
	req := request(spec, st)
	for i := range 3 {
		resp, err := newReconciler(f).Sync(context.Background(), req)
		require.NoError(t, err)
		synced := condition(t, resp.Status, v1alpha1.ConditionSynced)
		assert.Equal(t, ReasonPasswordSecretMissing, synced.Reason, "call %d", i)
		req = fedBack(t, req, resp)
	}
}

// A difference the hook will not act on (an HA instance whose spec says Single) is told while
// another day-2 change is made, also when OTC answers that change "busy" on every call.
func TestBusyDay2ChangeDoesNotHideAnUnsupportedChange(t *testing.T) {
	inst := haInstance()
	f := &cloudtest.Fake{
		GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) { c := *inst; return &c, nil },
	}
	f.UpdateBackupPolicyFn = func(context.Context, string, cloud.BackupStrategy) error {
		return &cloud.Error{Kind: cloud.KindBusy}
	}
	spec := sampleSpec()
	spec.Backupstarttime, spec.Backupkeepdays = "03:15-04:15", 30
	st := v1alpha1.RdsStatus{ID: "inst-1", Restore: &v1alpha1.RestoreStatus{Result: v1alpha1.RestoreSkipped}}
	req := request(spec, st, storedSecret("A12345678+"))
	for i := range 3 {
		resp, err := newReconciler(f).Sync(context.Background(), req)
		require.NoError(t, err)
		synced := condition(t, resp.Status, v1alpha1.ConditionSynced)
		t.Logf("call %d: Synced %s %s %q", i, synced.Status, synced.Reason, synced.Message)
		assert.Equal(t, ReasonUnsupportedChange, synced.Reason, "call %d", i)
		req = fedBack(t, req, resp)
	}
}
