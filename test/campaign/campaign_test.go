// Package campaign is a deterministic fault campaign: many seeded runs of a whole Rds lifecycle
// through the real stack (the gin server, the reconciler, the OTC adapter and SDK, the simulator
// over HTTP on a manual clock), each a random but valid sequence of user edits interleaved with
// Metacontroller's misbehaviour (duplicate calls, stale observations, answers that are never
// applied) and OTC faults. After every hook call the product's promises are checked.
//
// Replay one run with: go test ./test/campaign/ -run 'TestCampaign/seed=17' -v
// Run more seeds with: go test ./test/campaign/ -campaign.seeds=500
package campaign

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
)

const (
	objectName      = "my-rds-single"
	objectNamespace = "rds1"
)

// seeds is how many runs TestCampaign makes; more with -campaign.seeds=500.
var seeds = flag.Uint64("campaign.seeds", 50, "number of seeded runs")

// onSale are MySQL 8.0 single flavors offered in every AZ the campaign uses.
var onSale = []string{
	"rds.mysql.c2.medium", "rds.mysql.c2.large", "rds.mysql.n1.medium.2", "rds.mysql.n1.large.2",
	"rds.mysql.n1.large.4", "rds.mysql.n1.xlarge.4",
}

// day2Ops maps each day-2 OTC operation to the spec field whose value it carries out, and how
// many calls one value may take (tags: one to set, one to remove). The final backup is taken once.
var day2Ops = map[string]struct {
	field string
	limit int
}{
	otcsim.OpResize:             {"flavorref", 1},
	otcsim.OpEnlargeVolume:      {"volumesize", 1},
	otcsim.OpUpdateBackupPolicy: {"backup", 1},
	otcsim.OpTagsAction:         {"tags", 2},
	otcsim.OpRestart:            {"restartrequest", 1},
	otcsim.OpCreateBackup:       {"finalbackup", 1},
	otcsim.OpUpdateInstanceCfg:  {"parameters", 1},
	otcsim.OpSetSecurityGroup:   {"securitygroup", 1},
	otcsim.OpUpdatePort:         {"port", 1},
	otcsim.OpSwitchSSL:          {"ssl", 1},
}

// securityGroups are the seed network's groups by name, as a spec names them.
var securityGroups = map[string]string{
	otcsim.SeedSecurityGroupName: otcsim.SeedSecurityGroupID,
	otcsim.DefaultSecurityGroup:  otcsim.SeedDefaultSecurityGroupID,
}

// mutatingOps are the operations a run's commit-then-drop faults hit.
var mutatingOps = []string{
	otcsim.OpCreateInstance, otcsim.OpResize, otcsim.OpEnlargeVolume, otcsim.OpUpdateBackupPolicy,
	otcsim.OpTagsAction, otcsim.OpRestart, otcsim.OpCreateBackup, otcsim.OpDeleteInstance,
	otcsim.OpUpdateInstanceCfg,
	otcsim.OpSetSecurityGroup, otcsim.OpUpdatePort, otcsim.OpSwitchSSL,
}

func TestCampaign(t *testing.T) {
	for seed := uint64(1); seed <= *seeds; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			newRun(t, seed).play()
		})
	}
}

// run is one seeded lifecycle and the bookkeeping its invariants need.
type run struct {
	t  *testing.T
	w  *world
	m  *metacontroller
	sk bool // skipfinalbackup
	// epoch is the generation at which each spec field last got a new value: a day-2 operation is
	// issued at most once per field and epoch (restarts: per restartrequest value).
	epoch  map[string]int64
	issued map[string]int
	// secret is the connection Secret's password once an answer returned it.
	secret    string
	finalized bool
	restarts  int
	// duplicates, staleCalls and lostAnswers turn on those kinds of Metacontroller misbehaviour
	// for the run. Each of them loses an answer: the second of two duplicate calls cannot update
	// the status the first one changed.
	duplicates, staleCalls, lostAnswers bool
	logsAsked                           int
	callNumber                          int
	// rr: the run declares read replicas (replicas_test.go); rrNext numbers their names.
	rr     bool
	rrNext int
	// start is the run's first moment: autopilot may change the instance once per cooldown.
	// convergeStart is when converge first asked whether autopilot settled.
	start, convergeStart time.Time
}

