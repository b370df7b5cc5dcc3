// Package sync decides what one hook call does: from the observed Rds object, its observed children
// and what OTC reports, it computes the whole status, the children, and when to be called again,
// making at most one change to the cloud. It knows nothing of HTTP.
package sync

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// Config wires a Reconciler.
type Config struct {
	// Cloud is the client with the controller's own credentials.
	Cloud cloud.Cloud
	// Clouds, when set, hands out the clients for credentials from the objects' namespaces
	// (see cloudFor). Nil: every call uses Cloud.
	Clouds cloud.Clouds
	// Credentials says which namespace Secret an object's login comes from (credentials.go).
	Credentials CredentialsConfig
	// Now is the clock for condition transition times. Default time.Now.
	Now func() time.Time
	// Random is the source for generated passwords when PasswordKey is empty. Default crypto/rand.
	Random io.Reader
	// PasswordKey, when set, makes generated passwords a function of this key and the object
	// (see passwordSource): keep it secret and stable.
	PasswordKey secret.Value
	// CallTimeout bounds each cloud call. Default 4s.
	CallTimeout time.Duration
	// ResyncPending is how soon to look again while something is in flight. Default 10s.
	ResyncPending time.Duration
	// ResyncSteady is how soon to look again when nothing is in flight. Default 5m.
	ResyncSteady time.Duration
	// ResyncSecret is how soon to look again while a new Secret is on its way. Default 2s.
	ResyncSecret time.Duration
	// LockWait is how long a call waits while another call for the same object is in flight
	// before it gives up with ErrCallInFlight (singleflight.go). Default 2s.
	LockWait time.Duration
	// Databases configures the databases step (databases.go).
	Databases DatabasesConfig

	// ClusterID names this cluster in the ownership tags and the instance names (--cluster-id):
	// 1 to 32 of [a-z0-9-], stable for ever. Default "local" (the simulator's).
	ClusterID string
	// Adoption says which instances spec.instanceid may adopt (--adoption). Default AdoptUnowned.
	Adoption AdoptionPolicy

	// JobImage is the image of log Jobs, which run its /rds-logs. Empty: log requests are refused
	// with a condition.
	JobImage string
	// LogsRetention is how long a finished log Job is kept for kubectl logs. Default 1h.
	LogsRetention time.Duration
	// LogsCapabilityTTL is the lifetime of a log Job's capability (logs_capability.go), longer
	// than LogsJobDeadline. Default 15m.
	LogsCapabilityTTL time.Duration
	// LogsJobDeadline is the log Job's activeDeadlineSeconds, shorter than LogsCapabilityTTL.
	// Default 5m.
	LogsJobDeadline time.Duration
	// LogsURL is where log Jobs reach the hooks' logs port (ReadLogs). Default
	// http://rds-hooks.rds-system.svc:8081.
	LogsURL string
	// LogsReadTimeout bounds one read of the logs port (the pages of one log). Default 45s.
	LogsReadTimeout time.Duration
}

// DefaultLogsURL is the logs port of the hooks' Service in manifests/.
const DefaultLogsURL = "http://rds-hooks.rds-system.svc:8081"

// Reconciler answers sync and finalize calls. It is safe for concurrent use and keeps no state
// an answer depends on: one-shot requests are remembered in the cloud and in status (oneshot.go),
// the restarts it sent also in a ledger that never decides alone (ledger.go).
type Reconciler struct {
	cfg   Config
	sent  *ledger
	locks *keyedMutex // one call per object at a time (singleflight.go)
	// caps seals and opens log Job capabilities; nil without a PasswordKey (log Jobs are refused).
	caps *capabilitySealer
	// reads bounds the reads of each capability (logs_reads.go).
	reads *capabilityReads
	// logRequests remembers the log requests each object was served in the last hour, against a
	// status that forgot them (logs_limit.go).
	logRequests *logRequests
	// autopilot remembers autopilot's last change per instance (autopilot.go).
	autopilot *autopilotMemory
}

