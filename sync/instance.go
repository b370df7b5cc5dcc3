package reconcile

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// instanceVerdict is what a call does about the object's instance, once it is observed.
type instanceVerdict int

const (
	// instanceManage: the instance is the object's; the steps follow.
	instanceManage instanceVerdict = iota
	// instanceVanished: status.id names an instance OTC no longer lists; it is not created again.
	instanceVanished
	// instanceNameTaken: only another object's (or a released) instance carries the object's name.
	instanceNameTaken
	// instanceAdopt: spec.instanceid names an instance this object has not taken over yet.
	instanceAdopt
	// instanceCreate: there is no instance yet.
	instanceCreate
	// instanceNotOwned: status.id names an instance whose tags do not name this object.
	instanceNotOwned
)

// decideInstance is the first decision of a sync call: what to do about the instance, from the
// id status remembers, spec.instanceid, the observation and whether the object manages what was
// observed (manages).
func decideInstance(statusID, instanceid string, obs observation, manages bool) instanceVerdict {
	switch {
	case obs.inst == nil && statusID != "":
		return instanceVanished
	case obs.inst == nil && obs.taken != nil:
		return instanceNameTaken
	case obs.inst == nil && instanceid != "":
		return instanceAdopt
	case obs.inst == nil:
		return instanceCreate
	case !manages:
		return instanceNotOwned
	}
	return instanceManage
}

// observation is what one call found of the object's instance.
type observation struct {
	// inst is the instance status.id names, or else the one carrying the object's name that is
	// the object's (ownership.go); nil if there is none.
	inst  *cloud.Instance
	claim claim // what inst's tags say
	// others are further instances of this object found under its names (duplicates).
	others []string
	// taken is an instance carrying the object's name that is not its own (when inst is nil).
	taken      *cloud.Instance
	takenClaim claim
	// viewed says inst was read from the shared view: the call may make no change on it
	// (observe_view.go).
	viewed bool
	// listed says the call listed the instances carrying the object's names (others holds what
	// it found).
	listed bool
}

// findInstance finds the instance by the id the last call remembered, or else by the object's
// names (lookupOf); viewed says it came from the shared view.
func (c *call) findInstance(ctx context.Context) (observation, error) {
	var maxAge time.Duration
	if !c.fresh && c.st.ID != "" {
		// The shared view while steady (observe_view.go), never on the call made again (fresh).
		maxAge = viewMaxAge(c.parent, c.r.cfg.ResyncSteady)
	}
	l := lookupOf(c.st.ID, c.spec.Instanceid, maxAge, c.me, c.names)
	for ns := l.next(); ns != nil; ns = l.next() {
		for _, n := range ns {
			l.saw(n, c.observe(ctx, n))
		}
	}
	obs, err := l.observation()
	obs.viewed = c.st.ID != "" && viewed(c.cloud, maxAge)
	return obs, err
}

// lookup is the observation of the object's instance as data: the instance by the id the last
// call remembered, or else the instances carrying the object's names, new and legacy: a create
// whose response was lost is found here and taken over, never created twice. Only an instance
// whose tags name this object, or an untagged one with its name, is taken over by name. An object
// that adopts an instance it has not taken over yet has none (sync adopts it; finalize leaves it
// alone). A step asks for next() and gives it what was seen (saw) until it asks nothing more.
type lookup struct {
	id     string // status.id; "" looks by names
	none   bool   // nothing to read: the object adopts an instance it has not taken over yet
	maxAge time.Duration
	me     owner
	names  []string
	// byID is the instance read by id, or the read's error, once read (readByID); only these two
	// are kept, not the whole seen, which would be copied to the heap at every call.
	byID     *cloud.Instance
	byIDErr  error
	readByID bool
	list     listing
}

func lookupOf(statusID, instanceid string, maxAge time.Duration, me owner, names []string) *lookup {
	return &lookup{id: statusID, none: statusID == "" && instanceid != "", maxAge: maxAge, me: me, names: names, list: listing{names: names}}
}

// next is the read the lookup needs next; nil once it has what it needs.
func (l *lookup) next() []need {
	switch {
	case l.none:
		return nil
	case l.id != "" && !l.readByID:
		return []need{{kind: readInstance, id: l.id, maxAge: l.maxAge}}
	case l.id != "":
		return nil
	}
	return l.list.next()
}