// Autopilot runs (even seeds): a short window and cooldown so that a run sees it act, and
// metrics the run moves.
const (
	autopilotWindow   = "5m"
	autopilotCooldown = 10 * time.Minute
)

func newRun(t *testing.T, seed uint64) *run {
	w := newWorld(t, seed)
	r := &run{t: t, w: w, epoch: map[string]int64{}, issued: map[string]int{}, start: w.clock.Now()}
	r.sk = w.rng.IntN(4) == 0
	r.duplicates, r.staleCalls, r.lostAnswers = w.rng.IntN(3) == 0, w.rng.IntN(3) == 0, w.rng.IntN(3) == 0
	generated := w.rng.IntN(3) == 0
	r.rr = withReplicas(seed)
	r.m = w.newObject(func(spec map[string]any) {
		if r.rr {
			r.initialReplicas(spec)
		}
		spec["availabilityzone"] = []string{"eu-de-01", "eu-de-02"}[w.rng.IntN(2)]
		spec["flavorref"] = onSale[w.rng.IntN(len(onSale))]
		if r.sk {
			spec["skipfinalbackup"] = true
		}
		if generated {
			delete(spec, "password")
		}
		if w.autopilot {
			spec["autopilot"] = true
			spec["autopilotwindow"] = autopilotWindow
			spec["autopilotcooldown"] = fmt.Sprintf("%dm", int(autopilotCooldown.Minutes()))
			spec["autopilotmaxvcpus"] = 8
			if w.seed%4 == 0 {
				spec["volumetype"] = "CLOUDSSD" // OTC's own storage autoscaling
			}
		}
	})
	t.Logf("seed=%d: skipfinalbackup=%v generated password=%v duplicates=%v stale calls=%v lost answers=%v autopilot=%v read replicas=%v",
		seed, r.sk, generated, r.duplicates, r.staleCalls, r.lostAnswers, w.autopilot, r.rr)
	return r
}

// fail reports a broken promise with everything needed to replay it.
func (r *run) fail(format string, args ...any) {
	r.t.Helper()
	r.t.Fatalf("seed=%d call %d: %s", r.w.seed, r.callNumber, fmt.Sprintf(format, args...))
}

func (r *run) play() {
	rng := r.w.rng
	r.injectFaults()
	steps := 25 + rng.IntN(20)
	deleteAt := -1
	if rng.IntN(4) == 0 {
		deleteAt = steps/2 + rng.IntN(steps/2)
	}
	for i := range steps {
		if i == deleteAt {
			r.t.Logf("seed=%d: deleted at step %d", r.w.seed, i)
			r.m.markDeleted(r.w.clock.Now())
		}
		if !r.m.deleting() && i > 0 && rng.Float64() < 0.4 {
			r.userEdit()
		}
		if rng.Float64() < 0.3 {
			r.m.finishJobs()
		}
		if r.w.autopilot && rng.Float64() < 0.25 {
			r.moveMetrics()
		}
		r.metacontrollerCall()
		if r.finalized {
			break
		}
		r.w.clock.Advance([]time.Duration{0, time.Second, 5 * time.Second, 10 * time.Second, 20 * time.Second, time.Minute}[rng.IntN(6)])
	}

	// No more faults, calm metrics: the object converges, then deletion finalizes.
	r.w.sim.ClearFaults()
	r.calmMetrics()
	if !r.m.deleting() {
		r.converge()
		r.identicalRequests()
		r.m.markDeleted(r.w.clock.Now())
	}
	for range 40 {
		if r.finalized {
			break
		}
		r.call(r.m.request(), true)
		r.w.clock.Advance(10 * time.Second)
	}
	if !r.finalized {
		r.fail("deletion did not finalize without faults: status %s", r.statusJSON())
	}
	if n := len(r.w.sim.Instances()); n != 0 {
		r.fail("finalized, but OTC lists %d instances", n)
	}
	if !r.sk && r.completedFinalBackup("") == "" {
		r.fail("deleted without a completed final backup")
	}
	r.t.Logf("seed=%d: done after %d calls; OTC calls %v", r.w.seed, r.callNumber, r.w.sim.CallCounts())
}

