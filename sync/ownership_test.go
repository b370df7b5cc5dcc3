package reconcile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/cloudtest"
)

func TestTagValue(t *testing.T) {
	cases := map[string]struct {
		in   string
		want string // "" to check only the form
	}{
		"fits":                  {in: "team-a", want: "team-a"},
		"a uid fits":            {in: "6a3c7f0e-1d2b-4c5a-9e8f-0123456789ab", want: "6a3c7f0e-1d2b-4c5a-9e8f-0123456789ab"},
		"43 characters fit":     {in: strings.Repeat("a", 43), want: strings.Repeat("a", 43)},
		"44 characters are cut": {in: strings.Repeat("a", 44)},
		"long name is cut":      {in: strings.Repeat("db.", 80)},
		"foreign characters":    {in: "a/b c"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := tagValue(tc.in)
			assert.Regexp(t, `^[A-Za-z0-9_.-]{0,43}$`, got, "an OTC tag value")
			if tc.want != "" {
				assert.Equal(t, tc.want, got)
			} else {
				assert.NotEqual(t, tc.in, got)
				assert.Regexp(t, `-[0-9a-f]{8}$`, got, "a hash keeps cut values apart")
			}
			assert.Equal(t, got, tagValue(tc.in), "deterministic")
		})
	}
	assert.NotEqual(t, tagValue(strings.Repeat("a", 44)), tagValue(strings.Repeat("a", 45)), "cut values still differ")
}

func TestInstanceNames(t *testing.T) {
	n := InstanceName("prod-1", "rds1", "my-rds-single")
	assert.Regexp(t, `^rds-rds1-my-rds-single-[0-9a-f]{16}$`, n)
	assert.Equal(t, n, InstanceName("prod-1", "rds1", "my-rds-single"), "deterministic")
	assert.NotEqual(t, n, InstanceName("prod-2", "rds1", "my-rds-single"), "the cluster id is part of the name")
	assert.NotEqual(t, n, LegacyInstanceName("rds1", "my-rds-single"))
	assert.Regexp(t, `^rds-rds1-my-rds-single-[0-9a-f]{8}$`, LegacyInstanceName("rds1", "my-rds-single"), "the legacy scheme is unchanged")
	long := InstanceName(strings.Repeat("c", 32), strings.Repeat("n", 63), strings.Repeat("a.b", 80))
	assert.LessOrEqual(t, len(long), 64)
	assert.Regexp(t, `^[A-Za-z][A-Za-z0-9_-]{3,63}$`, long)
	assert.NotEqual(t, InstanceName("c", "a-b", "c"), InstanceName("c", "a", "b-c"), "collision-safe")
}

