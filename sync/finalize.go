package sync

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
)

// AnnotationPasswordSaved on an Rds object with deletionpolicy Retain says the user copied the
// generated passwords out of its Secrets, so deleting the object (and the Secrets with it) may go on.
const AnnotationPasswordSaved = "otc.mcsps.de/password-saved"

// Reasons of a deletion that waits for the user. Each comes with the steady resync: nothing
// changes until the user acts.
const (
	// ReasonPasswordWouldBeLost: Retain keeps the instance, but a generated password lives only in
	// a Secret that is deleted with the object.
	ReasonPasswordWouldBeLost = "PasswordWouldBeLost"
	// ReasonFinalBackupImpossible: OTC cannot back up the instance in its current state.
	ReasonFinalBackupImpossible = "FinalBackupImpossible"
	// ReasonFinalBackupNameTaken: another instance's backup carries the final backup's name.
	ReasonFinalBackupNameTaken = "FinalBackupNameTaken"
	// ReasonDeletionWaitsForCredentials: the deletion has no OTC login to look for the instance
	// with (Synced says which login is missing or refused), so the object is not released.
	ReasonDeletionWaitsForCredentials = "DeletionWaitsForCredentials"
)

// msgDeletionWaitsForCredentials is Ready's sentence while a deletion has no login. The finalizer
// is Metacontroller's for the CompositeController of manifests/compositecontroller.yaml.
const msgDeletionWaitsForCredentials = "The deletion waits for an OTC login (see the Synced condition): without one the controller cannot see whether " +
	"the instance still exists, so the object is not released. Provide the login; if this object never created an instance, " +
	"remove its finalizer metacontroller.io/compositecontroller-rds-controller by hand."

// Finalize answers a finalize call. With deletionpolicy Delete it takes the instance apart one
// step per call: final backup, wait for it to complete, delete, wait until OTC no longer lists the
// instance; only then finalized is true. A failed final backup stops the deletion. With Retain it
// releases the instance (its tags say so, and no later object takes it over by name), unless a
// generated password would be lost with the object's Secrets. Only an instance whose tags name
// this object (or an untagged one with its name) is ever backed up, deleted or released: anything
// else status.id names is left alone.
func (r *Reconciler) Finalize(ctx context.Context, req *hook.Request) (*hook.FinalizeResponse, error) {
	unlock, err := r.serialise(ctx, req)
	if err != nil {
		return nil, err
	}
	defer unlock()
	c := r.begin(ctx, req)
	c.fresh = true // a deletion is decided on what OTC says now, never on the shared view
	done, err := c.finalize(ctx)
	if err != nil {
		return nil, err
	}
	// NOTE: children() echoes the connection Secret and the user Secrets while the deletion
	// waits: a child left out is deleted at once, and a generated password with it.
	// The log Job and its Secret are kept too, and followed to their end (logs.go).
	c.finalizeLogs()
	children := append(c.children(), c.logChildren()...)
	c.st.Conditions = c.out.render(c.now)
	resp := &hook.FinalizeResponse{Status: &c.st, Children: children, Finalized: done}
	if !done {
		resp.ResyncAfterSeconds = c.out.resync().Seconds()
	}
	return resp, nil
}

// finalizeInput is all that the finalize decision reads: the spec, this call's status so far, the
// object as ownership tags name it, the Secrets that hold generated passwords, and what the plan
// asked for: the observation, the instance reported into status, the backup list, the answer to
// its action.
type finalizeInput struct {
	spec *v1alpha1.RdsSpec
	st   *v1alpha1.RdsStatus // this call's status so far (credentials, report)
	me   owner
	// object is namespace/name, for the final backup's description.
	object     string
	generation int64
	// lost names the Secrets that hold the only copy of a generated password
	// (generatedPasswordSecrets); saved says the user copied them (AnnotationPasswordSaved).
	lost  []string
	saved bool
	// deletionStart is the object's deletionTimestamp: only a backup begun after it is its final
	// backup. Zero if unknown.
	deletionStart time.Time

	// observed says inst and claim were read (observe): inst is nil when OTC has no instance.
	observed bool
	inst     *cloud.Instance
	claim    claim
	// searched says the object's instance was looked for by its names and ownership tags, since
	// status.id (or instanceid) led to none of its own (search): inst and claim are then what the
	// search found, and setAside is the instance status.id named, if OTC lists it.
	searched      bool
	setAside      *cloud.Instance
	setAsideClaim claim
	// login is the namespace Secret whose login this call uses, "" for the controller's own;
	// ownToo says the controller's own login serves objects as well (CredentialsOptional), so the
	// object's instance may be in the controller's project whatever status says.
	login  string
	ownToo bool
	// lookedInOwn says the controller's project was searched too (searchOwn with its login);
	// inOwn is the object's instance found there, if any.
	lookedInOwn bool
	inOwn       *cloud.Instance
	// reported says the instance was copied into st (report).
	reported bool
	// backups is the instance's backup list; nil until read.
	backups []cloud.Backup
	// answer is what OTC answered to the plan's action; nil until it was made.
	answer *actAnswer
}