// injectFaults adds the run's OTC faults, in a seeded order and with seeded rates.
func (r *run) injectFaults() {
	rng := r.w.rng
	var faults []otcsim.Fault
	faults = append(faults,
		otcsim.Fault{Kind: otcsim.FaultStatus, Status: []int{500, 503}[rng.IntN(2)], Rate: 0.02 + 0.06*rng.Float64()},
		otcsim.Fault{Kind: otcsim.FaultThrottle, RetryAfter: time.Duration(1+rng.IntN(5)) * time.Second, Rate: 0.01 + 0.04*rng.Float64()},
		otcsim.Fault{Kind: otcsim.FaultLatency, Delay: time.Duration(1+rng.IntN(3)) * time.Millisecond, Rate: 0.05},
	)
	ops := mutatingOps
	if r.w.autopilot {
		ops = append(slices.Clone(ops), otcsim.OpManageAutoScaling)
	}
	if r.rr {
		ops = append(slices.Clone(ops), otcsim.OpCreateReplica)
	}
	for _, op := range ops {
		if rng.IntN(2) == 0 {
			faults = append(faults, otcsim.Fault{Op: op, Kind: otcsim.FaultCommitThenDrop, Rate: 0.2 + 0.3*rng.Float64()})
		}
	}
	rng.Shuffle(len(faults), func(i, j int) { faults[i], faults[j] = faults[j], faults[i] })
	for _, f := range faults {
		r.w.sim.AddFault(f)
	}
}

// userEdit makes one valid spec change.
func (r *run) userEdit() {
	rng := r.w.rng
	spec := r.m.spec()
	gen := r.m.generation() + 1
	kinds := 10
	if r.rr {
		kinds = 11
	}
	switch rng.IntN(kinds) {
	case 0:
		flavor := onSale[rng.IntN(len(onSale))]
		if flavor == spec["flavorref"] {
			return
		}
		r.m.edit(func(spec map[string]any) { spec["flavorref"] = flavor })
		r.epoch["flavorref"] = gen
	case 1:
		size := toInt(spec["volumesize"]) + 10*(1+rng.IntN(4))
		r.m.edit(func(spec map[string]any) { spec["volumesize"] = size })
		r.epoch["volumesize"] = gen
	case 2:
		h := rng.IntN(23)
		days := 1 + rng.IntN(35)
		r.m.edit(func(spec map[string]any) {
			spec["backupstarttime"] = fmt.Sprintf("%02d:00-%02d:00", h, h+1)
			spec["backupkeepdays"] = days
		})
		r.epoch["backup"] = gen
	case 3:
		var tags []any
		for _, k := range []string{"team", "env", "cost"} {
			if rng.IntN(2) == 0 {
				tags = append(tags, map[string]any{"key": k, "value": fmt.Sprintf("v%d", rng.IntN(3))})
			}
		}
		r.m.edit(func(spec map[string]any) { spec["tags"] = tags })
		r.epoch["tags"] = gen
	case 4:
		r.restarts++
		r.m.edit(func(spec map[string]any) { spec["restartrequest"] = "restart-" + strconv.Itoa(r.restarts) })
	case 6:
		// engine parameters (sync/parameters.go): set in one change per value, none needing a
		// restart, so that restarts stay the restartrequest's
		params := map[string]any{"max_connections": strconv.Itoa(100 * (1 + rng.IntN(20)))}
		if rng.IntN(2) == 0 {
			params["long_query_time"] = strconv.Itoa(1 + rng.IntN(5))
		}
		r.m.edit(func(spec map[string]any) { spec["parameters"] = params })
		r.epoch["parameters"] = gen
	case 5:
		r.logsAsked++
		r.m.edit(func(spec map[string]any) {
			spec["logs"] = map[string]any{"request": "logs-" + strconv.Itoa(r.logsAsked), "since": "1h"}
		})
	case 7:
		group := []string{otcsim.SeedSecurityGroupName, otcsim.DefaultSecurityGroup}[rng.IntN(2)]
		if group == spec["securitygroup"] {
			return
		}
		r.m.edit(func(spec map[string]any) { spec["securitygroup"] = group })
		r.epoch["securitygroup"] = gen
	case 8:
		port := []string{"3306", "3307", "3308"}[rng.IntN(3)]
		if port == fmt.Sprint(spec["port"]) {
			return
		}
		r.m.edit(func(spec map[string]any) { spec["port"] = port })
		r.epoch["port"] = gen
	case 9:
		on := rng.IntN(2) == 0
		if was, ok := spec["ssl"].(bool); ok && was == on {
			return
		}
		r.m.edit(func(spec map[string]any) { spec["ssl"] = on })
		r.epoch["ssl"] = gen
	case 10:
		r.editReplicas() // replicas_test.go
	}
}