func (l *lookup) saw(_ need, s seen) {
	if l.id != "" {
		l.byID, l.byIDErr, l.readByID = s.inst, s.err, true
		return
	}
	l.list.saw(s)
}

// observation is what the reads found.
func (l *lookup) observation() (observation, error) {
	var obs observation
	switch {
	case l.none:
		return obs, nil
	case l.id != "":
		switch err := l.byIDErr; {
		case errors.Is(err, cloud.ErrNotFound):
			return obs, nil
		case err != nil:
			return obs, err
		}
		obs.inst, obs.claim = l.byID, classify(l.byID, l.me, l.names...)
		if obs.inst.Type == cloud.TypeReplica {
			// NOTE: status.id names the object's instance, never a read replica: not one of its
			// own, whose tags name the object too, nor an untagged one, which a status with
			// adopted true would otherwise have managed (manages) though spec.instanceid never
			// adopts a replica. A status that names one (whoever may write the status can) is
			// answered as one naming another's instance, and nothing is done to the replica as if
			// it were the instance (replicas.go manages the object's own).
			obs.claim.Kind = OwnedByOther
		}
		return obs, nil
	}
	obs.listed = true
	if l.list.err != nil {
		return obs, l.list.err
	}
	var mine []*cloud.Instance
	for _, in := range l.list.found {
		if cl := classify(in, l.me, l.names...); cl.mine() {
			mine = append(mine, in)
		} else if obs.taken == nil {
			obs.taken, obs.takenClaim = in, cl
		}
	}
	if obs.inst, obs.others = pickInstance(mine, ""); obs.inst != nil {
		obs.claim, obs.taken = classify(obs.inst, l.me, l.names...), nil
	}
	return obs, nil
}

// listing lists the instances carrying the object's names, new and legacy, as data: one read a
// round (next), what was seen added (saw), ordered by id; it stops at the first failed read.
type listing struct {
	names []string
	read  int
	found []*cloud.Instance
	err   error
}

// next is the read the listing needs next; nil once it is done.
func (l *listing) next() []need {
	if l.done() {
		return nil
	}
	return []need{{kind: readInstancesName, name: l.names[l.read]}}
}

// done says every name was read, or a read failed (err).
func (l *listing) done() bool { return l.err != nil || l.read >= len(l.names) }

func (l *listing) saw(s seen) {
	l.read++
	if s.err != nil {
		l.err, l.found = s.err, nil
		return
	}
	for _, in := range s.instances {
		if !slices.ContainsFunc(l.found, func(x *cloud.Instance) bool { return x.ID == in.ID }) {
			l.found = append(l.found, in)
		}
	}
	slices.SortFunc(l.found, func(a, b *cloud.Instance) int { return cmp.Compare(a.ID, b.ID) })
}

// manages reports whether this object manages an instance it observed by status.id.
//
// NOTE: an instance adopted before there were ownership tags has none, and a name of its own: it
// is taken over again where the adoption policy would adopt it today (its tags are then written).
func manages(cl claim, adopted bool, policy AdoptionPolicy, me owner) bool {
	return cl.mine() || (cl.Kind == Unowned && adopted && adoptionRefusal(policy, cl, me) == "")
}

// claimChange is the change that makes an instance carry this object's ownership tags, or removes
// the release tag an earlier owner left; nil when the tags are in order. It calls nothing.
func claimChange(inst *cloud.Instance, cl claim, me owner) *change {
	switch {
	case cl.Kind == Ours && !cl.StaleRelease:
		return nil
	case cl.Kind == Ours:
		return &change{target: "removal of the earlier owner's release tag", act: action{kind: actDeleteTags, instance: inst.ID, keys: []string{TagReleasedBy}}}
	}
	return &change{target: "write of the ownership tags", act: action{kind: actSetTags, instance: inst.ID, tags: me.tags()}}
}

// claimStep makes this object's instance carry its ownership tags before anything else happens to
// it (claimChange), as the loop runs it (loop.go). Its change, or a wait for it, stops the call.
type claimStep struct {
	inst  *cloud.Instance
	me    owner
	names []string
	ch    *change
	// list lists the instances carrying the object's names before the tags are written, when the
	// call has not yet; nil when no listing is needed.
	//
	// NOTE: a create race lost across replicas leaves a second untagged instance with our name:
	// look once before the tags make this one ours.
	list   *listing
	answer *actAnswer
}

