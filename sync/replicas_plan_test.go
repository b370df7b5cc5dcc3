package reconcile

import (
	"cmp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// The table below plays one object, team-a/shop, whose instance "prim" has read replicas.
var (
	rrMe     = owner{Cluster: "local", Namespace: "team-a", Name: "shop", UID: "uid-1", Created: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)}
	rrNameOf = func(replica string) string { return ReplicaInstanceName("local", "team-a", "shop", replica) }
)

// rrFlavors are the read replica flavors OTC sells in every AZ of the table.
var rrFlavors = func() []cloud.Flavor {
	var out []cloud.Flavor
	for _, code := range []string{"rds.mysql.n1.large.2.rr", "rds.mysql.n1.xlarge.2.rr"} {
		out = append(out, cloud.Flavor{SpecCode: code, Mode: "replica", AZStatus: map[string]string{"eu-de-01": "normal", "eu-de-02": "normal", "eu-de-03": "normal"}})
	}
	return out
}()

// rrReplica is a replica of prim named by spec name r, tagged as the object's unless untagged.
func rrReplica(id, r, status string, tagged bool) *cloud.Instance {
	in := &cloud.Instance{ID: id, Name: rrNameOf(r), Status: status, Type: cloud.TypeReplica, ReplicaOf: "prim",
		Flavor: "rds.mysql.n1.large.2.rr", Volume: cloud.Volume{Type: "CLOUDSSD", Size: 40}, PrivateIPs: []string{"10.0.0." + id}, Port: 3306,
		Nodes: []cloud.Node{{Role: "readreplica", AvailabilityZone: "eu-de-02"}}, Created: rrMe.Created.Add(time.Hour)}
	if tagged {
		in.Tags = rrMe.replicaTags(r)
	}
	if status == cloud.StatusBuild {
		in.Created = time.Time{}
	}
	return in
}

