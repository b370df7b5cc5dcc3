package reconcile

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// Operation types of the changes to how the instance is reached, recorded in status.operation.
const (
	OpSecurityGroup = "SecurityGroup"
	OpPort          = "Port"
	OpSSL           = "SSL"
)

// paramLowerCaseTableNames is MySQL's parameter behind spec.lowercasetablenames.
const paramLowerCaseTableNames = "lower_case_table_names"

// networkInput is all that the network step decides on: the spec, this call's status so far (the
// report of the instance, the references resolved before), the instance, and what the reads found
// once the plan asked for them.
type networkInput struct {
	spec       *v1alpha1.RdsSpec
	st         statusSoFar // a copy
	inst       *cloud.Instance
	generation int64
	// network is the spec's vpc, subnet and securitygroup resolved to ids; nil until read.
	network *cloud.Network
	// params are the instance's parameter values; nil until read.
	params map[string]string
	// passwordDiffers says the spec's root password (password, or passwordsecretref's Secret)
	// is not the one the connection Secret holds, the password the instance was created with.
	passwordDiffers bool
	// connectionSecret names that Secret, for the message.
	connectionSecret string
	// created says OTC is building the instance, or the last call's status still records the
	// create: no change can have moved its port yet.
	created bool
}

// networkPlan is the decision of the network step. It makes no change: the changes (security
// group, port, SSL) are day-2 changes (networkChanges), made with their guards by the day-2 step,
// which reads the references this step resolved from status.networkRefs.
type networkPlan struct {
	// refs is status.networkRefs.
	refs    *v1alpha1.NetworkRefs
	outcome *outcome
	// stop holds every later step: the spec changes what cannot change.
	stop bool
	// lowerCase is status.lowerCaseTableNames as the instance's parameters report it, when status
	// had no record of it.
	lowerCase *int
	// portReported is status.portReported: the port OTC reports until the create that asked
	// status.portRequest is over; 0 keeps what status has.
	portReported int
	// needNetwork and needParams ask for the reads the plan needs.
	needNetwork bool
	needParams  bool
}

// planNetwork checks what the instance cannot change (datastoretype, availabilityzone, timezone,
// lowercasetablenames, diskencryptionid, vpc, subnet) against what OTC reports and what status
// recorded at create, and resolves the spec's network references when they are not known to name
// the instance's. A spec that changes what cannot change is refused (InvalidSpec) and the call
// makes no change. It also keeps the port's bookkeeping (portAsked) and tells a root password the
// spec changed. It calls nothing.
func planNetwork(in networkInput) networkPlan {
	p := networkPlan{refs: in.st.NetworkRefs}
	if in.st.PortRequest != 0 && in.created && in.inst.Port != 0 {
		// NOTE: until the create is over no change can have moved the instance's port: what OTC
		// reports then is what it made of the create's port (the simulator's real servers keep
		// their own, and may appear only as the instance turns ACTIVE). One window stays open: a
		// port change made in the call that first saw the instance ACTIVE, whose answer was lost.
		p.portReported = in.inst.Port
	}
	st := in.st
	if in.spec.Lowercasetablenames != nil && st.LowerCaseTableNames == nil {
		// NOTE: OTC's listing does not report lower_case_table_names; status records what the
		// create asked for, and an instance created or adopted without that record is asked once.
		if in.params == nil {
			p.needParams = true
			return p
		}
		if n, err := strconv.Atoi(in.params[paramLowerCaseTableNames]); err == nil {
			p.lowerCase = &n
			st.LowerCaseTableNames = &n
		}
	}
	if problems := createOnlyProblems(in.spec, &st, in.inst); len(problems) > 0 {
		p.outcome, p.stop = ptr.To(notSynced(ReasonInvalidSpec, joinSentences(problems), waitsForUser)), true
		return p
	}
	want := v1alpha1.NetworkRefs{Vpc: in.spec.Vpc, Subnet: in.spec.Subnet, Securitygroup: in.spec.Securitygroup}
	vpc, subnet, _, known := knownIDs(want, in.st.NetworkRefs, in.inst)
	if !known {
		if in.network == nil {
			p.needNetwork = true
			return p
		}
		vpc, subnet = in.network.VpcID, in.network.SubnetID
		p.refs = &v1alpha1.NetworkRefs{
			Vpc: want.Vpc, VpcID: vpc, Subnet: want.Subnet, SubnetID: subnet,
			Securitygroup: want.Securitygroup, SecurityGroupID: in.network.SecurityGroupID,
		}
	}
	var problems []string
	if in.inst.VpcID != "" && vpc != in.inst.VpcID {
		problems = append(problems, fmt.Sprintf(
			"vpc %q is not the instance's VPC %s: OTC cannot move an instance to another VPC; set vpc back, or create a new Rds there (restorefrom copies the data).", want.Vpc, in.inst.VpcID))
	}
	if in.inst.SubnetID != "" && subnet != in.inst.SubnetID {
		problems = append(problems, fmt.Sprintf(
			"subnet %q is not the instance's subnet %s: OTC cannot move an instance to another subnet; set subnet back, or create a new Rds there (restorefrom copies the data).", want.Subnet, in.inst.SubnetID))
	}
	if len(problems) > 0 {
		p.outcome, p.stop = ptr.To(notSynced(ReasonInvalidSpec, joinSentences(problems), waitsForUser)), true
		return p
	}
	if in.passwordDiffers {
		// NOTE: OTC's root password is set at create; the SDK v0.9.8 has no call to reset it, and
		// the connection Secret holds the password the instance has. A changed spec password is
		// told, never silently ignored; the other changes go on.
		p.outcome = ptr.To(notSynced(ReasonUnsupportedChange, fmt.Sprintf(
			"The root password the spec names is not the instance's, which the Secret %s holds: the controller does not reset OTC's root password; reset it in OTC and write it into that Secret, or set password (or passwordsecretref's Secret) back.", in.connectionSecret), settled))
	}
	return p
}

