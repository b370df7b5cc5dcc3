package reconcile

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
	if _, err := c.runStep(ctx, newLogsStep(c, "", true)); err != nil {
		return nil, err
	}
	r.remember(c.keep)
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
	st   v1alpha1.RdsStatus // this call's status so far (credentials, report)
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
	// replicas are the instance's read replicas read by id (Retain releases them,
	// finalize_replicas.go); nil until read.
	replicas map[string]seen
	// confirmed is a fresh read by id of a read replica the search found (deleteReplica); nil
	// until read.
	confirmed *seen
	// job is the job of a start sent before the deletion (finalize_stopped.go), or the error
	// reading it; jobRead says it was read.
	job     *cloud.Job
	jobErr  error
	jobRead bool
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
	// needReplicas asks for the instance's read replicas (releaseReplicas).
	needReplicas bool
	// confirmReplica asks for a fresh read of the read replica the search found (deleteReplica).
	confirmReplica bool
	needJob        string // the job of a start sent before the deletion (finalize_stopped.go)
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
	// A read replica of the object is no proof either: status.id names the instance, never one of
	// its replicas, so one named there is set aside and the instance looked for (a replica found
	// by the search, once the instance is gone, is taken apart: finalize_replicas.go).
	if !in.searched && (!in.owns() || in.inst.Type == cloud.TypeReplica) {
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
		if q, done := releaseReplicas(in, p); !done { // finalize_replicas.go: the read replicas first
			return q
		}
		return release(in, p)
	case inst.Type == cloud.TypeReplica:
		return deleteReplica(in, p) // finalize_replicas.go: one OTC still lists once the primary is gone
	}
	if !in.reported {
		return finalizePlan{report: true}
	}
	if op := p.operation; op != nil && op.Type == OpDelete {
		return deleting(p, "The instance is being deleted.")
	}
	q, wait := waitForReplicas(in, p) // finalize_replicas.go
	if wait {
		return q
	}
	p = q
	if q, wait := startBeforeDeletion(in, p); wait { // finalize_stopped.go
		return q
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

// finalize is the finalize call: the login, then the finalize step (finalizeStep) through the
// loop. It reports whether the object may go.
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
	s := newFinalizeStep(c)
	_, err := c.runStep(ctx, s)
	done := s.p.finalized && err == nil && s.failed == nil
	if ps := c.st.Parameters; done && (ps != nil && ps.Template != "" || len(c.spec.Parameters) > 0) {
		// parameters_create.go: the templates made for the create go before the object does,
		// in a call of their own (at most one change per call). NOTE: status.parameters.template
		// may be lost with an answer, or erased by the tenant: an object whose spec names
		// parameters lists the templates at its deletion all the same (found in review, #20).
		if c.attempted {
			c.out.askClass(inFlight)
			return false, nil
		}
		t := &templatesGoneStep{me: c.me, named: ps != nil && ps.Template != ""}
		if _, err := c.runStep(ctx, t); err != nil {
			return false, err
		}
		return t.p.gone, nil
	}
	return done, err
}

// finalizeStep is the finalize step as the loop runs it (loop.go): it plans, reads what the plan
// asks for (the instance, fresh; its search by names and tags; with a namespace login, the same
// search in the controller's project with the controller's login; the backup list), reports the
// instance into its status when asked (reported, a pure function), plans again each time, makes
// the plan's one change, plans on OTC's answer, and renders the last plan.
type finalizeStep struct {
	in finalizeInput
	// find is the observation of the instance (planFinalize's observe), search the lookup of the
	// object's own (search), inOwn that lookup in the controller's project, with its own login
	// (searchOwn); failed is a read that failed, which ends the step.
	find   *lookup
	search *searchOwn
	inOwn  *searchOwn
	failed error
	// ready is the Ready report gave, told before the plan's outcomes.
	ready *outcome
	p     finalizePlan
}

func newFinalizeStep(c *call) *finalizeStep {
	in := finalizeInput{
		spec: c.spec, st: c.st, me: c.me, object: c.parent.Namespace + "/" + c.parent.Name, generation: c.parent.Generation,
		lost: generatedPasswordSecrets(c.req, &c.st), saved: c.parent.Annotations[AnnotationPasswordSaved] == "true",
	}
	if t := c.parent.DeletionTimestamp; t != nil {
		in.deletionStart = t.Time
	}
	if c.creds != nil {
		in.login = c.creds.Secret
		in.ownToo = c.r.cfg.Credentials.Mode == CredentialsOptional && c.r.cfg.Cloud != nil
	}
	// A deletion is decided on what OTC says now, never on the shared view (maxAge 0).
	return &finalizeStep{in: in,
		find:   lookupOf(c.st.ID, c.spec.Instanceid, 0, c.me, c.names),
		search: newSearchOwn(c, false),
		inOwn:  newSearchOwn(c, true),
	}
}

