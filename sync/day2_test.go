package reconcile

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
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// day2Flavors is what ListFlavors offers for MySQL 8.0 in these tests.
func day2Flavors(context.Context, string, string) ([]cloud.Flavor, error) {
	all := map[string]string{"eu-de-01": "normal", "eu-de-02": "normal", "eu-de-03": "normal"}
	return []cloud.Flavor{
		{SpecCode: "rds.mysql.c2.medium", Mode: "single", AZStatus: all},
		{SpecCode: "rds.mysql.c2.medium.ha", Mode: "ha", AZStatus: all},
		{SpecCode: "rds.mysql.n1.large.2", Mode: "single", AZStatus: all},
		{SpecCode: "rds.mysql.n1.large.2.ha", Mode: "ha", AZStatus: all},
		{SpecCode: "rds.mysql.n1.2xlarge.4", Mode: "single", AZStatus: map[string]string{"eu-de-01": "sellout", "eu-de-02": "normal"}},
		{SpecCode: "rds.mysql.n1.xlarge.2.ha", Mode: "ha", AZStatus: map[string]string{"eu-de-01": "normal", "eu-de-02": "sellout"}},
	}, nil
}

func haInstance() *cloud.Instance {
	in := activeInstance()
	in.Type, in.Flavor = "Ha", "rds.mysql.c2.medium.ha"
	in.Nodes = []cloud.Node{
		{ID: "n1", Name: "node0", Role: "master", Status: "ACTIVE", AvailabilityZone: "eu-de-01"},
		{ID: "n2", Name: "node1", Role: "slave", Status: "ACTIVE", AvailabilityZone: "eu-de-02"},
	}
	return in
}

func haSpec(s *v1alpha1.RdsSpec) {
	s.Hamode, s.Flavorref, s.Availabilityzone = "Ha", "rds.mysql.c2.medium.ha", "eu-de-01,eu-de-02"
}

// day2Case is one table test of operate: the spec and status the hook gets, what OTC reports and
// answers, and the calls and status the hook must make.
type day2Case struct {
	reason    string
	spec      func(*v1alpha1.RdsSpec)
	status    func(*v1alpha1.RdsStatus)
	inst      func() *cloud.Instance
	fake      func(f *cloudtest.Fake, got *[]any)
	wantCalls []string
	wantArgs  []any // the arguments of the mutating call, if any
	check     func(t *testing.T, st *v1alpha1.RdsStatus, resp *hook.SyncResponse)
}

func runDay2(t *testing.T, tc day2Case) *hook.SyncResponse {
	t.Helper()
	spec := sampleSpec()
	if tc.spec != nil {
		tc.spec(&spec)
	}
	st := v1alpha1.RdsStatus{ID: "inst-1"}
	if tc.status != nil {
		tc.status(&st)
	}
	inst := activeInstance()
	if tc.inst != nil {
		inst = tc.inst()
	}
	var got []any
	f := &cloudtest.Fake{
		GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) { return inst, nil },
		ListFlavorsFn: day2Flavors,
	}
	if tc.fake != nil {
		tc.fake(f, &got)
	}
	req := request(spec, st, storedSecret("A12345678+"))
	req.Parent.Generation = 3
	resp, err := newReconciler(f).Sync(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, tc.wantCalls, f.Calls(), tc.reason)
	assert.Equal(t, tc.wantArgs, got, tc.reason)
	if tc.check != nil {
		tc.check(t, resp.Status, resp)
	}
	return resp
}

func synced(t *testing.T, st *v1alpha1.RdsStatus, status metav1.ConditionStatus, reason string) v1alpha1.Condition {
	t.Helper()
	c := condition(t, st, v1alpha1.ConditionSynced)
	assert.Equal(t, status, c.Status, c.Message)
	assert.Equal(t, reason, c.Reason, c.Message)
	return c
}