// finalizePlan is the decision of a finalize call. A plan that asks for something (observe,
// report, needBackups, act) is not final: the step provides it and plans again. The final plan
// says everything the call answers besides the children, which finalize always echoes.
type finalizePlan struct {
	// observe, search, report and needBackups ask for the instance, for it to be looked for by its
	// names and tags, for it to be reported into status, and for its backup list.
	observe     bool
	search      bool
	searchOwn   bool // search the controller's project too, with its own login
	report      bool
	needBackups bool
	// act is the one change to make; the answer is planned on.
	act *action

	finalized bool
	// instanceStatus, operation and finalBackup are status.status, status.operation and
	// status.finalBackup as the call answers them.
	instanceStatus string
	operation      *v1alpha1.Operation
	finalBackup    *v1alpha1.Backup
	// ready and synced are the conditions the plan sets, if any.
	ready, synced *outcome
	// failed is a cloud error of the answer, sorted by cloudError.
	failed error
	// events are what the step logs of the decision.
	events []logLine
}

// planFinalize decides a finalize call. With deletionpolicy Delete: a final backup, a wait for it
// to complete, the delete, a wait until OTC no longer lists the instance, one step a call. With
// Retain: the release tag, unless a generated password would be lost. An instance that is not
// this object's is left alone. It calls nothing.
func planFinalize(in finalizeInput) finalizePlan {
	p := finalizePlan{instanceStatus: in.st.Status, operation: in.st.Operation, finalBackup: in.st.FinalBackup}
	retain := in.spec.Deletionpolicy == v1alpha1.DeletionPolicyRetain
	if retain && len(in.lost) > 0 && !in.saved {
		// The instance lives on, but the Secrets holding the only copies of its generated
		// passwords are garbage-collected with the object. Decided before any cloud call.
		p.ready = ptr.To(notReady(ReasonPasswordWouldBeLost, fmt.Sprintf(
			"The instance is kept in OTC, but generated passwords live only in the Secrets %s, which are deleted with this object. "+
				"Copy them, then annotate this object with %s=true (or set passwordsecretref) to finish deleting.",
			strings.Join(in.lost, ", "), AnnotationPasswordSaved), waitsForUser))
		p.synced = ptr.To(notSynced(ReasonPasswordWouldBeLost, "The deletion waits until the generated passwords are saved; see the Ready condition.", waitsForUser))
		return p
	}
	if !in.observed {
		return finalizePlan{observe: true}
	}
	// NOTE: status.id is what the last answer said, and whoever may write the status can make it
	// name any id. One that OTC does not list, or whose tags do not name this object, proves
	// nothing: the object's instance is looked for as a create whose answer was lost would be, by
	// its names and tags, and the object goes only when none is left. The answer is the same
	// whether status.id named another's instance or none, and names neither.
	// An empty status.id and instanceid prove nothing either (an adopted instance keeps its own
	// name, so the names find nothing of it): the search by tags runs before any "gone".
	if !in.searched && !in.owns() {
		return finalizePlan{search: true}
	}
	if a := in.setAside; a != nil {
		p.events = append(p.events, logLine{level: slog.LevelWarn, msg: "finalize leaves an instance alone that is not this object's",
			args: []any{"instance", a.ID, "ownership", in.setAsideClaim.Kind.String()}})
	}
	inst := in.inst
	switch {
	// NOTE: status.credentialsSecret and credentialsProject are the tenant's to forge: a login of
	// the namespace finding nothing in its project proves nothing of the controller's project,
	// where the object's instance may have been made (found in review, issue #17). Only a look
	// with the controller's own login does; what it finds there, this login cannot take apart.
	case inst == nil && in.login != "" && in.ownToo && !in.lookedInOwn:
		return finalizePlan{searchOwn: true}
	case inst == nil && in.inOwn != nil:
		p.synced = ptr.To(notSynced(ReasonCredentialsChanged, credentialsChanged("", in.login), waitsForUser))
		p.ready = ptr.To(notReady(ReasonDeletionWaitsForCredentials, msgDeletionWaitsForCredentials, waitsForUser))
		p.events = append(p.events, logLine{level: slog.LevelWarn, msg: "finalize found the object's instance in the controller's project, not its login's",
			args: []any{"instance", in.inOwn.ID, "secret", in.login}})
		return p
	case inst == nil && retain:
		return retained(p, in.st.ID)
	case inst == nil:
		p.instanceStatus, p.operation = "", nil
		p.ready = ptr.To(notReady(ReasonDeleting, "The instance is gone.", settled))
		p.finalized = true
		return p
	case in.claim.Kind == Released:
		// released by this object (owns): an earlier call of a Retain deletion wrote the tag
		return retained(p, inst.ID)
	case retain:
		return release(in, p)
	}
	if !in.reported {
		return finalizePlan{report: true}
	}
	if op := p.operation; op != nil && op.Type == OpDelete {
		return deleting(p, "The instance is being deleted.")
	}
	// NOTE: a CREATE FAIL instance never held data, and OTC cannot back it up.
	if !in.spec.Skipfinalbackup && inst.Status != cloud.StatusCreateFail {
		q, done := planFinalBackup(in, p)
		if !done {
			return q
		}
		p = q
	}
	// NOTE: OTC deletes an instance in any state but a transitional one (FAILED, SHUTDOWN and
	// CREATE FAIL included); waiting for ACTIVE here would wait for ever on a broken instance.
	if transitional(inst.Status) {
		return deleting(p, "Waiting for the instance to finish "+inst.Status+" before deleting it.")
	}
	if in.answer == nil {
		return finalizePlan{act: &action{kind: actDeleteInstance, instance: inst.ID}}
	}
	switch err := in.answer.err; {
	case errors.Is(err, cloud.ErrNotFound):
		p.finalized = true
		return p
	case errors.Is(err, cloud.ErrBusy):
		return deleting(p, "The instance is busy; the delete will be retried.")
	case err != nil:
		p.failed = err
		return p
	}
	p.events = append(p.events, logLine{level: slog.LevelInfo, msg: "deleting instance", args: []any{"instance", inst.ID, "job", in.answer.jobID}})
	p.operation = &v1alpha1.Operation{Type: OpDelete, JobID: in.answer.jobID, Generation: in.generation}
	return deleting(p, "The instance is being deleted.")
}