func (s *finalizeStep) plan() head {
	for {
		if s.failed != nil {
			return head{tells: told(s.ready), err: s.failed, stop: true}
		}
		s.p = planFinalize(s.in)
		p := s.p
		switch {
		case p.observe:
			if ns := s.find.next(); ns != nil {
				return head{needs: ns}
			}
			obs, err := s.find.observation()
			s.failed = err
			s.in.observed, s.in.inst, s.in.claim = true, obs.inst, obs.claim
			continue
		case p.search:
			if ns := s.search.next(); ns != nil {
				return head{needs: ns}
			}
			found, cl, err := s.search.found()
			s.failed = err
			s.in.setAside, s.in.setAsideClaim = s.in.inst, s.in.claim
			s.in.searched, s.in.inst, s.in.claim = true, found, cl
			continue
		case p.searchOwn:
			if ns := s.inOwn.next(); ns != nil {
				return head{needs: ns}
			}
			found, cl, err := s.inOwn.found()
			s.failed = err
			s.in.lookedInOwn = true
			if found != nil && cl.mine() { // the object's own there, never one only released by it
				s.in.inOwn = found
			}
			continue
		case p.report:
			var ready outcome
			s.in.st, ready = reported(s.in.st, s.in.inst)
			s.ready = ptr.To(ready.fallback()) // a step's Ready about its change replaces the instance's state
			s.in.reported = true
			continue
		case p.needBackups:
			return head{needs: []need{{kind: readBackups, id: s.in.inst.ID}}}
		case p.confirmReplica:
			return head{needs: []need{{kind: readInstanceByID, id: s.in.inst.ID}}}
		case p.needReplicas:
			var needs []need
			for _, id := range s.in.inst.Replicas {
				needs = append(needs, need{kind: readInstanceByID, id: id})
			}
			return head{needs: needs}
		case p.needJob != "":
			return head{needs: []need{{kind: readJob, id: p.needJob}}}
		}
		return head{tells: told(s.ready, p.ready, p.synced), act: p.act, err: p.failed, logs: p.events, stop: true}
	}
}

func (s *finalizeStep) saw(n need, r seen) {
	switch p := s.p; {
	case p.observe:
		s.find.saw(n, r)
	case p.search:
		s.search.saw(n, r)
	case p.searchOwn:
		s.inOwn.saw(n, r)
	case p.confirmReplica:
		s.in.confirmed = &r
	case p.needReplicas:
		if s.in.replicas == nil {
			s.in.replicas = map[string]seen{}
		}
		s.in.replicas[n.id] = r
	case p.needJob != "":
		s.in.job, s.in.jobErr, s.in.jobRead = r.job, r.err, true
	case p.needBackups:
		if s.failed = r.err; r.err == nil {
			s.in.backups = r.backups
			if s.in.backups == nil {
				s.in.backups = []cloud.Backup{}
			}
		}
	}
}

func (s *finalizeStep) answered(res acted, err error) { s.in.answer = answerOf(res, err) }

// render writes the instance as reported, and the last plan's status.status, status.operation and
// status.finalBackup unless a read failed. The object's instance found in the controller's project
// is recorded as what OTC shows: status.id names it, and the controller's login is the one it was
// found with (no credentialsSecret, no credentialsProject), so the next call waits in
// planCredentials (CredentialsChanged), making no call, until the object uses that login again.
func (s *finalizeStep) render(a *answer) {
	if s.in.reported {
		a.st = s.in.st
	}
	if s.failed != nil {
		return
	}
	if o := s.in.inOwn; o != nil {
		a.st.ID, a.st.CredentialsSecret, a.st.CredentialsProject = o.ID, "", ""
	}
	a.st.Status, a.st.Operation, a.st.FinalBackup = s.p.instanceStatus, s.p.operation, s.p.finalBackup
}