func TestClassify(t *testing.T) {
	me := owner{Cluster: "prod", Namespace: "rds1", Name: "ret1", UID: "uid-new"}
	names := []string{"rds-rds1-ret1-new", "rds-rds1-ret1-legacy"}
	tagsOf := func(o owner, released string) map[string]string {
		tags := o.tags()
		if released != "" {
			tags[TagReleasedBy] = released
		}
		return tags
	}
	old := owner{Cluster: "prod", Namespace: "rds1", Name: "ret1", UID: "uid-old"}
	cases := map[string]struct {
		name string
		tags map[string]string
		want claim
	}{
		"ours": {
			name: "anything", tags: me.tags(),
			want: claim{Kind: Ours, Namespace: "rds1", Cluster: "prod"},
		},
		"ours under its legacy name": {
			name: names[1], tags: me.tags(),
			want: claim{Kind: Ours, Namespace: "rds1", Cluster: "prod"},
		},
		"untagged with our new name": {
			name: names[0], tags: nil,
			want: claim{Kind: OursUntagged},
		},
		"untagged with our legacy name": {
			name: names[1], tags: map[string]string{"team": "a"},
			want: claim{Kind: OursUntagged},
		},
		"untagged with another name": {
			name: "someone-elses", tags: nil,
			want: claim{Kind: Unowned},
		},
		"released by the object before, same name": {
			name: names[0], tags: tagsOf(old, "uid-old"),
			want: claim{Kind: Released, Namespace: "rds1", Cluster: "prod", ReleasedBy: "uid-old"},
		},
		"released by us (Retain in progress)": {
			name: names[0], tags: tagsOf(me, "uid-new"),
			want: claim{Kind: Released, Namespace: "rds1", Cluster: "prod", ReleasedBy: "uid-new"},
		},
		"release tag alone": {
			name: names[0], tags: map[string]string{TagReleasedBy: "uid-x"},
			want: claim{Kind: Released, ReleasedBy: "uid-x"},
		},
		"adopted after a release: stale release tag": {
			name: "x", tags: tagsOf(me, "uid-old"),
			want: claim{Kind: Ours, Namespace: "rds1", Cluster: "prod", ReleasedBy: "uid-old", StaleRelease: true},
		},
		"another object, our name": {
			name: names[0], tags: old.tags(),
			want: claim{Kind: OwnedByOther, Namespace: "rds1", Cluster: "prod"},
		},
		"our uid in another cluster": {
			name: names[0], tags: owner{Cluster: "staging", Namespace: "rds1", Name: "ret1", UID: "uid-new"}.tags(),
			want: claim{Kind: OwnedByOther, Namespace: "rds1", Cluster: "staging"},
		},
		"a partial owner tag is not untagged": {
			name: names[0], tags: map[string]string{TagOwnerNamespace: "rds1"},
			want: claim{Kind: OwnedByOther, Namespace: "rds1"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := classify(&cloud.Instance{ID: "i", Name: tc.name, Tags: tc.tags}, me, names...)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.want.Kind == Ours || tc.want.Kind == OursUntagged, got.mine())
		})
	}
}

func TestAdoptionRefusal(t *testing.T) {
	me := owner{Cluster: "prod", Namespace: "rds1", Name: "new", UID: "uid-new"}
	releasedHere := claim{Kind: Released, Namespace: "rds1", Cluster: "prod", ReleasedBy: "uid-old"}
	releasedElsewhere := claim{Kind: Released, Namespace: "evil", Cluster: "prod", ReleasedBy: "uid-x"}
	releasedOtherCluster := claim{Kind: Released, Namespace: "rds1", Cluster: "staging", ReleasedBy: "uid-x"}
	owned := claim{Kind: OwnedByOther, Namespace: "rds1", Cluster: "prod"}
	cases := map[string]struct {
		policy AdoptionPolicy
		claim  claim
		allow  bool
	}{
		"unowned under Unowned":                {AdoptUnowned, claim{Kind: Unowned}, true},
		"untagged with our name under Unowned": {AdoptUnowned, claim{Kind: OursUntagged}, true},
		"released here under Unowned":          {AdoptUnowned, releasedHere, true},
		"released elsewhere under Unowned":     {AdoptUnowned, releasedElsewhere, false},
		"released in another cluster":          {AdoptUnowned, releasedOtherCluster, false},
		"owned by another object":              {AdoptUnowned, owned, false},
		"ours already (a lost answer)":         {AdoptNever, claim{Kind: Ours}, true},
		"unowned under SameNamespace":          {AdoptSameNamespace, claim{Kind: Unowned}, false},
		"released here under SameNamespace":    {AdoptSameNamespace, releasedHere, true},
		"released elsewhere, SameNamespace":    {AdoptSameNamespace, releasedElsewhere, false},
		"released here under Never":            {AdoptNever, releasedHere, false},
		"unowned under Never":                  {AdoptNever, claim{Kind: Unowned}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			why := adoptionRefusal(tc.policy, tc.claim, me)
			assert.Equal(t, tc.allow, why == "", why)
			if !tc.allow {
				assert.NotContains(t, why, "evil", "another tenant's namespace is never named")
			}
		})
	}
}

