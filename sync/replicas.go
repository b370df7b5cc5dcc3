package reconcile

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// TagReplica names, on a read replica, which of its object's spec.readreplicas it is. With the
// ownership tags it proves the replica is the object's; the name never does.
const TagReplica = "rds-replica"

// OpCreateReplica is status.operation while a read replica of the instance is created: OTC copies
// the primary's data into it and takes no other change of the primary meanwhile, so the day-2
// changes and autopilot wait for it as for any operation (operationDone keeps it until the
// replicas step, which runs before them, sees no replica being built).
const OpCreateReplica = "CreateReplica"

// MaxReadReplicas is how many read replicas OTC lets one MySQL or PostgreSQL instance have
// (DOC:rds/usermanual/read_write_splitting: "A maximum of five read replicas can be created for
// each RDS for MySQL or RDS for PostgreSQL DB instance").
const MaxReadReplicas = 5

// Reasons of the read replicas.
const (
	// ReasonReplicaNameTaken: an instance that is not this object's carries a replica's name.
	ReasonReplicaNameTaken = "ReplicaNameTaken"
	// ReasonReplicaLimitReached: the instance has as many read replicas as OTC allows.
	ReasonReplicaLimitReached = "ReplicaLimitReached"
)

// ReplicaInstanceName is the OTC name of the read replica replica of the Rds object
// namespace/name in the cluster clusterID: like InstanceName, with the replica's name in the hash
// and, whole, at the end of the readable part (the namespace and name are cut where the name would
// be too long), so that every call finds the replica an earlier one created, and knows it by its
// name alone (replicaNamed) when neither the spec nor the status names it any more.
func ReplicaInstanceName(clusterID, namespace, name, replica string) string {
	sum := sha256.Sum256([]byte(clusterID + "/" + namespace + "/" + name + "/readreplicas/" + replica))
	suffix := "-rr-" + sanitize(replica) + "-" + hex.EncodeToString(sum[:])[:nameHashLen]
	readable := sanitize(namespace + "-" + name)
	if room := maxInstanceName - len(instanceNamePrefix) - len(suffix); len(readable) > room {
		readable = strings.TrimRight(readable[:room], "-")
	}
	return instanceNamePrefix + readable + suffix
}

// replicaNamed is the spec name of the object's read replica whose OTC name is otcName, if
// otcName is one (ReplicaInstanceName): the name is read from its end and checked against the
// hash, so no other object's name passes.
//
// NOTE: it is how a replica is found whose create was answered but the answer lost, and whose name
// then left spec.readreplicas before its tags were written: no status and no spec names it, and
// without it the replica would stay billed and untracked.
func (o owner) replicaNamed(otcName string) (string, bool) {
	const hashPart = 1 + nameHashLen
	if len(otcName) <= hashPart {
		return "", false
	}
	head := otcName[:len(otcName)-hashPart]
	for from := 0; ; {
		i := strings.Index(head[from:], "-rr-")
		if i < 0 {
			return "", false
		}
		if cand := head[from+i+len("-rr-"):]; cand != "" && ReplicaInstanceName(o.Cluster, o.Namespace, o.Name, cand) == otcName {
			return cand, true
		}
		from += i + 1
	}
}

// replicaTags are the tags of the object's read replica named replica: its ownership tags and
// TagReplica.
func (o owner) replicaTags(replica string) map[string]string {
	t := o.tags()
	t[TagReplica] = tagValue(replica)
	return t
}

// replicasInput is all the read replicas' decision reads: the spec, what the last call said of the
// replicas, this call's status.operation (the primary's), the primary as observed, the object as
// ownership tags name it, and what the plan asked to read and OTC answered.
type replicasInput struct {
	spec       *v1alpha1.RdsSpec
	prior      []v1alpha1.ReadReplicaStatus
	op         *v1alpha1.Operation
	inst       *cloud.Instance
	me         owner
	policy     AdoptionPolicy
	deleting   bool
	generation int64
	// maxAge is how old a replica read from the shared view may be: the primary's (0: fresh).
	maxAge time.Duration

	// byID are the replicas read by id, byName the declared ones looked for by their name,
	// jobs the delete jobs read; nil entries are not read yet.
	byID   map[string]seen
	byName map[string]seen
	jobs   map[string]seen
	// flavors is OTC's flavor list for the instance's engine and version, read before a create or
	// a resize; nil until read.
	flavors *seen
	// sent is the plan's action and OTC's answer to it, once made.
	sent *replicaSent
}

// names is the OTC name of the object's read replica replica (ReplicaInstanceName).
func (in replicasInput) names(replica string) string {
	return ReplicaInstanceName(in.me.Cluster, in.me.Namespace, in.me.Name, replica)
}

// replicaSent is a replica change made and OTC's answer to it.
type replicaSent struct {
	ch  replicaChange
	res acted
	err error
}