// metacontrollerCall makes one call the way Metacontroller might: normally, twice on the same
// observation, on a stale observation, or with its answer never applied.
func (r *run) metacontrollerCall() {
	switch p := r.w.rng.Float64(); {
	case p < 0.15 && r.duplicates: // a duplicate: both calls see the same observation; the second answer's status
		// update conflicts with the first's, so only the first is applied
		req := r.m.request()
		_, first, mutated, faults := r.call(req, true)
		_, second, mutatedAgain, faultsAgain := r.call(req, false)
		if first != nil && second != nil && !mutated && faults+faultsAgain == 0 {
			if !bytes.Equal(first, second) {
				if !r.staleView(req, first, second) {
					r.fail("two identical requests without a fault gave different answers:\n%s\n%s", first, second)
				}
				// The first was decided on an older listing: a third identical request, on the
				// listing the second saw, must be answered as the second was.
				if _, third, _, faultsThird := r.call(req, false); third != nil && faultsThird == 0 && !bytes.Equal(second, third) {
					r.fail("after the view's newer listing, two identical requests gave different answers:\n%s\n%s", second, third)
				}
			}
			if mutatedAgain {
				r.fail("the repeated identical request made a change in OTC")
			}
		}
	case p < 0.25: // a stale observation: the request before the last one, its answer not applied
		if stale := r.m.stale(); stale != nil && r.staleCalls {
			r.call(stale, false)
		}
		r.call(r.m.request(), true)
	case p < 0.4 && r.lostAnswers: // the answer is lost: status and children stay as they were
		r.call(r.m.request(), false)
	default:
		r.call(r.m.request(), true)
	}
}

// staleView reports whether two answers to identical requests differ only because the first was
// decided on an older listing of the shared view than the second (docs/view.md: a steady object
// may be served a listing up to --view-max-age old, and OTC changes instances by itself, as its
// storage autoscaling does): the instance the first answer reports is not the one OTC has now,
// and the second's is; and the request's status was steady, the only case in which a call may
// read the view at all.
func (r *run) staleView(req *request, first, second []byte) bool {
	var a, b hook.SyncResponse
	var in hook.Request
	if json.Unmarshal(first, &a) != nil || json.Unmarshal(second, &b) != nil || a.Status == nil || b.Status == nil ||
		json.Unmarshal(req.body, &in) != nil || !steady(&in.Parent) {
		return false
	}
	now, ok := r.w.sim.Instance(b.Status.ID)
	observed := func(st *v1alpha1.RdsStatus) string {
		size := 0
		if st.Volume != nil {
			size = st.Volume.Size
		}
		return fmt.Sprintf("%s/%s/%d", st.Status, st.Flavor, size)
	}
	current := fmt.Sprintf("%s/%s/%d", now.Status, now.Flavor, now.VolumeSize)
	return ok && a.Status.ID == b.Status.ID && observed(a.Status) != current && observed(b.Status) == current
}

// steady reports whether an object's status lets a call read the shared view (sync/observe_view.go,
// viewMaxAge): Ready and Synced True, nothing in flight, the spec observed.
func steady(p *v1alpha1.Rds) bool {
	st := &p.Status
	if st.Operation != nil || st.Status == "" || st.ObservedGeneration != p.Generation || p.DeletionTimestamp != nil {
		return false
	}
	for _, typ := range []string{v1alpha1.ConditionReady, v1alpha1.ConditionSynced} {
		found := false
		for _, c := range st.Conditions {
			found = found || (c.Type == typ && c.Status == "True")
		}
		if !found {
			return false
		}
	}
	return true
}

