package reconcile

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// adoptInput is what the adoption decision reads: the spec, the adoption policy, this object as
// ownership tags name it, the region of the controller's client, the instance spec.instanceid names
// as read, and the answer to the plan's action.
type adoptInput struct {
	spec      *v1alpha1.RdsSpec
	policy    AdoptionPolicy
	me        owner
	region    string
	target    *cloud.Instance
	targetErr error
	// answer is SetTags's answer; nil until the plan's action was made.
	answer *actAnswer
}

// adoptPlan is the decision on spec.instanceid. A plan with an action is made again with its answer.
type adoptPlan struct {
	// take says the instance is taken over: status records it as adopted. tagged says the tags
	// were this call's one change.
	take, tagged bool
	// clearStatus empties status.status: there is no instance to report.
	clearStatus bool
	blocked     *blocked
	// ready and synced are the conditions the step sets, if any.
	ready, synced *outcome
	cloudErr      error
	logs          []logLine
	// action writes this object's ownership tags before the instance is taken over.
	action *action
}

// planAdopt decides whether the instance named in spec.instanceid is taken over: the adoption
// policy must allow it and it must be what the spec describes. The adoption's one change writes
// this object's ownership tags; an instance already tagged as this object's (an earlier answer was
// lost) is taken over without a change. It calls nothing.
func planAdopt(in adoptInput) adoptPlan {
	id := in.spec.Instanceid
	inst := in.target
	var cl claim
	switch err := in.targetErr; {
	case err == nil:
		cl = classify(inst, in.me) // by id, never by name: no name makes it ours
	case !errors.Is(err, cloud.ErrNotFound):
		return adoptPlan{cloudErr: err}
	}
	// NOTE: an instance this object may not adopt and one that does not exist are refused in the
	// same words, which name no instance: different answers would tell a tenant which ids exist
	// and whose they are. The log keeps the details for the operator.
	switch {
	case inst != nil && cl.Kind == Ours:
		// this object adopted it already (a lost answer)
	case in.policy == AdoptNever:
		return adoptPlan{clearStatus: true, blocked: &blocked{tenancy: true, outcome: notSynced(ReasonAdoptionRefused,
			"Nothing is adopted: the controller's adoption policy is Never. Nothing is created in place of the instance named in instanceid.", waitsForUser)}}
	case inst == nil || adoptionRefusal(in.policy, cl, in.me) != "":
		p := adoptPlan{clearStatus: true, blocked: &blocked{tenancy: true, outcome: notSynced(ReasonAdoptionRefused,
			"No OTC instance this object may adopt has the id named in instanceid, so nothing is adopted and nothing is created in its place: "+adoptable(in.policy), waitsForUser)}}
		if inst != nil {
			p.logs = []logLine{{slog.LevelWarn, "adoption refused", []any{"instance", id, "ownership", cl.Kind.String(), "why", adoptionRefusal(in.policy, cl, in.me)}}}
		}
		return p
	}
	if problems := adoptionProblems(in.spec, in.region, inst); len(problems) > 0 {
		return adoptPlan{
			ready: &outcome{cond: v1alpha1.ConditionReady, status: metav1.ConditionFalse, reason: ReasonAdoptionMismatch,
				message: "The instance named in instanceid is not adopted; see the Synced condition.", class: waitsForUser},
			synced: ptr.To(notSynced(ReasonAdoptionMismatch,
				fmt.Sprintf("The OTC instance %s does not match the spec, so it is not adopted: %s", id, joinSentences(problems)), waitsForUser)),
		}
	}
	p := adoptPlan{take: true, logs: []logLine{{slog.LevelInfo, "adopted instance", []any{"instance", inst.ID, "was", cl.Kind.String()}}}}
	if cl.Kind == Ours {
		return p
	}
	// NOTE: the tags are written before status records the instance: were the answer lost,
	// the next call finds it tagged as ours and takes it over without a second change.
	switch a := in.answer; {
	case a == nil:
		return adoptPlan{action: &action{kind: actSetTags, instance: inst.ID, tags: in.me.tags()}}
	case errors.Is(a.err, cloud.ErrBusy):
		return adoptPlan{synced: ptr.To(syncedOK(ReasonInstanceBusy, "The instance is busy; it is adopted when OTC accepts its ownership tags.", inFlight))}
	case a.err != nil:
		return adoptPlan{cloudErr: a.err}
	}
	p.tagged = true
	return p
}