func TestRestoreSourceRefusal(t *testing.T) {
	me := owner{Cluster: "prod", Namespace: "rds1", Name: "copy", UID: "uid-copy"}
	cases := map[string]struct {
		claim      claim
		ownProject bool
		allow      bool
	}{
		"owned by an object of this namespace":    {claim{Kind: OwnedByOther, Namespace: "rds1", Cluster: "prod"}, false, true},
		"released by an object of this namespace": {claim{Kind: Released, Namespace: "rds1", Cluster: "prod"}, false, true},
		"ours":                                {claim{Kind: Ours, Namespace: "rds1", Cluster: "prod"}, false, true},
		"another namespace":                   {claim{Kind: OwnedByOther, Namespace: "rds2", Cluster: "prod"}, false, false},
		"this namespace in another cluster":   {claim{Kind: OwnedByOther, Namespace: "rds1", Cluster: "staging"}, false, false},
		"untagged":                            {claim{Kind: Unowned}, false, false},
		"untagged, the namespace's own creds": {claim{Kind: Unowned}, true, true},
		"another namespace, own creds":        {claim{Kind: OwnedByOther, Namespace: "rds2", Cluster: "prod"}, true, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			why := restoreSourceRefusal(tc.claim, me, tc.ownProject)
			assert.Equal(t, tc.allow, why == "", why)
		})
	}
}

func TestPickInstance(t *testing.T) {
	t1 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	in := func(id string, created time.Time) *cloud.Instance { return &cloud.Instance{ID: id, Created: created} }
	cases := map[string]struct {
		mine       []*cloud.Instance
		statusID   string
		wantKeep   string
		wantOthers []string
	}{
		"none":                    {nil, "", "", nil},
		"one":                     {[]*cloud.Instance{in("a", t1)}, "", "a", nil},
		"the older one":           {[]*cloud.Instance{in("b", t1.Add(time.Hour)), in("a2", t1)}, "", "a2", []string{"b"}},
		"a building one is newer": {[]*cloud.Instance{in("a", time.Time{}), in("b", t1)}, "", "b", []string{"a"}},
		"both building: by id":    {[]*cloud.Instance{in("b", time.Time{}), in("a", time.Time{})}, "", "a", []string{"b"}},
		"status wins":             {[]*cloud.Instance{in("a", t1), in("b", time.Time{})}, "b", "b", []string{"a"}},
		"three":                   {[]*cloud.Instance{in("c", t1), in("a", t1.Add(time.Minute)), in("b", t1)}, "", "b", []string{"a", "c"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			keep, others := pickInstance(tc.mine, tc.statusID)
			if tc.wantKeep == "" {
				assert.Nil(t, keep)
			} else {
				assert.Equal(t, tc.wantKeep, keep.ID)
			}
			assert.Equal(t, tc.wantOthers, others)
		})
	}
}

func TestReservedTagsAreInvalidSpec(t *testing.T) {
	for key, reserved := range map[string]bool{
		"rds-owner-uid": true, "rds-owner-x": true, "rds-released-by": true, "rds-releasedx": true,
		"RDS-OWNER-UID": true, "Rds-Released-By": true, "rds-Owner-namespace": true,
		"rds-owner": false, "team": false, "rds-other": false,
	} {
		spec := sampleSpec()
		spec.Tags = []v1alpha1.Tag{{Key: key, Value: "x"}}
		problems := Validate(&spec)
		if reserved {
			assert.Len(t, problems, 1, key)
			assert.NotEmpty(t, tagProblem(spec.Tags), key)
		} else {
			assert.Empty(t, problems, key)
		}
	}
}