func TestOperateGuards(t *testing.T) {
	bigger := func(s *v1alpha1.RdsSpec) { s.Flavorref = "rds.mysql.n1.large.2" }
	withStatus := func(status string) func() *cloud.Instance {
		return func() *cloud.Instance { in := activeInstance(); in.Status = status; return in }
	}
	cases := map[string]day2Case{
		"deleting": {
			reason:    "while the instance is being deleted nothing is changed",
			spec:      bigger,
			status:    func(st *v1alpha1.RdsStatus) { st.Operation = &v1alpha1.Operation{Type: OpDelete, JobID: "j"} },
			wantCalls: []string{"GetInstance"},
		},
		"creating": {
			reason:    "a BUILD instance takes no change; its resize waits",
			spec:      bigger,
			inst:      withStatus(cloud.StatusBuild),
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, _ *hook.SyncResponse) {
				synced(t, st, metav1.ConditionTrue, ReasonWaitingForInstance)
			},
		},
		"terminal": {
			reason:    "a FAILED instance gets a condition and no call",
			spec:      bigger,
			inst:      withStatus(cloud.StatusFailed),
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, _ *hook.SyncResponse) {
				c := synced(t, st, metav1.ConditionFalse, ReasonInstanceUnavailable)
				assert.Equal(t, "The instance is FAILED in OTC; the pending resize to rds.mysql.n1.large.2 waits until it is ACTIVE again.", c.Message)
			},
		},
		"storage full takes only storage growth": {
			reason: "in STORAGE FULL growing the volume is the way out; the resize waits",
			spec:   func(s *v1alpha1.RdsSpec) { bigger(s); s.Volumesize = 60 },
			inst:   withStatus(cloud.StatusStorageFull),
			fake: func(f *cloudtest.Fake, got *[]any) {
				f.EnlargeVolumeFn = func(_ context.Context, id string, size int) (string, error) {
					*got = append(*got, id, size)
					return "job-e", nil
				}
			},
			wantCalls: []string{"GetInstance", "EnlargeVolume"},
			wantArgs:  []any{"inst-1", 60},
		},
		"not active": {
			reason:    "an automated backup (BACKING UP) makes the resize wait",
			spec:      bigger,
			inst:      withStatus(cloud.StatusBackingUp),
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, resp *hook.SyncResponse) {
				c := synced(t, st, metav1.ConditionTrue, ReasonWaitingForInstance)
				assert.Equal(t, "The pending resize to rds.mysql.n1.large.2 waits until the instance is ACTIVE.", c.Message)
				assert.Equal(t, 10.0, resp.ResyncAfterSeconds)
			},
		},
		"operation in flight": {
			reason: "while the resize runs OTC reports the old flavor: no second change, the operation is shown",
			spec:   func(s *v1alpha1.RdsSpec) { bigger(s); s.Volumesize = 60 },
			status: func(st *v1alpha1.RdsStatus) {
				st.Operation = &v1alpha1.Operation{Type: OpResize, JobID: "job-r", Generation: 2, Target: "rds.mysql.n1.large.2"}
			},
			inst:      withStatus(cloud.StatusModifying),
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, resp *hook.SyncResponse) {
				c := synced(t, st, metav1.ConditionTrue, ReasonChangeInProgress)
				assert.Equal(t, "Resizing to rds.mysql.n1.large.2, asked by generation 2.", c.Message)
				assert.Equal(t, "Modifying", condition(t, st, v1alpha1.ConditionReady).Reason)
				require.NotNil(t, st.Operation)
				assert.Equal(t, "job-r", st.Operation.JobID)
				assert.Equal(t, 10.0, resp.ResyncAfterSeconds)
			},
		},
		"operation of another step in flight": {
			reason:    "a restore recorded by its own step makes day-2 changes wait without touching its conditions",
			spec:      bigger,
			status:    func(st *v1alpha1.RdsStatus) { st.Operation = &v1alpha1.Operation{Type: "Restore", Generation: 2} },
			inst:      withStatus(cloud.StatusRestoring),
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, _ *hook.SyncResponse) {
				assert.Equal(t, "Restore", st.Operation.Type)
			},
		},
		"finished operation is cleared and the next change follows": {
			reason: "OTC reports ACTIVE with the new flavor: the resize is done, the storage growth is next",
			spec:   func(s *v1alpha1.RdsSpec) { bigger(s); s.Volumesize = 60 },
			status: func(st *v1alpha1.RdsStatus) {
				st.Operation = &v1alpha1.Operation{Type: OpResize, JobID: "job-r", Generation: 2, Target: "rds.mysql.n1.large.2"}
			},
			inst: func() *cloud.Instance { in := activeInstance(); in.Flavor = "rds.mysql.n1.large.2"; return in },
			fake: func(f *cloudtest.Fake, got *[]any) {
				f.EnlargeVolumeFn = func(_ context.Context, id string, size int) (string, error) {
					*got = append(*got, id, size)
					return "job-e", nil
				}
			},
			wantCalls: []string{"GetInstance", "EnlargeVolume"},
			wantArgs:  []any{"inst-1", 60},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, _ *hook.SyncResponse) {
				assert.Equal(t, &v1alpha1.Operation{Type: OpStorage, JobID: "job-e", Generation: 3, Target: "60GB"}, st.Operation)
			},
		},
		"nothing to do": {
			reason:    "the sample spec matches the instance: no call besides the observation",
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, resp *hook.SyncResponse) {
				synced(t, st, metav1.ConditionTrue, ReasonReconcileSuccess)
				assert.Nil(t, st.Operation)
				assert.Equal(t, 300.0, resp.ResyncAfterSeconds)
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { runDay2(t, tc) })
	}
}