// planFinalBackup makes sure a completed final backup exists before the delete. It reports true,
// with p's status updated, once deletion may go on; else the plan to answer.
func planFinalBackup(in finalizeInput, p finalizePlan) (finalizePlan, bool) {
	inst := in.inst
	name := FinalBackupName(in.st.Name, inst.ID) // st.Name is the instance's own (report)
	if in.backups == nil {
		return finalizePlan{needBackups: true}, false
	}
	// NOTE: status.finalBackup is what the last answer said, and whoever may write the status can
	// make it name any backup, an automated one of the instance included. It vouches for nothing:
	// the final backup is the one OTC lists under the name the controller gives it, begun after
	// the deletion began (give or take the clocks' disagreement).
	p.finalBackup = nil
	var early *cloud.Backup
	for _, b := range in.backups {
		if b.Name != name {
			continue
		}
		if begunBefore(b, in.deletionStart) {
			early = &b
			continue
		}
		p.finalBackup = &v1alpha1.Backup{ID: b.ID, Name: b.Name, Status: b.Status}
		switch b.Status {
		case cloud.BackupCompleted:
			if op := p.operation; op != nil && op.Type == OpBackup {
				p.operation = nil
			}
			return p, true
		case cloud.BackupFailed:
			return waitForDecision(p, ReasonFinalBackupFailed,
				fmt.Sprintf("The final backup %s failed, so the instance is not deleted. Set skipfinalbackup or deletionpolicy Retain to finish deleting.", b.Name),
				"The final backup failed."), false
		default:
			return deleting(p, "Waiting for the final backup "+b.Name+" to complete."), false
		}
	}
	if early != nil {
		// OTC refuses a second backup of the name (DBS.201204): asking would not help.
		p.events = append(p.events, logLine{level: slog.LevelWarn, msg: "final backup name taken by an earlier backup", args: []any{"instance", inst.ID, "backup", early.ID, "begin", early.Begin}})
		return waitForDecision(p, ReasonFinalBackupNameTaken,
			fmt.Sprintf("The final backup name %s is taken by a backup of this instance made before the deletion began, which is not taken as its final backup. Delete or rename that backup, or set skipfinalbackup or deletionpolicy Retain to finish deleting.", name),
			"The final backup cannot be started."), false
	}
	if !usable(inst.Status) {
		if transitional(inst.Status) {
			return deleting(p, "Waiting for the instance to finish "+inst.Status+" before the final backup."), false
		}
		// NOTE: FAILED, SHUTDOWN, FROZEN and STORAGE FULL do not pass by themselves, and OTC
		// refuses a backup in each: only the user can decide to delete without one.
		return waitForDecision(p, ReasonFinalBackupImpossible,
			fmt.Sprintf("OTC cannot back up a %s instance; set skipfinalbackup or deletionpolicy Retain to finish deleting.", inst.Status),
			"The final backup cannot be taken."), false
	}
	if in.answer == nil {
		return finalizePlan{act: &action{kind: actCreateBackup, instance: inst.ID, backup: name,
			about: "Final backup before deletion by the Rds object " + in.object}}, false
	}
	switch err := in.answer.err; {
	case errors.Is(err, cloud.ErrBusy):
		// Another backup runs, or the instance is changing: try again.
		return deleting(p, "Waiting to start the final backup."), false
	case errors.Is(err, cloud.ErrConflict):
		// NOTE: the name is taken (DBS.201204) although this instance's backups above do not carry
		// it, so a backup of another instance does: it will not go away by itself. A backup of ours
		// from a lost response shows up in the list, at the latest when the steady resync looks again.
		return waitForDecision(p, ReasonFinalBackupNameTaken,
			fmt.Sprintf("The final backup name %s is taken by a backup of another instance. Delete or rename that backup, or set skipfinalbackup or deletionpolicy Retain to finish deleting.", name),
			"The final backup cannot be started."), false
	case err != nil:
		p.failed = err
		return p, false
	}
	b := in.answer.backup
	p.events = append(p.events, logLine{level: slog.LevelInfo, msg: "started final backup", args: []any{"instance", inst.ID, "backup", b.ID}})
	p.finalBackup = &v1alpha1.Backup{ID: b.ID, Name: name, Status: b.Status}
	p.operation = &v1alpha1.Operation{Type: OpBackup, Generation: in.generation, Target: name}
	return deleting(p, "Waiting for the final backup "+name+" to complete."), false
}