// TestSyncOwnershipSteps: what one sync call does with an instance, by what its tags say.
func TestSyncOwnershipSteps(t *testing.T) {
	untagged := func() *cloud.Instance { in := activeInstance(); in.Tags = nil; return in }
	var wrote map[string]string
	var deleted []string
	cases := map[string]struct {
		reason     string
		status     v1alpha1.RdsStatus
		inst       func() *cloud.Instance
		byName     map[string][]*cloud.Instance
		setTags    error
		wantCalls  []string
		wantReady  string
		wantSynced string
		wantSecret string // the connection Secret's password; "" for none
		check      func(t *testing.T, st *v1alpha1.RdsStatus)
	}{
		"untagged instance in status: tags first": {
			reason:     "the first change to an instance of ours without tags writes them, after one look for duplicates",
			status:     v1alpha1.RdsStatus{ID: "inst-1"},
			inst:       untagged,
			wantCalls:  []string{"GetInstance", "FindInstancesByName", "FindInstancesByName", "SetTags"},
			wantReady:  ReasonAvailable,
			wantSynced: ReasonReconcileSuccess,
			wantSecret: "A12345678+",
			check: func(t *testing.T, _ *v1alpha1.RdsStatus) {
				assert.Equal(t, ownerTags("uid-1"), wrote)
			},
		},
		"busy instance: the tags wait": {
			reason:     "OTC refuses tags while the instance is busy: wait and retry, nothing else",
			status:     v1alpha1.RdsStatus{ID: "inst-1"},
			inst:       untagged,
			setTags:    cloud.ErrBusy,
			wantCalls:  []string{"GetInstance", "FindInstancesByName", "FindInstancesByName", "SetTags"},
			wantReady:  ReasonAvailable,
			wantSynced: ReasonInstanceBusy,
			wantSecret: "A12345678+",
		},
		"untagged duplicate with our name": {
			reason: "a lost race left a second untagged instance: it is reported, our tags go on the status one",
			status: v1alpha1.RdsStatus{ID: "inst-1"},
			inst:   untagged,
			byName: map[string][]*cloud.Instance{
				InstanceName("local", "rds1", "my-rds-single"): {untagged(), {ID: "inst-2", Name: InstanceName("local", "rds1", "my-rds-single")}},
			},
			wantCalls:  []string{"GetInstance", "FindInstancesByName", "FindInstancesByName", "SetTags"},
			wantReady:  ReasonAvailable,
			wantSynced: ReasonReconcileSuccess,
			wantSecret: "A12345678+",
			check: func(t *testing.T, st *v1alpha1.RdsStatus) {
				assert.Equal(t, []string{"inst-2"}, st.Duplicates)
				assert.Contains(t, getCondition(st, v1alpha1.ConditionInstanceDuplicates).Message, "inst-2")
			},
		},
		"stale release tag is removed": {
			reason: "adopted after a release: the earlier owner's release tag goes, as a change of its own",
			status: v1alpha1.RdsStatus{ID: "inst-1", Adopted: true},
			inst: func() *cloud.Instance {
				in := activeInstance()
				in.Tags[TagReleasedBy] = "uid-0"
				return in
			},
			wantCalls:  []string{"GetInstance", "DeleteTags"},
			wantReady:  ReasonAvailable,
			wantSynced: ReasonReconcileSuccess,
			wantSecret: "A12345678+",
			check:      func(t *testing.T, _ *v1alpha1.RdsStatus) { assert.Equal(t, []string{TagReleasedBy}, deleted) },
		},
		"another object's instance in status": {
			reason: "no change, nothing reported, the observed Secret echoed (here: none)",
			status: v1alpha1.RdsStatus{ID: "inst-9"},
			inst: func() *cloud.Instance {
				in := activeInstance()
				in.ID, in.Tags = "inst-9", ownerTags("uid-other")
				return in
			},
			wantCalls:  []string{"GetInstance"},
			wantReady:  ReasonInstanceNotFound,
			wantSynced: ReasonReconcileSuccess,
		},
		"released instance carries our name": {
			reason: "no status.id: the name is taken by a released instance; nothing is created or taken over",
			byName: map[string][]*cloud.Instance{
				InstanceName("local", "rds1", "my-rds-single"): {func() *cloud.Instance {
					in := activeInstance()
					in.Tags = ownerTags("uid-0")
					in.Tags[TagReleasedBy] = "uid-0"
					return in
				}()},
			},
			wantCalls:  []string{"FindInstancesByName", "FindInstancesByName"},
			wantReady:  ReasonInstanceNameTaken,
			wantSynced: ReasonInstanceNameTaken,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			wrote, deleted = nil, nil
			f := &cloudtest.Fake{
				FindInstancesByNameFn: func(_ context.Context, name string) ([]*cloud.Instance, error) { return tc.byName[name], nil },
				Day2: cloudtest.Day2{
					SetTagsFn:    func(_ context.Context, _ string, tags map[string]string) error { wrote = tags; return tc.setTags },
					DeleteTagsFn: func(_ context.Context, _ string, keys []string) error { deleted = keys; return nil },
				},
			}
			if tc.inst != nil {
				f.GetInstanceFn = func(context.Context, string) (*cloud.Instance, error) { return tc.inst(), nil }
			}
			resp, err := newReconciler(f).Sync(context.Background(), request(sampleSpec(), tc.status))
			require.NoError(t, err, tc.reason)
			assert.Equal(t, tc.wantCalls, f.Calls(), tc.reason)
			assert.Equal(t, tc.wantReady, condition(t, resp.Status, v1alpha1.ConditionReady).Reason, tc.reason)
			assert.Equal(t, tc.wantSynced, condition(t, resp.Status, v1alpha1.ConditionSynced).Reason, tc.reason)
			if tc.wantSecret == "" {
				assert.Empty(t, resp.Children, "no connection Secret")
			} else {
				assert.Equal(t, tc.wantSecret, string(secretChild(t, resp.Children).Data[KeyPassword]))
			}
			if tc.check != nil {
				tc.check(t, resp.Status)
			}
		})
	}
}