func TestOperateChanges(t *testing.T) {
	cases := map[string]day2Case{
		"resize": {
			reason: "a listed single flavor on sale in the instance's AZ is applied",
			spec:   func(s *v1alpha1.RdsSpec) { s.Flavorref = "rds.mysql.n1.large.2" },
			fake: func(f *cloudtest.Fake, got *[]any) {
				f.ResizeFlavorFn = func(_ context.Context, id, flavor string) (string, error) {
					*got = append(*got, id, flavor)
					return "job-r", nil
				}
			},
			wantCalls: []string{"GetInstance", "ListFlavors", "ResizeFlavor"},
			wantArgs:  []any{"inst-1", "rds.mysql.n1.large.2"},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, resp *hook.SyncResponse) {
				assert.Equal(t, &v1alpha1.Operation{Type: OpResize, JobID: "job-r", Generation: 3, Target: "rds.mysql.n1.large.2"}, st.Operation)
				c := synced(t, st, metav1.ConditionTrue, ReasonChangeInProgress)
				assert.Equal(t, "Resizing to rds.mysql.n1.large.2, asked by generation 3.", c.Message)
				assert.True(t, condition(t, st, v1alpha1.ConditionReady).Status == metav1.ConditionTrue, "the instance is still ACTIVE")
				assert.Equal(t, 10.0, resp.ResyncAfterSeconds)
			},
		},
		"resize to a sold-out flavor": {
			reason:    "a flavor sold out in the instance's AZ gets a condition and no call",
			spec:      func(s *v1alpha1.RdsSpec) { s.Flavorref = "rds.mysql.n1.2xlarge.4" },
			wantCalls: []string{"GetInstance", "ListFlavors"},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, _ *hook.SyncResponse) {
				c := synced(t, st, metav1.ConditionFalse, ReasonFlavorUnavailable)
				assert.Equal(t, "The flavor rds.mysql.n1.2xlarge.4 is not available in eu-de-01 (sellout).", c.Message)
				assert.Nil(t, st.Operation)
			},
		},
		"resize to an unknown flavor": {
			reason:    "a flavor OTC does not list for the engine and version gets a condition and no call",
			spec:      func(s *v1alpha1.RdsSpec) { s.Flavorref = "rds.mysql.x9.huge" },
			wantCalls: []string{"GetInstance", "ListFlavors"},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, _ *hook.SyncResponse) {
				c := synced(t, st, metav1.ConditionFalse, ReasonFlavorUnavailable)
				assert.Equal(t, "The flavor rds.mysql.x9.huge is not offered for MySQL 8.0.", c.Message)
			},
		},
		"resize of an HA pair checks both AZs": {
			reason:    "an HA flavor sold out in the standby's AZ is refused",
			spec:      func(s *v1alpha1.RdsSpec) { haSpec(s); s.Flavorref = "rds.mysql.n1.xlarge.2.ha" },
			inst:      haInstance,
			wantCalls: []string{"GetInstance", "ListFlavors"},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, _ *hook.SyncResponse) {
				c := synced(t, st, metav1.ConditionFalse, ReasonFlavorUnavailable)
				assert.Equal(t, "The flavor rds.mysql.n1.xlarge.2.ha is not available in eu-de-02 (sellout).", c.Message)
			},
		},
		"refused flavor does not block later changes": {
			reason: "the sold-out flavor is reported, and the storage growth after it still happens",
			spec:   func(s *v1alpha1.RdsSpec) { s.Flavorref = "rds.mysql.n1.2xlarge.4"; s.Volumesize = 50 },
			fake: func(f *cloudtest.Fake, got *[]any) {
				f.EnlargeVolumeFn = func(_ context.Context, id string, size int) (string, error) {
					*got = append(*got, id, size)
					return "job-e", nil
				}
			},
			wantCalls: []string{"GetInstance", "ListFlavors", "EnlargeVolume"},
			wantArgs:  []any{"inst-1", 50},
		},
		"storage growth": {
			reason: "volumesize above the instance's size grows the volume to it",
			spec:   func(s *v1alpha1.RdsSpec) { s.Volumesize = 100 },
			fake: func(f *cloudtest.Fake, got *[]any) {
				f.EnlargeVolumeFn = func(_ context.Context, id string, size int) (string, error) {
					*got = append(*got, id, size)
					return "job-e", nil
				}
			},
			wantCalls: []string{"GetInstance", "EnlargeVolume"},
			wantArgs:  []any{"inst-1", 100},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, _ *hook.SyncResponse) {
				assert.Equal(t, &v1alpha1.Operation{Type: OpStorage, JobID: "job-e", Generation: 3, Target: "100GB"}, st.Operation)
			},
		},
		"storage shrink": {
			reason:    "an object that predates the CRD's rule asks for less: a condition, no call",
			inst:      func() *cloud.Instance { in := activeInstance(); in.Volume.Size = 100; return in },
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, _ *hook.SyncResponse) {
				c := synced(t, st, metav1.ConditionFalse, ReasonUnsupportedChange)
				assert.Equal(t, "volumesize 40 is below the instance's 100 GB: OTC cannot shrink a volume; set volumesize to 100 or more.", c.Message)
			},
		},
		"backup policy": {
			reason: "a new window and retention are written together; the policy takes effect at once",
			spec:   func(s *v1alpha1.RdsSpec) { s.Backupstarttime, s.Backupkeepdays = "03:15-04:15", 30 },
			fake: func(f *cloudtest.Fake, got *[]any) {
				f.UpdateBackupPolicyFn = func(_ context.Context, id string, p cloud.BackupStrategy) error {
					*got = append(*got, id, p)
					return nil
				}
			},
			wantCalls: []string{"GetInstance", "UpdateBackupPolicy"},
			wantArgs:  []any{"inst-1", cloud.BackupStrategy{StartTime: "03:15-04:15", KeepDays: 30}},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, resp *hook.SyncResponse) {
				assert.Nil(t, st.Operation)
				synced(t, st, metav1.ConditionTrue, ReasonReconcileSuccess)
				assert.Equal(t, 10.0, resp.ResyncAfterSeconds)
			},
		},
		"backup policy keeps what the spec leaves out": {
			reason: "backupkeepdays 0 means OTC's value: only the window changes",
			spec:   func(s *v1alpha1.RdsSpec) { s.Backupstarttime, s.Backupkeepdays = "05:00-06:00", 0 },
			fake: func(f *cloudtest.Fake, got *[]any) {
				f.UpdateBackupPolicyFn = func(_ context.Context, id string, p cloud.BackupStrategy) error {
					*got = append(*got, id, p)
					return nil
				}
			},
			wantCalls: []string{"GetInstance", "UpdateBackupPolicy"},
			wantArgs:  []any{"inst-1", cloud.BackupStrategy{StartTime: "05:00-06:00", KeepDays: 12}},
		},
		"new tag keys are recorded before they are set": {
			reason: "write-ahead: were the answer that sets a tag lost, a key later removed from spec.tags would stay in OTC",
			spec: func(s *v1alpha1.RdsSpec) {
				s.Tags = []v1alpha1.Tag{{Key: "team", Value: "a"}, {Key: "env", Value: "prod"}}
			},
			inst: func() *cloud.Instance {
				in := activeInstance()
				in.Tags = withOwner(map[string]string{"env": "test", "owner": "someone"})
				return in
			},
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, resp *hook.SyncResponse) {
				assert.Equal(t, []string{"env", "team"}, st.ManagedTags)
				assert.Equal(t, 10.0, resp.ResyncAfterSeconds, "the next call sets them")
			},
		},
		"tags are set": {
			reason: "missing and changed tags whose keys status records are set in one call",
			spec: func(s *v1alpha1.RdsSpec) {
				s.Tags = []v1alpha1.Tag{{Key: "team", Value: "a"}, {Key: "env", Value: "prod"}}
			},
			status: func(st *v1alpha1.RdsStatus) { st.ManagedTags = []string{"env", "team"} },
			inst: func() *cloud.Instance {
				in := activeInstance()
				in.Tags = withOwner(map[string]string{"env": "test", "owner": "someone"})
				return in
			},
			fake: func(f *cloudtest.Fake, got *[]any) {
				f.SetTagsFn = func(_ context.Context, id string, tags map[string]string) error {
					*got = append(*got, id, tags)
					return nil
				}
			},
			wantCalls: []string{"GetInstance", "SetTags"},
			wantArgs:  []any{"inst-1", map[string]string{"team": "a", "env": "prod"}},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, _ *hook.SyncResponse) {
				assert.Equal(t, []string{"env", "team"}, st.ManagedTags, "owner was set by someone else")
			},
		},
		"removed managed tags are deleted, others kept": {
			reason: "a key dropped from spec.tags is deleted only because this object set it",
			spec:   func(s *v1alpha1.RdsSpec) { s.Tags = []v1alpha1.Tag{{Key: "team", Value: "a"}} },
			status: func(st *v1alpha1.RdsStatus) { st.ManagedTags = []string{"env", "team"} },
			inst: func() *cloud.Instance {
				in := activeInstance()
				in.Tags = withOwner(map[string]string{"env": "prod", "team": "a", "owner": "someone"})
				return in
			},
			fake: func(f *cloudtest.Fake, got *[]any) {
				f.DeleteTagsFn = func(_ context.Context, id string, keys []string) error {
					*got = append(*got, id, keys)
					return nil
				}
			},
			wantCalls: []string{"GetInstance", "DeleteTags"},
			wantArgs:  []any{"inst-1", []string{"env"}},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, _ *hook.SyncResponse) {
				assert.Equal(t, []string{"env", "team"}, st.ManagedTags, "env stays managed until OTC no longer has it")
			},
		},
		"deleted managed tag is forgotten": {
			reason: "once OTC no longer has the removed key, it leaves status.managedTags",
			spec:   func(s *v1alpha1.RdsSpec) { s.Tags = []v1alpha1.Tag{{Key: "team", Value: "a"}} },
			status: func(st *v1alpha1.RdsStatus) { st.ManagedTags = []string{"env", "team"} },
			inst: func() *cloud.Instance {
				in := activeInstance()
				in.Tags = withOwner(map[string]string{"team": "a"})
				return in
			},
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, _ *hook.SyncResponse) {
				assert.Equal(t, []string{"team"}, st.ManagedTags)
			},
		},
		"invalid tag": {
			reason:    "a tag OTC would refuse gets a condition and no call",
			spec:      func(s *v1alpha1.RdsSpec) { s.Tags = []v1alpha1.Tag{{Key: "a b", Value: "x"}} },
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, _ *hook.SyncResponse) {
				c := synced(t, st, metav1.ConditionFalse, ReasonInvalidSpec)
				assert.Equal(t, `tags key "a b" is not 1 to 36 letters, digits, '-', '_' or '.'.`, c.Message)
			},
		},
		"restart request marked first": {
			reason: "a new restartrequest value is first written ahead as a tag, nothing else",
			spec:   func(s *v1alpha1.RdsSpec) { s.Restartrequest = "2026-11-23" },
			status: func(st *v1alpha1.RdsStatus) { st.RestartRequest = "2026-11-01" },
			inst:   withMark(TagRestartRequest, RequestMark("uid-1", "2026-11-01")),
			fake: func(f *cloudtest.Fake, got *[]any) {
				f.SetTagsFn = func(_ context.Context, id string, tags map[string]string) error {
					*got = append(*got, id, tags)
					return nil
				}
			},
			wantCalls: []string{"GetInstance", "SetTags"},
			wantArgs:  []any{"inst-1", map[string]string{TagRestartRequest: RequestMark("uid-1", "2026-11-23")}},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, resp *hook.SyncResponse) {
				assert.Equal(t, "2026-11-01", st.RestartRequest, "not handled yet")
				assert.Nil(t, st.Operation)
				assert.Equal(t, 10.0, resp.ResyncAfterSeconds, "the restart follows soon")
			},
		},
		"restart on a new request": {
			reason: "a new restartrequest value, marked, restarts once and is remembered",
			spec:   func(s *v1alpha1.RdsSpec) { s.Restartrequest = "2026-11-23" },
			status: func(st *v1alpha1.RdsStatus) { st.RestartRequest = "2026-11-01" },
			inst:   withMark(TagRestartRequest, RequestMark("uid-1", "2026-11-23")),
			fake: func(f *cloudtest.Fake, got *[]any) {
				f.RestartInstanceFn = func(_ context.Context, id string) (string, error) {
					*got = append(*got, id)
					return "job-s", nil
				}
			},
			wantCalls: []string{"GetInstance", "RestartInstance"},
			wantArgs:  []any{"inst-1"},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, _ *hook.SyncResponse) {
				assert.Equal(t, "2026-11-23", st.RestartRequest)
				assert.Equal(t, &v1alpha1.Operation{Type: OpRestart, JobID: "job-s", Generation: 3, Target: "2026-11-23"}, st.Operation)
				c := synced(t, st, metav1.ConditionTrue, ReasonChangeInProgress)
				assert.Equal(t, `Restarting for restartrequest "2026-11-23", asked by generation 3.`, c.Message)
			},
		},
		"handled restart request": {
			reason:    "the handled value never restarts again",
			spec:      func(s *v1alpha1.RdsSpec) { s.Restartrequest = "2026-11-23" },
			status:    func(st *v1alpha1.RdsStatus) { st.RestartRequest = "2026-11-23" },
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, _ *hook.SyncResponse) {
				assert.Equal(t, "2026-11-23", st.RestartRequest, "echoed")
			},
		},
		"minor upgrade marked first": {
			reason: "8.0.32 asked while 8.0.28 runs: the request and the version it runs are written ahead as a tag",
			spec:   func(s *v1alpha1.RdsSpec) { s.Datastoreversion = "8.0.32" },
			fake: func(f *cloudtest.Fake, got *[]any) {
				f.SetTagsFn = func(_ context.Context, id string, tags map[string]string) error {
					*got = append(*got, id, tags)
					return nil
				}
			},
			wantCalls: []string{"GetInstance", "SetTags"},
			wantArgs:  []any{"inst-1", map[string]string{TagUpgradeRequest: RequestMark("uid-1", "8.0.32") + "-8.0.28"}},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, _ *hook.SyncResponse) {
				assert.Empty(t, st.UpgradeRequest)
			},
		},
		"minor upgrade made": {
			reason: "the mark names 8.0.28, the instance runs 8.0.30: the upgrade was made (a lost answer), not asked again",
			spec:   func(s *v1alpha1.RdsSpec) { s.Datastoreversion = "8.0.32" },
			inst: func() *cloud.Instance {
				in := withMark(TagUpgradeRequest, upgradeMark("uid-1", "8.0.32", "8.0.28"))()
				in.CompleteVersion = "8.0.30"
				return in
			},
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, _ *hook.SyncResponse) {
				assert.Equal(t, "8.0.32", st.UpgradeRequest)
				synced(t, st, metav1.ConditionFalse, ReasonVersionUnavailable)
			},
		},
		"minor upgrade": {
			reason: "8.0.32 asked while 8.0.28 runs, marked: upgrades the minor version",
			spec:   func(s *v1alpha1.RdsSpec) { s.Datastoreversion = "8.0.32" },
			inst:   withMark(TagUpgradeRequest, upgradeMark("uid-1", "8.0.32", "8.0.28")),
			fake: func(f *cloudtest.Fake, got *[]any) {
				f.UpgradeMinorVersionFn = func(_ context.Context, id string) (string, error) {
					*got = append(*got, id)
					return "job-u", nil
				}
			},
			wantCalls: []string{"GetInstance", "UpgradeMinorVersion"},
			wantArgs:  []any{"inst-1"},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, _ *hook.SyncResponse) {
				assert.Equal(t, "8.0.32", st.UpgradeRequest)
				assert.Equal(t, OpMinorUpgrade, st.Operation.Type)
			},
		},
		"PostgreSQL minor upgrade": {
			reason: "PostgreSQL's major version is one part: 16.6 asked while 16.4 runs upgrades",
			spec: func(s *v1alpha1.RdsSpec) {
				s.Datastoretype, s.Datastoreversion, s.Flavorref, s.Port = "PostgreSQL", "16.6", "rds.pg.n1.large.2", nil
			},
			inst: func() *cloud.Instance {
				in := activeInstance()
				in.Engine, in.Version, in.CompleteVersion, in.Flavor, in.Port = "PostgreSQL", "16", "16.4", "rds.pg.n1.large.2", 5432
				in.Tags[TagUpgradeRequest] = upgradeMark("uid-1", "16.6", "16.4")
				return in
			},
			fake: func(f *cloudtest.Fake, got *[]any) {
				f.UpgradeMinorVersionFn = func(_ context.Context, id string) (string, error) {
					*got = append(*got, id)
					return "job-u", nil
				}
			},
			wantCalls: []string{"GetInstance", "UpgradeMinorVersion"},
			wantArgs:  []any{"inst-1"},
		},
		"PostgreSQL major version only": {
			reason: `"16" asked while 16.4 runs is no difference`,
			spec: func(s *v1alpha1.RdsSpec) {
				s.Datastoretype, s.Datastoreversion, s.Flavorref, s.Port = "PostgreSQL", "16", "rds.pg.n1.large.2", nil
			},
			inst: func() *cloud.Instance {
				in := activeInstance()
				in.Engine, in.Version, in.CompleteVersion, in.Flavor, in.Port = "PostgreSQL", "16", "16.4", "rds.pg.n1.large.2", 5432
				return in
			},
			wantCalls: []string{"GetInstance"},
		},
		"major version only": {
			reason:    `"8.0" asked while 8.0.28 runs is no difference`,
			spec:      func(s *v1alpha1.RdsSpec) { s.Datastoreversion = "8.0" },
			wantCalls: []string{"GetInstance"},
		},
		"older minor asked": {
			reason:    "8.0.20 asked while 8.0.28 runs: no downgrade, no condition",
			spec:      func(s *v1alpha1.RdsSpec) { s.Datastoreversion = "8.0.20" },
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, _ *hook.SyncResponse) {
				synced(t, st, metav1.ConditionTrue, ReasonReconcileSuccess)
			},
		},
		"upgrade already made": {
			reason:    "OTC's newest minor is below the asked one: the upgrade is not asked for again",
			spec:      func(s *v1alpha1.RdsSpec) { s.Datastoreversion = "8.0.40" },
			status:    func(st *v1alpha1.RdsStatus) { st.UpgradeRequest = "8.0.40" },
			inst:      func() *cloud.Instance { in := activeInstance(); in.CompleteVersion = "8.0.32"; return in },
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, _ *hook.SyncResponse) {
				c := synced(t, st, metav1.ConditionFalse, ReasonVersionUnavailable)
				assert.Equal(t, "A minor version upgrade for datastoreversion 8.0.40 was issued, but the instance runs 8.0.32: OTC offers no newer minor version.", c.Message)
			},
		},
		"single to HA": {
			reason: "hamode Ha on a single instance adds a standby in the AZ the spec adds",
			spec:   haSpec,
			fake: func(f *cloudtest.Fake, got *[]any) {
				f.SingleToHAFn = func(_ context.Context, id, az string, pw secret.Value) (string, error) {
					*got = append(*got, id, az, pw.Reveal())
					return "job-h", nil
				}
			},
			wantCalls: []string{"GetInstance", "ListFlavors", "SingleToHA"},
			wantArgs:  []any{"inst-1", "eu-de-02", ""},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, _ *hook.SyncResponse) {
				assert.Equal(t, &v1alpha1.Operation{Type: OpSingleToHA, JobID: "job-h", Generation: 3, Target: "eu-de-02"}, st.Operation)
			},
		},
		"single to HA with a standby AZ the flavor is sold out in": {
			reason: "the HA flavor must be on sale in both AZs",
			spec: func(s *v1alpha1.RdsSpec) {
				haSpec(s)
				s.Flavorref = "rds.mysql.n1.xlarge.2.ha"
			},
			inst: func() *cloud.Instance {
				in := activeInstance()
				in.Flavor = "rds.mysql.n1.xlarge.2"
				return in
			},
			wantCalls: []string{"GetInstance", "ListFlavors"},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, _ *hook.SyncResponse) {
				c := synced(t, st, metav1.ConditionFalse, ReasonFlavorUnavailable)
				assert.Equal(t, "The flavor rds.mysql.n1.xlarge.2.ha is not available in eu-de-02 (sellout).", c.Message)
			},
		},
		"HA to single": {
			reason:    "OTC cannot remove a standby: a condition, no call",
			inst:      haInstance,
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, _ *hook.SyncResponse) {
				synced(t, st, metav1.ConditionFalse, ReasonUnsupportedChange)
			},
		},
		"AZ order after a failover": {
			reason: "the primary now runs in the spec's standby AZ: no difference",
			spec:   haSpec,
			inst: func() *cloud.Instance {
				in := haInstance()
				in.Nodes[0].Role, in.Nodes[1].Role = "slave", "master"
				in.Nodes[0], in.Nodes[1] = in.Nodes[1], in.Nodes[0]
				return in
			},
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, _ *hook.SyncResponse) {
				synced(t, st, metav1.ConditionTrue, ReasonReconcileSuccess)
			},
		},
		"one change per call": {
			reason: "flavor, storage, backup, tags and restart all differ: only the first in the fixed order is issued",
			spec: func(s *v1alpha1.RdsSpec) {
				s.Flavorref, s.Volumesize, s.Backupkeepdays = "rds.mysql.n1.large.2", 80, 3
				s.Tags, s.Restartrequest = []v1alpha1.Tag{{Key: "a", Value: "b"}}, "now"
			},
			fake: func(f *cloudtest.Fake, got *[]any) {
				f.ResizeFlavorFn = func(_ context.Context, id, flavor string) (string, error) {
					*got = append(*got, id, flavor)
					return "job-r", nil
				}
			},
			wantCalls: []string{"GetInstance", "ListFlavors", "ResizeFlavor"},
			wantArgs:  []any{"inst-1", "rds.mysql.n1.large.2"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { runDay2(t, tc) })
	}
}