// adoptStep takes over the instance named in spec.instanceid (planAdopt), as the loop runs it
// (loop.go): it reads the instance by id, plans, writes the ownership tags the plan asks for and
// plans on OTC's answer. The driver goes on with the instance only when the plan takes it.
type adoptStep struct {
	in   adoptInput
	read bool
	p    adoptPlan
}

func newAdoptStep(spec *v1alpha1.RdsSpec, policy AdoptionPolicy, me owner, region string) *adoptStep {
	return &adoptStep{in: adoptInput{spec: spec, policy: policy, me: me, region: region}}
}

func (s *adoptStep) plan() head {
	if !s.read {
		return head{needs: []need{{kind: readInstanceByID, id: s.in.spec.Instanceid}}}
	}
	s.p = planAdopt(s.in)
	h := head{logs: s.p.logs, err: s.p.cloudErr, act: s.p.action, stop: !s.p.take || s.p.tagged}
	if s.p.blocked != nil {
		h.tells = s.p.blocked.findings() // status.id is empty: the call manages no instance yet
	}
	h.tells = append(h.tells, told(s.p.ready, s.p.synced)...)
	return h
}

func (s *adoptStep) saw(_ need, r seen) {
	s.read, s.in.target, s.in.targetErr = true, r.inst, r.err
}

func (s *adoptStep) answered(res acted, err error) { s.in.answer = answerOf(res, err) }

func (s *adoptStep) render(a *answer) {
	if s.p.clearStatus {
		a.st.Status = ""
	}
	if !s.p.take {
		return
	}
	a.st.ID = s.in.target.ID
	a.st.Adopted = true
	a.st.PasswordGenerated = false
	a.st.Restore = restoreBaseline(s.in.spec)
}

// taken is the instance the step took over, and whether its ownership tags were this call's
// change; nil when it took none (a condition says why).
func (s *adoptStep) taken() (inst *cloud.Instance, tagged bool) {
	if !s.p.take || s.p.cloudErr != nil {
		return nil, false
	}
	return s.in.target, s.p.tagged
}

// adoptable says which instances the adoption policy lets an object adopt.
func adoptable(policy AdoptionPolicy) string {
	if policy == AdoptSameNamespace {
		return "the controller adopts only an instance that an Rds object of this namespace released (deletionpolicy Retain)."
	}
	return "the controller adopts only an instance without ownership tags, or one that an Rds object of this namespace released (deletionpolicy Retain)."
}

// adoptionProblems lists what makes the instance differ from the spec in ways no change can fix.
// region is the region of the controller's client.
func adoptionProblems(spec *v1alpha1.RdsSpec, region string, inst *cloud.Instance) []string {
	var p problems
	if !strings.EqualFold(inst.Engine, spec.Datastoretype) {
		p.addf("it runs %s, the spec asks for %s.", inst.Engine, spec.Datastoretype)
	} else if !sameMajorVersion(spec.Datastoretype, inst.Version, spec.Datastoreversion) {
		p.addf("it runs version %s, the spec asks for %s.", inst.Version, spec.Datastoreversion)
	}
	if spec.Region != region || (inst.Region != "" && inst.Region != region) {
		shown := inst.Region
		if shown == "" {
			shown = region
		}
		p.addf("it is in region %s, the spec asks for %s.", shown, spec.Region)
	}
	switch {
	case inst.Type == "Replica":
		p.addf("it is a read replica.")
	case strings.EqualFold(inst.Type, "Ha") != IsHA(spec):
		want := "Single"
		if IsHA(spec) {
			want = "Ha"
		}
		p.addf("it is of type %s, the spec's hamode asks for %s.", inst.Type, want)
	}
	return p
}