func TestPlanReplicas(t *testing.T) {
	declared := []v1alpha1.ReadReplica{{Name: "r1", Flavorref: "rds.mysql.n1.large.2.rr", Availabilityzone: "eu-de-02"}}
	primary := func(replicas ...string) *cloud.Instance {
		return &cloud.Instance{ID: "prim", Status: cloud.StatusActive, Region: "eu-de", Volume: cloud.Volume{Type: "CLOUDSSD", Size: 40}, Replicas: replicas}
	}
	byID := func(ins ...*cloud.Instance) map[string]seen {
		m := map[string]seen{}
		for _, in := range ins {
			m[in.ID] = seen{inst: in}
		}
		return m
	}
	active := rrReplica("1", "r1", cloud.StatusActive, true)
	other := rrReplica("9", "r1", cloud.StatusActive, false)
	other.Tags = owner{Cluster: "local", Namespace: "team-b", Name: "x", UID: "uid-other"}.replicaTags("r1")
	released := rrReplica("1", "r1", cloud.StatusActive, true)
	released.Tags[TagOwnerUID], released.Tags[TagReleasedBy] = "uid-old", "uid-old"
	cases := map[string]struct {
		reason   string
		replicas []v1alpha1.ReadReplica
		prior    []v1alpha1.ReadReplicaStatus
		op       *v1alpha1.Operation
		inst     *cloud.Instance
		byID     map[string]seen
		byName   map[string]seen
		jobs     map[string]seen
		deleting bool
		stopped  bool // spec.stopped
		// policy is the adoption policy; "" is Never.
		policy AdoptionPolicy
		// flavors is the flavor list read; nil is rrFlavors, noFlavors none read yet.
		flavors   []cloud.Flavor
		noFlavors bool
		want      func(t *testing.T, p replicasPlan)
	}{
		"flavors read before create": {
			reason: "a create waits for OTC's flavor list, as a resize does", replicas: declared, inst: primary(), byName: map[string]seen{"r1": {}}, noFlavors: true,
			want: func(t *testing.T, p replicasPlan) {
				assert.Equal(t, []need{{kind: readFlavors}}, p.needs)
				assert.Nil(t, p.change)
			},
		},
		"flavor not on sale": {
			reason: "a replica flavor OTC does not sell in the AZ is refused in words, no call", replicas: declared, inst: primary(), byName: map[string]seen{"r1": {}},
			flavors: []cloud.Flavor{{SpecCode: "rds.mysql.n1.large.2.rr", Mode: "replica", AZStatus: map[string]string{"eu-de-02": "sellout"}}},
			want: func(t *testing.T, p replicasPlan) {
				assert.Nil(t, p.change)
				require.Len(t, p.tells, 1)
				assert.Equal(t, ReasonFlavorUnavailable, p.tells[0].reason)
			},
		},
		"none": {
			reason: "no replicas declared, listed or reported: nothing is read", inst: primary(),
			want: func(t *testing.T, p replicasPlan) { assert.Equal(t, replicasPlan{}, p) },
		},
		"related read first": {
			reason: "the primary's related replicas are read by id (the shared view while steady)", replicas: declared, inst: primary("1"),
			want: func(t *testing.T, p replicasPlan) {
				assert.Equal(t, []need{{kind: readInstance, id: "1"}}, p.needs)
				assert.Nil(t, p.change)
			},
		},
		"name looked up before create": {
			reason: "a create whose answer was lost is found by its name first", replicas: declared, inst: primary(),
			want: func(t *testing.T, p replicasPlan) {
				assert.Equal(t, []need{{kind: readInstancesName, name: rrNameOf("r1")}}, p.needs)
			},
		},
		"create": {
			reason:   "a declared replica nobody made is created of the object's own instance, with the primary's volume",
			replicas: declared, inst: primary(), byName: map[string]seen{"r1": {}},
			want: func(t *testing.T, p replicasPlan) {
				require.NotNil(t, p.change)
				assert.Equal(t, actCreateReplica, p.change.act.kind)
				assert.Equal(t, cloud.CreateReplicaOpts{Name: rrNameOf("r1"), Of: "prim", Flavor: "rds.mysql.n1.large.2.rr", VolumeType: "CLOUDSSD",
					VolumeSize: 40, Region: "eu-de", AvailabilityZone: "eu-de-02"}, *p.change.act.replica)
				assert.Equal(t, []v1alpha1.ReadReplicaStatus{{Name: "r1", InstanceName: rrNameOf("r1")}}, p.status)
			},
		},
		"found by name is taken over": {
			reason:   "an untagged replica of the primary under the replica's name is the object's lost create: its tags first, no create",
			replicas: declared, inst: primary(), byName: map[string]seen{"r1": {instances: []*cloud.Instance{rrReplica("1", "r1", cloud.StatusBuild, false)}}},
			want: func(t *testing.T, p replicasPlan) {
				require.NotNil(t, p.change)
				assert.Equal(t, action{kind: actSetTags, instance: "1", tags: rrMe.replicaTags("r1")}, p.change.act)
			},
		},
		"untagged related is tagged first": {
			reason: "the ownership tags are the replica's first change", replicas: declared, inst: primary("1"),
			byID: byID(rrReplica("1", "r1", cloud.StatusBuild, false)),
			want: func(t *testing.T, p replicasPlan) {
				require.NotNil(t, p.change)
				assert.Equal(t, actSetTags, p.change.act.kind)
			},
		},
		"name taken": {
			reason:   "another object's instance under the replica's name: nothing is created, and the sentence names no instance",
			replicas: declared, inst: primary(), byName: map[string]seen{"r1": {instances: []*cloud.Instance{other}}},
			want: func(t *testing.T, p replicasPlan) {
				assert.Nil(t, p.change)
				require.Len(t, p.tells, 1)
				assert.Equal(t, ReasonReplicaNameTaken, p.tells[0].reason)
				assert.NotContains(t, p.tells[0].message, "9")
			},
		},
		"another's replica of the primary is left alone": {
			reason: "a replica of the primary another object owns is neither taken over nor deleted",
			inst:   primary("9"), byID: byID(other),
			want: func(t *testing.T, p replicasPlan) {
				assert.Nil(t, p.change)
				assert.Empty(t, p.status)
			},
		},
		"released under Never is not adopted": {
			reason:   "a released replica is taken over only as the adoption policy allows (Never here)",
			replicas: declared, inst: primary("1"), byID: byID(released),
			want: func(t *testing.T, p replicasPlan) {
				assert.Equal(t, []need{{kind: readInstancesName, name: rrNameOf("r1")}}, p.needs, "it is not the object's: a create is considered")
			},
		},
		"released in this namespace is taken over": {
			reason:   "a replica of the instance an object of this namespace released is taken over as the adoption policy allows (Unowned here): its tags first",
			replicas: declared, inst: primary("1"), byID: byID(released), policy: AdoptUnowned,
			want: func(t *testing.T, p replicasPlan) {
				require.NotNil(t, p.change)
				assert.Equal(t, action{kind: actSetTags, instance: "1", tags: rrMe.replicaTags("r1")}, p.change.act)
			},
		},
		"not of this primary": {
			reason: "status may name any id: a replica of another instance is never touched",
			prior:  []v1alpha1.ReadReplicaStatus{{Name: "r1", ID: "7"}}, inst: primary(),
			byID: byID(func() *cloud.Instance {
				r := rrReplica("7", "r1", cloud.StatusActive, true)
				r.ReplicaOf = "elsewhere"
				return r
			}()),
			want: func(t *testing.T, p replicasPlan) {
				assert.Nil(t, p.change)
				assert.Empty(t, p.status)
			},
		},
		"primary busy": {
			reason: "no replica is created while the primary changes", replicas: declared,
			inst: func() *cloud.Instance { p := primary(); p.Status = cloud.StatusModifying; return p }(),
			want: func(t *testing.T, p replicasPlan) {
				assert.Nil(t, p.change)
				assert.Nil(t, p.needs, "and its name is not even looked up")
			},
		},
		"operation in flight": {
			reason: "no replica is created while a day-2 operation of the primary runs", replicas: declared, inst: primary(),
			op:   &v1alpha1.Operation{Type: OpResize, Target: "x"},
			want: func(t *testing.T, p replicasPlan) { assert.Nil(t, p.change) },
		},
		"one at a time": {
			reason:   "a second replica waits while the first is built",
			replicas: append(declared, v1alpha1.ReadReplica{Name: "r2", Flavorref: "rds.mysql.n1.large.2.rr", Availabilityzone: "eu-de-03"}),
			inst:     primary("1"), byID: byID(rrReplica("1", "r1", cloud.StatusBuild, true)),
			op: &v1alpha1.Operation{Type: OpCreateReplica, Target: "r1"},
			want: func(t *testing.T, p replicasPlan) {
				assert.Nil(t, p.change)
				assert.False(t, p.setOp, "the create lasts while r1 is built")
				assert.Equal(t, "BUILD", p.status[0].Status)
			},
		},
		"built without the operation recorded": {
			reason:   "the create's answer was lost: the replica seen being built writes status.operation, which holds the instance's changes",
			replicas: declared, inst: primary("1"), byID: byID(rrReplica("1", "r1", cloud.StatusBuild, true)),
			want: func(t *testing.T, p replicasPlan) {
				assert.True(t, p.setOp)
				assert.Equal(t, &v1alpha1.Operation{Type: OpCreateReplica, Target: "r1"}, p.op)
			},
		},
		"create done": {
			reason: "status.operation CreateReplica ends once the replica is built", replicas: declared, inst: primary("1"),
			byID: byID(active), op: &v1alpha1.Operation{Type: OpCreateReplica, Target: "r1"},
			want: func(t *testing.T, p replicasPlan) {
				assert.True(t, p.setOp)
				assert.Nil(t, p.op)
				assert.Nil(t, p.change)
				assert.Equal(t, []v1alpha1.ReadReplicaStatus{{Name: "r1", ID: "1", InstanceName: rrNameOf("r1"), Status: "ACTIVE",
					Flavor: "rds.mysql.n1.large.2.rr", Volume: 40, Availabilityzone: "eu-de-02", Endpoint: "10.0.0.1:3306"}}, p.status)
			},
		},
		"resize": {
			reason:   "a new flavorref resizes the replica",
			replicas: []v1alpha1.ReadReplica{{Name: "r1", Flavorref: "rds.mysql.n1.xlarge.2.rr", Availabilityzone: "eu-de-02"}},
			inst:     primary("1"), byID: byID(active),
			want: func(t *testing.T, p replicasPlan) {
				require.NotNil(t, p.change)
				assert.Equal(t, action{kind: actResize, instance: "1", flavor: "rds.mysql.n1.xlarge.2.rr"}, p.change.act)
			},
		},
		"grow": {
			reason:   "a larger volumesize grows the replica's storage",
			replicas: []v1alpha1.ReadReplica{{Name: "r1", Flavorref: "rds.mysql.n1.large.2.rr", Availabilityzone: "eu-de-02", Volumesize: 100}},
			inst:     primary("1"), byID: byID(active),
			want: func(t *testing.T, p replicasPlan) {
				require.NotNil(t, p.change)
				assert.Equal(t, action{kind: actEnlargeVolume, instance: "1", size: 100}, p.change.act)
			},
		},
		"no shrink, no move": {
			reason:   "OTC cannot shrink storage nor move a replica: refused in words, no call",
			replicas: []v1alpha1.ReadReplica{{Name: "r1", Flavorref: "rds.mysql.n1.large.2.rr", Availabilityzone: "eu-de-01"}},
			inst:     func() *cloud.Instance { p := primary("1"); return p }(),
			byID: byID(func() *cloud.Instance {
				r := rrReplica("1", "r1", cloud.StatusActive, true)
				r.Volume.Size = 60
				return r
			}()),
			want: func(t *testing.T, p replicasPlan) {
				assert.Nil(t, p.change)
				require.Len(t, p.tells, 2)
				assert.Equal(t, ReasonUnsupportedChange, p.tells[0].reason)
				assert.Contains(t, p.tells[0].message, "cannot move")
				assert.Contains(t, p.tells[1].message, "cannot shrink")
			},
		},
		"resize waits": {
			reason:   "a replica changes only while ACTIVE",
			replicas: []v1alpha1.ReadReplica{{Name: "r1", Flavorref: "rds.mysql.n1.xlarge.2.rr", Availabilityzone: "eu-de-02"}},
			inst:     primary("1"), byID: byID(rrReplica("1", "r1", cloud.StatusModifying, true)),
			want: func(t *testing.T, p replicasPlan) {
				assert.Nil(t, p.change)
				require.Len(t, p.tells, 1)
				assert.Equal(t, ReasonChangeInProgress, p.tells[0].reason)
			},
		},
		"removed is deleted": {
			reason: "a replica of the object no longer declared is deleted", inst: primary("1"), byID: byID(active),
			prior: []v1alpha1.ReadReplicaStatus{{Name: "r1", ID: "1"}},
			want: func(t *testing.T, p replicasPlan) {
				require.NotNil(t, p.change)
				assert.Equal(t, action{kind: actDeleteInstance, instance: "1"}, p.change.act)
			},
		},
		"untagged, named by nothing, is deleted": {
			reason: "a create answered but the answer lost, its name then left the spec before its tags were written: " +
				"known as the object's by its name alone, it is deleted, never left billed and untracked",
			inst: primary("1"), byID: byID(rrReplica("1", "r1", cloud.StatusActive, false)),
			want: func(t *testing.T, p replicasPlan) {
				require.NotNil(t, p.change)
				assert.Equal(t, action{kind: actDeleteInstance, instance: "1"}, p.change.act)
			},
		},
		"untagged under another object's name is left alone": {
			reason: "only the object's own name makes an untagged replica its own",
			inst:   primary("1"), byID: byID(func() *cloud.Instance {
				r := rrReplica("1", "r1", cloud.StatusActive, false)
				r.Name = ReplicaInstanceName("local", "team-b", "shop", "r1")
				return r
			}()),
			want: func(t *testing.T, p replicasPlan) { assert.Nil(t, p.change) },
		},
		"delete followed by its job": {
			reason: "a delete in flight is not sent again while its job runs", inst: primary("1"), byID: byID(active),
			prior: []v1alpha1.ReadReplicaStatus{{Name: "r1", ID: "1", Status: v1alpha1.ReplicaDeleting, JobID: "j1"}},
			jobs:  map[string]seen{"j1": {job: &cloud.Job{ID: "j1", Status: cloud.JobRunning}}},
			want: func(t *testing.T, p replicasPlan) {
				assert.Nil(t, p.change)
				assert.Equal(t, v1alpha1.ReplicaDeleting, p.status[0].Status)
			},
		},
		"failed delete sent again": {
			reason: "a delete whose job failed is sent again", inst: primary("1"), byID: byID(active),
			prior: []v1alpha1.ReadReplicaStatus{{Name: "r1", ID: "1", Status: v1alpha1.ReplicaDeleting, JobID: "j1"}},
			jobs:  map[string]seen{"j1": {job: &cloud.Job{ID: "j1", Status: cloud.JobFailed}}},
			want: func(t *testing.T, p replicasPlan) {
				require.NotNil(t, p.change)
				assert.Equal(t, actDeleteInstance, p.change.act.kind)
			},
		},
		"second of a name": {
			reason:   "of two replicas of a name, the one status names is kept and the other deleted, never the other way round",
			replicas: declared, inst: primary("1", "2"),
			byID:  byID(active, rrReplica("2", "r1", cloud.StatusActive, true)),
			prior: []v1alpha1.ReadReplicaStatus{{Name: "r1", ID: "1"}},
			want: func(t *testing.T, p replicasPlan) {
				require.NotNil(t, p.change)
				assert.Equal(t, action{kind: actDeleteInstance, instance: "2"}, p.change.act)
			},
		},
		"deleting object": {
			reason: "finalize owns the replicas of an object being deleted", replicas: declared, inst: primary(), deleting: true,
			want: func(t *testing.T, p replicasPlan) {
				assert.Nil(t, p.change)
				assert.Nil(t, p.needs)
			},
		},
		"created no smaller than the instance": {
			reason:   "OTC keeps a replica's storage at least its primary's: an instance autopilot (or OTC) grew past volumesize gets replicas of its size (review #21: they were made at volumesize and filled up)",
			replicas: declared, byName: map[string]seen{"r1": {}},
			inst: func() *cloud.Instance { p := primary(); p.Volume.Size = 100; return p }(),
			want: func(t *testing.T, p replicasPlan) {
				require.NotNil(t, p.change)
				assert.Equal(t, 100, p.change.act.replica.VolumeSize)
			},
		},
		"follows the instance's growth": {
			reason:   "a replica whose instance grew past volumesize grows with it",
			replicas: declared, inst: func() *cloud.Instance { p := primary("1"); p.Volume.Size = 100; return p }(), byID: byID(active),
			want: func(t *testing.T, p replicasPlan) {
				require.NotNil(t, p.change)
				assert.Equal(t, action{kind: actEnlargeVolume, instance: "1", size: 100}, p.change.act)
			},
		},
		"full replica grows": {
			reason:   "a replica whose storage is full is grown, as the instance is (review #21: it waited, untold, for ever)",
			replicas: []v1alpha1.ReadReplica{{Name: "r1", Flavorref: "rds.mysql.n1.xlarge.2.rr", Availabilityzone: "eu-de-02", Volumesize: 100}},
			inst:     primary("1"), byID: byID(rrReplica("1", "r1", cloud.StatusStorageFull, true)),
			want: func(t *testing.T, p replicasPlan) {
				require.NotNil(t, p.change)
				assert.Equal(t, action{kind: actEnlargeVolume, instance: "1", size: 100}, p.change.act)
				require.Len(t, p.tells, 1)
				assert.Equal(t, ReasonInstanceUnavailable, p.tells[0].reason, "its resize waits, told")
				assert.Contains(t, p.tells[0].message, "its resize to rds.mysql.n1.xlarge.2.rr waits")
			},
		},
		"failed replica's resize is told": {
			reason:   "a replica that cannot take its resize says so (review #21: Synced said the instance matches the spec)",
			replicas: []v1alpha1.ReadReplica{{Name: "r1", Flavorref: "rds.mysql.n1.xlarge.2.rr", Availabilityzone: "eu-de-02"}},
			inst:     primary("1"), byID: byID(rrReplica("1", "r1", cloud.StatusFailed, true)),
			want: func(t *testing.T, p replicasPlan) {
				assert.Nil(t, p.change)
				require.Len(t, p.tells, 1)
				assert.Equal(t, ReasonInstanceUnavailable, p.tells[0].reason)
				assert.Contains(t, p.tells[0].message, "The read replica r1 is FAILED in OTC, so readerhosts leaves it out; its pending resize of the read replica r1")
			},
		},
		"a replica OTC could not build is told": {
			reason: "a declared replica in CREATE FAIL serves no reads: Synced says so and what to do (review #21: it said the instance matches the spec)", replicas: declared,
			inst: primary("1"), byID: byID(rrReplica("1", "r1", cloud.StatusCreateFail, true)),
			want: func(t *testing.T, p replicasPlan) {
				assert.Nil(t, p.change)
				require.Len(t, p.tells, 1)
				assert.Equal(t, ReasonInstanceUnavailable, p.tells[0].reason)
				assert.Contains(t, p.tells[0].message, "The read replica r1 is CREATE FAIL in OTC, so readerhosts leaves it out; leave it out of readreplicas")
			},
		},
		"create waits for a failed instance, told": {
			reason: "a declared replica the instance cannot take now is told, not silently left out (review #21)", replicas: declared,
			inst: func() *cloud.Instance { p := primary(); p.Status = cloud.StatusFailed; return p }(),
			want: func(t *testing.T, p replicasPlan) {
				assert.Nil(t, p.change)
				require.Len(t, p.tells, 1)
				assert.Equal(t, ReasonInstanceUnavailable, p.tells[0].reason)
				assert.Contains(t, p.tells[0].message, "creation of the read replica r1")
			},
		},
		"stopped: nothing is deleted": {
			reason: "a replica left out while the instance is stopped waits (review #21: OTC refuses a stopped PostgreSQL replica's delete, sent on every call)",
			inst:   func() *cloud.Instance { p := primary("1"); p.Status = cloud.StatusShutdown; return p }(),
			byID:   byID(rrReplica("1", "r1", cloud.StatusShutdown, true)), prior: []v1alpha1.ReadReplicaStatus{{Name: "r1", ID: "1"}}, stopped: true,
			want: func(t *testing.T, p replicasPlan) {
				assert.Nil(t, p.change)
				require.Len(t, p.tells, 1)
				assert.Equal(t, ReasonInstanceStopped, p.tells[0].reason)
				assert.Contains(t, p.tells[0].message, "deletion of the read replica 1")
			},
		},
		"stopped and started: the start first": {
			reason:   "an instance to be started takes its start (day-2 step) before its replicas change: no change here, the wait told in flight",
			replicas: []v1alpha1.ReadReplica{{Name: "r1", Flavorref: "rds.mysql.n1.xlarge.2.rr", Availabilityzone: "eu-de-02"}},
			inst:     func() *cloud.Instance { p := primary("1"); p.Status = cloud.StatusShutdown; return p }(),
			byID:     byID(rrReplica("1", "r1", cloud.StatusShutdown, true)),
			want: func(t *testing.T, p replicasPlan) {
				assert.Nil(t, p.change)
				require.Len(t, p.tells, 1)
				assert.Equal(t, ReasonChangeInProgress, p.tells[0].reason)
				assert.Contains(t, p.tells[0].message, "resize of the read replica r1")
			},
		},
		"limit": {
			reason:   "a primary with five replicas gets no sixth: a stable refusal, no call",
			replicas: declared,
			inst:     primary("a", "b", "c", "d", "e"),
			byID: func() map[string]seen {
				m := map[string]seen{}
				for _, id := range []string{"a", "b", "c", "d", "e"} {
					r := rrReplica(id, "x"+id, cloud.StatusActive, false)
					r.Name, r.Tags = "made-in-the-console-"+id, map[string]string{"team": "other"}
					m[id] = seen{inst: r}
				}
				return m
			}(),
			byName: map[string]seen{"r1": {}},
			want: func(t *testing.T, p replicasPlan) {
				assert.Nil(t, p.change)
				require.Len(t, p.tells, 1)
				assert.Equal(t, ReasonReplicaLimitReached, p.tells[0].reason)
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			require.NotEmpty(t, tc.reason)
			spec := sampleSpec()
			spec.Readreplicas = tc.replicas
			spec.Stopped = tc.stopped
			in := replicasInput{spec: &spec, prior: tc.prior, op: tc.op, inst: tc.inst, me: rrMe, policy: cmp.Or(tc.policy, AdoptNever),
				deleting: tc.deleting, byID: tc.byID, byName: tc.byName, jobs: tc.jobs, flavors: &seen{flavors: rrFlavors}}
			if tc.flavors != nil {
				in.flavors = &seen{flavors: tc.flavors}
			}
			if tc.noFlavors {
				in.flavors = nil
			}
			if in.byID == nil {
				in.byID = map[string]seen{}
			}
			if in.byName == nil {
				in.byName = map[string]seen{}
			}
			if in.jobs == nil {
				in.jobs = map[string]seen{}
			}
			p := planReplicas(in)
			tc.want(t, p)
			assert.Equal(t, p, planReplicas(in), "%s: the same input, the same plan", tc.reason)
		})
	}
}