// replicaChange is one change to a read replica: the action, and what it is for messages.
type replicaChange struct {
	replica string // the spec's name, "" for a replica of the object that no name declares
	what    string // "creation of the read replica r1", for sentences
	act     action
}

// replicasPlan is the decision of the replicas step.
type replicasPlan struct {
	needs  []need
	change *replicaChange
	// status is status.readReplicas; op is status.operation (the primary's) when setOp.
	status []v1alpha1.ReadReplicaStatus
	op     *v1alpha1.Operation
	setOp  bool
	tells  []*outcome
	err    error
	logs   []logLine
}

// observedReplica is one read replica of the primary, judged for this object.
type observedReplica struct {
	inst *cloud.Instance
	cl   claim
	// key is the spec's name it carries (TagReplica, or its OTC name), "" for none.
	key string
	// adoptable: released by an object the adoption policy lets this one take it over from.
	adoptable bool
}

// planReplicas decides at most one change to the instance's read replicas: the ownership tags of
// one just created (its first change), the delete of one that left spec.readreplicas (or a second
// one of a name), the create of a declared one, its resize or its storage, in this order. A
// replica is created only of this object's instance, only after its name was looked up, and only
// while the primary is ACTIVE with no operation in flight; a replica found in OTC is taken over
// only under the ownership rules of instances (classify). It calls nothing.
//
// It reads top-down: the replicas read and judged (judgeReplicas), then each kind of change in
// its order (the first one found is the change; the later ones still say what waits and why),
// then the plan made of it (replicasDecision.plan). A pass that must read first returns the read.
func planReplicas(in replicasInput) replicasPlan {
	switch {
	case in.deleting:
		return replicasPlan{status: in.prior} // finalize owns the instance and its replicas now
	case !in.anyReplicas():
		return replicasPlan{} // nothing to read: no read replicas, none reported
	}
	ids := in.replicaIDs()
	if needs := in.unread(ids); len(needs) > 0 {
		return replicasPlan{needs: needs}
	}
	set, err := judgeReplicas(in, ids)
	if err != nil {
		return replicasPlan{err: err, status: in.prior}
	}
	d := newReplicasDecision(in, set)
	d.claimKept()
	if needs := d.deleteSurplus(); len(needs) > 0 {
		return replicasPlan{needs: needs}
	}
	d.tellKeptUnderway()
	if q, wait := d.createMissing(); wait {
		return q
	}
	if q, wait := d.changeKept(); wait {
		return q
	}
	return d.plan()
}

// anyReplicas reports whether the step has anything to read: replicas declared, reported by the
// primary or named by status, or one being built.
func (in replicasInput) anyReplicas() bool {
	op := in.op
	return len(in.spec.Readreplicas) > 0 || len(in.inst.Replicas) > 0 || len(in.prior) > 0 || (op != nil && op.Type == OpCreateReplica)
}