// call sends one request and checks every promise around it. With apply, a 200 answer becomes
// the new observation. It returns the HTTP status, the answer's body on 200, whether a mutating
// OTC call was made, and how many faults fired.
func (r *run) call(req *request, apply bool) (int, []byte, bool, int) {
	r.t.Helper()
	r.callNumber++
	sim := r.w.sim
	r.w.settle() // what came before the call is in the log before the call's snapshots
	before, mutBefore := sim.CallCounts(), sim.MutatingCalls()
	refusedBefore, faultsBefore := r.w.faults.snapshot()
	markBefore := r.restartMark()
	_, servedBefore := r.w.faults.served(0)
	primaryBefore, _ := r.primary()

	code, body := r.w.post(req.path, req.body)
	r.w.settle() // the records of the call's requests, before they are read (world.settle)
	served, _ := r.w.faults.served(servedBefore)
	onReplicas := r.replicaRequests(served, primaryBefore.ID)

	after, mutAfter := sim.CallCounts(), sim.MutatingCalls()
	refusedAfter, faultsAfter := r.w.faults.snapshot()
	marked := r.restartMark() != markBefore
	r.t.Logf("call %d %s gen=%d apply=%v at %s: %d, OTC %v, faults %d", r.callNumber, req.path, req.generation, apply,
		r.w.clock.Now().Format(time.TimeOnly), code, diffCounts(before, after), faultsAfter-faultsBefore)
	// A log Job's capability costs no cloud call: at most one mutating call, and never an IAM
	// credential.
	if n := mutAfter - mutBefore; n > 1 || after[otcsim.OpCreateTemporaryCredential] > 0 {
		r.fail("%d mutating OTC calls in one hook call: %v", n, diffCounts(before, after))
	}
	r.checkInstances()
	r.checkReplicas()
	if n := after[otcsim.OpDeleteInstance] - before[otcsim.OpDeleteInstance] - onReplicas["all:"+otcsim.OpDeleteInstance]; n > 0 && !r.sk {
		id := primaryBefore.ID
		if r.completedFinalBackup(id) == "" {
			r.fail("DeleteInstance without a completed final backup of instance %q; backups %+v", id, sim.Backups())
		}
	}
	r.checkDay2(req, before, after, refusedBefore, refusedAfter, marked, onReplicas)
	r.checkReplicaChanges(onReplicas, primaryBefore.VolumeSize)
	if pw := r.password(); pw != "" && strings.Contains(r.w.logs.String(), pw) {
		r.fail("the server's logs contain the root password")
	}

	var out []byte
	switch {
	case code == http.StatusOK:
		out = body
		resp := r.m.decode(body)
		r.checkAnswer(req, resp, apply)
		if apply {
			r.m.apply(resp)
			r.finalized = r.finalized || resp.Finalized
		}
	case !retryable(code):
		r.fail("the hook answered %d: %s", code, body)
	}
	return code, out, mutAfter > mutBefore, faultsAfter - faultsBefore
}

// checkInstances: never more than one OTC instance (besides its read replicas, checkReplicas),
// under the deterministic name.
func (r *run) checkInstances() {
	in := slices.DeleteFunc(r.w.sim.Instances(), func(in otcsim.InstanceView) bool { return in.Type == otcsim.TypeReplica })
	if len(in) > 1 {
		r.fail("%d OTC instances for one object: %+v", len(in), in)
	}
	if want := reconcile.InstanceName("local", objectNamespace, objectName); len(in) == 1 && in[0].Name != want {
		r.fail("the instance is named %q, not %q", in[0].Name, want)
	}
}

// restartMark is the instance's rds-restart-request tag, the mark a restart request is written
// ahead with ("" without instance or tag).
func (r *run) restartMark() string {
	if in, ok := r.primary(); ok {
		return in.Tags[reconcile.TagRestartRequest]
	}
	return ""
}

