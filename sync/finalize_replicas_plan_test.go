package reconcile

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// TestPlanFinalizeReplicas: a deletion and the object's read replicas. Delete deletes the primary
// (OTC takes its replicas with it) and a replica of the object OTC still lists without a backup;
// Retain releases each replica of the object, then the primary, and leaves another's alone.
func TestPlanFinalizeReplicas(t *testing.T) {
	input := func(edits ...func(*finalizeInput)) finalizeInput {
		spec := sampleSpec()
		spec.Readreplicas = []v1alpha1.ReadReplica{{Name: "r1", Flavorref: "rds.mysql.n1.large.2.rr", Availabilityzone: "eu-de-02"}}
		inst := &cloud.Instance{ID: "prim", Name: InstanceName("local", "team-a", "shop"), Status: cloud.StatusActive, Type: cloud.TypeSingle, Replicas: []string{"1", "9"}}
		in := finalizeInput{spec: &spec, st: v1alpha1.RdsStatus{ID: "prim", Status: cloud.StatusActive}, me: rrMe, observed: true,
			inst: inst, claim: claim{Kind: Ours}, reported: true}
		for _, e := range edits {
			e(&in)
		}
		return in
	}
	retain := func(in *finalizeInput) { in.spec.Deletionpolicy = v1alpha1.DeletionPolicyRetain }
	other := rrReplica("9", "r9", cloud.StatusActive, false)
	other.Tags = owner{Cluster: "local", Namespace: "team-b", Name: "x", UID: "uid-other"}.replicaTags("r9")
	read := func(rs ...*cloud.Instance) func(*finalizeInput) {
		return func(in *finalizeInput) {
			in.replicas = map[string]seen{}
			for _, r := range rs {
				in.replicas[r.ID] = seen{inst: r}
			}
		}
	}
	releasedReplica := rrReplica("1", "r1", cloud.StatusActive, true)
	releasedReplica.Tags[TagReleasedBy] = rrMe.UID

	cases := map[string]struct {
		reason string
		in     finalizeInput
		want   func(t *testing.T, p finalizePlan)
	}{
		"retain reads the replicas": {
			reason: "Retain looks at the primary's replicas before it releases anything",
			in:     input(retain),
			want:   func(t *testing.T, p finalizePlan) { assert.True(t, p.needReplicas) },
		},
		"retain releases the object's replica first": {
			reason: "the object's replica gets the release tags (and keeps its rds-replica tag); another's is left alone",
			in:     input(retain, read(rrReplica("1", "r1", cloud.StatusActive, true), other)),
			want: func(t *testing.T, p finalizePlan) {
				require.NotNil(t, p.act)
				tags := rrMe.releaseTags()
				tags[TagReplica] = "r1"
				assert.Equal(t, action{kind: actSetTags, instance: "1", tags: tags}, *p.act)
			},
		},
		"retain releases an untagged replica status reports": {
			reason: "a replica whose create's answer was lost (untagged) and that left the spec as the deletion began is still the object's by its name in status: released, not left untagged under the released instance (review #21)",
			in: input(retain, read(rrReplica("1", "r2", cloud.StatusActive, false), other), func(in *finalizeInput) {
				in.st.ReadReplicas = []v1alpha1.ReadReplicaStatus{{Name: "r2"}}
			}),
			want: func(t *testing.T, p finalizePlan) {
				require.NotNil(t, p.act)
				tags := rrMe.releaseTags()
				tags[TagReplica] = "r2"
				assert.Equal(t, action{kind: actSetTags, instance: "1", tags: tags}, *p.act)
			},
		},
		"retain then the primary": {
			reason: "once the replicas are released, the primary is",
			in:     input(retain, read(releasedReplica, other)),
			want: func(t *testing.T, p finalizePlan) {
				require.NotNil(t, p.act)
				assert.Equal(t, action{kind: actSetTags, instance: "prim", tags: rrMe.releaseTags()}, *p.act)
			},
		},
		"retain, replica busy": {
			reason: "a busy replica is released when OTC accepts the tags",
			in: input(retain, read(rrReplica("1", "r1", cloud.StatusActive, true)), func(in *finalizeInput) {
				in.answer = &actAnswer{err: cloud.ErrBusy}
			}),
			want: func(t *testing.T, p finalizePlan) {
				assert.Nil(t, p.act)
				assert.False(t, p.finalized)
				assert.Equal(t, ReasonRetained, p.ready.reason)
			},
		},
		"delete: the replicas first": {
			reason: "Delete looks at the replicas before the final backup: OTC takes none while one is built",
			in:     input(),
			want:   func(t *testing.T, p finalizePlan) { assert.True(t, p.needReplicas) },
		},
		"delete: waits for a replica being built": {
			reason: "no backup or delete is asked of OTC while a replica of the instance is built",
			in:     input(read(rrReplica("1", "r1", cloud.StatusBuild, true), other)),
			want: func(t *testing.T, p finalizePlan) {
				assert.Nil(t, p.act)
				assert.False(t, p.needBackups)
				assert.Equal(t, ReasonDeleting, p.ready.reason)
				assert.Contains(t, p.ready.message, "read replica")
			},
		},
		"delete: the primary's final backup": {
			reason: "Delete takes the primary's final backup and deletes it: OTC deletes its replicas with it; a CreateReplica operation ends",
			in: input(read(rrReplica("1", "r1", cloud.StatusActive, true), other), func(in *finalizeInput) {
				in.st.Operation = &v1alpha1.Operation{Type: OpCreateReplica, Target: "r1"}
			}),
			want: func(t *testing.T, p finalizePlan) { assert.True(t, p.needBackups) },
		},
		"retain: status.id naming a replica proves nothing": {
			reason: "status.id is the tenant's to write: one naming the object's own read replica is no primary; the object's instance is searched for (review #21: the replica was released and the object finalized, leaving the primary unreleased for good)",
			in: input(retain, func(in *finalizeInput) {
				in.inst, in.claim, in.st.ID = rrReplica("1", "r1", cloud.StatusActive, true), claim{Kind: Ours}, "1"
			}),
			want: func(t *testing.T, p finalizePlan) { assert.True(t, p.search) },
		},
		"retain: a replica status.id names released by the object proves nothing": {
			reason: "a replica released by the object, named in status.id, does not finish the deletion: the object's instance is searched for",
			in: input(retain, func(in *finalizeInput) {
				in.inst, in.claim, in.st.ID = releasedReplica, claim{Kind: Released, ReleasedBy: rrMe.UID}, "1"
			}),
			want: func(t *testing.T, p finalizePlan) {
				assert.True(t, p.search)
				assert.False(t, p.finalized)
			},
		},
		"delete: a leftover replica is read fresh": {
			reason: "the search's listing may predate OTC's delete of the replicas with their primary: the replica is read fresh by id first",
			in: input(func(in *finalizeInput) {
				in.inst, in.claim, in.searched = rrReplica("1", "r1", cloud.StatusActive, true), claim{Kind: Ours}, true
			}),
			want: func(t *testing.T, p finalizePlan) { assert.True(t, p.confirmReplica) },
		},
		"delete: a leftover replica gone": {
			reason: "a replica OTC no longer has is not deleted; the next call looks again",
			in: input(func(in *finalizeInput) {
				in.inst, in.claim, in.searched = rrReplica("1", "r1", cloud.StatusActive, true), claim{Kind: Ours}, true
				in.confirmed = &seen{err: cloud.ErrNotFound}
			}),
			want: func(t *testing.T, p finalizePlan) {
				assert.Nil(t, p.act)
				assert.False(t, p.finalized)
			},
		},
		"delete: a leftover replica": {
			reason: "a replica of the object OTC still lists once the primary is gone is deleted without a backup (OTC has none of a replica)",
			in: input(func(in *finalizeInput) {
				in.inst, in.claim, in.searched = rrReplica("1", "r1", cloud.StatusActive, true), claim{Kind: Ours}, true
				in.confirmed = &seen{inst: in.inst}
			}),
			want: func(t *testing.T, p finalizePlan) {
				require.NotNil(t, p.act)
				assert.Equal(t, action{kind: actDeleteInstance, instance: "1"}, *p.act)
			},
		},
		"delete: a leftover replica is not reported": {
			reason: "the replica's delete is told, and status keeps the primary's id (a log Job names it)",
			in: input(func(in *finalizeInput) {
				in.inst, in.claim, in.reported, in.searched = rrReplica("1", "r1", cloud.StatusActive, true), claim{Kind: Ours}, false, true
				in.confirmed = &seen{inst: in.inst}
				in.answer = &actAnswer{jobID: "j"}
			}),
			want: func(t *testing.T, p finalizePlan) {
				assert.Nil(t, p.act)
				assert.False(t, p.report)
				assert.False(t, p.finalized)
				assert.Equal(t, ReasonDeleting, p.ready.reason)
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			require.NotEmpty(t, tc.reason)
			tc.want(t, planFinalize(tc.in))
		})
	}
}

// TestSearchOwnPrefersThePrimary: the listing by tags finds the object's primary and its replicas
// (they carry the same ownership tags): the primary is taken apart first.
func TestSearchOwnPrefersThePrimary(t *testing.T) {
	primary := &cloud.Instance{ID: "z-prim", Name: "adopted", Type: cloud.TypeSingle, Tags: rrMe.tags(), Created: rrMe.Created.Add(2 * 3600e9)}
	replica := rrReplica("a-1", "r1", cloud.StatusActive, true)
	s := &searchOwn{me: rrMe, names: []string{"x", "y"}, list: listing{names: []string{"x", "y"}, read: 2}, all: &seen{instances: []*cloud.Instance{replica, primary}}}
	got, _, err := s.found()
	require.NoError(t, err)
	assert.Equal(t, "z-prim", got.ID)
	s.all = &seen{instances: []*cloud.Instance{replica}}
	got, _, err = s.found()
	require.NoError(t, err)
	assert.Equal(t, "a-1", got.ID, "once the primary is gone, its replica")
}