func newClaimStep(inst *cloud.Instance, obs observation, me owner, names []string) *claimStep {
	s := &claimStep{inst: inst, me: me, names: names, ch: claimChange(inst, obs.claim, me)}
	if s.ch != nil && obs.claim.Kind != Ours && !obs.listed {
		s.list = &listing{names: names}
	}
	return s
}

func (s *claimStep) plan() head {
	switch {
	case s.ch == nil:
		return head{}
	case s.list != nil && !s.list.done():
		return head{needs: s.list.next(), stop: true}
	case s.list != nil && s.list.err != nil:
		return head{err: s.list.err, stop: true}
	case s.answer == nil:
		return head{act: &s.ch.act, stop: true}
	}
	switch err := s.answer.err; {
	case errors.Is(err, cloud.ErrBusy):
		return head{stop: true, tells: told(ptr.To(syncedOK(ReasonInstanceBusy, "The instance is busy; the "+s.ch.target+" will be made when OTC accepts it.", retry)))}
	case err != nil:
		return head{err: err, stop: true}
	}
	return head{stop: true,
		logs:  []logLine{{slog.LevelInfo, "wrote ownership tags", []any{"instance", s.inst.ID, "change", s.ch.target}}},
		tells: told(ptr.To(syncedOK(ReasonReconcileSuccess, "OTC was asked for the "+s.ch.target+".", inFlight).made()))}
}

func (s *claimStep) saw(_ need, r seen)            { s.list.saw(r) }
func (s *claimStep) answered(res acted, err error) { s.answer = answerOf(res, err) }
func (s *claimStep) render(*answer)                {}

// listed is what the step's listing says of the call's observation: whether it listed the names,
// and the further instances of this object it found.
func (s *claimStep) listed(obs observation) observation {
	if s.list != nil {
		obs.listed = true
		if s.list.err == nil {
			obs.others = othersOf(s.inst, s.list.found, s.me, s.names)
		}
	}
	return obs
}

// othersOf are the instances found that are this object's too, besides inst (duplicates).
func othersOf(inst *cloud.Instance, found []*cloud.Instance, me owner, names []string) []string {
	mine := []*cloud.Instance{inst}
	for _, in := range found {
		if classify(in, me, names...).mine() {
			mine = append(mine, in)
		}
	}
	_, others := pickInstance(mine, inst.ID)
	return others
}

// duplicatesStep keeps status.duplicates, as the loop runs it (loop.go): the further instances of
// this object a listing found, or, when this call listed none, those the last call reported that
// OTC still lists as ours. It makes no change and never stops the call.
//
// NOTE: status.duplicates is what the last call said, but whoever may write the object's status
// can make it list any number of ids. Each is looked up only while there are a few
// (maxDuplicateLookups); a longer list is replaced by one listing by name, which costs two calls
// however long the list and says the truth.
type duplicatesStep struct {
	inst  *cloud.Instance
	me    owner
	names []string
	// prev is status.duplicates as the last call answered it, sorted. listed says this call listed
	// the instances carrying the object's names, and others are the further ones it found
	// (observation.listed, observation.others: only these, not the whole observation, #18).
	prev   []string
	listed bool
	others []string
	// list is the listing of a long prev; looked are the ids of prev looked up, nil until read.
	list   *listing
	looked map[string]seen
	dups   []string
}

func newDuplicatesStep(inst *cloud.Instance, obs observation, prior []string, me owner, names []string) *duplicatesStep {
	// NOTE: sorted in a copy, which Clone leaves nil for none (slices.Sorted allocates even then).
	prev := slices.Clone(prior)
	slices.Sort(prev)
	s := &duplicatesStep{inst: inst, me: me, names: names, listed: obs.listed, others: obs.others, prev: slices.Compact(prev)}
	if !obs.listed && len(s.prev) > maxDuplicateLookups {
		s.list = &listing{names: names}
	}
	return s
}

