// Package reconcile decides what one hook call does: from the observed Rds object, its observed
// children and what OTC reports, it computes the whole status, the children, and when to be called
// again, making at most one change to the cloud. It knows nothing of HTTP.
//
// It lives in sync/, the directory named for the hook it mostly serves; the package is named for
// what it does, so that it does not shadow the standard library's sync (import it as reconcile).
package reconcile

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	// ParametersDriftCheck is how often a steady object's engine parameters are read from OTC to
	// set back a value changed elsewhere (parameters.go). Default 15m.
	ParametersDriftCheck time.Duration

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

// Reconciler answers sync and finalize calls. It is safe for concurrent use. An answer is a
// function of the request and what OTC says; the process memory below is each an explicit input
// of one plan, read when the step is made and written only after the call is answered (memo,
// remember), and none of it decides alone:
//
//   - sent, the restarts this process sent (ledger.go): day2Input.sentRestart and
//     parametersInput.sentRestart. OTC keeps no trace of a finished restart, so a restart whose
//     answer was lost, retried after the reboot, looks like one still owed; the mark in OTC and
//     status are the record (oneshot.go; the parameters' restart has status only, parameters.go).
//   - autopilot, autopilot's last change per instance and the flavor lists it read
//     (autopilot.go): autopilotStepInput.remembered and the step's kept list. A call on a stale
//     status must not start a second change within the cooldown; under sustained pressure every
//     sync needs the flavor list, which is what OTC sells, not a fact of the object.
//   - parameters, the values this process set that wait for a restart, per instance
//     (parameters_memory.go): parametersInput.remembered. OTC shows no pending restart, so a call
//     on a status from before the change (a lost answer, a duplicate) finds the values set and
//     would forget the restart they wait for.
//   - logRequests, the log requests each object and each instance was served in the last hour
//     (logs_limit.go): logsInput.served and logsInput.servedInstance. It holds the hourly limit
//     against a status that forgot them or was written to claim one accepted, and against
//     objects made again (each with a new uid) to adopt the same instance.
//
// The rest is no input of any answer: locks serialise the calls of one object (singleflight.go),
// caps seals log Job capabilities with the configured key, and reads bounds each capability's
// reads of the logs port (logs_read_limit.go), which answers log Jobs, not hooks.
type Reconciler struct {
	cfg   Config
	sent  *ledger
	locks *keyedMutex // one call per object at a time (singleflight.go)
	// caps seals and opens log Job capabilities; nil without a PasswordKey (log Jobs are refused).
	caps *capabilitySealer
	// reads bounds the reads of each capability (logs_read_limit.go).
	reads *capabilityReads
	// logRequests remembers the log requests each object and each instance was served in the
	// last hour, against a status that forgot them (logs_limit.go).
	logRequests *logRequests
	// autopilot remembers autopilot's last change per instance, and flavor lists (autopilot.go).
	autopilot *autopilotMemory
	// parameters remembers the values set that wait for a restart (parameters_memory.go).
	parameters *parametersMemory
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
	if cfg.ParametersDriftCheck <= 0 {
		cfg.ParametersDriftCheck = DefaultParametersDriftCheck
	}
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
	r.parameters = newParametersMemory(cfg.Now)
	return r
}

// answer is what a call answers, as its steps write it (render): the status, starting from what
// the last call remembered, the connection Secret, further children, and what the process keeps
// once the call is answered. It holds no client and reads nothing.
type answer struct {
	st v1alpha1.RdsStatus
	// conn is the connection Secret to return; nil means echo the observed one, if any.
	conn *connection
	// extra are further children the steps return (user Secrets, the log Job and its Secret).
	extra []any
	// keep is what the process remembers once the call is answered (Reconciler.remember).
	keep memo
}

// memo is what a call asks the process to remember (Reconciler.remember): the restarts it sent
// (ledger.go), autopilot's change and a flavor list it read (autopilot.go), a log request it
// accepted (logs_limit.go). A step writes it into the answer; the driver keeps it once the call
// is answered, so that no step writes process memory.
type memo struct {
	restarts  []string
	autopilot map[string]v1alpha1.AutopilotAction // by instance id
	flavors   map[string][]cloud.Flavor           // by flavorsKey
	logs      []keptLogRequest
	// pending is the values set that wait for a restart, by instance id (parameters_memory.go).
	pending map[string]pendingChange
}

