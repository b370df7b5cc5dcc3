package sync

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