// New returns a Reconciler with defaults filled in.
func New(cfg Config) *Reconciler {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Random == nil {
		cfg.Random = rand.Reader
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 4 * time.Second
	}
	if cfg.ResyncPending <= 0 {
		cfg.ResyncPending = 10 * time.Second
	}
	if cfg.ResyncSteady <= 0 {
		cfg.ResyncSteady = 5 * time.Minute
	}
	if cfg.ResyncSecret <= 0 {
		cfg.ResyncSecret = 2 * time.Second
	}
	if cfg.LockWait <= 0 {
		cfg.LockWait = 2 * time.Second
	}
	cfg.Databases = cfg.Databases.withDefaults(cfg.CallTimeout)
	cfg.Credentials = cfg.Credentials.withDefaults()
	if cfg.ClusterID == "" {
		cfg.ClusterID = "local"
	}
	if cfg.Adoption == "" {
		cfg.Adoption = AdoptUnowned
	}
	if cfg.LogsRetention <= 0 {
		cfg.LogsRetention = time.Hour
	}
	if cfg.LogsJobDeadline <= 0 {
		cfg.LogsJobDeadline = 5 * time.Minute
	}
	if cfg.LogsCapabilityTTL <= cfg.LogsJobDeadline {
		cfg.LogsCapabilityTTL = max(15*time.Minute, cfg.LogsJobDeadline+time.Minute)
	}
	if cfg.LogsURL == "" {
		cfg.LogsURL = DefaultLogsURL
	}
	if cfg.LogsReadTimeout <= 0 {
		cfg.LogsReadTimeout = 45 * time.Second
	}
	r := &Reconciler{cfg: cfg, sent: newLedger(time.Hour, cfg.Now), locks: newKeyedMutex()}
	// Without a stable secret there is no key every replica shares: log requests are refused
	// with LogsUnavailable (logs.go) rather than sealed with a key of this process alone.
	r.caps, _ = newCapabilitySealer(cfg.PasswordKey)
	r.reads = newCapabilityReads()
	r.logRequests = newLogRequests()
	r.autopilot = newAutopilotMemory(cfg.Now)
	return r
}

// cloudFor returns the client for a credential set; nil is the controller's own.
func (r *Reconciler) cloudFor(ctx context.Context, creds *cloud.Credentials) (cloud.Cloud, error) {
	if creds == nil || r.cfg.Clouds == nil {
		return r.cfg.Cloud, nil
	}
	return r.cfg.Clouds.For(ctx, creds)
}

// ThrottledError tells the caller that OTC throttled us: answer 429 with Retry-After, and
// Metacontroller retries after exactly that long without touching status.
type ThrottledError struct{ RetryAfter time.Duration }

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("OTC throttled the controller; retry after %s", e.RetryAfter)
}

// call is the working state of one hook call.
type call struct {
	r      *Reconciler
	req    *hook.Request
	parent *v1alpha1.Rds
	spec   *v1alpha1.RdsSpec
	st     v1alpha1.RdsStatus // the answer, starting from what the last call remembered
	now    metav1.Time
	log    *slog.Logger
	resync time.Duration

	// cloud is the OTC client this call uses, logged in with creds: credentials from the object's
	// own namespace (its own OTC project), or nil for the controller's own. ownProject is creds != nil.
	cloud      cloud.Cloud
	creds      *cloud.Credentials
	ownProject bool

	// me is this object as ownership tags name it; names are its instance names, new and legacy.
	me    owner
	names []string
	// listed says this call already looked up the instances carrying the object's names.
	listed bool
	// fresh makes the call read its instance fresh by id, never from the shared view.
	fresh bool
	// readyRank and syncedRank are the ranks of the Ready and Synced outcomes this call told so
	// far (outcome.go).
	readyRank, syncedRank int
	// attempted says the call sent its one change (act): a cloud error from here on is OTC's
	// answer to it (cloudError).
	attempted bool

	// conn is the connection Secret to return; nil means echo the observed one, if any.
	conn *connection
	// extra are further children the steps return (user Secrets, the log Job and its Secret).
	extra []any
	// logsInstance is the instance id this call observed and gave the logs step; only such a call
	// renders the log Job's capability (logs.go), any other echoes the observed Secret.
	logsInstance string
}

func (r *Reconciler) begin(ctx context.Context, req *hook.Request) *call {
	c := &call{
		r:      r,
		req:    req,
		parent: &req.Parent,
		spec:   &req.Parent.Spec,
		st:     *req.Parent.Status.DeepCopy(),
		now:    metav1.NewTime(r.cfg.Now().UTC().Truncate(time.Second)),
		log:    LoggerFrom(ctx),
		resync: r.cfg.ResyncSteady,
		cloud:  r.cfg.Cloud,

		readyRank: rankNone, syncedRank: rankNone,
	}
	c.st.ObservedGeneration = c.parent.Generation
	c.me = owner{Cluster: r.cfg.ClusterID, Namespace: c.parent.Namespace, Name: c.parent.Name, UID: string(c.parent.UID), Created: c.parent.CreationTimestamp.Time}
	c.names = []string{
		InstanceName(r.cfg.ClusterID, c.parent.Namespace, c.parent.Name),
		LegacyInstanceName(c.parent.Namespace, c.parent.Name),
	}
	if c.st.ID == "" || c.st.Name == "" { // a known instance keeps the name it has (report)
		c.st.Name = c.names[0]
	}
	c.st.ConnectionSecret = ConnectionSecretName(c.parent.Name)
	return c
}