// keptLogRequest is a log request a call accepted, remembered by the object's uid and by the
// instance's id (logRequests.record): the limit holds per object and per instance, across the
// objects that adopt it.
type keptLogRequest struct {
	uid, instance string
	accepted      logAcceptance
}

// remember keeps what a call asked the process to remember.
func (r *Reconciler) remember(m memo) {
	for _, key := range m.restarts {
		r.sent.record(key)
	}
	for id, last := range m.autopilot {
		r.autopilot.record(id, &last)
	}
	for key, list := range m.flavors {
		r.autopilot.keepFlavors(key, list)
	}
	for _, l := range m.logs {
		r.logRequests.record(l.uid, l.instance, l.accepted)
	}
	for id, c := range m.pending {
		r.parameters.record(id, c)
	}
}

// call is the working state of one hook call.
type call struct {
	r      *Reconciler
	req    *hook.Request
	parent *v1alpha1.Rds
	spec   *v1alpha1.RdsSpec
	answer // what the call answers so far
	now    metav1.Time
	log    *slog.Logger

	// cloud is the OTC client this call uses, logged in with creds: credentials from the object's
	// own namespace (its own OTC project), or nil for the controller's own. ownProject is creds != nil.
	cloud      cloud.Cloud
	creds      *cloud.Credentials
	ownProject bool

	// me is this object as ownership tags name it; names are its instance names, new and legacy.
	me    owner
	names []string
	// fresh makes the call read its instance fresh by id, never from the shared view; viewed says
	// it read the shared view, so that it makes no change (runStep).
	fresh, viewed bool
	// out are the outcomes the steps told; render writes the conditions and the resync from them,
	// once (outcome.go).
	out findings
	// attempted says the call sent its one change (act): a cloud error from here on is OTC's
	// answer to it (cloudError).
	attempted bool

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
		now:    metav1.NewTime(r.cfg.Now().UTC().Truncate(time.Second)),
		log:    LoggerFrom(ctx),
		cloud:  r.cfg.Cloud,
	}
	// The answer's status starts from a deep copy of the last one, written into the call (not a
	// new status copied in: 640 bytes a call, #18). NOTE: but for its conditions, which the call
	// only reads: render writes the answer's own (findings.render clones them), so the request's
	// are shared, not copied (TestSyncWritesNothingOfTheRequest).
	prior := req.Parent.Status
	prior.Conditions = nil
	prior.DeepCopyInto(&c.st)
	c.st.Conditions = req.Parent.Status.Conditions
	c.out = newFindings(c.st.Conditions, r.resyncOf)
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
	r.remember(c.keep)
	if errors.Is(err, errViewStale) { // a change decided on the shared view: decide again, fresh
		c = r.begin(ctx, req)
		c.fresh = true
		err = c.sync(ctx)
		r.remember(c.keep)
	}
	if err != nil {
		return nil, err
	}
	// The log children follow status.logs on every call, whichever step the call stopped at (logs.go).
	children := append(c.children(), c.logChildren()...)
	c.st.Conditions = c.out.render(c.now)
	return &hook.SyncResponse{Status: &c.st, Children: children, ResyncAfterSeconds: c.out.resync().Seconds()}, nil
}