// checkDay2: each day-2 operation is carried out once per spec value. Requests refused by an
// injected fault, or by OTC as busy (409), do not count (nothing was done; faultLog.busyRefusal);
// requests that OTC performed and whose answer was dropped do. A tags call that changed the restart's mark is the mark of the request's
// restartrequest value, written once ahead of the restart and once sealed after it.
func (r *run) checkDay2(req *request, before, after, refusedBefore, refusedAfter map[string]int, marked bool, onReplicas map[string]int) {
	var spec struct {
		Spec v1alpha1.RdsSpec `json:"spec"`
	}
	var envelope struct {
		Parent json.RawMessage `json:"parent"`
	}
	require.NoError(r.t, json.Unmarshal(req.body, &envelope))
	require.NoError(r.t, json.Unmarshal(envelope.Parent, &spec))
	for op, d := range day2Ops {
		n := (after[op] - before[op]) - (refusedAfter[op] - refusedBefore[op]) - onReplicas[op] // the replicas' own: checkReplicaChanges
		key := fmt.Sprintf("%s@%d", op, r.epoch[d.field])
		switch {
		case op == otcsim.OpRestart:
			key = op + "@" + spec.Spec.Restartrequest
		case op == otcsim.OpTagsAction && marked && n > 0:
			n--
			mark := "restart mark@" + spec.Spec.Restartrequest
			if r.issued[mark]++; r.issued[mark] > 2 {
				r.fail("the restart's mark written %d times for restartrequest %q (once ahead, once sealed)", r.issued[mark], spec.Spec.Restartrequest)
			}
		}
		if n <= 0 {
			continue
		}
		r.issued[key] += n
		limit := d.limit
		if r.w.autopilot && (op == otcsim.OpResize || op == otcsim.OpEnlargeVolume) {
			limit += r.autopilotAllowance()
		}
		if r.issued[key] > limit {
			r.fail("%s issued %d times for one value of %s (%s)", op, r.issued[key], d.field, key)
		}
	}
}

// checkAnswer: no root password in status; the connection Secret, once the cluster has it (an
// applied answer), is returned with the same password, and never left out while it is observed
// (Metacontroller would delete it); finalized only once OTC no longer lists the instance.
func (r *run) checkAnswer(req *request, resp *hookResponse, apply bool) {
	if pw := r.password(); pw != "" && strings.Contains(r.statusOf(resp), pw) {
		r.fail("status contains the root password")
	}
	conn := secretIn(resp, reconcile.ConnectionSecretName(objectName))
	switch {
	case conn != nil && r.secret == "":
		if pw, ok := r.m.spec()["password"].(string); ok && pw != string(conn.Data[reconcile.KeyPassword]) {
			r.fail("the connection Secret holds another password than spec.password")
		}
		if strings.Contains(r.statusOf(resp), string(conn.Data[reconcile.KeyPassword])) {
			r.fail("status contains the root password")
		}
		if apply {
			r.secret = string(conn.Data[reconcile.KeyPassword]) // the cluster has it now
		}
	case conn != nil && string(conn.Data[reconcile.KeyPassword]) != r.secret:
		r.fail("the connection Secret's password changed")
	case conn == nil && observed(r.m, req, secretGroup, reconcile.ConnectionSecretName(objectName)) && !resp.Finalized:
		r.fail("the observed connection Secret was dropped from the children while the object exists")
	}
	if resp.Finalized && len(r.w.sim.Instances()) != 0 {
		r.fail("finalized while OTC still lists the instance: %+v", r.w.sim.Instances())
	}
}