// Sync answers a sync call.
func (r *Reconciler) Sync(ctx context.Context, req *hook.Request) (*hook.SyncResponse, error) {
	unlock, err := r.serialise(ctx, req)
	if err != nil {
		return nil, err
	}
	defer unlock()
	c := r.begin(ctx, req)
	err = c.sync(ctx)
	if errors.Is(err, errViewStale) { // a change decided on the shared view: decide again, fresh
		c = r.begin(ctx, req)
		c.fresh = true
		err = c.sync(ctx)
	}
	if err != nil {
		return nil, err
	}
	// The log children follow status.logs on every call, whichever step the call stopped at (logs.go).
	children := append(c.children(), c.logChildren()...)
	return &hook.SyncResponse{Status: &c.st, Children: children, ResyncAfterSeconds: c.resync.Seconds()}, nil
}

// sync runs the steps of a sync call in their fixed order. Each observes what it needs, decides
// with a pure function (a plan), makes at most the plan's one action and renders the plan into the
// answer (docs/architecture.md, "How a call decides"). A step that acted stops the call, so a call
// makes at most one change.
func (c *call) sync(ctx context.Context) error {
	c.forgetCreateFailed()
	if problems := Validate(c.spec); len(problems) > 0 {
		c.invalid(joinSentences(problems))
		return nil
	}
	if id := c.spec.Instanceid; id != "" && c.st.ID != "" && id != c.st.ID {
		c.invalid(fmt.Sprintf("instanceid %s is not the instance %s this object manages; instanceid cannot change.", id, c.st.ID))
		return nil
	}
	if ok, err := c.credentials(ctx); !ok || err != nil { // credentials.go: c.cloud from here on
		return err
	}
	// NOTE: the region is a check that needs no cloud call, so it is made before any: a spec for
	// another region makes no call to OTC and gets no child (not even the password Secret).
	if region := c.cloud.Region(); c.spec.Region != region {
		c.invalid(fmt.Sprintf("region %q is not served by this controller, which manages %s.", c.spec.Region, region))
		return nil
	}
	obs, err := c.observe(ctx)
	if err != nil {
		return c.cloudError(err)
	}
	inst, adopted := obs.inst, false
	switch decideInstance(c.st.ID, c.spec.Instanceid, obs, c.manages(obs.claim)) {
	case instanceVanished:
		c.vanished()
		return nil
	case instanceNameTaken:
		c.nameTaken(obs.taken, obs.takenClaim)
		return nil
	case instanceAdopt:
		if inst, adopted, err = c.adopt(ctx); inst == nil || err != nil {
			return err
		}
		obs.claim = classify(inst, c.me)
	case instanceCreate:
		return c.create(ctx)
	case instanceNotOwned:
		c.notOwned(inst, obs.claim)
		return nil
	}
	c.report(inst)
	stopped := !c.connectionFor(inst)
	if !stopped {
		c.synced()
	}
	if adopted {
		// The adoption's tags were this call's change. A password problem stays reported.
		if !stopped {
			c.tell(syncedOK(ReasonReconcileSuccess, "The instance was adopted: its ownership tags now name this object.", inFlight).made())
		}
		c.askClass(inFlight)
		stopped = true
	} else {
		// NOTE: the ownership tags come before anything else, whatever the password: an instance
		// without them can be mistaken for nobody's.
		claimed, err := c.claimInstance(ctx, inst, &obs)
		if err != nil {
			return err
		}
		stopped = stopped || claimed
	}
	c.trackDuplicates(ctx, inst, obs)
	// Each step below may set its own conditions and stop the call (stop true): a step that issued
	// a change to the instance always stops, so that a call makes at most one change.
	for _, step := range []func(context.Context, *cloud.Instance) (stop bool, err error){
		c.restore,   // restore.go: point-in-time restore in place
		c.operate,   // day2.go: changes to the running instance
		c.autopilot, // autopilot.go: growth the metrics ask for
		c.databases, // databases.go: databases, users and grants over SQL
	} {
		if stopped {
			break
		}
		if stopped, err = step(ctx, inst); err != nil {
			return err
		}
	}
	// The log Job and its capability change nothing on the instance: they follow every call that
	// sees it, whichever step stopped (logs.go).
	c.logsStep(inst)
	return nil
}

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
}

