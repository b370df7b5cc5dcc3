package sync

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// The decisions of reconciler.go as tables: plain inputs, the decision out, no cloud fake.

func TestDecideInstance(t *testing.T) {
	inst, other := &cloud.Instance{ID: "a"}, &cloud.Instance{ID: "b"}
	tests := []struct {
		name                 string
		statusID, instanceid string
		obs                  observation
		manages              bool
		want                 instanceVerdict
	}{
		{"a new object creates", "", "", observation{}, false, instanceCreate},
		{"an instance OTC no longer lists is not created again", "a", "", observation{}, false, instanceVanished},
		{"another object's instance under the name blocks the create", "", "", observation{taken: other}, false, instanceNameTaken},
		{"instanceid adopts", "", "0123", observation{}, false, instanceAdopt},
		{"a name taken wins over instanceid", "", "0123", observation{taken: other}, false, instanceNameTaken},
		{"the object's instance is managed", "a", "", observation{inst: inst}, true, instanceManage},
		{"an instance status.id names that is not the object's is left alone", "a", "", observation{inst: inst}, false, instanceNotOwned},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, decideInstance(tc.statusID, tc.instanceid, tc.obs, tc.manages))
		})
	}
}

func TestClaimChange(t *testing.T) {
	me := owner{Cluster: "local", Namespace: "rds1", Name: "my-rds-single", UID: "uid-1"}
	inst := &cloud.Instance{ID: "a"}
	assert.Nil(t, claimChange(inst, claim{Kind: Ours}, me), "tagged as ours: nothing to write")
	assert.Equal(t, &change{target: "removal of the earlier owner's release tag",
		act: action{kind: actDeleteTags, instance: "a", keys: []string{TagReleasedBy}}},
		claimChange(inst, claim{Kind: Ours, StaleRelease: true}, me))
	for _, kind := range []Ownership{OursUntagged, Unowned} {
		assert.Equal(t, &change{target: "write of the ownership tags", act: action{kind: actSetTags, instance: "a", tags: me.tags()}},
			claimChange(inst, claim{Kind: kind}, me), kind.String())
	}
}

