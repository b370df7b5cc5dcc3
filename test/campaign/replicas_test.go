package campaign

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
)

// Read replicas in the campaign (one run in three, seed%3 == 1): the object starts with one or two,
// and the user adds, removes, resizes and grows them. The promises: no two replicas of one name,
// only of the object's instance and under its replicas' deterministic names; a replica created
// once per name and epoch, resized and grown once per value, deleted once it left the spec; at
// most one change per call across the instance and its replicas (checked for every call); and,
// converged, exactly the declared replicas, ACTIVE, with what the spec asks.

// rrOnSale are MySQL 8.0 read replica flavors on sale in every AZ.
var rrOnSale = []string{"rds.mysql.c2.medium.rr", "rds.mysql.c2.large.rr", "rds.mysql.n1.medium.2.rr", "rds.mysql.n1.large.2.rr", "rds.mysql.n1.large.4.rr"}

var rrAZs = []string{"eu-de-01", "eu-de-02", "eu-de-03"}

// withReplicas says whether a run declares read replicas.
func withReplicas(seed uint64) bool { return seed%3 == 1 }

// replicaSpec is one declared replica as the campaign writes it: always with its own volumesize,
// so that the instance's growth is not also the replica's (each change is counted once).
func (r *run) replicaSpec(name string) map[string]any {
	rng := r.w.rng
	return map[string]any{"name": name, "flavorref": rrOnSale[rng.IntN(len(rrOnSale))], "availabilityzone": rrAZs[rng.IntN(len(rrAZs))], "volumesize": 40}
}

// initialReplicas declares the run's first replicas.
func (r *run) initialReplicas(spec map[string]any) {
	var rrs []any
	for range 1 + r.w.rng.IntN(2) {
		r.rrNext++
		name := fmt.Sprintf("r%d", r.rrNext)
		rrs = append(rrs, r.replicaSpec(name))
		r.epoch["rr/"+name] = 1
	}
	spec["readreplicas"] = rrs
}

// editReplicas makes one valid change to spec.readreplicas.
func (r *run) editReplicas() {
	rng := r.w.rng
	rrs, _ := r.m.spec()["readreplicas"].([]any)
	gen := r.m.generation() + 1
	switch op := rng.IntN(4); {
	case op == 0 && len(rrs) < 3:
		r.rrNext++
		name := fmt.Sprintf("r%d", r.rrNext)
		add := r.replicaSpec(name)
		r.m.edit(func(spec map[string]any) { spec["readreplicas"] = append(slices.Clone(rrs), add) })
		r.epoch["rr/"+name] = gen
	case op == 1 && len(rrs) > 0:
		i := rng.IntN(len(rrs))
		r.m.edit(func(spec map[string]any) { spec["readreplicas"] = slices.Delete(slices.Clone(rrs), i, i+1) })
	case op == 2 && len(rrs) > 0:
		i := rng.IntN(len(rrs))
		flavor := rrOnSale[rng.IntN(len(rrOnSale))]
		e := rrs[i].(map[string]any)
		if e["flavorref"] == flavor {
			return
		}
		r.m.edit(func(spec map[string]any) { spec["readreplicas"].([]any)[i].(map[string]any)["flavorref"] = flavor })
		r.epoch["rr/"+e["name"].(string)+"/flavorref"] = gen
	case op == 3 && len(rrs) > 0:
		i := rng.IntN(len(rrs))
		e := rrs[i].(map[string]any)
		size := toInt(e["volumesize"]) + 10*(1+rng.IntN(3))
		r.m.edit(func(spec map[string]any) { spec["readreplicas"].([]any)[i].(map[string]any)["volumesize"] = size })
		r.epoch["rr/"+e["name"].(string)+"/volumesize"] = gen
	}
}

// primary is the object's instance as OTC lists it, if any.
func (r *run) primary() (otcsim.InstanceView, bool) {
	for _, in := range r.w.sim.Instances() {
		if in.Type != otcsim.TypeReplica {
			return in, true
		}
	}
	return otcsim.InstanceView{}, false
}

// replicaViews are the read replicas OTC lists.
func (r *run) replicaViews() []otcsim.InstanceView {
	return slices.DeleteFunc(r.w.sim.Instances(), func(in otcsim.InstanceView) bool { return in.Type != otcsim.TypeReplica })
}