// knownIDs are the ids the spec's references name, where that is known without a lookup: a
// reference that is the instance's id, or one resolved before (status.networkRefs). An id the
// instance does not report is nothing to compare with. all says every one is known.
//
// NOTE: status comes in the request, and the object's namespace can write it: a recorded security
// group id the instance does not have is no proof of what the spec's name resolves to, and the
// day-2 change would move the instance to whatever group status names, unlooked-up. Such a group is
// looked up again (OTC's answer decides the change); an unchanged spec on an instance in its group
// costs no lookup. A recorded vpc or subnet id only decides a refusal of the object's own spec.
func knownIDs(want v1alpha1.NetworkRefs, known *v1alpha1.NetworkRefs, inst *cloud.Instance) (vpc, subnet, group string, all bool) {
	if known == nil {
		known = &v1alpha1.NetworkRefs{}
	}
	all = true
	pick := func(ref, observed, knownRef, knownID string) string {
		switch {
		case observed == "" || ref == observed:
			return observed
		case knownRef == ref && knownID != "":
			return knownID
		}
		all = false
		return ""
	}
	vpc = pick(want.Vpc, inst.VpcID, known.Vpc, known.VpcID)
	subnet = pick(want.Subnet, inst.SubnetID, known.Subnet, known.SubnetID)
	if known.SecurityGroupID != inst.SecurityGroupID {
		known = &v1alpha1.NetworkRefs{} // a move: resolved by OTC, not by status
	}
	group = pick(want.Securitygroup, inst.SecurityGroupID, known.Securitygroup, known.SecurityGroupID)
	return vpc, subnet, group, all
}