// converge calls without faults until the object is Ready and Synced and matches the spec.
func (r *run) converge() {
	var spec v1alpha1.RdsSpec
	for range 40 {
		r.m.finishJobs()
		r.call(r.m.request(), true)
		raw, err := json.Marshal(r.m.parent["spec"])
		require.NoError(r.t, err)
		require.NoError(r.t, json.Unmarshal(raw, &spec))
		if r.converged(spec) {
			return
		}
		st := r.status()
		if i := slices.IndexFunc(st.Conditions, func(c v1alpha1.Condition) bool { return c.Type == v1alpha1.ConditionSynced }); i >= 0 &&
			st.Conditions[i].Reason == reconcile.ReasonLogRequestThrottled {
			// More log requests than an hour allows (docs/logs.md): the latest starts when the
			// controller said, within the hour.
			r.w.clock.Advance(time.Hour)
			continue
		}
		r.w.clock.Advance(10 * time.Second)
	}
	r.fail("did not converge without faults: spec %+v, status %s, OTC %+v", spec, r.statusJSON(), r.w.sim.Instances())
}

func (r *run) converged(spec v1alpha1.RdsSpec) bool {
	st := r.status()
	p, ok := r.primary()
	in := []otcsim.InstanceView{p}
	if !ok || !conditionTrue(st, v1alpha1.ConditionReady) || !conditionTrue(st, v1alpha1.ConditionSynced) {
		return false
	}
	if r.rr && !r.replicasConverged(spec, st) { // replicas_test.go
		return false
	}
	// The instance carries the spec's tags, this object's ownership tags and the mark of its
	// restartrequest, nothing else.
	tags := map[string]string{
		reconcile.TagOwnerCluster: "local", reconcile.TagOwnerNamespace: objectNamespace, reconcile.TagOwnerName: objectName,
		reconcile.TagOwnerUID: r.m.parent["metadata"].(map[string]any)["uid"].(string),
	}
	for _, tag := range spec.Tags {
		tags[tag.Key] = tag.Value
	}
	if spec.Restartrequest != "" { // the mark written ahead of the restart, sealed after it (sync/oneshot.go)
		tags[reconcile.TagRestartRequest] = reconcile.RestartSeal(tags[reconcile.TagOwnerUID], spec.Restartrequest)
	}
	flavor, volume := st.Flavor == spec.Flavorref, st.Volume != nil && st.Volume.Size == spec.Volumesize
	if r.w.autopilot { // flavorref and volumesize are floors: autopilot's or OTC's growth is kept
		ap := st.Autopilot
		flavor = flavor || (ap != nil && ap.Flavor == st.Flavor && ap.FlavorFloor == spec.Flavorref)
		volume = st.Volume != nil && st.Volume.Size >= spec.Volumesize
	}
	if r.w.autopilot && !r.autopilotSettled(&st) {
		return false
	}
	params := true
	if len(spec.Parameters) > 0 {
		v, ok := r.w.sim.InstanceParameters(in[0].ID)
		for name, want := range spec.Parameters {
			params = params && ok && v.Values[name] == want
		}
		params = params && conditionTrue(st, v1alpha1.ConditionParameters)
	}
	port, _ := reconcile.Port(&spec)
	ssl := spec.Ssl != nil && *spec.Ssl
	network := in[0].SecurityGroupID == securityGroups[spec.Securitygroup] && in[0].Port == port && in[0].SSL == ssl
	return st.Operation == nil && flavor && volume && params && network &&
		st.RestartRequest == spec.Restartrequest &&
		in[0].Flavor == st.Flavor && st.Volume != nil && in[0].VolumeSize == st.Volume.Size &&
		in[0].BackupKeepDays == spec.Backupkeepdays && in[0].BackupStartTime == spec.Backupstarttime &&
		maps.Equal(in[0].Tags, tags) &&
		(spec.Logs == nil || st.Logs != nil && st.Logs.Request == spec.Logs.Request && st.Logs.State == v1alpha1.LogsSucceeded)
}

// identicalRequests: once converged, the same request twice gives byte-identical answers and no
// change in OTC.
func (r *run) identicalRequests() {
	req := r.m.request()
	_, first, mutated, _ := r.call(req, false)
	_, second, mutatedAgain, _ := r.call(req, false)
	if first == nil || !bytes.Equal(first, second) {
		r.fail("two identical requests on a converged object gave different answers:\n%s\n%s", first, second)
	}
	if mutated || mutatedAgain {
		r.fail("a converged object's sync made a change in OTC")
	}
}