// TestPlanReplicasOnAnswer: OTC's answer to the change is the plan's: accepted, refused as busy,
// or lost (a create then still holds the primary's changes back).
func TestPlanReplicasOnAnswer(t *testing.T) {
	spec := sampleSpec()
	spec.Readreplicas = []v1alpha1.ReadReplica{{Name: "r1", Flavorref: "rds.mysql.n1.large.2.rr", Availabilityzone: "eu-de-02"}}
	base := replicasInput{spec: &spec, inst: &cloud.Instance{ID: "prim", Status: cloud.StatusActive, Volume: cloud.Volume{Size: 40}},
		me: rrMe, byID: map[string]seen{}, byName: map[string]seen{"r1": {}}, jobs: map[string]seen{}, generation: 4,
		flavors: &seen{flavors: rrFlavors}}
	ch := planReplicas(base).change
	require.NotNil(t, ch)
	cases := map[string]struct {
		reason string
		res    acted
		err    error
		want   func(t *testing.T, p replicasPlan)
	}{
		"accepted": {reason: "the create is recorded: status.operation holds the primary's changes back, the replica is BUILD",
			res: acted{instanceID: "new", jobID: "j"},
			want: func(t *testing.T, p replicasPlan) {
				assert.Equal(t, &v1alpha1.Operation{Type: OpCreateReplica, JobID: "j", Generation: 4, Target: "r1"}, p.op)
				assert.Equal(t, "new", p.status[0].ID)
				assert.Equal(t, cloud.StatusBuild, p.status[0].Status)
				require.Len(t, p.tells, 1)
				assert.Equal(t, aboutMade, p.tells[0].about)
			}},
		"busy": {reason: "OTC refused it as busy: it is made later", err: cloud.ErrBusy,
			want: func(t *testing.T, p replicasPlan) {
				assert.False(t, p.setOp)
				require.Len(t, p.tells, 1)
				assert.Equal(t, ReasonInstanceBusy, p.tells[0].reason)
			}},
		"lost": {reason: "no answer: OTC may have made it, so the operation is recorded and the error reported",
			err: &cloud.Error{Kind: cloud.KindUnavailable, Op: "CreateReplica"},
			want: func(t *testing.T, p replicasPlan) {
				assert.True(t, p.setOp)
				assert.Equal(t, OpCreateReplica, p.op.Type)
				assert.Error(t, p.err)
			}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := base
			in.sent = &replicaSent{ch: *ch, res: tc.res, err: tc.err}
			tc.want(t, planReplicas(in))
		})
	}
}