// TestAdoptionPolicyIsApplied: --adoption decides, before any change, whether instanceid adopts.
func TestAdoptionPolicyIsApplied(t *testing.T) {
	unowned := func(context.Context, string) (*cloud.Instance, error) {
		in := activeInstance()
		in.ID, in.Name, in.Tags = restoreAdoptID, "made-in-the-console", nil
		return in, nil
	}
	for policy, wantAdopted := range map[AdoptionPolicy]bool{AdoptUnowned: true, AdoptSameNamespace: false, AdoptNever: false} {
		t.Run(string(policy), func(t *testing.T) {
			var wrote map[string]string
			f := &cloudtest.Fake{GetInstanceFn: unowned, Day2: cloudtest.Day2{
				SetTagsFn: func(_ context.Context, _ string, tags map[string]string) error { wrote = tags; return nil },
			}}
			r := New(Config{Cloud: f, Now: func() time.Time { return t0 }, Adoption: policy})
			spec := sampleSpec()
			spec.Instanceid = restoreAdoptID
			resp, err := r.Sync(context.Background(), request(spec, v1alpha1.RdsStatus{}))
			require.NoError(t, err)
			if wantAdopted {
				assert.Equal(t, []string{"GetInstance", "SetTags"}, f.Calls())
				assert.Equal(t, ownerTags("uid-1"), wrote, "the adoption's one change")
				assert.Equal(t, restoreAdoptID, resp.Status.ID)
				return
			}
			assert.Equal(t, []string{"GetInstance"}, f.Calls(), "no change")
			assert.Empty(t, resp.Status.ID)
			assert.Equal(t, ReasonAdoptionRefused, condition(t, resp.Status, v1alpha1.ConditionSynced).Reason)
			assert.Empty(t, resp.Children, "no connection Secret")
		})
	}
}