func TestOperateCloudAnswers(t *testing.T) {
	resize := func(s *v1alpha1.RdsSpec) { s.Flavorref = "rds.mysql.n1.large.2" }
	failing := func(err error) func(f *cloudtest.Fake, got *[]any) {
		return func(f *cloudtest.Fake, got *[]any) {
			f.ResizeFlavorFn = func(context.Context, string, string) (string, error) { return "", err }
			f.RestartInstanceFn = func(context.Context, string) (string, error) { return "", err }
		}
	}
	cases := map[string]day2Case{
		"busy": {
			reason:    "409 DBS.200019: nothing happened; Synced stays True, a short resync, nothing recorded",
			spec:      resize,
			fake:      failing(cloud.Errorf(cloud.KindBusy, "ResizeFlavor", "DBS.200019", "Another operation is being performed.")),
			wantCalls: []string{"GetInstance", "ListFlavors", "ResizeFlavor"},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, resp *hook.SyncResponse) {
				synced(t, st, metav1.ConditionTrue, ReasonInstanceBusy)
				assert.Nil(t, st.Operation)
				assert.Equal(t, 10.0, resp.ResyncAfterSeconds)
			},
		},
		"refused": {
			reason:    "OTC refuses the content: a stable condition, nothing recorded, the steady pace",
			spec:      resize,
			fake:      failing(&cloud.Error{Kind: cloud.KindInvalid, Op: "ResizeFlavor", Code: "DBS.200053", Sentence: "the flavor does not exist", Message: "The specification does not exist."}),
			wantCalls: []string{"GetInstance", "ListFlavors", "ResizeFlavor"},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, resp *hook.SyncResponse) {
				c := synced(t, st, metav1.ConditionFalse, ReasonCloudRefused)
				assert.Equal(t, "OTC refused the request: the flavor does not exist (DBS.200053).", c.Message)
				assert.Nil(t, st.Operation)
				assert.Equal(t, 300.0, resp.ResyncAfterSeconds)
			},
		},
		"lost answer": {
			reason:    "no answer arrived; OTC may have acted: the operation is recorded so that the next call looks first",
			spec:      resize,
			fake:      failing(cloud.Errorf(cloud.KindUnavailable, "ResizeFlavor", "", "connection closed before the answer")),
			wantCalls: []string{"GetInstance", "ListFlavors", "ResizeFlavor"},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, _ *hook.SyncResponse) {
				synced(t, st, metav1.ConditionFalse, ReasonCloudUnavailable)
				assert.Equal(t, &v1alpha1.Operation{Type: OpResize, Generation: 3, Target: "rds.mysql.n1.large.2"}, st.Operation)
			},
		},
		"lost answer of a restart": {
			reason:    "the request is remembered as handled: a restart is never issued twice",
			spec:      func(s *v1alpha1.RdsSpec) { s.Restartrequest = "r1" },
			inst:      withMark(TagRestartRequest, RequestMark("uid-1", "r1")),
			fake:      failing(cloud.Errorf(cloud.KindUnavailable, "RestartInstance", "", "request timed out")),
			wantCalls: []string{"GetInstance", "RestartInstance"},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, _ *hook.SyncResponse) {
				assert.Equal(t, "r1", st.RestartRequest)
			},
		},
		"busy restart": {
			reason:    "a refused restart is not remembered: it is asked for again later",
			spec:      func(s *v1alpha1.RdsSpec) { s.Restartrequest = "r1" },
			inst:      withMark(TagRestartRequest, RequestMark("uid-1", "r1")),
			fake:      failing(cloud.Errorf(cloud.KindBusy, "RestartInstance", "DBS.200019", "busy")),
			wantCalls: []string{"GetInstance", "RestartInstance"},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, _ *hook.SyncResponse) {
				assert.Empty(t, st.RestartRequest)
				synced(t, st, metav1.ConditionTrue, ReasonInstanceBusy)
			},
		},
		"flavor list unavailable": {
			reason: "the check's read fails: no change, a retry soon",
			spec:   resize,
			fake: func(f *cloudtest.Fake, _ *[]any) {
				f.ListFlavorsFn = func(context.Context, string, string) ([]cloud.Flavor, error) {
					return nil, cloud.Errorf(cloud.KindUnavailable, "ListFlavors", "", "request timed out")
				}
			},
			wantCalls: []string{"GetInstance", "ListFlavors"},
			check: func(t *testing.T, st *v1alpha1.RdsStatus, _ *hook.SyncResponse) {
				synced(t, st, metav1.ConditionFalse, ReasonCloudUnavailable)
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { runDay2(t, tc) })
	}
}

// TestOperateIsStable feeds an answer back as the next request: the same observation must give
// the same status and no second change.
func TestOperateIsStable(t *testing.T) {
	tc := day2Case{
		reason: "a second call during the resize changes nothing",
		spec:   func(s *v1alpha1.RdsSpec) { s.Flavorref = "rds.mysql.n1.large.2" },
		status: func(st *v1alpha1.RdsStatus) {
			st.Operation = &v1alpha1.Operation{Type: OpResize, JobID: "job-r", Generation: 3, Target: "rds.mysql.n1.large.2"}
		},
		inst:      func() *cloud.Instance { in := activeInstance(); in.Status = cloud.StatusModifying; return in },
		wantCalls: []string{"GetInstance"},
	}
	first := runDay2(t, tc)
	tc.status = func(st *v1alpha1.RdsStatus) { *st = *first.Status.DeepCopy() }
	second := runDay2(t, tc)
	assert.Equal(t, first.Status, second.Status)
}

// withMark is an ACTIVE instance carrying the mark of a one-shot request (oneshot.go).
func withMark(key, value string) func() *cloud.Instance {
	return func() *cloud.Instance { in := activeInstance(); in.Tags[key] = value; return in }
}