// searchOwn looks for the object's instance as the sync path's lookup does, by its names (new and
// legacy) and the instance spec.instanceid names, and when these find none of its own, among all
// the project's instances by its ownership tags (an adopted instance keeps its own name, and
// instanceid is the tenant's to clear). It keeps only one whose tags make it this object's (or
// released by it): the oldest, as pickInstance chooses. It is a value: next names its reads, saw
// takes what observe found, found says what the reads found; it calls nothing.
type searchOwn struct {
	id    string // spec.instanceid
	me    owner
	names []string
	// since is the deletion's start: the listing by tags must have begun since (readInstancesAll).
	since time.Time
	// controller makes every read with the controller's own login, in its project (need.controller):
	// finalize's look there for a call that uses a namespace login (finalizePlan.searchOwn).
	controller bool
	list       listing
	byID       *seen
	all        *seen // readInstancesAll
}

// newSearchOwn is the search for c's object; controller: in the controller's project.
func newSearchOwn(c *call, controller bool) *searchOwn {
	s := &searchOwn{id: c.spec.Instanceid, me: c.me, names: c.names, controller: controller, list: listing{names: c.names}}
	if t := c.parent.DeletionTimestamp; t != nil {
		s.since = t.Time
	}
	return s
}

// next is the reads the search needs next; nil once it has what it needs.
func (s *searchOwn) next() []need {
	switch {
	case !s.list.done():
		return s.with(s.list.next()...)
	case s.list.err != nil:
		return nil
	case s.id != "" && s.byID == nil && !slices.ContainsFunc(s.list.found, func(in *cloud.Instance) bool { return in.ID == s.id }):
		return s.with(need{kind: readInstanceByID, id: s.id})
	}
	if own, err := s.byNames(); err != nil || len(own) > 0 || s.all != nil {
		return nil
	}
	// NOTE: OTC's listing filters by id, name, type, engine and network, never by tag: one
	// listing of the project (a call per 100 instances) per deletion that finds nothing else.
	// A listing begun after the deletion shows every tag written before it, however large
	// the project (the shared view lists in the background; a call that cannot wait for it
	// fails, and the next finds it done).
	return s.with(need{kind: readInstancesAll, since: s.since})
}

// with marks the reads as the search's: made with the controller's login when it searches there.
func (s *searchOwn) with(ns ...need) []need {
	for i := range ns {
		ns[i].controller = s.controller
	}
	return ns
}

func (s *searchOwn) saw(n need, r seen) {
	switch n.kind {
	case readInstanceByID:
		s.byID = &r
	case readInstancesAll:
		s.all = &r
	default:
		s.list.saw(r)
	}
}

// byNames is the object's own among what the names and instanceid found.
func (s *searchOwn) byNames() ([]*cloud.Instance, error) {
	if s.list.err != nil {
		return nil, s.list.err
	}
	found := s.list.found
	if r := s.byID; r != nil {
		switch {
		case r.err == nil:
			found = append(slices.Clone(found), r.inst)
		case !errors.Is(r.err, cloud.ErrNotFound):
			return nil, r.err
		}
	}
	return s.owned(found), nil
}

// owned keeps the instances whose tags make them this object's, or released by it.
func (s *searchOwn) owned(found []*cloud.Instance) []*cloud.Instance {
	var own []*cloud.Instance
	for _, in := range found {
		probe := finalizeInput{me: s.me, inst: in, claim: classify(in, s.me, s.names...)}
		if probe.owns() {
			own = append(own, in)
		}
	}
	return own
}

func (s *searchOwn) found() (*cloud.Instance, claim, error) {
	own, err := s.byNames()
	if err != nil {
		return nil, claim{}, err
	}
	if r := s.all; len(own) == 0 && r != nil {
		if r.err != nil {
			return nil, claim{}, r.err
		}
		tagged := slices.DeleteFunc(slices.Clone(r.instances), func(in *cloud.Instance) bool { return in.Tags[TagOwnerUID] != tagValue(s.me.UID) })
		own = s.owned(tagged)
	}
	if slices.ContainsFunc(own, func(in *cloud.Instance) bool { return in.Type != cloud.TypeReplica }) {
		// finalize_replicas.go: the primary first; a replica of the object once the primary is gone
		own = slices.DeleteFunc(own, func(in *cloud.Instance) bool { return in.Type == cloud.TypeReplica })
	}
	inst, _ := pickInstance(own, "")
	if inst == nil {
		return nil, claim{}, nil
	}
	return inst, classify(inst, s.me, s.names...), nil
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