// TestForgedDuplicatesAreBounded: status.duplicates is what the last call said, but a tenant who
// may write its object's status can make it list thousands of ids. Looking each up again would make
// one sync call thousands of OTC calls under the controller's shared credentials (throttling every
// other namespace) and run past the hook's deadline. Beyond a handful, the object's instances are
// listed by name once instead, which is the truth however long the list.
func TestForgedDuplicatesAreBounded(t *testing.T) {
	name := InstanceName("local", "rds1", "my-rds-single")
	forged := []string{"inst-2"}
	for i := range 5000 {
		forged = append(forged, fmt.Sprintf("victim-%04d", i))
	}
	cases := map[string]struct {
		listed    []string
		wantCalls []string
		wantDups  []string
	}{
		"a few are looked up one by one": {
			listed:    forged[:3],
			wantCalls: []string{"GetInstance", "GetInstance", "GetInstance", "GetInstance"},
			wantDups:  []string{"inst-2"},
		},
		"a forged long list costs two listings": {
			listed:    forged,
			wantCalls: []string{"GetInstance", "FindInstancesByName", "FindInstancesByName"},
			wantDups:  []string{"inst-2"},
		},
	}
	for desc, tc := range cases {
		t.Run(desc, func(t *testing.T) {
			f := &cloudtest.Fake{
				GetInstanceFn: func(_ context.Context, id string) (*cloud.Instance, error) {
					in := activeInstance()
					in.ID = id
					if strings.HasPrefix(id, "victim-") {
						in.Name, in.Tags = "rds-rds2-x-0123456789abcdef", owner{Cluster: "local", Namespace: "rds2", Name: "x", UID: "uid-v"}.tags()
					}
					return in, nil
				},
				FindInstancesByNameFn: func(_ context.Context, n string) ([]*cloud.Instance, error) {
					if n != name {
						return nil, nil
					}
					a, b := activeInstance(), activeInstance()
					b.ID = "inst-2"
					return []*cloud.Instance{a, b}, nil
				},
			}
			resp, err := newReconciler(f).Sync(context.Background(), request(sampleSpec(), v1alpha1.RdsStatus{ID: "inst-1", Duplicates: tc.listed}))
			require.NoError(t, err)
			assert.Equal(t, tc.wantCalls, f.Calls())
			assert.Equal(t, tc.wantDups, resp.Status.Duplicates, "only this object's instances are reported")
		})
	}
}

// TestUntaggedInstanceOlderThanTheObject: an untagged instance is taken over by its name only if it
// is not older than the object. The legacy name has no cluster id, so rds1/db in another cluster
// sharing the OTC project computes it too, and an object created again after a Retain deletion of
// the version before tags computes it again: neither may take over the old instance by its name.
func TestUntaggedInstanceOlderThanTheObject(t *testing.T) {
	legacy := LegacyInstanceName("rds1", "my-rds-single")
	cases := map[string]struct {
		created    time.Time // the instance's; the object was created at t0
		wantCalls  []string
		wantReady  string
		wantSecret bool
	}{
		"created a year before the object: not ours": {
			created:   t0.AddDate(-1, 0, 0),
			wantCalls: []string{"FindInstancesByName", "FindInstancesByName"},
			wantReady: ReasonInstanceNameTaken,
		},
		"created after the object (a lost create answer): ours": {
			created:    t0.Add(10 * time.Minute),
			wantCalls:  []string{"FindInstancesByName", "FindInstancesByName", "SetTags"},
			wantReady:  ReasonAvailable,
			wantSecret: true,
		},
		"clocks a minute apart: ours": {
			created:    t0.Add(-time.Minute),
			wantCalls:  []string{"FindInstancesByName", "FindInstancesByName", "SetTags"},
			wantReady:  ReasonAvailable,
			wantSecret: true,
		},
		"still building (no creation time): ours": {
			wantCalls:  []string{"FindInstancesByName", "FindInstancesByName", "SetTags"},
			wantReady:  ReasonAvailable,
			wantSecret: true,
		},
	}
	for desc, tc := range cases {
		t.Run(desc, func(t *testing.T) {
			var wrote []string
			f := &cloudtest.Fake{
				FindInstancesByNameFn: func(_ context.Context, n string) ([]*cloud.Instance, error) {
					if n != legacy {
						return nil, nil
					}
					in := activeInstance()
					in.Name, in.Tags, in.Created = legacy, nil, tc.created
					return []*cloud.Instance{in}, nil
				},
				Day2: cloudtest.Day2{SetTagsFn: func(_ context.Context, id string, _ map[string]string) error {
					wrote = append(wrote, id)
					return nil
				}},
			}
			req := request(sampleSpec(), v1alpha1.RdsStatus{}, storedSecret("A12345678+"))
			req.Parent.CreationTimestamp = metav1.NewTime(t0)
			resp, err := newReconciler(f).Sync(context.Background(), req)
			require.NoError(t, err)
			assert.Equal(t, tc.wantCalls, f.Calls())
			assert.Equal(t, tc.wantReady, condition(t, resp.Status, v1alpha1.ConditionReady).Reason)
			if tc.wantSecret {
				assert.Equal(t, "inst-1", resp.Status.ID)
				return
			}
			assert.Empty(t, wrote, "no tags on an instance that is not ours")
			assert.Empty(t, resp.Status.ID)
			msg := condition(t, resp.Status, v1alpha1.ConditionReady).Message
			assert.NotContains(t, msg, "inst-1", "an instance not proven the namespace's is never named")
			assert.Contains(t, msg, "adopt it: set instanceid to its id", "how to adopt it")
			s := secretChild(t, resp.Children)
			assert.Nil(t, s.Data[KeyHost], "no connection data of the old instance")
		})
	}
}