// createOnlyProblems are the create-only fields the spec sets to something else than the instance
// has: OTC sets them when it creates the instance, and never changes them.
func createOnlyProblems(spec *v1alpha1.RdsSpec, st *statusSoFar, inst *cloud.Instance) []string {
	var p problems
	if inst.Engine != "" && !strings.EqualFold(inst.Engine, spec.Datastoretype) {
		p.addf("datastoretype %q is not the instance's engine %s: OTC cannot change an instance's engine; set it back, or create a new Rds.", spec.Datastoretype, inst.Engine)
	}
	if have := nodeAZs(inst); len(have) > 0 && IsHA(spec) == isHAInstance(inst) {
		// NOTE: a single instance turning HA adds the standby's AZ, and an HA one cannot turn
		// single: haChange judges both.
		want := AvailabilityZones(spec)
		slices.Sort(want)
		if want = slices.Compact(want); !slices.Equal(want, have) {
			p.addf("availabilityzone %q is not where the instance runs (%s): OTC cannot move an instance to other AZs; set it back.", spec.Availabilityzone, strings.Join(have, ","))
		}
	}
	if tz := spec.Timezone; tz != "" && !sameTimeZone(tz, inst.TimeZone) {
		have := inst.TimeZone
		if have == "" {
			have = "OTC's default (UTC)"
		}
		p.addf("timezone %q is not the instance's time zone %s: OTC sets the time zone at create only; set timezone back, or create a new Rds for another time zone.", tz, have)
	}
	if id := spec.Diskencryptionid; id != "" && id != inst.DiskEncryptionID {
		if inst.DiskEncryptionID == "" {
			p.addf("diskencryptionid %q: the instance's disk is not encrypted, and OTC encrypts a disk at create only; remove diskencryptionid, or create a new Rds with it (restorefrom copies the data).", id)
		} else {
			p.addf("diskencryptionid %q is not the key %s that encrypts the instance's disk: OTC chooses the key at create only; set diskencryptionid back.", id, inst.DiskEncryptionID)
		}
	}
	if n := spec.Lowercasetablenames; n != nil {
		switch rec := st.LowerCaseTableNames; {
		case rec == nil:
			p.addf("lowercasetablenames %d: OTC reports no lower_case_table_names for the instance, and sets it at create only; remove lowercasetablenames.", *n)
		case *rec != *n:
			p.addf("lowercasetablenames %d is not the instance's %d: OTC sets lower_case_table_names at create only; set it back to %d.", *n, *rec, *rec)
		}
	}
	return p
}

// sameTimeZone compares time zones as OTC writes them: "UTC" and "UTC+00:00" are one zone, and OTC
// reports no zone for its default, UTC.
func sameTimeZone(a, b string) bool {
	norm := func(z string) string {
		switch z = strings.ToUpper(strings.TrimSpace(z)); z {
		case "", "UTC+00:00", "UTC-00:00":
			return "UTC"
		}
		return z
	}
	return norm(a) == norm(b)
}

// networkStep is the network step as the loop runs it (loop.go): it checks the fields OTC sets at
// create only, and resolves the spec's network references when needed. It makes no change, and
// stops the call when the spec changes what cannot change. The security group and SSL changes,
// during which OTC may keep the instance ACTIVE, end as the settings' do (settledOp,
// settingReached in settings.go): when the listing shows the new value, or their job ends.
type networkStep struct {
	in         networkInput
	networkErr error
	paramsErr  error
	p          networkPlan
}

func newNetworkStep(c *call, inst *cloud.Instance) *networkStep {
	in := networkInput{spec: c.spec, st: soFar(&c.st), inst: inst, generation: c.parent.Generation, connectionSecret: c.st.ConnectionSecret}
	if op := c.parent.Status.Operation; inst.Status == cloud.StatusBuild || op != nil && (op.Type == OpCreate || op.Type == OpRestoreToNew) {
		in.created = true
	}
	desired, generated, problem := desiredPassword(c.spec, c.req.Related, c.parent.Namespace)
	observed, stored := observedPassword(c.req.Secrets[c.st.ConnectionSecret])
	in.passwordDiffers = stored && !generated && problem == "" && !desired.Empty() && desired.Reveal() != observed.Reveal()
	return &networkStep{in: in}
}

func (s *networkStep) plan() head {
	s.p = planNetwork(s.in)
	h := head{tells: told(s.p.outcome), stop: s.p.stop}
	switch {
	case s.p.needNetwork && s.networkErr != nil:
		h.err, h.stop = s.networkErr, true
	case s.p.needNetwork:
		h.needs = []need{{kind: readNetwork, vpc: s.in.spec.Vpc, subnet: s.in.spec.Subnet, securityGroup: s.in.spec.Securitygroup}}
	case s.p.needParams && s.paramsErr != nil:
		h.err, h.stop = s.paramsErr, true
	case s.p.needParams:
		h.needs = []need{{kind: readParameters, id: s.in.inst.ID}}
	}
	return h
}

func (s *networkStep) saw(n need, r seen) {
	switch n.kind {
	case readNetwork:
		if s.networkErr = r.err; r.err == nil {
			s.in.network = &r.network
		}
	case readParameters:
		if s.paramsErr = r.err; r.err == nil {
			s.in.params = map[string]string{}
			for _, p := range r.parameters {
				s.in.params[p.Name] = p.Value
			}
		}
	}
}