func TestReplicaInstanceName(t *testing.T) {
	n := ReplicaInstanceName("local", "team-a", "shop", "r1")
	assert.Regexp(t, `^[A-Za-z][A-Za-z0-9_-]{3,63}$`, n)
	assert.NotEqual(t, n, ReplicaInstanceName("local", "team-a", "shop", "r2"))
	assert.NotEqual(t, n, InstanceName("local", "team-a", "shop"))
	long := ReplicaInstanceName("local", strings.Repeat("n", 63), strings.Repeat("o", 253), "abcdefghijklmnop")
	assert.LessOrEqual(t, len(long), 64)
	assert.NotEqual(t, long, ReplicaInstanceName("local", strings.Repeat("n", 63), strings.Repeat("o", 253), "abcdefghijklmnoq"), "the hash keeps cut names apart")
}

func TestReplicaProblems(t *testing.T) {
	rr := func(name, flavor, az string, size int) v1alpha1.ReadReplica {
		return v1alpha1.ReadReplica{Name: name, Flavorref: flavor, Availabilityzone: az, Volumesize: size}
	}
	cases := map[string]struct {
		reason string
		engine string
		rrs    []v1alpha1.ReadReplica
		want   []string
	}{
		"valid":     {reason: "two replicas", rrs: []v1alpha1.ReadReplica{rr("r1", "rds.mysql.n1.large.2.rr", "eu-de-02", 0), rr("r2", "rds.mysql.c2.medium.rr", "eu-de-03", 100)}},
		"sqlserver": {reason: "no replicas for SQL Server", engine: v1alpha1.EngineSQLServer, rrs: []v1alpha1.ReadReplica{rr("r1", "rds.mysql.n1.large.2.rr", "eu-de-02", 0)}, want: []string{"MySQL and PostgreSQL only"}},
		"not rr":    {reason: "a read replica spec code", rrs: []v1alpha1.ReadReplica{rr("r1", "rds.mysql.n1.large.2", "eu-de-02", 0)}, want: []string{"not a read replica spec code"}},
		"two AZs":   {reason: "one AZ", rrs: []v1alpha1.ReadReplica{rr("r1", "rds.mysql.n1.large.2.rr", "eu-de-01,eu-de-02", 0)}, want: []string{"not one AZ"}},
		"name":      {reason: "lowercase, short", rrs: []v1alpha1.ReadReplica{rr("Replica_1", "rds.mysql.n1.large.2.rr", "eu-de-02", 0)}, want: []string{`name "Replica_1"`}},
		"twice":     {reason: "the name is the key", rrs: []v1alpha1.ReadReplica{rr("r1", "rds.mysql.n1.large.2.rr", "eu-de-02", 0), rr("r1", "rds.mysql.n1.large.2.rr", "eu-de-03", 0)}, want: []string{"listed twice"}},
		"volume":    {reason: "steps of 10 GB", rrs: []v1alpha1.ReadReplica{rr("r1", "rds.mysql.n1.large.2.rr", "eu-de-02", 45)}, want: []string{"volumesize 45"}},
		"six":       {reason: "OTC's limit", rrs: []v1alpha1.ReadReplica{rr("a", "rds.mysql.c2.medium.rr", "eu-de-01", 0), rr("b", "rds.mysql.c2.medium.rr", "eu-de-01", 0), rr("c", "rds.mysql.c2.medium.rr", "eu-de-01", 0), rr("d", "rds.mysql.c2.medium.rr", "eu-de-01", 0), rr("e", "rds.mysql.c2.medium.rr", "eu-de-01", 0), rr("f", "rds.mysql.c2.medium.rr", "eu-de-01", 0)}, want: []string{"at most 5"}},
		"tag":       {reason: "rds-replica is the controller's tag", want: []string{"reserved"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := sampleSpec()
			spec.Readreplicas = tc.rrs
			if tc.engine != "" {
				spec.Datastoretype, spec.Datastoreversion, spec.Flavorref, spec.Port = tc.engine, "2022_SE", "rds.mssql.se.s3.large.4", nil
			}
			if name == "tag" {
				spec.Tags = []v1alpha1.Tag{{Key: TagReplica, Value: "x"}}
			}
			got := Validate(&spec)
			require.Len(t, got, len(tc.want), "%s: %v", tc.reason, got)
			for i, w := range tc.want {
				assert.Contains(t, got[i], w, tc.reason)
			}
		})
	}
}