// TestRestoreSourceIsNoExistenceOracle: with the controller's credentials, restorefrom naming an
// instance of another namespace and naming one that does not exist answer alike, so that a tenant
// cannot probe which instances (and, by their computable names, which Rds objects) other
// namespaces have.
func TestRestoreSourceIsNoExistenceOracle(t *testing.T) {
	const (
		theirs  = "fedcba9876543210fedcba9876543210in01"
		nowhere = "00000000000000000000000000000000in01"
	)
	theirName := InstanceName("local", "rds2", "db")
	other := func() *cloud.Instance {
		in := activeInstance()
		in.ID, in.Name, in.Tags = theirs, theirName, owner{Cluster: "local", Namespace: "rds2", Name: "db", UID: "uid-2"}.tags()
		return in
	}
	f := &cloudtest.Fake{
		GetInstanceFn: func(_ context.Context, id string) (*cloud.Instance, error) {
			if id == theirs {
				return other(), nil
			}
			return nil, cloud.ErrNotFound
		},
		FindInstancesByNameFn: func(_ context.Context, n string) ([]*cloud.Instance, error) {
			if n == theirName {
				return []*cloud.Instance{other(), other()}, nil // even several of that name
			}
			return nil, nil
		},
	}
	answer := func(source string) v1alpha1.Condition {
		spec := sampleSpec()
		spec.Restorefrom = &v1alpha1.RestoreFrom{Instance: source, Backupid: "b-1"}
		resp, err := newReconciler(f).Sync(context.Background(), request(spec, v1alpha1.RdsStatus{}, storedSecret("A12345678+")))
		require.NoError(t, err)
		c := condition(t, resp.Status, v1alpha1.ConditionSynced)
		c.Message = strings.ReplaceAll(c.Message, source, "X")
		return c
	}
	byID := answer(theirs)
	assert.Equal(t, ReasonRestoreSourceRefused, byID.Reason)
	assert.Equal(t, byID, answer(nowhere), "by id")
	assert.Equal(t, byID, answer(theirName), "by name")
	assert.Equal(t, byID, answer("rds-rds2-nothing-0123456789abcdef"), "by name")
}

