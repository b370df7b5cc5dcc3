package reconcile

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

func TestPlanAdopt(t *testing.T) {
	target := func(edits ...func(*cloud.Instance)) *cloud.Instance {
		i := activeInstance()
		i.ID, i.Name, i.Region, i.Tags = restoreAdoptID, "legacy-db", "eu-de", map[string]string{}
		for _, e := range edits {
			e(i)
		}
		return i
	}
	in := func(edits ...func(*adoptInput)) adoptInput {
		spec := sampleSpec()
		spec.Instanceid = restoreAdoptID
		in := adoptInput{spec: &spec, policy: AdoptUnowned, me: planMe, region: "eu-de", target: target()}
		for _, e := range edits {
			e(&in)
		}
		return in
	}
	inst := func(edits ...func(*cloud.Instance)) func(*adoptInput) {
		return func(in *adoptInput) { in.target = target(edits...) }
	}
	answered := func(err error) func(*adoptInput) { return func(in *adoptInput) { in.answer = &actAnswer{err: err} } }
	ours := func(i *cloud.Instance) { i.Tags = planMe.tags() }
	adoptedLog := func(was string) []logLine {
		return []logLine{{slog.LevelInfo, "adopted instance", []any{"instance", restoreAdoptID, "was", was}}}
	}
	mismatch := func(problems string) adoptPlan {
		return adoptPlan{
			ready: &outcome{cond: v1alpha1.ConditionReady, status: metav1.ConditionFalse, reason: ReasonAdoptionMismatch,
				message: "The instance named in instanceid is not adopted; see the Synced condition.", class: waitsForUser},
			synced: ptr.To(notSynced(ReasonAdoptionMismatch, "The OTC instance "+restoreAdoptID+" does not match the spec, so it is not adopted: "+problems, waitsForUser)),
		}
	}
	// refusedPlan is the one answer to an instance this object may not adopt and to one that does
	// not exist: it names no instance; the log keeps what the instance was (ownership, why).
	refusedPlan := func(policy AdoptionPolicy, logged ...any) adoptPlan {
		p := adoptPlan{clearStatus: true, blocked: &blocked{tenancy: true, outcome: notSynced(ReasonAdoptionRefused,
			"No OTC instance this object may adopt has the id named in instanceid, so nothing is adopted and nothing is created in its place: "+adoptable(policy), waitsForUser)}}
		if logged != nil {
			p.logs = []logLine{{slog.LevelWarn, "adoption refused", append([]any{"instance", restoreAdoptID}, logged...)}}
		}
		return p
	}
	neverPlan := adoptPlan{clearStatus: true, blocked: &blocked{tenancy: true, outcome: notSynced(ReasonAdoptionRefused,
		"Nothing is adopted: the controller's adoption policy is Never. Nothing is created in place of the instance named in instanceid.", waitsForUser)}}
	busy := &cloud.Error{Kind: cloud.KindBusy, Code: "DBS.200019"}

	cases := map[string]struct {
		reason string
		in     adoptInput
		want   adoptPlan
	}{
		"unowned and matching: write the tags": {
			reason: "the adoption's one change: this object's ownership tags",
			in:     in(),
			want:   adoptPlan{action: &action{kind: actSetTags, instance: restoreAdoptID, tags: planMe.tags()}},
		},
		"tags written: taken over": {
			reason: "status records the instance, and the tags were the call's change",
			in:     in(answered(nil)),
			want:   adoptPlan{take: true, tagged: true, logs: adoptedLog("Unowned")},
		},
		"tagged as ours already: taken over without a change": {
			reason: "an earlier answer was lost; no second change",
			in:     in(inst(ours)),
			want:   adoptPlan{take: true, logs: adoptedLog("Ours")},
		},
		"tags refused as busy: later": {
			reason: "adopted when OTC accepts the tags; look again soon",
			in:     in(answered(busy)),
			want: adoptPlan{synced: ptr.To(syncedOK(ReasonInstanceBusy,
				"The instance is busy; it is adopted when OTC accepts its ownership tags.", inFlight))},
		},
		"tags failed otherwise: a cloud error": {
			reason: "like any cloud error",
			in:     in(answered(cloud.ErrUnavailable)),
			want:   adoptPlan{cloudErr: cloud.ErrUnavailable},
		},
		"target missing: nothing created": {
			reason: "refused as an instance not this object's to adopt is: creating something instead would surprise, and telling which ids exist would tell too much",
			in:     in(func(in *adoptInput) { in.target, in.targetErr = nil, cloud.ErrNotFound }),
			want:   refusedPlan(AdoptUnowned),
		},
		"target missing under SameNamespace": {
			reason: "the rule said is the policy's",
			in:     in(func(in *adoptInput) { in.target, in.targetErr, in.policy = nil, cloud.ErrNotFound, AdoptSameNamespace }),
			want:   refusedPlan(AdoptSameNamespace),
		},
		"target missing under Never": {
			reason: "under Never every adoption is refused alike, whether the instance exists or not",
			in:     in(func(in *adoptInput) { in.target, in.targetErr, in.policy = nil, cloud.ErrNotFound, AdoptNever }),
			want:   neverPlan,
		},
		"released by another namespace": {
			reason: "another tenant's released instance reads as one that does not exist",
			in: in(inst(func(i *cloud.Instance) {
				i.Tags = owner{Cluster: "local", Namespace: "rds2", Name: "db", UID: "uid-9"}.releaseTags()
			})),
			want: refusedPlan(AdoptUnowned, "ownership", "Released", "why", "it was released by an Rds object of another namespace or cluster."),
		},
		"untagged under SameNamespace": {
			reason: "an instance the policy does not let this object adopt reads as one that does not exist",
			in:     in(func(in *adoptInput) { in.policy = AdoptSameNamespace }),
			want: refusedPlan(AdoptSameNamespace, "ownership", "Unowned", "why",
				"it carries no ownership tags, and the controller's adoption policy is SameNamespace: only an instance released by an Rds object of this namespace is adopted."),
		},
		"target unreadable": {
			reason: "a cloud error, like any",
			in:     in(func(in *adoptInput) { in.target, in.targetErr = nil, busy }),
			want:   adoptPlan{cloudErr: busy},
		},
		"policy Never": {
			reason: "the controller adopts nothing",
			in:     in(func(in *adoptInput) { in.policy = AdoptNever }),
			want:   neverPlan,
		},
		"owned by another object": {
			reason: "no object takes another's instance",
			in:     in(inst(func(i *cloud.Instance) { i.Tags = ownerTags("uid-9") })),
			want:   refusedPlan(AdoptUnowned, "ownership", "OwnedByOther", "why", "it belongs to another Rds object."),
		},
		"tagged as ours but refused by policy Never": {
			reason: "an instance this object adopted already stays adopted",
			in:     in(inst(ours), func(in *adoptInput) { in.policy = AdoptNever }),
			want:   adoptPlan{take: true, logs: adoptedLog("Ours")},
		},
		"engine mismatch": {
			reason: "an instance of another engine is not what the spec describes",
			in:     in(inst(func(i *cloud.Instance) { i.Engine, i.Version = "PostgreSQL", "16" })),
			want:   mismatch("it runs PostgreSQL, the spec asks for MySQL."),
		},
		"version mismatch": {
			reason: "another major version",
			in:     in(inst(func(i *cloud.Instance) { i.Version = "5.7" })),
			want:   mismatch("it runs version 5.7, the spec asks for 8.0."),
		},
		"region and HA mismatch": {
			reason: "every problem is said at once",
			in:     in(inst(func(i *cloud.Instance) { i.Region, i.Type = "eu-nl", "Ha" })),
			want:   mismatch("it is in region eu-nl, the spec asks for eu-de. it is of type Ha, the spec's hamode asks for Single."),
		},
		"client of another region, instance shows none": {
			reason: "the client's region stands in for the instance's",
			in:     in(inst(func(i *cloud.Instance) { i.Region = "" }), func(in *adoptInput) { in.region = "eu-nl" }),
			want:   mismatch("it is in region eu-nl, the spec asks for eu-de."),
		},
		"read replica": {
			reason: "a replica is never adopted",
			in:     in(inst(func(i *cloud.Instance) { i.Type = "Replica" })),
			want:   mismatch("it is a read replica."),
		},
		"single asked as Ha": {
			reason: "the spec's hamode names the type",
			in:     in(func(in *adoptInput) { in.spec.Hamode = "Ha" }),
			want:   mismatch("it is of type Single, the spec's hamode asks for Ha."),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, planAdopt(tc.in), tc.reason)
		})
	}
}