// replicaName is the spec name of a replica by its OTC name ("" for none of the run's).
func (r *run) replicaName(otcName string) string {
	for i := 1; i <= r.rrNext; i++ {
		name := fmt.Sprintf("r%d", i)
		if reconcile.ReplicaInstanceName("local", objectNamespace, objectName, name) == otcName {
			return name
		}
	}
	return ""
}

// checkReplicas: every replica is one of the object's instance, under one of its replicas'
// names, and no two share a name.
func (r *run) checkReplicas() {
	p, ok := r.primary()
	seen := map[string]string{}
	for _, rr := range r.replicaViews() {
		name := r.replicaName(rr.Name)
		switch {
		case !ok || rr.ReplicaOf != p.ID:
			r.fail("the read replica %s is not one of the object's instance", rr.ID)
		case name == "":
			r.fail("the read replica %s is named %q, not as one of the object's", rr.ID, rr.Name)
		case seen[name] != "":
			r.fail("two read replicas of the name %s: %s and %s", name, seen[name], rr.ID)
		}
		seen[name] = rr.ID
	}
}

// replicaRequests are the requests of one hook call the simulator served on a read replica
// (its path names the replica), by operation and replica name, not refused by an injected fault.
//
// The map holds the count per operation (op) and per operation and replica (op/name), and the
// attempts a fault refused too ("all:"+op).
func (r *run) replicaRequests(reqs []simRequest, primary string) map[string]int {
	out := map[string]int{}
	for _, q := range reqs {
		id := instanceOfPath(q.path)
		if id == "" || id == primary {
			continue
		}
		out["all:"+q.op]++ // refused by a fault or not
		if q.status == http.StatusTooManyRequests || q.status >= 500 {
			continue
		}
		name := ""
		if v, ok := r.w.sim.Instance(id); ok {
			name = r.replicaName(v.Name)
		}
		out[q.op]++
		out[q.op+"/"+name]++
	}
	return out
}

// instanceOfPath is the instance id in an RDS path /rds/v3/{project}/instances/{id}/..., or "".
func instanceOfPath(path string) string {
	parts := strings.Split(path, "/")
	for i, p := range parts {
		if p == "instances" && i+1 < len(parts) {
			return parts[i+1]
		}
	}
	return ""
}

// checkReplicaChanges: a replica's resize and growth once per value (epoch; a growth also once per
// size of the instance, which a replica's storage never falls below), and the day-2 check of the
// instance told how many of the call's resizes and growths were the replicas'.
func (r *run) checkReplicaChanges(onReplicas map[string]int, primarySize int) {
	for key, n := range onReplicas {
		op, name, perReplica := strings.Cut(key, "/")
		if !perReplica || strings.HasPrefix(key, "all:") {
			continue
		}
		field := map[string]string{otcsim.OpResize: "flavorref", otcsim.OpEnlargeVolume: "volumesize"}[op]
		if field == "" || name == "" {
			continue
		}
		k := fmt.Sprintf("%s@rr/%s/%s@%d", op, name, field, r.epoch["rr/"+name+"/"+field])
		if op == otcsim.OpEnlargeVolume {
			k += fmt.Sprintf("/instance@%dGB", primarySize)
		}
		if r.issued[k] += n; r.issued[k] > 1 {
			r.fail("%s issued %d times on the read replica %s for one value (%s)", op, r.issued[k], name, k)
		}
	}
}

// replicasConverged: OTC lists exactly the declared replicas, ACTIVE, with the spec's flavor,
// storage (never less than the instance's) and AZ, and status reports each.
func (r *run) replicasConverged(spec v1alpha1.RdsSpec, st v1alpha1.RdsStatus) bool {
	p, _ := r.primary()
	views := r.replicaViews()
	if len(views) != len(spec.Readreplicas) || len(st.ReadReplicas) != len(spec.Readreplicas) {
		return false
	}
	for i, d := range spec.Readreplicas {
		j := slices.IndexFunc(views, func(v otcsim.InstanceView) bool { return r.replicaName(v.Name) == d.Name })
		if j < 0 {
			return false
		}
		v, e := views[j], st.ReadReplicas[i]
		if v.Status != "ACTIVE" || v.Flavor != d.Flavorref || v.VolumeSize != max(cmp.Or(d.Volumesize, spec.Volumesize), p.VolumeSize) || v.AvailabilityZones[0] != d.Availabilityzone ||
			v.Tags[reconcile.TagReplica] != d.Name || e.ID != v.ID || e.Status != "ACTIVE" {
			return false
		}
	}
	return true
}