// begunBefore reports whether backup b began before the deletion did, by more than the clocks of
// OTC and the Kubernetes API server may disagree. A time unknown is not before.
func begunBefore(b cloud.Backup, deletionStart time.Time) bool {
	return !deletionStart.IsZero() && !b.Begin.IsZero() && b.Begin.Before(deletionStart.Add(-createdSlack))
}

// owns reports whether the observed instance is this object's: its own, or released by it.
func (in finalizeInput) owns() bool {
	return in.inst != nil && (in.claim.mine() || (in.claim.Kind == Released && in.claim.ReleasedBy == tagValue(in.me.UID)))
}

// release plans the tags that release the instance under deletionpolicy Retain (this object's
// ownership tags and rds-released-by=<uid>): the next call sees it released and finishes.
func release(in finalizeInput, p finalizePlan) finalizePlan {
	if in.answer == nil {
		return finalizePlan{act: &action{kind: actSetTags, instance: in.inst.ID, tags: in.me.releaseTags()}}
	}
	switch err := in.answer.err; {
	case errors.Is(err, cloud.ErrBusy):
		p.ready = ptr.To(notReady(ReasonRetained, "The instance is busy; it is released (deletionpolicy Retain) when OTC accepts its release tag.", retry))
		return p
	case err != nil:
		p.failed = err
		return p
	}
	p.events = append(p.events, logLine{level: slog.LevelInfo, msg: "releasing instance", args: []any{"instance", in.inst.ID}})
	p.ready = ptr.To(notReady(ReasonRetained, "The instance is being released: it stays in OTC (deletionpolicy Retain), tagged as released.", settled))
	p.synced = ptr.To(syncedOK(ReasonReconcileSuccess, "The release tag was issued to OTC.", inFlight))
	return p
}

// retained finishes a deletion with deletionpolicy Retain.
func retained(p finalizePlan, id string) finalizePlan {
	p.events = append(p.events, logLine{level: slog.LevelInfo, msg: "retaining instance", args: []any{"instance", id}})
	p.ready = ptr.To(notReady(ReasonRetained, "The instance is left in OTC (deletionpolicy Retain), released: another Rds object takes it over only by adopting it with instanceid.", settled))
	p.finalized = true
	return p
}