// completedFinalBackup returns the id of a COMPLETED manual backup of the instance ("" = any).
func (r *run) completedFinalBackup(instanceID string) string {
	for _, b := range r.w.sim.Backups() {
		if b.Type != "auto" && b.Status == cloud.BackupCompleted && (instanceID == "" || b.InstanceID == instanceID) {
			return b.ID
		}
	}
	return ""
}

// password is the root password: spec.password, or the generated one from the Secret.
func (r *run) password() string {
	if pw, ok := r.m.spec()["password"].(string); ok {
		return pw
	}
	return r.secret
}

func (r *run) status() v1alpha1.RdsStatus {
	var st v1alpha1.RdsStatus
	if raw, ok := r.m.parent["status"]; ok {
		b, err := json.Marshal(raw)
		require.NoError(r.t, err)
		require.NoError(r.t, json.Unmarshal(b, &st))
	}
	return st
}

func (r *run) statusJSON() string {
	b, err := json.Marshal(r.m.parent["status"])
	require.NoError(r.t, err)
	return string(b)
}

func (r *run) statusOf(resp *hookResponse) string {
	b, err := json.Marshal(resp.Status)
	require.NoError(r.t, err)
	return string(b)
}

// observed reports whether the request's observed children hold this child.
func observed(m *metacontroller, req *request, group, name string) bool {
	var envelope struct {
		Children map[string]map[string]json.RawMessage `json:"children"`
	}
	require.NoError(m.w.t, json.Unmarshal(req.body, &envelope))
	_, ok := envelope.Children[group][name]
	return ok
}

func conditionTrue(st v1alpha1.RdsStatus, typ string) bool {
	i := slices.IndexFunc(st.Conditions, func(c v1alpha1.Condition) bool { return c.Type == typ })
	return i >= 0 && st.Conditions[i].Status == metav1.ConditionTrue
}

func diffCounts(before, after map[string]int) map[string]int {
	out := map[string]int{}
	for op, n := range after {
		if d := n - before[op]; d != 0 {
			out[op] = d
		}
	}
	return out
}

func toInt(v any) int {
	switch v := v.(type) {
	case int:
		return v
	case float64:
		return int(v)
	}
	return 0
}

// moveMetrics pins one of autopilot's metrics of the instance high or low.
func (r *run) moveMetrics() {
	p, ok := r.primary()
	if !ok {
		return
	}
	in := []otcsim.InstanceView{p}
	rng := r.w.rng
	m := []string{cloud.MetricCPU, cloud.MetricMem, cloud.MetricDisk}[rng.IntN(3)]
	v := []float64{20, 95}[rng.IntN(2)]
	r.t.Logf("seed=%d: %s of %s pinned at %.0f", r.w.seed, m, in[0].ID, v)
	r.w.sim.SetMetric(in[0].ID, m, v)
}

// calmMetrics pins autopilot's metrics low, so that it has nothing more to do.
func (r *run) calmMetrics() {
	if !r.w.autopilot {
		return
	}
	for _, in := range r.w.sim.Instances() {
		for _, m := range []string{cloud.MetricCPU, cloud.MetricMem, cloud.MetricDisk} {
			r.w.sim.SetMetric(in.ID, m, 20)
		}
	}
}

// autopilotAllowance bounds autopilot's own resizes and storage growths so far: one change, then
// one more per cooldown (the planner's promise), on top of the spec's.
func (r *run) autopilotAllowance() int {
	return 1 + int(r.w.clock.Now().Sub(r.start)/autopilotCooldown)
}

// autopilotSettled: autopilot has nothing to do, as seen by a metrics reading made after the
// converging began (the view reads once a minute).
func (r *run) autopilotSettled(st *v1alpha1.RdsStatus) bool {
	if r.convergeStart.IsZero() {
		r.convergeStart = r.w.clock.Now()
	}
	for _, c := range st.Conditions {
		if c.Type == v1alpha1.ConditionAutopilot {
			switch c.Reason {
			case reconcile.ReasonAutopilotWatching, reconcile.ReasonAutopilotCooldown, reconcile.ReasonAutopilotAtLimit:
				return r.w.clock.Now().Sub(r.convergeStart) > 2*time.Minute
			}
		}
	}
	return false
}