func TestDuplicatesOutcome(t *testing.T) {
	assert.Nil(t, duplicatesOutcome("a", nil))
	o := duplicatesOutcome("a", []string{"b", "c"})
	assert.Equal(t, v1alpha1.ConditionInstanceDuplicates, o.cond)
	assert.Equal(t, ReasonDuplicateInstances, o.reason)
	assert.Contains(t, o.message, "OTC lists further instances of this object: b, c. The controller manages a, never deletes the others")
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

func TestPlanCreate(t *testing.T) {
	spec := sampleSpec()
	network := &cloud.Network{VpcID: "vpc", SubnetID: "subnet", SecurityGroupID: "sg"}
	pw := secret.New("A12345678+")
	from := &cloud.RestorePoint{InstanceID: "src", BackupID: "b1"}
	withRestore := sampleSpec()
	withRestore.Restorefrom = &v1alpha1.RestoreFrom{Instance: "src", Backupid: "b1"}
	storing := createPlan{
		ready:  ptr.To(notReady(ReasonCreating, "Storing the root password in the connection Secret before creating the instance.", storingSecret)),
		synced: ptr.To(syncedOK(ReasonReconcileSuccess, "Waiting for the connection Secret to be stored.", storingSecret)),
	}
	tests := []struct {
		name string
		in   createInput
		want func() createPlan
	}{
		{
			name: "a password Secret that is not there waits for the user",
			in:   createInput{spec: &spec, problem: "The Secret \"x\" named in passwordsecretref was not found in namespace rds1."},
			want: func() createPlan {
				return createPlan{
					synced: ptr.To(notSynced(ReasonWaitingForPasswordSecret, "The Secret \"x\" named in passwordsecretref was not found in namespace rds1.", waitsForUser)),
					ready:  ptr.To(notReady(ReasonWaitingForPasswordSecret, "Waiting for the spec's prerequisites; see the Synced condition.", waitsForUser)),
				}
			},
		},
		{
			name: "the spec's password is stored before the create",
			in:   createInput{spec: &spec, desired: pw},
			want: func() createPlan { p := storing; p.password = pw; return p },
		},
		{
			name: "a generated password is stored before the create",
			in:   createInput{spec: &spec, generated: true, fresh: secret.New("gen")},
			want: func() createPlan { p := storing; p.password, p.generated = secret.New("gen"), true; return p },
		},
		{
			name: "a stored generated password is the one created with, and the network is read first",
			in:   createInput{spec: &spec, generated: true, observed: secret.New("old"), stored: true, fresh: secret.New("new")},
			want: func() createPlan {
				return createPlan{password: secret.New("old"), generated: true, needNetwork: true}
			},
		},
		{
			name: "a stored password creates the instance",
			in:   createInput{spec: &spec, generation: 3, name: "n", desired: pw, observed: pw, stored: true, network: network},
			want: func() createPlan {
				opts := createOpts(&spec, "n", *network, pw)
				return createPlan{password: pw, create: &action{kind: actCreate, create: &opts},
					op: &v1alpha1.Operation{Type: OpCreate, Generation: 3}}
			},
		},
		{
			name: "restorefrom reads its restore point first",
			in:   createInput{spec: &withRestore, desired: pw, observed: pw, stored: true},
			want: func() createPlan { return createPlan{password: pw, needRestorePoint: true} },
		},
		{
			name: "restorefrom restores into a new instance",
			in:   createInput{spec: &withRestore, generation: 2, name: "n", desired: pw, observed: pw, stored: true, from: from, network: network},
			want: func() createPlan {
				opts := createOpts(&withRestore, "n", *network, pw)
				return createPlan{password: pw, create: &action{kind: actRestoreToNew, create: &opts, from: *from},
					op: &v1alpha1.Operation{Type: OpRestoreToNew, Generation: 2, Target: restorePointText(*from)}}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, want := planCreate(tc.in), tc.want()
			// A secret.Value prints nothing: compare what it holds, then the rest.
			assert.Equal(t, want.password.Reveal(), got.password.Reveal())
			if want.create != nil && got.create != nil {
				assert.Equal(t, want.create.create.Password.Reveal(), got.create.create.Password.Reveal())
			}
			assert.Equal(t, want, got)
		})
	}
}

func TestConnectionOf(t *testing.T) {
	inst := activeInstance()
	stored, spec := secret.New("stored"), secret.New("spec")
	tests := []struct {
		name                      string
		observed                  secret.Value
		isStored                  bool
		desired                   secret.Value
		generated, adopted        bool
		wantPassword, wantProblem string
	}{
		{name: "the stored password wins", observed: stored, isStored: true, desired: spec, wantPassword: "stored"},
		{name: "without a stored one, the spec's", desired: spec, wantPassword: "spec"},
		{name: "a generated password whose Secret is gone is unknown", generated: true, wantProblem: ReasonPasswordSecretMissing},
		{name: "an adopted instance without a password", adopted: true, generated: true, wantProblem: ReasonPasswordUnknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			conn, problem := connectionOf("MySQL", inst, tc.observed, tc.isStored, tc.desired, tc.generated, tc.adopted)
			if tc.wantProblem != "" {
				assert.Nil(t, conn)
				assert.Equal(t, tc.wantProblem, problem.reason)
				assert.Equal(t, v1alpha1.ConditionSynced, problem.cond)
				return
			}
			assert.Nil(t, problem)
			assert.Equal(t, tc.wantPassword, conn.password.Reveal())
			assert.Equal(t, "192.168.0.10", conn.host)
			assert.Equal(t, 3306, conn.port)
		})
	}
}

func TestReported(t *testing.T) {
	inst := activeInstance()
	inst.Nodes = []cloud.Node{
		{Name: "node1", Role: "slave", Status: "ACTIVE", AvailabilityZone: "eu-de-02"},
		{Name: "node0", Role: "master", Status: "ACTIVE", AvailabilityZone: "eu-de-01"},
	}
	st, ready := reported(v1alpha1.RdsStatus{Operation: &v1alpha1.Operation{Type: OpResize, Target: "rds.mysql.c2.medium"}}, inst)
	assert.Equal(t, "inst-1", st.ID)
	assert.Equal(t, "192.168.0.10:3306", st.Endpoint)
	assert.Equal(t, "8.0.28", st.Version)
	assert.Equal(t, []v1alpha1.Node{
		{Name: "node0", Role: "master", Status: "ACTIVE", Availabilityzone: "eu-de-01"},
		{Name: "node1", Role: "slave", Status: "ACTIVE", Availabilityzone: "eu-de-02"},
	}, st.Nodes, "nodes sorted by role and name, whatever OTC's order")
	assert.Nil(t, st.Operation, "a resize to the flavor the instance has is over once it is ACTIVE")
	assert.Equal(t, v1alpha1.ConditionReady, ready.cond)
	assert.Equal(t, ReasonAvailable, ready.reason)
	assert.Equal(t, settled, ready.class)

	inst.Status = cloud.StatusBuild
	st, ready = reported(v1alpha1.RdsStatus{}, inst)
	assert.Equal(t, cloud.StatusBuild, st.Status)
	assert.Equal(t, inFlight, ready.class, "a transitional instance is looked at again soon")
	assert.NotEqual(t, "True", string(ready.status))
}