// waitForDecision stops the deletion until the user changes the spec: a stable Ready and Synced
// condition and the steady resync.
func waitForDecision(p finalizePlan, reason, ready, synced string) finalizePlan {
	p.ready = ptr.To(notReady(reason, ready, waitsForUser))
	p.synced = ptr.To(notSynced(reason, synced, waitsForUser))
	return p
}

// deleting reports a deletion under way; its Ready reason says whether the final backup still runs.
func deleting(p finalizePlan, message string) finalizePlan {
	reason := ReasonDeleting
	if fb := p.finalBackup; fb != nil && fb.Status != cloud.BackupCompleted && (p.operation == nil || p.operation.Type != OpDelete) {
		reason = ReasonFinalBackupInProgress
	}
	p.ready = ptr.To(notReady(reason, message, inFlight))
	p.synced = ptr.To(syncedOK(ReasonReconcileSuccess, "Deletion is in progress.", inFlight))
	return p
}

// finalize is the finalize step: it plans, gives the plan what it asks for (the instance, its
// report into status, the backup list, the answer to its action), plans again each time, and
// renders the last plan.
func (c *call) finalize(ctx context.Context) (bool, error) {
	if ok, err := c.credentials(ctx); !ok || err != nil { // credentials.go: c.cloud from here on
		// NOTE: without a login nothing can be looked at, and nothing the request holds proves
		// that no instance exists: status.id is the tenant's to erase, the connection Secret its
		// to delete. The object is never released without looking (found in review, issue #17).
		if err == nil {
			c.out.drop(v1alpha1.ConditionReady) // replaces the credentials step's "Waiting for an OTC login"
			c.out.tell(notReady(ReasonDeletionWaitsForCredentials, msgDeletionWaitsForCredentials, waitsForUser))
		}
		// A deletion under way that waits for its login looks again soon: the user who deletes
		// an object waits for it to go.
		c.out.askClass(retry)
		return false, err
	}
	in := finalizeInput{
		spec: c.spec, st: &c.st, me: c.me, object: c.parent.Namespace + "/" + c.parent.Name, generation: c.parent.Generation,
		lost: generatedPasswordSecrets(c.req, &c.st), saved: c.parent.Annotations[AnnotationPasswordSaved] == "true",
	}
	if t := c.parent.DeletionTimestamp; t != nil {
		in.deletionStart = t.Time
	}
	if c.creds != nil {
		in.login = c.creds.Secret
		in.ownToo = c.r.cfg.Credentials.Mode == CredentialsOptional && c.r.cfg.Cloud != nil
	}
	p := planFinalize(in)
	if p.observe {
		obs, err := c.findInstance(ctx)
		if obs.viewed {
			c.cloud = readOnly{c.cloud} // as sync does; a deleting object never reads the view
		}
		if err != nil {
			return false, c.cloudError(err)
		}
		in.observed, in.inst, in.claim = true, obs.inst, obs.claim
		p = planFinalize(in)
	}
	if p.search {
		found, cl, err := c.searchOwn(ctx)
		if err != nil {
			return false, c.cloudError(err)
		}
		in.setAside, in.setAsideClaim = in.inst, in.claim
		in.searched, in.inst, in.claim = true, found, cl
		p = planFinalize(in)
	}
	if p.searchOwn {
		found, err := c.searchControllerProject(ctx)
		if err != nil {
			return false, c.cloudError(err)
		}
		in.lookedInOwn, in.inOwn = true, found
		if found != nil {
			// What OTC shows: the instance is the controller's login's. The next call waits
			// in planCredentials (CredentialsChanged), making no call.
			c.st.ID, c.st.CredentialsSecret, c.st.CredentialsProject = found.ID, "", ""
		}
		p = planFinalize(in)
	}
	if p.report {
		c.report(in.inst) // its resync is an ask: it never lengthens what the plan asks
		in.reported = true
		p = planFinalize(in)
	}
	if p.needBackups {
		s := c.observe(ctx, need{kind: readBackups, id: in.inst.ID})
		if s.err != nil {
			return false, c.cloudError(s.err)
		}
		in.backups = s.backups
		if in.backups == nil {
			in.backups = []cloud.Backup{}
		}
		p = planFinalize(in)
	}
	if p.act != nil {
		in.answer = answerOf(c.act(ctx, *p.act))
		p = planFinalize(in)
	}
	return p.finalized, c.renderFinalize(ctx, p)
}