// TestNameTakenMessage: the advice of InstanceNameTaken leads somewhere, and names the instance
// only when it is the namespace's own released one that the policy lets this object adopt.
func TestNameTakenMessage(t *testing.T) {
	me := owner{Cluster: "prod", Namespace: "rds1", Name: "db", UID: "uid-new"}
	const id = "0123456789abcdef0123456789abcdefin01"
	releasedHere := claim{Kind: Released, Namespace: "rds1", Cluster: "prod", ReleasedBy: "uid-old"}
	cases := map[string]struct {
		reason    string
		claim     claim
		policy    AdoptionPolicy
		wantID    bool
		wantAdopt bool // the advice is to adopt it
	}{
		"released by this namespace": {
			reason: "the namespace's own instance: its id and how to adopt it",
			claim:  releasedHere, policy: AdoptUnowned, wantID: true, wantAdopt: true,
		},
		"released by this namespace, policy SameNamespace": {
			reason: "SameNamespace adopts it too",
			claim:  releasedHere, policy: AdoptSameNamespace, wantID: true, wantAdopt: true,
		},
		"released by this namespace, policy Never": {
			reason: "adopting would be refused: another name is the advice",
			claim:  releasedHere, policy: AdoptNever,
		},
		"released by another namespace": {
			reason: "another tenant's: nothing of it is named",
			claim:  claim{Kind: Released, Namespace: "rds2", Cluster: "prod", ReleasedBy: "uid-x"}, policy: AdoptUnowned,
		},
		"released in another cluster": {
			reason: "the same namespace elsewhere is another tenant",
			claim:  claim{Kind: Released, Namespace: "rds1", Cluster: "staging", ReleasedBy: "uid-x"}, policy: AdoptUnowned,
		},
		"owned by another live object": {
			reason: "adopting it is refused (AdoptionRefused): another name is the advice",
			claim:  claim{Kind: OwnedByOther, Namespace: "rds1", Cluster: "prod"}, policy: AdoptUnowned,
		},
		"untagged, policy Unowned": {
			reason: "adoptable, but not proven the namespace's: the way to adopt it, not its id",
			claim:  claim{Kind: Unowned}, policy: AdoptUnowned, wantAdopt: true,
		},
		"untagged, policy SameNamespace": {
			reason: "adopting would be refused: another name is the advice",
			claim:  claim{Kind: Unowned}, policy: AdoptSameNamespace,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			msg := nameTakenMessage(id, tc.claim, tc.policy, me)
			assert.Equal(t, tc.wantID, strings.Contains(msg, id), tc.reason)
			assert.Equal(t, tc.wantAdopt, strings.Contains(msg, "adopt it"), tc.reason)
			assert.Contains(t, strings.ToLower(msg), "choose another name for this object", tc.reason)
			assert.NotContains(t, msg, "rds2", tc.reason)
			assert.NotContains(t, msg, "staging", tc.reason)
		})
	}
}

// TestInstanceNamesKeepTheirScheme: the names are how a lost create is found again, so their
// scheme never changes: InstanceName and LegacyInstanceName build them as the plain reference
// below does (the code before they were built in one buffer), for short, cut and odd names.
func TestInstanceNamesKeepTheirScheme(t *testing.T) {
	reference := func(hashed, namespace, name string, n int) string {
		sum := sha256.Sum256([]byte(hashed))
		suffix := "-" + hex.EncodeToString(sum[:])[:n]
		var b strings.Builder
		for _, r := range namespace + "-" + name {
			switch {
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
				b.WriteRune(r)
			default:
				b.WriteByte('-')
			}
		}
		readable := b.String()
		if room := 64 - len("rds-") - len(suffix); len(readable) > room {
			readable = strings.TrimRight(readable[:room], "-")
		}
		return "rds-" + readable + suffix
	}
	for _, tc := range [][2]string{
		{"rds1", "my-rds-single"}, {"a", "b"}, {strings.Repeat("n", 63), strings.Repeat("a.b", 80)},
		{"ns", strings.Repeat("x", 38) + "." + strings.Repeat("y", 30)}, {"ns", strings.Repeat("-", 70)},
		{"ümlaut", "name.with.dots"},
	} {
		ns, name := tc[0], tc[1]
		assert.Equal(t, reference("prod/"+ns+"/"+name, ns, name, 16), InstanceName("prod", ns, name), "%s/%s", ns, name)
		assert.Equal(t, reference(ns+"/"+name, ns, name, 8), LegacyInstanceName(ns, name), "%s/%s", ns, name)
	}
	sum := sha256.Sum256([]byte("uid\x00r1"))
	assert.Equal(t, hex.EncodeToString(sum[:])[:8], RequestMark("uid", "r1"))
	assert.Equal(t, hex.EncodeToString(sum[:])[:8]+"-done", RestartSeal("uid", "r1"))
}