func TestReplicaNamed(t *testing.T) {
	long := owner{Cluster: "local", Namespace: strings.Repeat("n", 63), Name: strings.Repeat("o", 253)}
	cases := map[string]struct {
		reason  string
		me      owner
		otcName string
		want    string
	}{
		"short":              {reason: "the replica's name is read back from the object's own name", me: rrMe, otcName: rrNameOf("r1"), want: "r1"},
		"with rr inside":     {reason: "a replica's name may hold -rr- itself", me: rrMe, otcName: rrNameOf("a-rr-b"), want: "a-rr-b"},
		"long object":        {reason: "a long namespace and name are cut, never the replica's name", me: long, otcName: ReplicaInstanceName("local", long.Namespace, long.Name, "abcdefghijklmnop"), want: "abcdefghijklmnop"},
		"another object's":   {reason: "the hash proves the name is this object's: another object's replica of the same name is not", me: rrMe, otcName: ReplicaInstanceName("local", "team-b", "shop", "r1")},
		"another cluster's":  {reason: "the cluster is in the hash", me: rrMe, otcName: ReplicaInstanceName("other", "team-a", "shop", "r1")},
		"the primary's name": {reason: "the instance's own name names no replica", me: rrMe, otcName: InstanceName("local", "team-a", "shop")},
		"forged":             {reason: "a name shaped like the object's with another hash is not its", me: rrMe, otcName: rrNameOf("r1")[:len(rrNameOf("r1"))-1] + "x"},
		"short string":       {reason: "a name shorter than the hash is none", me: rrMe, otcName: "rds-x"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := tc.me.replicaNamed(tc.otcName)
			assert.Equal(t, tc.want, got, tc.reason)
			assert.Equal(t, tc.want != "", ok, tc.reason)
		})
	}
}