// searchOwn looks for the object's instance as the sync path's lookup does, by its names (new and
// legacy) and the instance spec.instanceid names, and when these find none of its own, among all
// the project's instances by its ownership tags (an adopted instance keeps its own name, and
// instanceid is the tenant's to clear). It keeps only one whose tags make it this object's (or
// released by it): the oldest, as pickInstance chooses.
func (c *call) searchOwn(ctx context.Context) (*cloud.Instance, claim, error) {
	found, err := c.findByNames(ctx)
	if err != nil {
		return nil, claim{}, err
	}
	if id := c.spec.Instanceid; id != "" && !slices.ContainsFunc(found, func(in *cloud.Instance) bool { return in.ID == id }) {
		s := c.observe(ctx, need{kind: readInstanceByID, id: id})
		inst, err := s.inst, s.err
		switch {
		case err == nil:
			found = append(found, inst)
		case !errors.Is(err, cloud.ErrNotFound):
			return nil, claim{}, err
		}
	}
	owned := func(found []*cloud.Instance) []*cloud.Instance {
		var own []*cloud.Instance
		for _, in := range found {
			probe := finalizeInput{me: c.me, inst: in, claim: classify(in, c.me, c.names...)}
			if probe.owns() {
				own = append(own, in)
			}
		}
		return own
	}
	own := owned(found)
	if len(own) == 0 {
		// NOTE: OTC's listing filters by id, name, type, engine and network, never by tag: one
		// listing of the project (a call per 100 instances) per deletion that finds nothing else.
		// A listing begun after the deletion shows every tag written before it, however large
		// the project (the shared view lists in the background; a call that cannot wait for it
		// fails, and the next finds it done).
		var since time.Time
		if t := c.parent.DeletionTimestamp; t != nil {
			since = t.Time
		}
		s := c.observe(ctx, need{kind: readInstancesAll, since: since})
		if s.err != nil {
			return nil, claim{}, s.err
		}
		own = owned(slices.DeleteFunc(s.instances, func(in *cloud.Instance) bool { return in.Tags[TagOwnerUID] != tagValue(c.me.UID) }))
	}
	inst, _ := pickInstance(own, "")
	if inst == nil {
		return nil, claim{}, nil
	}
	return inst, classify(inst, c.me, c.names...), nil
}

// searchControllerProject is searchOwn with the controller's own login, in its project, for a
// call that uses a namespace login: it returns the object's instance there, never one only
// released by it. It reads; nothing is changed with that login here.
func (c *call) searchControllerProject(ctx context.Context) (*cloud.Instance, error) {
	ns := c.cloud
	c.cloud = c.r.cfg.Cloud
	defer func() { c.cloud = ns }()
	inst, cl, err := c.searchOwn(ctx)
	if err != nil || inst == nil || !cl.mine() {
		return nil, err
	}
	return inst, nil
}

// renderFinalize writes a final plan into the answer.
func (c *call) renderFinalize(ctx context.Context, p finalizePlan) error {
	c.st.Status, c.st.Operation, c.st.FinalBackup = p.instanceStatus, p.operation, p.finalBackup
	logAll(ctx, c.log, p.events)
	if p.ready != nil {
		c.out.tell(*p.ready)
	}
	if p.synced != nil {
		c.out.tell(*p.synced)
	}
	if p.failed != nil {
		return c.cloudError(p.failed)
	}
	return nil
}

// generatedPasswordSecrets names the observed Secrets that hold the only copy of a password the
// controller generated for an account that outlives the object: the root account unless the spec
// now gives its password, and each spec user without password or passwordsecretref. Accounts that
// already left the spec are not listed: the instance no longer belongs to anyone who would use them.
func generatedPasswordSecrets(req *hook.Request, st *v1alpha1.RdsStatus) []string {
	var names []string
	if st.PasswordGenerated && req.Parent.Spec.Password == "" && req.Parent.Spec.Passwordsecretref == nil && req.Secrets[st.ConnectionSecret] != nil {
		names = append(names, st.ConnectionSecret)
	}
	for _, u := range req.Parent.Spec.Users {
		name := UserSecretName(req.Parent.Name, u.Name, u.Host)
		if u.Password == "" && u.Passwordsecretref == nil && req.Secrets[name] != nil {
			names = append(names, name)
		}
	}
	return names
}