func (s *duplicatesStep) plan() head {
	switch {
	case s.listed:
		s.dups = s.others
	case s.list != nil && !s.list.done():
		return head{needs: s.list.next()}
	case s.list != nil && s.list.err != nil:
		// Unknown for now: a few are kept to be looked up next time.
		s.dups = slices.DeleteFunc(slices.Clone(s.prev[:maxDuplicateLookups]), func(id string) bool { return id == s.inst.ID })
	case s.list != nil:
		s.dups = othersOf(s.inst, s.list.found, s.me, s.names)
	case s.looked == nil:
		var needs []need
		for _, id := range s.prev {
			if id != s.inst.ID {
				needs = append(needs, need{kind: readInstanceByID, id: id})
			}
		}
		if len(needs) > 0 {
			return head{needs: needs}
		}
		s.dups = nil
	default:
		s.dups = nil
		for _, id := range s.prev {
			r, ok := s.looked[id]
			switch {
			case !ok, errors.Is(r.err, cloud.ErrNotFound):
			case r.err != nil:
				s.dups = append(s.dups, id) // unknown: keep reporting it
			case classify(r.inst, s.me, s.names...).mine():
				s.dups = append(s.dups, id)
			}
		}
	}
	if o := duplicatesOutcome(s.inst.ID, s.dups); o != nil {
		return head{tells: told(o)}
	}
	return head{tells: dropDuplicates}
}

func (s *duplicatesStep) saw(n need, r seen) {
	if s.list != nil {
		s.list.saw(r)
		return
	}
	if s.looked == nil {
		s.looked = map[string]seen{}
	}
	s.looked[n.id] = r
}

func (s *duplicatesStep) answered(acted, error) {} // it makes no change
func (s *duplicatesStep) render(a *answer)      { a.st.Duplicates = s.dups }

// duplicatesOutcome is the InstanceDuplicates condition for the further instances of this object
// besides the one it manages; nil when there are none.
func duplicatesOutcome(managed string, dups []string) *outcome {
	if len(dups) == 0 {
		return nil
	}
	return &outcome{cond: v1alpha1.ConditionInstanceDuplicates, status: metav1.ConditionTrue, reason: ReasonDuplicateInstances, class: settled,
		message: fmt.Sprintf("OTC lists further instances of this object: %s. The controller manages %s, never deletes the others and creates nothing more; delete them in OTC once you have checked they hold nothing you need.",
			strings.Join(dups, ", "), managed)}
}

// maxDuplicateLookups is how many ids of status.duplicates are looked up one by one.
const maxDuplicateLookups = 4

// notOwned reports an instance status.id names that is not this object's exactly as one OTC does
// not list (vanished): nothing of it is reported, nothing is changed, the connection Secret is
// echoed as observed. Only the log tells the operator what it is.
func (c *call) notOwned(inst *cloud.Instance, cl claim) {
	c.log.Warn("status.id names an instance that is not this object's", "instance", inst.ID, "ownership", cl.Kind.String(),
		"ownerNamespace", cl.Namespace, "ownerCluster", cl.Cluster)
	c.vanished()
}

// nameTaken reports that only an instance that is not this object's carries its name: nothing is
// created, nothing is taken over (nameTakenMessage).
func (c *call) nameTaken(inst *cloud.Instance, cl claim) {
	c.log.Warn("instance name taken", "instance", inst.ID, "name", inst.Name, "ownership", cl.Kind.String(),
		"ownerNamespace", cl.Namespace, "ownerCluster", cl.Cluster)
	c.st.Status, c.st.Operation = "", nil
	c.out.tell(notReady(ReasonInstanceNameTaken, nameTakenMessage(inst.ID, cl, c.r.cfg.Adoption, c.me), settled))
	c.out.tell(notSynced(ReasonInstanceNameTaken, "No instance is created; see the Ready condition.", settled))
}

// vanished reports an instance that OTC no longer lists although this object created or adopted
// it. Creating it again would silently hand the user an empty database, so the hook does not.
//
// NOTE: an instance status.id names that is not this object's is reported in the very same words
// (notOwned): the answer must not tell "someone else's" from "does not exist", or a forged
// status.id would probe which instances exist. So the sentence names no instance.
func (c *call) vanished() {
	c.st.Status = ""
	c.st.Operation = nil
	c.out.tell(notReady(ReasonInstanceNotFound,
		"OTC lists no instance of this object under status.id: it is gone, or was never this object's. It is not recreated automatically; delete this object to clean up.", settled))
	c.out.tell(syncedOK(ReasonReconcileSuccess, "The instance is gone.", settled))
}