// sync runs the steps of a sync call in their fixed order. Each observes what it needs, decides
// with a pure function (a plan), makes at most the plan's one action and renders the plan into the
// answer (docs/architecture.md, "How a call decides"). A step that acted stops the call, so a call
// makes at most one change.
func (c *call) sync(ctx context.Context) error {
	forgetCreateFailed(&c.out, &c.st, c.parent)
	if problems := Validate(c.spec); len(problems) > 0 {
		c.out.invalid(joinSentences(problems))
		return nil
	}
	if id := c.spec.Instanceid; id != "" && c.st.ID != "" && id != c.st.ID {
		c.out.invalid(fmt.Sprintf("instanceid %s is not the instance %s this object manages; instanceid cannot change.", id, c.st.ID))
		return nil
	}
	if ok, err := c.credentials(ctx); !ok || err != nil { // credentials.go: c.cloud from here on
		return err
	}
	// NOTE: the region is a check that needs no cloud call, so it is made before any: a spec for
	// another region makes no call to OTC and gets no child (not even the password Secret).
	if region := c.cloud.Region(); c.spec.Region != region {
		c.out.invalid(fmt.Sprintf("region %q is not served by this controller, which manages %s.", c.spec.Region, region))
		return nil
	}
	obs, err := c.findInstance(ctx)
	if obs.viewed {
		// NOTE: a call that decided on the shared view makes no change: its client refuses every
		// change (errViewStale), and Sync makes the call again on a fresh read (observe_view.go).
		c.cloud, c.viewed = readOnly{c.cloud}, true
	}
	if err != nil {
		return c.cloudError(err)
	}
	inst, adopted := obs.inst, false
	switch decideInstance(c.st.ID, c.spec.Instanceid, obs, manages(obs.claim, c.st.Adopted, c.r.cfg.Adoption, c.me)) {
	case instanceVanished:
		c.vanished()
		return nil
	case instanceNameTaken:
		c.nameTaken(obs.taken, obs.takenClaim)
		return nil
	case instanceAdopt: // adopt.go: spec.instanceid
		s := newAdoptStep(c.spec, c.r.cfg.Adoption, c.me, c.cloud.Region())
		if _, err = c.runStep(ctx, s); err != nil {
			return err
		}
		if inst, adopted = s.taken(); inst == nil {
			return nil
		}
		obs.claim = classify(inst, c.me)
	case instanceCreate: // create.go: a new instance, or a restore into one
		// parameters_create.go: the template that carries spec.parameters into the create
		t := newTemplateStep(c)
		if stop, err := c.runStep(ctx, t); stop || err != nil {
			return err
		}
		s, err := newCreateStep(c)
		if err != nil {
			return err
		}
		s.in.configurationID = t.configurationID()
		_, err = c.runStep(ctx, s)
		return err
	case instanceNotOwned:
		c.notOwned(inst, obs.claim)
		return nil
	}
	c.report(inst)
	stopped := !c.connectionFor(inst)
	if !stopped {
		c.out.synced()
	}
	if adopted {
		// The adoption's tags were this call's change. A password problem stays reported.
		if !stopped {
			c.out.tell(syncedOK(ReasonReconcileSuccess, "The instance was adopted: its ownership tags now name this object.", inFlight).made())
		}
		c.out.askClass(inFlight)
		stopped = true
	} else {
		// NOTE: the ownership tags come before anything else, whatever the password: an instance
		// without them can be mistaken for nobody's.
		claim := newClaimStep(inst, obs, c.me, c.names)
		claimed, err := c.runStep(ctx, claim)
		if err != nil {
			return err
		}
		obs = claim.listed(obs)
		stopped = stopped || claimed
	}
	// instance.go: status.duplicates; it makes no change and stops nothing
	if _, err := c.runStep(ctx, newDuplicatesStep(inst, obs, c.parent.Status.Duplicates, c.me, c.names)); err != nil {
		return err
	}
	// The steps on the instance, in their fixed order, each run by the one loop (runStep,
	// loop.go): a step that made its change stops the call, so that a call makes at most one.
	for _, next := range []func(*call, *cloud.Instance) step{
		func(c *call, inst *cloud.Instance) step { return newNetworkStep(c, inst) },    // day2_network.go: what cannot change, the network's ids
		func(c *call, inst *cloud.Instance) step { return newRestoreStep(c, inst) },    // restore.go: point-in-time restore in place
		func(c *call, inst *cloud.Instance) step { return newReplicasStep(c, inst) },   // replicas.go: the read replicas; a replica built holds the next three
		func(c *call, inst *cloud.Instance) step { return newParametersStep(c, inst) }, // parameters.go: engine parameters, before day2's restart
		func(c *call, inst *cloud.Instance) step { return newDay2Step(c, inst) },       // day2.go: changes to the running instance
		func(c *call, inst *cloud.Instance) step { return newAutopilotStep(c, inst) },  // autopilot.go: growth the metrics ask for
	} {
		if stopped {
			break
		}
		if stopped, err = c.runStep(ctx, next(c, inst)); err != nil {
			return err
		}
	}
	if !stopped {
		if _, err = c.runStep(ctx, newDatabasesStep(c, inst)); err != nil { // databases.go: over SQL, never the cloud
			return err
		}
	}
	// The log Job and its capability change nothing on the instance: they follow every call that
	// sees it, whichever step stopped (logs.go). Only such a call renders the capability, for the
	// instance it saw (logsInstance).
	c.logsInstance = inst.ID
	_, err = c.runStep(ctx, newLogsStep(c, inst.Engine, false))
	return err
}