// observe finds the instance by the id the last call remembered, or else by the object's names,
// new and legacy: a create whose response was lost is found here and taken over, never created
// twice. Only an instance whose tags name this object, or an untagged one with its name, is taken
// over by name. An object that adopts an instance it has not taken over yet has none (sync adopts
// it; finalize leaves it alone).
func (c *call) observe(ctx context.Context) (observation, error) {
	var obs observation
	if c.st.ID == "" && c.spec.Instanceid != "" {
		return obs, nil
	}
	if c.st.ID != "" {
		var inst *cloud.Instance
		err := c.cloudCall(ctx, func(ctx context.Context) (err error) {
			inst, err = c.readInstance(ctx) // observe_view.go: the shared view while steady
			return err
		})
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
		var found []*cloud.Instance
		if err := c.cloudCall(ctx, func(ctx context.Context) (err error) {
			found, err = c.cloud.FindInstancesByName(ctx, name)
			return err
		}); err != nil {
			return nil, err
		}
		for _, in := range found {
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
func (c *call) manages(cl claim) bool {
	return manages(cl, c.st.Adopted, c.r.cfg.Adoption, c.me)
}

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
		obs.others = c.othersOf(inst, found)
	}
	_, err := c.act(ctx, ch.act)
	switch {
	case errors.Is(err, cloud.ErrBusy):
		c.tell(syncedOK(ReasonInstanceBusy, "The instance is busy; the "+ch.target+" will be made when OTC accepts it.", retry))
		return true, nil
	case err != nil:
		return true, c.cloudError(err)
	}
	c.log.Info("wrote ownership tags", "instance", inst.ID, "change", ch.target)
	c.tell(syncedOK(ReasonReconcileSuccess, "OTC was asked for the "+ch.target+".", inFlight).made())
	return true, nil
}

// othersOf are the instances found that are this object's too, besides inst (duplicates).
func (c *call) othersOf(inst *cloud.Instance, found []*cloud.Instance) []string {
	mine := []*cloud.Instance{inst}
	for _, in := range found {
		if classify(in, c.me, c.names...).mine() {
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
		dups = c.othersOf(inst, found)
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
			var other *cloud.Instance
			err := c.cloudCall(ctx, func(ctx context.Context) (err error) {
				other, err = c.cloud.GetInstance(ctx, id)
				return err
			})
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
		c.tell(*o)
	} else {
		removeCondition(&c.st, v1alpha1.ConditionInstanceDuplicates)
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
	c.tell(notReady(ReasonInstanceNameTaken, nameTakenMessage(inst.ID, cl, c.r.cfg.Adoption, c.me), settled))
	c.tell(notSynced(ReasonInstanceNameTaken, "No instance is created; see the Ready condition.", settled))
}

// cloudCall runs one cloud call under the per-call deadline.
func (c *call) cloudCall(ctx context.Context, fn func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, c.r.cfg.CallTimeout)
	defer cancel()
	return fn(ctx)
}

// createInput is all that the create decision reads.
type createInput struct {
	spec       *v1alpha1.RdsSpec
	generation int64
	name       string // the instance name (status.name)
	// desired, generated and problem are the root password the spec asks for (desiredPassword);
	// observed and stored the one the connection Secret holds.
	desired   secret.Value
	generated bool
	problem   string
	observed  secret.Value
	stored    bool
	// fresh is a newly generated password, used when generated and none is stored yet.
	fresh secret.Value
	// from is the restore point of restorefrom, once read; network the resolved network, once read.
	from    *cloud.RestorePoint
	network *cloud.Network
}

// createPlan is the decision of a call that finds no instance.
type createPlan struct {
	ready, synced *outcome
	// password is the root password the connection Secret holds; generated says it was generated.
	password  secret.Value
	generated bool
	// needRestorePoint and needNetwork ask for the reads the create needs next.
	needRestorePoint, needNetwork bool
	// create is the action, and op the operation status records once it is sent.
	create *action
	op     *v1alpha1.Operation
}

// planCreate takes the steps towards a new instance, one per call: persist the password, then
// create, or restore into a new instance when spec.restorefrom names a source.
func planCreate(in createInput) createPlan {
	if in.problem != "" {
		return createPlan{
			synced: ptr.To(notSynced(ReasonWaitingForPasswordSecret, in.problem, waitsForUser)),
			ready:  ptr.To(notReady(ReasonWaitingForPasswordSecret, "Waiting for the spec's prerequisites; see the Synced condition.", waitsForUser)),
		}
	}
	p := createPlan{password: in.desired, generated: in.generated}
	switch {
	case in.generated && in.stored:
		p.password = in.observed
	case in.generated:
		p.password = in.fresh
	}
	// NOTE: the create is issued only once the Secret holding the password is observed: a password
	// that lives only in this process's memory would be lost with a lost response.
	if !in.stored || in.observed.Reveal() != p.password.Reveal() {
		p.ready = ptr.To(notReady(ReasonCreating, "Storing the root password in the connection Secret before creating the instance.", storingSecret))
		p.synced = ptr.To(syncedOK(ReasonReconcileSuccess, "Waiting for the connection Secret to be stored.", storingSecret))
		return p
	}
	if in.spec.Restorefrom != nil && in.from == nil {
		p.needRestorePoint = true
		return p
	}
	if in.network == nil {
		p.needNetwork = true
		return p
	}
	opts := createOpts(in.spec, in.name, *in.network, p.password)
	p.create = &action{kind: actCreate, create: &opts}
	p.op = &v1alpha1.Operation{Type: OpCreate, Generation: in.generation}
	if in.from != nil {
		p.create.kind, p.create.from = actRestoreToNew, *in.from
		p.op.Type, p.op.Target = OpRestoreToNew, restorePointText(*in.from)
	}
	return p
}

// create is the step of a call that finds no instance: it plans, makes the reads the plan asks
// for, plans again, and sends the create the plan names.
func (c *call) create(ctx context.Context) error {
	c.st.Status = ""
	in := createInput{spec: c.spec, generation: c.parent.Generation, name: c.st.Name}
	in.desired, in.generated, in.problem = c.desiredPassword()
	in.observed, in.stored = c.observedPassword()
	if in.generated && !in.stored {
		gen, err := c.generatePassword("root")
		if err != nil {
			return err
		}
		in.fresh = secret.New(gen)
	}
	p := planCreate(in)
	c.passwordPlan(p) // the same password whatever the reads below find
	if p.needRestorePoint {
		from, err := c.restorePoint(ctx)
		if from == nil || err != nil {
			return err
		}
		in.from = from
		p = planCreate(in)
	}
	if p.needNetwork {
		var network cloud.Network
		if err := c.cloudCall(ctx, func(ctx context.Context) (err error) {
			network, err = c.cloud.ResolveNetwork(ctx, c.spec.Vpc, c.spec.Subnet, c.spec.Securitygroup)
			return err
		}); err != nil {
			return c.createFailed(err)
		}
		in.network = &network
		p = planCreate(in)
	}
	if p.synced != nil && p.synced.reason == ReasonWaitingForPasswordSecret {
		c.waitForUser(p.synced.reason, p.synced.message) // Ready keeps what it said
	} else {
		c.tellAll(p.ready, p.synced)
	}
	if p.create == nil {
		return nil
	}
	res, err := c.act(ctx, *p.create)
	if errors.Is(err, cloud.ErrConflict) {
		// The name exists: an earlier create went through after all. The next call finds it.
		c.pending(ReasonCreating, "The instance is being created.")
		return nil
	}
	if err != nil {
		return c.createFailed(err)
	}
	p.op.JobID = res.jobID
	c.log.Info("created instance", "instance", res.instanceID, "job", res.jobID, "operation", p.op.Type)
	c.st.ID = res.instanceID
	c.st.Status = cloud.StatusBuild
	c.st.Operation = p.op
	c.st.Restore = restoreBaseline(c.spec)
	c.pending(ReasonCreating, "The instance is being created.")
	return nil
}

// passwordPlan renders the password a create plan holds into the connection Secret and status.
func (c *call) passwordPlan(p createPlan) {
	if p.ready != nil && p.ready.reason == ReasonWaitingForPasswordSecret {
		return // no password yet: the observed Secret, if any, is echoed
	}
	c.st.PasswordGenerated = p.generated
	c.conn = &connection{engine: c.spec.Datastoretype, password: p.password}
}

// createFailed sorts an error of the create like any cloud error and, when OTC refused the create
// (an unknown flavor, a VPC that does not exist), says so in Ready as well. Status remembers it:
// later calls for the same spec try again and, refused again, say the same (see forgetCreateFailed).
func (c *call) createFailed(err error) error {
	if err := c.cloudError(err); err != nil {
		return err
	}
	if synced := getCondition(&c.st, v1alpha1.ConditionSynced); synced != nil && synced.Reason == ReasonCloudRefused {
		c.tell(notReady(ReasonCreateFailed, "OTC refused to create the instance; see the Synced condition.", settled))
	}
	return nil
}

// forgetCreateFailed drops a refused create from Ready once the spec changed: the new spec has not
// been refused yet. Transient errors in between keep it (status is echoed), so that it stays until
// the spec changes or the create succeeds.
func (c *call) forgetCreateFailed() {
	ready := getCondition(&c.st, v1alpha1.ConditionReady)
	if ready == nil || ready.Reason != ReasonCreateFailed || c.st.ID != "" || c.parent.Status.ObservedGeneration == c.parent.Generation {
		return
	}
	c.tell(notReady(ReasonCreating, "The instance is not created yet; see the Synced condition.", settled).fallback())
}

func createOpts(spec *v1alpha1.RdsSpec, name string, network cloud.Network, pw secret.Value) cloud.CreateInstanceOpts {
	port, _ := Port(spec) // validated
	opts := cloud.CreateInstanceOpts{
		Name:              name,
		Engine:            spec.Datastoretype,
		Version:           spec.Datastoreversion,
		Flavor:            spec.Flavorref,
		VolumeType:        spec.Volumetype,
		VolumeSize:        spec.Volumesize,
		Region:            spec.Region,
		AvailabilityZones: AvailabilityZones(spec),
		VpcID:             network.VpcID,
		SubnetID:          network.SubnetID,
		SecurityGroupID:   network.SecurityGroupID,
		Port:              port,
		Password:          pw,
	}
	if spec.Backupkeepdays > 0 || spec.Backupstarttime != "" {
		opts.BackupStrategy = &cloud.BackupStrategy{StartTime: spec.Backupstarttime, KeepDays: spec.Backupkeepdays}
	}
	if IsHA(spec) {
		opts.HAMode = "ha"
		opts.ReplicationMode = spec.Hareplicationmode
		if opts.ReplicationMode == "" {
			opts.ReplicationMode = defaultReplicationMode(spec.Datastoretype)
		}
	}
	return opts
}

func defaultReplicationMode(engine string) string {
	if engine == v1alpha1.EngineSQLServer {
		return "sync"
	}
	return "async"
}

// desiredPassword is the root password the spec asks for: from spec.password, from the referenced
// Secret, or generated. problem says why it cannot be had yet.
func (c *call) desiredPassword() (pw secret.Value, generated bool, problem string) {
	switch ref := c.spec.Passwordsecretref; {
	case c.spec.Password != "":
		return secret.New(c.spec.Password), false, ""
	case ref != nil:
		key := ref.Key
		if key == "" {
			key = KeyPassword
		}
		s := c.req.Related[ref.Name]
		if s == nil {
			return secret.Value{}, false, fmt.Sprintf("The Secret %q named in passwordsecretref was not found in namespace %s.", ref.Name, c.parent.Namespace)
		}
		v := string(s.Data[key])
		if v == "" {
			return secret.Value{}, false, fmt.Sprintf("The Secret %q named in passwordsecretref has no key %q.", ref.Name, key)
		}
		if msg := passwordProblem(c.spec.Datastoretype, v); msg != "" {
			return secret.Value{}, false, fmt.Sprintf("The password in Secret %q %s.", ref.Name, msg)
		}
		return secret.New(v), false, ""
	default:
		return secret.Value{}, true, ""
	}
}

func (c *call) observedSecret() *corev1.Secret { return c.req.Secrets[c.st.ConnectionSecret] }

func (c *call) observedPassword() (secret.Value, bool) { return observedPassword(c.observedSecret()) }

// connectionFor sets the connection Secret for an existing instance (connectionOf). It reports
// false when the password is unknown.
func (c *call) connectionFor(inst *cloud.Instance) bool {
	observed, stored := c.observedPassword()
	desired, generated, _ := c.desiredPassword()
	conn, problem := connectionOf(c.spec.Datastoretype, inst, observed, stored, desired, generated, c.st.Adopted)
	if problem != nil {
		c.tell(*problem)
		return false
	}
	c.conn = conn
	return true
}

// connectionOf is the connection to an existing instance. The password is the one the instance
// was created with: the stored one when there is one, else the spec's. problem says why it is
// unknown.
func connectionOf(engine string, inst *cloud.Instance, observed secret.Value, stored bool, desired secret.Value, generated, adopted bool) (*connection, *outcome) {
	pw := observed
	if !stored {
		switch {
		case (generated || desired.Empty()) && adopted:
			return nil, ptr.To(notSynced(ReasonPasswordUnknown,
				"The root password of the adopted instance is unknown, so no connection Secret is written: set password or name a Secret holding it in passwordsecretref.", settled))
		case generated || desired.Empty():
			return nil, ptr.To(notSynced(ReasonPasswordSecretMissing,
				"The root password is unknown: its connection Secret is gone. Reset the root password in OTC and name a Secret holding it in passwordsecretref.", settled))
		}
		pw = desired
	}
	conn := &connection{engine: engine, password: pw, port: inst.Port}
	if len(inst.PrivateIPs) > 0 {
		conn.host = inst.PrivateIPs[0]
	}
	return conn, nil
}

// report copies what OTC says into the status and sets Ready from the instance's status
// (reported).
func (c *call) report(inst *cloud.Instance) {
	var ready outcome
	c.st, ready = reported(c.st, inst)
	c.tell(ready.fallback()) // a step's Ready about its change replaces the instance's state
}

// reported is the status with what OTC says of the instance, and the Ready outcome its status
// gives. It asks for an early look while the instance is in a transitional state or an operation
// is in flight.
func reported(st v1alpha1.RdsStatus, inst *cloud.Instance) (v1alpha1.RdsStatus, outcome) {
	st.ID = inst.ID
	if inst.Name != "" {
		st.Name = inst.Name // an adopted or migrated instance keeps the name it has
	}
	st.Status = inst.Status
	st.Type = inst.Type
	st.Flavor = inst.Flavor
	st.Version = inst.CompleteVersion
	if st.Version == "" {
		st.Version = inst.Version
	}
	st.Volume = &v1alpha1.Volume{Type: inst.Volume.Type, Size: inst.Volume.Size}
	st.Port = inst.Port
	st.IP, st.Endpoint = "", ""
	if len(inst.PrivateIPs) > 0 {
		st.IP = inst.PrivateIPs[0]
		if inst.Port != 0 {
			st.Endpoint = fmt.Sprintf("%s:%d", st.IP, inst.Port)
		}
	}
	st.Nodes = nil
	for _, n := range inst.Nodes {
		st.Nodes = append(st.Nodes, v1alpha1.Node{Name: n.Name, Role: n.Role, Status: n.Status, Availabilityzone: n.AvailabilityZone})
	}
	// NOTE: OTC does not document the order of an instance's nodes; a status that followed it
	// could change on every call, so the nodes are sorted.
	slices.SortFunc(st.Nodes, func(a, b v1alpha1.Node) int {
		return cmp.Or(cmp.Compare(a.Role, b.Role), cmp.Compare(a.Name, b.Name))
	})
	if op := st.Operation; op != nil && operationDone(op, inst.Status) {
		st.Operation = nil
	}
	reason, message, ok := readiness(inst.Status)
	ready := notReady(reason, message, settled)
	if ok {
		ready.status = metav1.ConditionTrue
	}
	if transitional(inst.Status) || st.Operation != nil {
		ready.class = inFlight
	}
	return st, ready
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
	c.tell(notReady(ReasonInstanceNotFound,
		"OTC lists no instance of this object under status.id: it is gone, or was never this object's. It is not recreated automatically; delete this object to clean up.", settled))
	c.tell(syncedOK(ReasonReconcileSuccess, "The instance is gone.", settled))
}

// invalid reports a spec the hook does not act on; Ready keeps what it said, or says so if it
// said nothing yet.
func (c *call) invalid(message string) {
	c.tell(notSynced(ReasonInvalidSpec, message, waitsForUser))
	c.tellFirst(notReady(ReasonInvalidSpec, "The spec is invalid; see the Synced condition.", waitsForUser))
}

// tellFirst tells an outcome only if its condition was never set: a first word that any later
// outcome of the condition replaces.
func (c *call) tellFirst(o outcome) {
	if getCondition(&c.st, o.cond) == nil {
		c.tell(o)
	}
}

// waitForUser reports something only the user can fix, and looks again at the steady pace: a
// referenced Secret is a related resource, so Metacontroller calls again as soon as it changes.
func (c *call) waitForUser(reason, message string) {
	c.tell(notSynced(reason, message, waitsForUser))
	c.tellFirst(notReady(reason, "Waiting for the spec's prerequisites; see the Synced condition.", waitsForUser))
}

func (c *call) pending(reason, message string) {
	c.tell(notReady(reason, message, inFlight))
	c.tell(syncedOK(ReasonReconcileSuccess, "The change was issued to OTC.", inFlight).made())
}

// synced is the Synced condition of a call that found nothing to say: every outcome a step tells
// replaces it.
func (c *call) synced() {
	c.tell(syncedOK(ReasonReconcileSuccess, "The instance matches the spec.", settled).fallback())
}

// cloudError sorts a cloud error: throttling goes back to Metacontroller as a 429; everything else
// is absorbed into a condition with a stable message and an earlier resync.
func (c *call) cloudError(err error) error {
	if errors.Is(err, errViewStale) {
		return err // nothing was sent: the call is made again on a fresh read (observe_view.go)
	}
	ce := asCloudError(err)
	// The details stay in the log; status gets only stable sentences
	// (cloud.Error.Refusal). Detail is OTC's text the
	// adapter kept out of Message (it may hold request ids): it is never put in status.
	c.log.Warn("cloud call failed", "op", ce.Op, "kind", ce.Kind.String(), "code", ce.Code, "message", ce.Message, "detail", ce.Detail)
	o, throttled := cloudOutcome(ce)
	if throttled != nil {
		return throttled
	}
	if c.attempted && o.class != retry {
		// OTC's answer to the call's one change. A retry (busy, no answer) says nothing about the
		// change: it ranks as what it is, a wait or a failure.
		o = o.made()
	}
	c.tell(o)
	return nil
}

// asCloudError sorts any error of a cloud call into the port's error kinds.
func asCloudError(err error) *cloud.Error {
	var ce *cloud.Error
	if errors.As(err, &ce) {
		return ce
	}
	ce = &cloud.Error{Kind: cloud.KindUnknown}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		ce.Kind = cloud.KindUnavailable
	}
	return ce
}

// cloudOutcome is what a failed cloud call says in Synced: throttling goes back to Metacontroller
// as a 429 (the status stays as it was); a busy instance or an unavailable OTC is tried again
// soon; a refusal or refused credentials wait for a change, since asking again does not help.
func cloudOutcome(ce *cloud.Error) (outcome, *ThrottledError) {
	switch ce.Kind {
	case cloud.KindThrottled:
		after := ce.RetryAfter
		if after <= 0 {
			after = 30 * time.Second
		}
		return outcome{}, &ThrottledError{RetryAfter: after}
	case cloud.KindBusy:
		return syncedOK(ReasonInstanceBusy, "The instance is busy with another operation; the change will be retried.", retry), nil
	case cloud.KindInvalid, cloud.KindConflict, cloud.KindNotFound:
		return notSynced(ReasonCloudRefused, ce.Refusal(), waitsForUser), nil
	case cloud.KindUnauthorized:
		// Asking IAM again soon does not fix a refused credential; the operator has to.
		return notSynced(ReasonCloudUnauthorized, "OTC refused the controller's credentials.", waitsForUser), nil
	}
	return notSynced(ReasonCloudUnavailable, "OTC did not answer as expected; the call will be retried.", retry), nil
}

// setCondition sets a condition of the answer.
//
// NOTE: a call may set a condition more than once: Synced True before the steps, then False from a
// step that finds a problem it reported before. The transition time compares with what the last
// call reported, not with the value set earlier in this call, or it would move on every call.
func (c *call) setCondition(typ string, status metav1.ConditionStatus, reason, message string) {
	setCondition(&c.st, c.now, typ, status, reason, message)
	if old := getCondition(&c.parent.Status, typ); old != nil && old.Status == status {
		getCondition(&c.st, typ).LastTransitionTime = old.LastTransitionTime
	}
}

// children returns every child to keep. A child left out is deleted by Metacontroller, so the
// connection Secret is echoed as observed whenever this call had nothing newer to say.
func (c *call) children() []any {
	children := []any{}
	switch observed := c.observedSecret(); {
	case c.conn != nil:
		children = append(children, connectionSecret(c.parent, *c.conn))
	case observed != nil:
		children = append(children, echoSecret(c.parent, observed))
	}
	return c.keepUserSecrets(append(children, c.extra...)) // databases.go
}

// echoSecret returns the observed Secret as we would have rendered it.
func echoSecret(parent *v1alpha1.Rds, observed *corev1.Secret) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: observed.Name, Namespace: parent.Namespace, Labels: childLabels(parent)},
		Type:       corev1.SecretTypeOpaque,
		Data:       observed.Data,
	}
}

func joinSentences(s []string) string { return strings.Join(s, " ") }
