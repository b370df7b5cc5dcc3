package sync

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
}

// findInstance finds the instance by the id the last call remembered, or else by the object's
// names, new and legacy: a create whose response was lost is found here and taken over, never
// created twice. Only an instance whose tags name this object, or an untagged one with its name,
// is taken over by name. An object that adopts an instance it has not taken over yet has none
// (sync adopts it; finalize leaves it alone).
func (c *call) findInstance(ctx context.Context) (observation, error) {
	var obs observation
	if c.st.ID == "" && c.spec.Instanceid != "" {
		return obs, nil
	}
	if c.st.ID != "" {
		// The shared view while steady (observe_view.go), never on the call made again (fresh).
		var maxAge time.Duration
		if !c.fresh {
			maxAge = viewMaxAge(c.parent, c.r.cfg.ResyncSteady)
		}
		s := c.observe(ctx, need{kind: readInstance, id: c.st.ID, maxAge: maxAge})
		inst, err := s.inst, s.err
		obs.viewed = viewed(c.cloud, maxAge)
		if errors.Is(err, cloud.ErrNotFound) {
			return obs, nil
		}
		if err != nil {
			return obs, err
		}
		obs.inst, obs.claim = inst, classify(inst, c.me, c.names...)
		return obs, nil
	}
	found, err := c.findByNames(ctx)
	if err != nil {
		return obs, err
	}
	var mine []*cloud.Instance
	for _, in := range found {
		if cl := classify(in, c.me, c.names...); cl.mine() {
			mine = append(mine, in)
		} else if obs.taken == nil {
			obs.taken, obs.takenClaim = in, cl
		}
	}
	if obs.inst, obs.others = pickInstance(mine, ""); obs.inst != nil {
		obs.claim, obs.taken = classify(obs.inst, c.me, c.names...), nil
	}
	return obs, nil
}

// findByNames lists the instances carrying the object's names, new and legacy, ordered by id.
func (c *call) findByNames(ctx context.Context) ([]*cloud.Instance, error) {
	c.listed = true
	var all []*cloud.Instance
	for _, name := range c.names {
		s := c.observe(ctx, need{kind: readInstancesName, name: name})
		if s.err != nil {
			return nil, s.err
		}
		for _, in := range s.instances {
			if !slices.ContainsFunc(all, func(x *cloud.Instance) bool { return x.ID == in.ID }) {
				all = append(all, in)
			}
		}
	}
	slices.SortFunc(all, func(a, b *cloud.Instance) int { return cmp.Compare(a.ID, b.ID) })
	return all, nil
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

// claimInstance makes this object's instance carry its ownership tags before anything else happens
// to it (claimChange). It reports true when it issued a change or must wait (the call stops there).
func (c *call) claimInstance(ctx context.Context, inst *cloud.Instance, obs *observation) (bool, error) {
	ch := claimChange(inst, obs.claim, c.me)
	if ch == nil {
		return false, nil
	}
	if obs.claim.Kind != Ours && !c.listed {
		// NOTE: a create race lost across replicas leaves a second untagged instance with our
		// name: look once before the tags make this one ours.
		found, err := c.findByNames(ctx)
		if err != nil {
			return true, c.cloudError(err)
		}
		obs.others = othersOf(inst, found, c.me, c.names)
	}
	_, err := c.act(ctx, ch.act)
	switch {
	case errors.Is(err, cloud.ErrBusy):
		c.out.tell(syncedOK(ReasonInstanceBusy, "The instance is busy; the "+ch.target+" will be made when OTC accepts it.", retry))
		return true, nil
	case err != nil:
		return true, c.cloudError(err)
	}
	c.log.Info("wrote ownership tags", "instance", inst.ID, "change", ch.target)
	c.out.tell(syncedOK(ReasonReconcileSuccess, "OTC was asked for the "+ch.target+".", inFlight).made())
	return true, nil
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

// trackDuplicates keeps status.duplicates: the further instances of this object a listing found,
// or, when this call listed none, those the last call reported that OTC still lists as ours.
//
// NOTE: status.duplicates is what the last call said, but whoever may write the object's status
// can make it list any number of ids. Each is looked up only while there are a few
// (maxDuplicateLookups); a longer list is replaced by one listing by name, which costs two calls
// however long the list and says the truth.
func (c *call) trackDuplicates(ctx context.Context, inst *cloud.Instance, obs observation) {
	dups := obs.others
	prev := slices.Compact(slices.Sorted(slices.Values(c.parent.Status.Duplicates)))
	if !c.listed && len(prev) > maxDuplicateLookups {
		found, err := c.findByNames(ctx)
		dups = othersOf(inst, found, c.me, c.names)
		if err != nil {
			// Unknown for now: a few are kept to be looked up next time.
			dups = slices.DeleteFunc(prev[:maxDuplicateLookups], func(id string) bool { return id == inst.ID })
		}
	}
	if !c.listed {
		dups = nil
		for _, id := range prev {
			if id == inst.ID {
				continue
			}
			s := c.observe(ctx, need{kind: readInstanceByID, id: id})
			other, err := s.inst, s.err
			switch {
			case errors.Is(err, cloud.ErrNotFound):
			case err != nil:
				dups = append(dups, id) // unknown: keep reporting it
			case classify(other, c.me, c.names...).mine():
				dups = append(dups, id)
			}
		}
	}
	c.st.Duplicates = dups
	if o := duplicatesOutcome(inst.ID, dups); o != nil {
		c.out.tell(*o)
	} else {
		c.out.drop(v1alpha1.ConditionInstanceDuplicates)
	}
}

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