// replicaIDs are the primary's replicas by id (the shared view while steady), and the ones status
// named.
func (in replicasInput) replicaIDs() []string {
	ids := slices.Clone(in.inst.Replicas)
	for _, r := range in.prior {
		if r.ID != "" && !slices.Contains(ids, r.ID) && len(ids) < 2*MaxReadReplicas {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// unread are the reads of the replicas of ids not read yet.
func (in replicasInput) unread(ids []string) []need {
	var needs []need
	for _, id := range ids {
		if _, ok := in.byID[id]; !ok {
			needs = append(needs, need{kind: readInstance, id: id, maxAge: in.maxAge})
		}
	}
	return needs
}

// isDeclared reports whether spec.readreplicas names name.
func (in replicasInput) isDeclared(name string) bool {
	return slices.ContainsFunc(in.spec.Readreplicas, func(d v1alpha1.ReadReplica) bool { return d.Name == name })
}

// replicaSet is the object's read replicas as read and judged: every replica of the primary OTC
// lists, in id order, the one each declared name keeps, and this object's others, to delete.
type replicaSet struct {
	all     []observedReplica
	keep    map[string]*observedReplica
	surplus []*observedReplica // left the spec, or a second of a name
	// priorByID is what the last call's status said of each replica by id.
	priorByID map[string]v1alpha1.ReadReplicaStatus
	// otcNames maps an OTC name to its spec name, of the declared and the reported replicas.
	otcNames map[string]string
}

// judgeReplicas judges the replicas of ids, read by id, for this object, and picks the one each
// declared name keeps (pickInstance, as for instances). A replica that is gone, or that is not a
// replica of this object's instance (status may name anything), is left out: never touched.
func judgeReplicas(in replicasInput, ids []string) (replicaSet, error) {
	set := replicaSet{keep: map[string]*observedReplica{}, priorByID: map[string]v1alpha1.ReadReplicaStatus{}, otcNames: map[string]string{}}
	priorByName := map[string]v1alpha1.ReadReplicaStatus{}
	for _, r := range in.prior {
		if _, ok := priorByName[r.Name]; !ok { // the declared one; a second of the name follows it
			priorByName[r.Name] = r
		}
		if r.ID != "" {
			set.priorByID[r.ID] = r
		}
		if r.Name != "" {
			set.otcNames[in.names(r.Name)] = r.Name
		}
	}
	for _, d := range in.spec.Readreplicas {
		set.otcNames[in.names(d.Name)] = d.Name
	}

	for _, id := range ids {
		r := in.byID[id]
		switch {
		case errors.Is(r.err, cloud.ErrNotFound):
			continue // gone
		case r.err != nil:
			return replicaSet{}, r.err
		case r.inst.ReplicaOf != in.inst.ID:
			continue // not a replica of this object's instance (status may name anything): never touched
		}
		set.all = append(set.all, judgeReplica(r.inst, in.me, set.otcNames, in.policy))
	}
	slices.SortFunc(set.all, func(a, b observedReplica) int { return strings.Compare(a.inst.ID, b.inst.ID) })

	for _, d := range in.spec.Readreplicas {
		var mine []*cloud.Instance
		for i := range set.all {
			if o := &set.all[i]; o.key == d.Name && (o.cl.mine() || o.adoptable) {
				mine = append(mine, o.inst)
			}
		}
		k, others := pickInstance(mine, priorByName[d.Name].ID)
		for i := range set.all {
			if o := &set.all[i]; k != nil && o.inst.ID == k.ID {
				set.keep[d.Name] = o
			} else if slices.Contains(others, o.inst.ID) {
				set.surplus = append(set.surplus, o)
			}
		}
	}
	for i := range set.all {
		if o := &set.all[i]; o.cl.mine() && !in.isDeclared(o.key) {
			set.surplus = append(set.surplus, o)
		}
	}
	return set, nil
}

// replicasDecision is planReplicas' decision in the making: the change found so far (the first
// one found is the change), what waits for the instance, what is underway, the problems, and the
// replicas whose delete OTC works on.
type replicasDecision struct {
	in replicasInput
	replicaSet
	// op is status.operation (the primary's) as the replicas leave it; setOp says it changed.
	op    *v1alpha1.Operation
	setOp bool
	// primaryIdle: the primary takes a create; stopped: it is stopped, or stopping.
	primaryIdle, stopped bool

	ch       *replicaChange
	held     []string // changes that wait until the instance is ACTIVE again
	underway []string
	problems []outcome
	deleting map[string]bool // ids whose delete OTC works on
}

func newReplicasDecision(in replicasInput, set replicaSet) *replicasDecision {
	d := &replicasDecision{in: in, replicaSet: set, op: in.op, deleting: map[string]bool{}}
	// status.operation CreateReplica lasts while a replica of the instance is built, whoever's,
	// whether or not the call that created it was answered: the instance takes no other change
	// meanwhile, and the day-2 changes and autopilot, which run after this step, wait for it.
	b := slices.IndexFunc(set.all, func(o observedReplica) bool { return o.inst.Status == cloud.StatusBuild })
	switch op := d.op; {
	case b >= 0 && op == nil:
		target := cmp.Or(set.all[b].key, set.all[b].inst.Name)
		d.op, d.setOp = &v1alpha1.Operation{Type: OpCreateReplica, Generation: in.generation, Target: target}, true
	case b < 0 && op != nil && op.Type == OpCreateReplica:
		d.op, d.setOp = nil, true
	}
	d.primaryIdle = usable(in.inst.Status) && d.op == nil
	// NOTE: a stopped instance (SHUTDOWN) takes nothing but its start, and OTC stops its read
	// replicas with it and refuses to delete a stopped PostgreSQL one: the replicas' changes wait
	// (held), told, and never hold back the start, which the day-2 step makes after this one.
	// OTC lists the instance ACTIVE while it stops: the stop in flight holds them too.
	d.stopped = in.inst.Status == cloud.StatusShutdown || (d.op != nil && d.op.Type == OpStop)
	return d
}

// claimKept: first, the tags of a replica this object keeps, in spec order (replicaClaim).
func (d *replicasDecision) claimKept() {
	for _, dec := range d.in.spec.Readreplicas {
		if k := d.keep[dec.Name]; k != nil && d.ch == nil {
			d.ch = replicaClaim(k, dec.Name, d.in.me)
		}
	}
}

// deleteSurplus: then the delete of a replica the object does not keep. A delete status
// remembers is followed by its job (read first) until it failed; a replica OTC is changing is
// deleted afterwards. It returns the jobs to read first.
func (d *replicasDecision) deleteSurplus() []need {
	var needs []need
	for _, o := range d.surplus {
		prev := d.priorByID[o.inst.ID]
		if prev.Status == v1alpha1.ReplicaDeleting && prev.JobID != "" {
			j, read := d.in.jobs[prev.JobID]
			if !read {
				needs = append(needs, need{kind: readJob, id: prev.JobID})
				continue
			}
			if j.err != nil || j.job == nil || j.job.Status != cloud.JobFailed {
				d.deleting[o.inst.ID] = true // running, done (OTC lists it a little longer), or not known yet
				d.underway = append(d.underway, "the read replica "+o.inst.ID+" is being deleted")
				continue
			}
		}
		switch {
		case transitional(o.inst.Status):
			d.underway = append(d.underway, fmt.Sprintf("the read replica %s is %s; it is deleted afterwards", o.inst.ID, o.inst.Status))
		case d.stopped:
			d.held = append(d.held, "deletion of the read replica "+o.inst.ID+" ("+surplusWhy(o, d.in.isDeclared)+")")
		case d.ch == nil:
			d.ch = &replicaChange{replica: o.key, what: "deletion of the read replica " + o.inst.ID + " (" + surplusWhy(o, d.in.isDeclared) + ")",
				act: action{kind: actDeleteInstance, instance: o.inst.ID}}
		}
	}
	return needs
}

// tellKeptUnderway tells the kept replicas OTC is changing (one being built is the primary's
// operation, CreateReplica).
func (d *replicasDecision) tellKeptUnderway() {
	for _, dec := range d.in.spec.Readreplicas {
		if k := d.keep[dec.Name]; k != nil && transitional(k.inst.Status) && k.inst.Status != cloud.StatusBuild {
			d.underway = append(d.underway, fmt.Sprintf("the read replica %s is %s", dec.Name, k.inst.Status))
		}
	}
}

// createMissing: then the create of a declared replica the object has none of, in spec order,
// while the primary takes it; one that waits for the primary is held.
func (d *replicasDecision) createMissing() (replicasPlan, bool) {
	for _, dec := range d.in.spec.Readreplicas {
		switch {
		case d.keep[dec.Name] != nil || d.ch != nil:
			continue
		case !d.primaryIdle:
			if d.op == nil && !transitional(d.in.inst.Status) {
				d.held = append(d.held, "creation of the read replica "+dec.Name)
			}
			continue
		}
		if q, wait := d.create(dec); wait {
			return q, true
		}
	}
	return replicasPlan{}, false
}

// create decides the create of the declared replica dec, which the object has none of: its name
// is looked up first, and one of the object's found under it is taken over instead; a name another
// instance carries, the most replicas OTC allows, or a flavor OTC does not sell is refused. It
// returns a plan that reads first, or the refusal of a read.
func (d *replicasDecision) create(dec v1alpha1.ReadReplica) (replicasPlan, bool) {
	in := d.in
	// NOTE: OTC lets instances share a name: a create whose answer was lost is found by its
	// name before another is made, as the primary's is (instance.go).
	name := in.names(dec.Name)
	found, read := in.byName[dec.Name]
	if !read {
		return replicasPlan{needs: []need{{kind: readInstancesName, name: name}}}, true
	}
	if found.err != nil {
		return replicasPlan{err: found.err, status: in.prior}, true
	}
	var taken bool
	for _, f := range found.instances {
		o := judgeReplica(f, in.me, d.otcNames, in.policy)
		switch {
		case f.ReplicaOf == in.inst.ID && o.cl.mine():
			// this object's, not yet among the primary's related instances: taken over
			d.all = append(d.all, o)
			d.keep[dec.Name] = &d.all[len(d.all)-1]
		case !o.cl.mine():
			taken = true
		}
	}
	switch {
	case d.keep[dec.Name] != nil:
		d.ch = replicaClaim(d.keep[dec.Name], dec.Name, in.me)
	case taken:
		d.problems = append(d.problems, notSynced(ReasonReplicaNameTaken, fmt.Sprintf(
			"The name of the read replica %s is taken in OTC by an instance that is not this object's, so it is not created. Choose another name for it.", dec.Name), settled))
	case len(d.all) >= MaxReadReplicas:
		d.problems = append(d.problems, notSynced(ReasonReplicaLimitReached, fmt.Sprintf(
			"The read replica %s is not created: the instance has %d read replicas, the most OTC allows. Delete one in OTC or leave it out of readreplicas.", dec.Name, len(d.all)), settled))
	default:
		q, problem, wait := flavorFor(in, dec.Flavorref, dec.Availabilityzone)
		switch {
		case wait:
			return q, true
		case problem != nil:
			d.problems = append(d.problems, *problem)
		default:
			d.ch = &replicaChange{replica: dec.Name, what: "creation of the read replica " + dec.Name, act: action{kind: actCreateReplica,
				instance: in.inst.ID, replica: &cloud.CreateReplicaOpts{Name: name, Of: in.inst.ID, Flavor: dec.Flavorref,
					VolumeType: in.inst.Volume.Type, VolumeSize: replicaVolume(in.spec, dec, in.inst), Region: in.inst.Region, AvailabilityZone: dec.Availabilityzone}}}
		}
	}
	return replicasPlan{}, false
}

// changeKept: last, the resize or the storage of a replica the object keeps, in spec order.
func (d *replicasDecision) changeKept() (replicasPlan, bool) {
	for _, dec := range d.in.spec.Readreplicas {
		if k := d.keep[dec.Name]; k != nil {
			if q, wait := d.change(dec, k.inst); wait {
				return q, true
			}
		}
	}
	return replicasPlan{}, false
}

// change decides the kept replica r of the declared dec: what OTC cannot change (its AZ, a smaller
// storage) is refused; a replica stopped with the instance holds its change; one OTC could not
// build, or that failed, is told, unless its full storage grows; then its resize, else the growth
// of its storage (first when its storage is full). It returns a plan that reads the flavors first,
// or the refusal of that read.
func (d *replicasDecision) change(dec v1alpha1.ReadReplica, r *cloud.Instance) (replicasPlan, bool) {
	in := d.in
	if az := replicaAZ(r); az != "" && az != dec.Availabilityzone {
		d.problems = append(d.problems, notSynced(ReasonUnsupportedChange, fmt.Sprintf(
			"The read replica %s is in %s; OTC cannot move it to %s: rename it to replace it.", dec.Name, az, dec.Availabilityzone), settled))
	}
	size := replicaVolume(in.spec, dec, in.inst)
	if size < r.Volume.Size {
		d.problems = append(d.problems, notSynced(ReasonUnsupportedChange, fmt.Sprintf(
			"The read replica %s has %d GB of storage; OTC cannot shrink it to %d GB.", dec.Name, r.Volume.Size, size), settled))
	}
	full := r.Status == cloud.StatusStorageFull // only a storage growth frees it, as the instance's
	pending := replicaPending(dec, r, size, full)
	switch grows := full && size > r.Volume.Size; {
	case d.stopped: // OTC stopped it with the instance
		if pending != "" {
			d.held = append(d.held, pending)
		}
		return replicasPlan{}, false
	case terminal(r.Status) && !grows:
		d.problems = append(d.problems, replicaUnavailable(dec, r, pending, full))
		return replicasPlan{}, false
	case d.ch != nil || pending == "" || !usable(r.Status) && !full:
		return replicasPlan{}, false
	}
	if r.Flavor != dec.Flavorref && full {
		d.problems = append(d.problems, notSynced(ReasonInstanceUnavailable, fmt.Sprintf(
			"The read replica %s is %s in OTC; its resize to %s waits until it is ACTIVE again. Grow its volumesize to free it.", dec.Name, r.Status, dec.Flavorref), settled))
	} else if r.Flavor != dec.Flavorref {
		q, problem, wait := flavorFor(in, dec.Flavorref, replicaAZ(r))
		switch {
		case wait:
			return q, true
		case problem == nil:
			d.ch = &replicaChange{replica: dec.Name, what: "resize of the read replica " + dec.Name + " to " + dec.Flavorref,
				act: action{kind: actResize, instance: r.ID, flavor: dec.Flavorref}}
			return replicasPlan{}, false
		}
		d.problems = append(d.problems, *problem) // its storage may still grow
	}
	if size > r.Volume.Size {
		d.ch = &replicaChange{replica: dec.Name, what: fmt.Sprintf("growth of the read replica %s's storage to %d GB", dec.Name, size),
			act: action{kind: actEnlargeVolume, instance: r.ID, size: size}}
	}
	return replicasPlan{}, false
}

// replicaUnavailable tells a kept replica OTC could not build, or that failed, and its pending
// change.
//
// NOTE: such a replica serves no reads: told, as the instance's own state is in Ready, never
// silently left out of readerhosts.
func replicaUnavailable(dec v1alpha1.ReadReplica, r *cloud.Instance, pending string, full bool) outcome {
	msg := fmt.Sprintf("The read replica %s is %s in OTC, so readerhosts leaves it out", dec.Name, r.Status)
	switch {
	case pending != "":
		msg += "; its pending " + pending + " waits until it is ACTIVE again"
	case full:
		msg += "; grow its volumesize to free it"
	default:
		msg += "; leave it out of readreplicas to delete it, or rename it to replace it"
	}
	return notSynced(ReasonInstanceUnavailable, msg+".", settled)
}

// plan is the decision made: the change and OTC's answer to it once sent, what waits and what is
// underway, the problems, status.operation and status.readReplicas.
func (d *replicasDecision) plan() replicasPlan {
	p := replicasPlan{change: d.ch, op: d.op, setOp: d.setOp}
	sent := d.answered(&p)
	d.tellHeld()
	if len(d.underway) > 0 && (d.ch == nil || sent == nil) {
		p.tells = append(p.tells, ptr.To(syncedOK(ReasonChangeInProgress, "Read replicas: "+joinClauses(d.underway)+".", inFlight).underway()))
	}
	for i := range d.problems {
		p.tells = append(p.tells, &d.problems[i])
	}
	p.status = replicaStatus(d.in, d.in.spec.Readreplicas, d.keep, d.all, d.deleting, sent)
	return p
}

// answered tells OTC's answer to the change, once sent, into p, and returns what was sent (nil
// when nothing was).
func (d *replicasDecision) answered(p *replicasPlan) *replicaSent {
	s, ch, in := d.in.sent, d.ch, d.in
	if s == nil || ch == nil {
		return nil
	}
	switch err := s.err; {
	case errors.Is(err, cloud.ErrBusy):
		p.tells = append(p.tells, ptr.To(syncedOK(ReasonInstanceBusy, "The instance or its read replica is busy; the "+ch.what+" will be made when OTC accepts it.", retry)))
	case err != nil:
		p.err = err
	default:
		replica := ch.act.instance
		if ch.act.kind == actCreateReplica {
			replica = s.res.instanceID
		}
		p.logs = append(p.logs, logLine{slog.LevelInfo, "issued read replica change", []any{"instance", in.inst.ID, "replica", replica, "change", ch.what, "job", s.res.jobID}})
		p.tells = append(p.tells, ptr.To(syncedOK(ReasonReconcileSuccess, "OTC was asked for the "+ch.what+".", inFlight).made()))
	}
	if ch.act.kind == actCreateReplica && (s.err == nil || outcomeUnknown(s.err)) {
		// NOTE: a create whose answer was lost may have been made: the day-2 changes wait for
		// it, and the next call finds it by its name before making another.
		p.op, p.setOp = &v1alpha1.Operation{Type: OpCreateReplica, JobID: s.res.jobID, Generation: in.generation, Target: ch.replica}, true
	}
	return s
}

// tellHeld tells the changes that wait for the instance: stopped by spec.stopped, stopping or
// starting, or in a status that takes no change.
func (d *replicasDecision) tellHeld() {
	if len(d.held) == 0 {
		return
	}
	switch st := d.in.inst.Status; {
	case d.stopped && d.in.spec.Stopped:
		d.problems = append(d.problems, notSynced(ReasonInstanceStopped, fmt.Sprintf(
			"The instance is stopped (spec.stopped); the pending %s waits until stopped is false.", joinClauses(d.held)), settled))
	case d.stopped:
		d.underway = append(d.underway, "the pending "+joinClauses(d.held)+" waits until the instance is started")
	default:
		d.problems = append(d.problems, notSynced(ReasonInstanceUnavailable, fmt.Sprintf(
			"The instance is %s in OTC; the pending %s waits until it is ACTIVE again.", st, joinClauses(d.held)), settled))
	}
}

// flavorFor checks that OTC sells the read replica flavor code for the instance's engine and
// version in az, as the day-2 resize checks its flavor: a plan that reads the flavor list first
// (wait), or the refusal; neither when it is on sale.
func flavorFor(in replicasInput, code, az string) (q replicasPlan, problem *outcome, wait bool) {
	switch f := in.flavors; {
	case f == nil:
		return replicasPlan{needs: []need{{kind: readFlavors, engine: in.inst.Engine, version: in.inst.Version}}}, nil, true
	case f.err != nil:
		return replicasPlan{err: f.err, status: in.prior}, nil, true
	}
	i := slices.IndexFunc(in.flavors.flavors, func(f cloud.Flavor) bool { return f.SpecCode == code })
	switch {
	case i < 0 || !strings.EqualFold(in.flavors.flavors[i].Mode, "replica"):
		return q, ptr.To(notSynced(ReasonFlavorUnavailable, fmt.Sprintf("The read replica flavor %s is not offered for %s %s.", code, in.inst.Engine, in.inst.Version), settled)), false
	case in.flavors.flavors[i].AZStatus[az] != "normal":
		return q, ptr.To(notSynced(ReasonFlavorUnavailable, fmt.Sprintf("The read replica flavor %s is not available in %s.", code, az), settled)), false
	}
	return q, nil, false
}

// judgeReplica judges one read replica of the primary for this object: its claim, the spec name
// it carries, and whether the adoption policy lets the object take over one an object released.
func judgeReplica(r *cloud.Instance, me owner, otcNames map[string]string, policy AdoptionPolicy) observedReplica {
	names := slices.Sorted(maps.Keys(otcNames))
	key, ok := otcNames[r.Name]
	if !ok {
		if key, ok = me.replicaNamed(r.Name); ok {
			names = append(names, r.Name) // the object's own name for a replica neither spec nor status names
		}
	}
	o := observedReplica{inst: r, cl: classify(r, me, names...), key: key}
	if t, ok := r.Tags[TagReplica]; ok {
		o.key = ""
		for _, spec := range otcNames {
			if tagValue(spec) == t {
				o.key = spec
			}
		}
	}
	o.adoptable = o.cl.Kind == Released && o.key != "" && adoptionRefusal(policy, o.cl, me) == ""
	return o
}

// replicaClaim is the change that makes a kept replica carry this object's tags (its first change
// after the create), or removes an earlier owner's release tag; nil when its tags are in order.
func replicaClaim(k *observedReplica, name string, me owner) *replicaChange {
	switch {
	case k.cl.Kind == Ours && k.inst.Tags[TagReplica] == tagValue(name) && !k.cl.StaleRelease:
		return nil
	case k.cl.Kind == Ours && k.inst.Tags[TagReplica] == tagValue(name):
		return &replicaChange{replica: name, what: "removal of the earlier owner's release tag from the read replica " + name,
			act: action{kind: actDeleteTags, instance: k.inst.ID, keys: []string{TagReleasedBy}}}
	}
	return &replicaChange{replica: name, what: "write of the read replica " + name + "'s ownership tags",
		act: action{kind: actSetTags, instance: k.inst.ID, tags: me.replicaTags(name)}}
}

// surplusWhy says why the object deletes one of its replicas.
func surplusWhy(o *observedReplica, isDeclared func(string) bool) string {
	if isDeclared(o.key) {
		return "a second replica of the name " + o.key
	}
	if o.key == "" {
		return "no longer in readreplicas"
	}
	return o.key + " is no longer in readreplicas"
}

// replicaPending names the change a kept replica still needs, for messages: its resize, else the
// growth of its storage; "" for none. A replica whose storage is full takes its growth first.
func replicaPending(d v1alpha1.ReadReplica, r *cloud.Instance, size int, full bool) string {
	switch {
	case r.Flavor != d.Flavorref && !(full && size > r.Volume.Size):
		return "resize of the read replica " + d.Name + " to " + d.Flavorref
	case size > r.Volume.Size:
		return fmt.Sprintf("growth of the read replica %s's storage to %d GB", d.Name, size)
	}
	return ""
}

// replicaVolume is the storage a declared replica asks for: its own, else the primary's, and never
// less than the primary has (autopilot, or OTC's autoscaling, may have grown it past volumesize):
// OTC keeps a read replica's storage at least its primary's ("New storage space of read replicas
// after autoscaling up must be greater than or equal to that of the primary DB instance",
// DOC:rds/usermanual "Configuring Storage Autoscaling"), and a smaller one fills up with the
// primary's data.
func replicaVolume(spec *v1alpha1.RdsSpec, d v1alpha1.ReadReplica, primary *cloud.Instance) int {
	size := spec.Volumesize
	if d.Volumesize > 0 {
		size = d.Volumesize
	}
	return max(size, primary.Volume.Size)
}

// replicaAZ is the AZ of a replica's one node.
func replicaAZ(r *cloud.Instance) string {
	if len(r.Nodes) > 0 {
		return r.Nodes[0].AvailabilityZone
	}
	return ""
}

// replicaStatus is status.readReplicas: the declared replicas in spec order, then the object's
// others OTC still lists (being deleted).
func replicaStatus(in replicasInput, declared []v1alpha1.ReadReplica, keep map[string]*observedReplica, all []observedReplica, deleting map[string]bool, s *replicaSent) []v1alpha1.ReadReplicaStatus {
	var out []v1alpha1.ReadReplicaStatus
	sentOK := func(kind actionKind, id string) bool {
		return s != nil && s.ch.act.kind == kind && (s.ch.act.instance == id || kind == actCreateReplica) && (s.err == nil || outcomeUnknown(s.err))
	}
	for _, d := range declared {
		e := v1alpha1.ReadReplicaStatus{Name: d.Name, InstanceName: in.names(d.Name)}
		if k := keep[d.Name]; k != nil {
			e = replicaEntry(e, k.inst)
		} else if sentOK(actCreateReplica, "") && s.ch.replica == d.Name && s.res.instanceID != "" {
			e.ID, e.Status = s.res.instanceID, cloud.StatusBuild
		}
		out = append(out, e)
	}
	kept := func(id string) bool {
		return slices.ContainsFunc(out, func(e v1alpha1.ReadReplicaStatus) bool { return e.ID == id })
	}
	for _, o := range all {
		if !o.cl.mine() || kept(o.inst.ID) {
			continue
		}
		e := replicaEntry(v1alpha1.ReadReplicaStatus{Name: o.key, InstanceName: o.inst.Name}, o.inst)
		switch {
		case sentOK(actDeleteInstance, o.inst.ID):
			e.Status, e.JobID = v1alpha1.ReplicaDeleting, s.res.jobID
		case deleting[o.inst.ID]:
			prev := slices.IndexFunc(in.prior, func(r v1alpha1.ReadReplicaStatus) bool { return r.ID == o.inst.ID })
			e.Status, e.JobID = v1alpha1.ReplicaDeleting, in.prior[prev].JobID
		}
		out = append(out, e)
	}
	return out
}

// replicaEntry is a replica's status entry with what OTC says of it.
func replicaEntry(e v1alpha1.ReadReplicaStatus, r *cloud.Instance) v1alpha1.ReadReplicaStatus {
	e.ID, e.InstanceName, e.Status, e.Flavor, e.Volume, e.Availabilityzone = r.ID, r.Name, r.Status, r.Flavor, r.Volume.Size, replicaAZ(r)
	if len(r.PrivateIPs) > 0 && r.Port != 0 {
		e.Endpoint = fmt.Sprintf("%s:%d", r.PrivateIPs[0], r.Port)
	}
	return e
}

// readerHosts is the connection Secret's readerhosts: the endpoints of the declared read replicas
// that are ACTIVE, in spec order, comma-separated; "" for none.
func readerHosts(spec *v1alpha1.RdsSpec, st []v1alpha1.ReadReplicaStatus) string {
	var hosts []string
	for _, d := range spec.Readreplicas {
		for _, e := range st {
			if e.Name == d.Name && e.Status == cloud.StatusActive && e.Endpoint != "" {
				hosts = append(hosts, e.Endpoint)
			}
		}
	}
	return strings.Join(hosts, ",")
}

// joinClauses joins clauses with "; ".
func joinClauses(cs []string) string { return strings.Join(cs, "; ") }

// replicasStep is the read replicas step as the loop runs it (loop.go): it reads the primary's
// replicas (the shared view while steady: no OTC call), the name of one it is about to create,
// a delete job it follows, plans, makes the plan's one change and plans on OTC's answer.
type replicasStep struct {
	in replicasInput
	p  replicasPlan
}

func newReplicasStep(c *call, inst *cloud.Instance) *replicasStep {
	// The call's status so far by value: no plan input points into the call.
	in := replicasInput{
		spec: c.spec, prior: slices.Clone(c.st.ReadReplicas), inst: inst, me: c.me, policy: c.r.cfg.Adoption,
		deleting: c.parent.DeletionTimestamp != nil, generation: c.parent.Generation,
	}
	if op := c.st.Operation; op != nil {
		in.op = ptr.To(*op)
	}
	if c.viewed {
		// NOTE: the primary came from the shared view, so the call makes no change (runStep):
		// its replicas may come from there too. A call that reads fresh reads them fresh.
		in.maxAge = viewMaxAge(c.parent, c.r.cfg.ResyncSteady)
	}
	return &replicasStep{in: in}
}

func (s *replicasStep) plan() head {
	s.p = planReplicas(s.in)
	h := head{needs: s.p.needs, tells: told(s.p.tells...), err: s.p.err, logs: s.p.logs}
	if ch := s.p.change; ch != nil {
		h.stop = true
		if s.in.sent == nil {
			h.act = &ch.act
		}
	}
	return h
}

// saw keeps what a read found; the maps are made on the first read (a call of an object without
// read replicas reads nothing).
func (s *replicasStep) saw(n need, r seen) {
	put := func(m *map[string]seen, k string) {
		if *m == nil {
			*m = map[string]seen{}
		}
		(*m)[k] = r
	}
	switch n.kind {
	case readInstance:
		put(&s.in.byID, n.id)
	case readJob:
		put(&s.in.jobs, n.id)
	case readFlavors:
		s.in.flavors = &r
	case readInstancesName:
		for _, d := range s.in.spec.Readreplicas {
			if s.in.names(d.Name) == n.name {
				put(&s.in.byName, d.Name)
			}
		}
	}
}

func (s *replicasStep) answered(res acted, err error) {
	s.in.sent = &replicaSent{ch: *s.p.change, res: res, err: err}
}

// render writes status.readReplicas and status.operation, and the replicas' endpoints into the
// connection the user Secrets name (the connection Secret takes them from the status, children).
func (s *replicasStep) render(a *answer) {
	if s.p.needs != nil {
		return
	}
	if s.p.err == nil || s.in.sent != nil {
		a.st.ReadReplicas = s.p.status
	}
	if a.conn != nil {
		a.conn.readers = readerHosts(s.in.spec, a.st.ReadReplicas)
	}
	if s.p.setOp {
		a.st.Operation = s.p.op
	}
}
