package reconcile

import (
	"errors"
	"log/slog"
	"slices"

	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// NOTE: OTC deletes a primary's read replicas with it ("If you delete a primary DB instance, its
// read replicas are also deleted automatically", DOC:rds/usermanual/deleting_a_db_instance_or_read_replica),
// and a replica holds no data of its own and cannot be backed up. So deletionpolicy Delete takes
// the primary's final backup and deletes the primary, and OTC takes the replicas with it; a replica
// of the object OTC still lists afterwards is found by its ownership tags (searchOwn) and deleted
// without a backup. Retain releases the replicas, then the primary: the tags of each say so.

// releaseReplicas plans the release of the object's read replicas under deletionpolicy Retain,
// one a call, before the primary's: it reports true once none is left to release, else the plan
// to answer (a read of the replicas, a release tag, OTC's answer to it).
func releaseReplicas(in finalizeInput, p finalizePlan) (finalizePlan, bool) {
	ids := slices.Sorted(slices.Values(in.inst.Replicas))
	if len(ids) == 0 {
		return p, true
	}
	if in.replicas == nil {
		return finalizePlan{needReplicas: true}, false
	}
	otcNames := map[string]string{}
	for _, d := range in.spec.Readreplicas {
		otcNames[ReplicaInstanceName(in.me.Cluster, in.me.Namespace, in.me.Name, d.Name)] = d.Name
	}
	for _, id := range ids {
		r, ok := in.replicas[id]
		switch {
		case !ok, errors.Is(r.err, cloud.ErrNotFound):
			continue
		case r.err != nil:
			p.failed = r.err
			return p, false
		case r.inst.ReplicaOf != in.inst.ID:
			continue
		}
		o := judgeReplica(r.inst, in.me, otcNames, AdoptNever)
		if !o.cl.mine() {
			continue // another's, or released already
		}
		tags := in.me.releaseTags()
		if o.key != "" {
			tags[TagReplica] = tagValue(o.key)
		}
		if in.answer == nil {
			return finalizePlan{act: &action{kind: actSetTags, instance: id, tags: tags}}, false
		}
		switch err := in.answer.err; {
		case errors.Is(err, cloud.ErrBusy):
			p.ready = ptr.To(notReady(ReasonRetained, "A read replica is busy; the instance and its read replicas are released (deletionpolicy Retain) when OTC accepts their release tags.", retry))
			return p, false
		case err != nil:
			p.failed = err
			return p, false
		}
		p.events = append(p.events, logLine{level: slog.LevelInfo, msg: "releasing read replica", args: []any{"instance", in.inst.ID, "replica", id}})
		p.ready = ptr.To(notReady(ReasonRetained, "The read replicas are being released: they stay in OTC with the instance (deletionpolicy Retain), tagged as released.", settled))
		p.synced = ptr.To(syncedOK(ReasonReconcileSuccess, "A release tag was issued to OTC.", inFlight))
		return p, false
	}
	return p, true
}

// waitForReplicas holds the deletion while a read replica of the instance is being built: OTC takes
// no backup or delete of the instance meanwhile. It ends status.operation CreateReplica once none
// is. It reports true with the plan to answer while the deletion waits (or a read is needed).
func waitForReplicas(in finalizeInput, p finalizePlan) (finalizePlan, bool) {
	if len(in.inst.Replicas) == 0 {
		if op := p.operation; op != nil && op.Type == OpCreateReplica {
			p.operation = nil
		}
		return p, false
	}
	if in.replicas == nil {
		return finalizePlan{needReplicas: true}, true
	}
	for _, id := range slices.Sorted(slices.Values(in.inst.Replicas)) {
		switch r := in.replicas[id]; {
		case errors.Is(r.err, cloud.ErrNotFound):
		case r.err != nil:
			p.failed = r.err
			return p, true
		case r.inst != nil && r.inst.Status == cloud.StatusBuild:
			return deleting(p, "Waiting for a read replica of the instance to be created: OTC takes no backup or delete of the instance meanwhile."), true
		}
	}
	if op := p.operation; op != nil && op.Type == OpCreateReplica {
		p.operation = nil
	}
	return p, false
}

// deleteReplica deletes a read replica of the object that OTC still lists once its primary is
// gone: without a backup (OTC has none of a replica; its primary's final backup was taken), and
// without reporting it as the object's instance (status keeps the primary's id). A replica OTC no
// longer has, or one being deleted, is looked for again on the next call.
//
// NOTE: the search by tags may come from a shared view's listing begun after the deletion but
// before OTC deleted the replicas with their primary: the replica is read fresh by id first
// (which drops it from the view when OTC no longer has it).
func deleteReplica(in finalizeInput, p finalizePlan) finalizePlan {
	switch c := in.confirmed; {
	case c == nil:
		return finalizePlan{confirmReplica: true}
	case errors.Is(c.err, cloud.ErrNotFound):
		return deleting(p, "A read replica of the instance is being deleted.")
	case c.err != nil:
		p.failed = c.err
		return p
	}
	if in.answer == nil {
		return finalizePlan{act: &action{kind: actDeleteInstance, instance: in.inst.ID}}
	}
	switch err := in.answer.err; {
	case errors.Is(err, cloud.ErrNotFound), errors.Is(err, cloud.ErrBusy):
	case err != nil:
		p.failed = err
		return p
	default:
		p.events = append(p.events, logLine{level: slog.LevelInfo, msg: "deleting read replica", args: []any{"replica", in.inst.ID, "job", in.answer.jobID}})
	}
	return deleting(p, "A read replica of the instance is being deleted.")
}