func (s *networkStep) answered(acted, error) {}

// render writes status.networkRefs and the lower_case_table_names the instance reported.
func (s *networkStep) render(a *answer) {
	a.st.NetworkRefs = s.p.refs
	if s.p.lowerCase != nil {
		a.st.LowerCaseTableNames = s.p.lowerCase
	}
	if s.p.portReported != 0 {
		a.st.PortReported = s.p.portReported
	}
}

// networkChanges are the day-2 changes to how the instance is reached: the security group (the
// id status.networkRefs resolved the spec's name to), the port, SSL.
func networkChanges(in day2Input) ([]change, *outcome) {
	var changes []change
	inst, spec := in.inst, in.spec
	if group := securityGroupID(spec, in.st.NetworkRefs, inst); group != "" && group != inst.SecurityGroupID {
		changes = append(changes, change{
			op:     OpSecurityGroup,
			target: group,
			act:    action{kind: actSecurityGroup, instance: inst.ID, group: group},
		})
	}
	if port, ok := portAsked(spec, in.st.PortRequest, in.st.PortReported, inst.Port); ok {
		changes = append(changes, change{
			op:     OpPort,
			target: strconv.Itoa(port),
			act:    action{kind: actUpdatePort, instance: inst.ID, port: port},
		})
	}
	if on := spec.Ssl; on != nil && inst.SSL != nil && *on != *inst.SSL {
		changes = append(changes, change{
			op:     OpSSL,
			target: onOff(*on),
			act:    action{kind: actSwitchSSL, instance: inst.ID, ssl: *on},
		})
	}
	return changes, nil
}

// securityGroupID is the id spec.securitygroup names: the instance's own when it names that, the
// one the network step resolved it to otherwise; "" when unknown (the instance reports none).
func securityGroupID(spec *v1alpha1.RdsSpec, refs *v1alpha1.NetworkRefs, inst *cloud.Instance) string {
	switch {
	case inst.SecurityGroupID == "" || spec.Securitygroup == inst.SecurityGroupID:
		return inst.SecurityGroupID
	case refs != nil && refs.Securitygroup == spec.Securitygroup:
		return refs.SecurityGroupID
	}
	return ""
}

// portAsked is the port to move the database to, if the spec asks for a move: a port the instance
// does not have. The one exception is the port the create asked (status.portRequest) while the
// instance still has the port OTC reported while building it (status.portReported): OTC made
// that of the create's port (the simulator's real servers keep their own), and asking again would
// never end. Any other difference is asked, once per call, as long as it lasts; OTC shows a move
// while it runs (MODIFYING DATABASE PORT). An empty port keeps the instance's.
func portAsked(spec *v1alpha1.RdsSpec, asked, reported, running int) (int, bool) {
	if spec.Port == nil || (spec.Port.StrVal == "" && spec.Port.IntVal == 0) || running == 0 {
		return 0, false
	}
	want, err := Port(spec)
	if err != nil {
		return 0, false // Validate refused it
	}
	asCreated := want == asked && reported != 0 && running == reported
	return want, want != running && !asCreated
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// recordCreated writes what status remembers of a create OTC took: the port it asked for
// (status.portRequest), lower_case_table_names (which OTC's listing does not report), and the
// spec's network references with the ids they were resolved to.
func recordCreated(st *v1alpha1.RdsStatus, opts cloud.CreateInstanceOpts, spec *v1alpha1.RdsSpec) {
	st.PortRequest, st.PortReported = 0, 0
	if spec.Port != nil && opts.Port > 0 {
		st.PortRequest = opts.Port
	}
	st.LowerCaseTableNames = nil
	if n := opts.LowerCaseTableNames; n != nil {
		st.LowerCaseTableNames = ptr.To(*n)
	}
	st.NetworkRefs = &v1alpha1.NetworkRefs{
		Vpc: spec.Vpc, VpcID: opts.VpcID, Subnet: spec.Subnet, SubnetID: opts.SubnetID,
		Securitygroup: spec.Securitygroup, SecurityGroupID: opts.SecurityGroupID,
	}
}
