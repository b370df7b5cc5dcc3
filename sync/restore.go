package sync

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// Operation types of restores.
const (
	OpRestore      = "Restore"
	OpRestoreToNew = "RestoreToNew"
)

// Reasons of restores and adoption.
const (
	ReasonRestoring              = "Restoring"
	ReasonRestoreWaiting         = "RestoreWaiting"
	ReasonRestoreTimeOutOfRange  = "RestoreTimeOutOfRange"
	ReasonRestoreRefused         = "RestoreRefused"
	ReasonRestoreFailed          = "RestoreFailed"
	ReasonRestoreSourceInvalid   = "RestoreSourceInvalid"
	ReasonAdoptionTargetNotFound = "AdoptionTargetNotFound"
	ReasonAdoptionMismatch       = "AdoptionMismatch"
	ReasonPasswordUnknown        = "PasswordUnknown"
)

var (
	// instanceIDPattern is OTC's RDS instance id: 32 hex digits and a type suffix such as in01.
	instanceIDPattern = regexp.MustCompile(`^[0-9a-f]{32}in[0-9]{2}$`)
	// otcNamePattern is an OTC instance name or id; never empty, never a "*" wildcard.
	otcNamePattern  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{3,63}$`)
	backupIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)
)

// restoreProblems validates restorefrom and instanceid, in field order.
func restoreProblems(spec *v1alpha1.RdsSpec) []string {
	var p problems
	if rf := spec.Restorefrom; rf != nil {
		if !otcNamePattern.MatchString(rf.Instance) {
			p.addf("restorefrom.instance %q is not an OTC instance id or name.", rf.Instance)
		}
		switch {
		case (rf.Backupid == "") == (rf.Restoretime == ""):
			p.addf("restorefrom needs exactly one of backupid and restoretime.")
		case rf.Backupid != "" && !backupIDPattern.MatchString(rf.Backupid):
			p.addf("restorefrom.backupid %q is not a backup id.", rf.Backupid)
		case rf.Restoretime != "":
			if _, err := time.Parse(time.RFC3339, rf.Restoretime); err != nil {
				p.addf("restorefrom.restoretime %q is not an RFC3339 time such as 2026-11-22T10:00:00Z.", rf.Restoretime)
			}
		}
	}
	if spec.Instanceid != "" {
		if !instanceIDPattern.MatchString(spec.Instanceid) {
			p.addf("instanceid %q is not an OTC instance id (32 hex digits and a suffix such as in01).", spec.Instanceid)
		}
		if spec.Restorefrom != nil {
			p.addf("restorefrom and instanceid are both set: a new instance is restored or an existing one adopted, not both.")
		}
	}
	return p
}

// restoreBaseline is the record of the backuprestoretime an instance starts with.
//
// NOTE: the value present when the instance is created, restored into or adopted, or when the
// hooks first see an instance that predates this record, is never a request to restore: it was
// written before the instance existed, or was handled by the original operator. Restoring a
// brand-new or just adopted instance to it would at best fail and at worst roll back live data.
// Only a later change of the value asks for a restore.
func restoreBaseline(spec *v1alpha1.RdsSpec) *v1alpha1.RestoreStatus {
	return &v1alpha1.RestoreStatus{Time: spec.Backuprestoretime, Result: v1alpha1.RestoreSkipped}
}

// restore is the point-in-time restore of the instance in place: a backuprestoretime that differs
// from the one handled last restores once, if it lies within OTC's restorable periods.
func (c *call) restore(ctx context.Context, inst *cloud.Instance) (stop bool, err error) {
	if c.st.Restore == nil {
		c.st.Restore = restoreBaseline(c.spec)
		return false, nil
	}
	if stop, err := c.followRestore(ctx, inst); stop || err != nil {
		return stop, err
	}
	rec := c.st.Restore
	want := c.spec.Backuprestoretime
	if want == "" || want == rec.Time {
		c.restoreOutcome()
		return false, nil
	}
	at, perr := time.Parse(time.RFC3339, want)
	if perr != nil { // Validate refuses it first; never restore to a time we cannot read
		c.invalid(fmt.Sprintf("backuprestoretime %q is not an RFC3339 time such as 2026-11-22T10:00:00Z.", want))
		return true, nil
	}
	if c.spec.Datastoretype == v1alpha1.EnginePostgreSQL {
		c.st.Restore = &v1alpha1.RestoreStatus{Time: want, Result: v1alpha1.RestoreRefused}
		c.restoreOutcome()
		return false, nil
	}
	if c.st.Operation != nil || !usable(inst.Status) {
		c.setSynced(metav1.ConditionTrue, ReasonRestoreWaiting,
			fmt.Sprintf("The restore to %s waits for the instance to be ACTIVE with no other operation running.", want))
		if c.st.Operation != nil || transitional(inst.Status) {
			// NOTE: a pending restore holds the later steps while OTC is busy: a day-2 change
			// started as it ends would keep the instance busy, and the restore rolls back whatever
			// it changed anyway.
			c.askClass(inFlight)
			return true, nil
		}
		// FAILED, FROZEN, STORAGE FULL, SHUTDOWN...: nothing ends by itself, and only a later step
		// may free the instance (storage growth is the way out of STORAGE FULL). The later steps
		// run; a Synced they set replaces this one. The resync stays steady.
		return false, nil
	}
	switch ok, err := c.restorable(ctx, inst.ID, at); {
	case err != nil:
		return true, c.cloudError(err)
	case !ok:
		c.st.Restore = &v1alpha1.RestoreStatus{Time: want, Result: v1alpha1.RestoreOutOfRange}
		c.restoreOutcome()
		return false, nil
	}

	var jobID string
	err = c.cloudCall(ctx, func(ctx context.Context) (err error) {
		jobID, err = c.cloud.RestoreInPlace(ctx, inst.ID, at)
		return err
	})
	switch kind := cloud.KindOf(err); {
	case err == nil:
	case errors.Is(err, errViewStale):
		return true, err // never sent: decided again on a fresh read
	case kind == cloud.KindInvalid || kind == cloud.KindConflict || kind == cloud.KindNotFound:
		// OTC answered and refused: nothing happened, and the same request would be refused again.
		c.log.Warn("restore refused", "instance", inst.ID, "error", err.Error())
		c.st.Restore = &v1alpha1.RestoreStatus{Time: want, Result: v1alpha1.RestoreRefused}
		c.restoreOutcome()
		return true, nil
	case kind != cloud.KindUnavailable && kind != cloud.KindUnknown:
		// Busy, throttled, unauthorized: OTC answered and did nothing; the next call tries again.
		return true, c.cloudError(err)
	default:
		// NOTE: no answer (or an unreadable one) may mean OTC restored all the same. The request
		// is recorded as issued and never sent again: a second restore would roll back whatever
		// was written since the first one.
		c.log.Warn("restore answer lost; recorded as issued", "instance", inst.ID, "error", err.Error())
	}
	c.log.Info("restoring instance", "instance", inst.ID, "time", want, "job", jobID)
	c.reapplyDatabases()
	c.st.Restore = &v1alpha1.RestoreStatus{Time: want, Result: v1alpha1.RestoreIssued, JobID: jobID}
	c.st.Operation = &v1alpha1.Operation{Type: OpRestore, JobID: jobID, Generation: c.parent.Generation, Target: want}
	c.pending(ReasonRestoring, "The instance is being restored to "+want+".") // the call's change
	return true, nil
}

// followRestore follows the restore an earlier call issued. It stops the call while it runs.
// When it is over, the databases and users are applied again: the restore rolled them back too.
func (c *call) followRestore(ctx context.Context, inst *cloud.Instance) (stop bool, err error) {
	prev := c.parent.Status.Operation // as the last call left it; report may have ended it since
	if prev == nil || prev.Type != OpRestore {
		return false, nil
	}
	op := *prev
	message := "The instance is being restored to " + prev.Target + "."
	switch {
	case inst.Status == cloud.StatusRestoring, prev.JobID == "" && c.st.Operation != nil:
		// The answer of a lost restore had no job to ask: a busy instance is taken as restoring.
		c.st.Operation = &op
		c.setSynced(metav1.ConditionTrue, ReasonReconcileSuccess, message)
		return true, nil
	case prev.JobID == "":
		// The answer was lost and the instance is no longer busy: the result stays Issued.
		c.reapplyDatabases()
		return false, nil
	}
	// NOTE: another status than RESTORING does not say that the restore is over, nor that it
	// runs: OTC may list the instance ACTIVE before it shows RESTORING, and a change issued by the
	// call that saw the restore end (whose answer may never have been applied) shows MODIFYING.
	// Only the job says.
	var job *cloud.Job
	err = c.cloudCall(ctx, func(ctx context.Context) (err error) {
		job, err = c.cloud.GetJob(ctx, prev.JobID)
		return err
	})
	switch {
	case errors.Is(err, cloud.ErrNotFound) || (err == nil && job.Status == cloud.JobRunning):
		// NOTE: OTC does not know a job during its first second.
		c.st.Operation = &op
		c.pending(ReasonRestoring, message)
		return true, nil
	case err != nil:
		c.st.Operation = &op
		return true, c.cloudError(err)
	case job.Status == cloud.JobFailed:
		c.log.Warn("restore failed", "job", prev.JobID, "reason", job.FailReason)
		c.st.Restore.Result = v1alpha1.RestoreFailed
	default:
		c.st.Restore.Result = v1alpha1.RestoreCompleted
	}
	if c.st.Operation != nil && c.st.Operation.Type == OpRestore {
		c.st.Operation = nil // the instance is busy with something else, which the later steps see
	}
	c.reapplyDatabases()
	return false, nil
}

// restoreOutcome states again, from status alone, why the current backuprestoretime was not
// restored: the condition stays while the value stays, and never changes from call to call.
func (c *call) restoreOutcome() {
	rec := c.st.Restore
	if rec == nil || rec.Time == "" || rec.Time != c.spec.Backuprestoretime {
		return
	}
	switch rec.Result {
	case v1alpha1.RestoreOutOfRange:
		c.setSynced(metav1.ConditionFalse, ReasonRestoreTimeOutOfRange, fmt.Sprintf(
			"backuprestoretime %s lies outside the periods OTC can restore this instance to (from the oldest kept backup until now), so nothing was restored. Set a time within them.", rec.Time))
	case v1alpha1.RestoreRefused:
		msg := fmt.Sprintf("OTC refused the restore to %s, so nothing was restored. Set another backuprestoretime or remove it.", rec.Time)
		if c.spec.Datastoretype == v1alpha1.EnginePostgreSQL {
			msg = "OTC cannot restore a PostgreSQL instance in place to a point in time; create a new Rds with restorefrom instead, and remove backuprestoretime."
		}
		c.setSynced(metav1.ConditionFalse, ReasonRestoreRefused, msg)
	case v1alpha1.RestoreFailed:
		c.setSynced(metav1.ConditionFalse, ReasonRestoreFailed, fmt.Sprintf(
			"The restore to %s failed in OTC. Check the instance; set another backuprestoretime to try again, or remove it.", rec.Time))
	}
}

// restorable reports whether OTC can restore the instance to at. It sets no condition, and returns
// the cloud's error as it is.
func (c *call) restorable(ctx context.Context, instanceID string, at time.Time) (bool, error) {
	var ranges []cloud.TimeRange
	if err := c.cloudCall(ctx, func(ctx context.Context) (err error) {
		ranges, err = c.cloud.ListRestoreTimes(ctx, instanceID)
		return err
	}); err != nil {
		return false, err
	}
	for _, r := range ranges {
		if r.Contains(at) {
			return true, nil
		}
	}
	return false, nil
}

// restorePoint resolves and checks spec.restorefrom before a restore into a new instance. A nil
// point means the call stops: a condition says why.
func (c *call) restorePoint(ctx context.Context) (*cloud.RestorePoint, error) {
	rf := c.spec.Restorefrom
	// NOTE: with the controller's credentials, a source of another namespace and one that does not
	// exist answer alike (refused): instance names are computable, and different answers would
	// tell a tenant which Rds objects other namespaces have. Among instances sharing the name only
	// those of this namespace count.
	allowed := func(in *cloud.Instance) bool {
		return restoreSourceRefusal(classify(in, c.me), c.me, c.ownProject) == ""
	}
	var src *cloud.Instance
	err := c.cloudCall(ctx, func(ctx context.Context) (err error) {
		if instanceIDPattern.MatchString(rf.Instance) {
			src, err = c.cloud.GetInstance(ctx, rf.Instance)
			return err
		}
		var found []*cloud.Instance
		if found, err = c.cloud.FindInstancesByName(ctx, rf.Instance); err != nil {
			return err
		}
		if !c.ownProject {
			found = slices.DeleteFunc(found, func(in *cloud.Instance) bool { return !allowed(in) })
		}
		switch len(found) {
		case 0:
			return cloud.ErrNotFound
		case 1:
			src = found[0]
			return nil
		}
		return cloud.ErrConflict
	})
	refuse := func() {
		c.refused(ReasonRestoreSourceRefused, fmt.Sprintf("The source instance %q in restorefrom is refused: %s", rf.Instance, restoreSourceRefusal(claim{}, c.me, false)))
	}
	switch {
	case errors.Is(err, cloud.ErrNotFound) && !c.ownProject:
		refuse()
		return nil, nil
	case errors.Is(err, cloud.ErrNotFound):
		c.waitForUser(ReasonRestoreSourceInvalid, fmt.Sprintf("The source instance %q in restorefrom does not exist in OTC.", rf.Instance))
		return nil, nil
	case errors.Is(err, cloud.ErrConflict):
		c.waitForUser(ReasonRestoreSourceInvalid, fmt.Sprintf("Several OTC instances are named %q: name the source in restorefrom by its id.", rf.Instance))
		return nil, nil
	case err != nil:
		return nil, c.cloudError(err)
	}
	// The tenancy boundary comes before anything else is checked or read of the source.
	if !allowed(src) {
		refuse()
		return nil, nil
	}
	if problems := sourceProblems(c.spec, src); len(problems) > 0 {
		c.waitForUser(ReasonRestoreSourceInvalid, fmt.Sprintf("The source instance %s cannot be restored into this one: %s", src.ID, joinSentences(problems)))
		return nil, nil
	}
	point := &cloud.RestorePoint{InstanceID: src.ID, BackupID: rf.Backupid}
	var ok bool
	if rf.Backupid != "" {
		ok, err = c.completedBackup(ctx, src.ID, rf.Backupid)
	} else {
		point.Time, _ = time.Parse(time.RFC3339, rf.Restoretime) // validated
		switch ok, err = c.restorable(ctx, src.ID, point.Time); {
		case err != nil:
			err = c.cloudError(err)
		case !ok:
			c.waitForUser(ReasonRestoreTimeOutOfRange, fmt.Sprintf(
				"restorefrom.restoretime %s lies outside the periods OTC can restore instance %s to (from its oldest kept backup until now).", rf.Restoretime, src.ID))
		}
	}
	if !ok || err != nil {
		return nil, err
	}
	return point, nil
}

// completedBackup reports whether the backup is a completed backup of the source; a condition
// says why not.
func (c *call) completedBackup(ctx context.Context, sourceID, backupID string) (bool, error) {
	var backups []cloud.Backup
	if err := c.cloudCall(ctx, func(ctx context.Context) (err error) {
		backups, err = c.cloud.ListBackups(ctx, sourceID)
		return err
	}); err != nil {
		return false, c.cloudError(err)
	}
	for _, b := range backups {
		if b.ID != backupID {
			continue
		}
		if b.Status != cloud.BackupCompleted {
			c.waitForUser(ReasonRestoreSourceInvalid, fmt.Sprintf("The backup %s in restorefrom is %s, not COMPLETED.", backupID, b.Status))
			return false, nil
		}
		return true, nil
	}
	c.waitForUser(ReasonRestoreSourceInvalid, fmt.Sprintf("The backup %s in restorefrom is not a backup of instance %s.", backupID, sourceID))
	return false, nil
}

// sourceProblems compares a restore source with the spec: OTC keeps engine and version.
func sourceProblems(spec *v1alpha1.RdsSpec, src *cloud.Instance) []string {
	var p problems
	if !strings.EqualFold(src.Engine, spec.Datastoretype) {
		p.addf("it runs %s, the spec asks for %s.", src.Engine, spec.Datastoretype)
	} else if !sameMajorVersion(spec.Datastoretype, src.Version, spec.Datastoreversion) {
		p.addf("it runs version %s, the spec asks for %s.", src.Version, spec.Datastoreversion)
	}
	if spec.Restorefrom.Restoretime != "" && spec.Volumesize < src.Volume.Size {
		p.addf("volumesize %d is smaller than its %d GB.", spec.Volumesize, src.Volume.Size)
	}
	return p
}

// sameMajorVersion reports whether two versions of an engine share the major version: the first
// two parts for MySQL (8.0), the part before the first dot otherwise (16, 2022_SE).
func sameMajorVersion(engine, a, b string) bool {
	major := func(v string) string {
		parts := strings.Split(v, ".")
		if engine == v1alpha1.EngineMySQL && len(parts) > 1 {
			return parts[0] + "." + parts[1]
		}
		return parts[0]
	}
	return major(a) == major(b)
}

// adopt takes over the instance named in spec.instanceid, after checking that the adoption
// policy allows it and that it is what the spec describes. It returns nil when the instance is not
// adopted (a condition says why, and nothing changed). The adoption's one change writes this
// object's ownership tags (adopted true); an instance already tagged as this object's (an earlier
// answer was lost) is taken over without a change.
func (c *call) adopt(ctx context.Context) (inst *cloud.Instance, adopted bool, err error) {
	id := c.spec.Instanceid
	err = c.cloudCall(ctx, func(ctx context.Context) (err error) {
		inst, err = c.cloud.GetInstance(ctx, id)
		return err
	})
	switch {
	case errors.Is(err, cloud.ErrNotFound):
		c.st.Status = ""
		c.waitForUser(ReasonAdoptionTargetNotFound, fmt.Sprintf("The OTC instance %s named in instanceid does not exist; nothing is created in its place.", id))
		return nil, false, nil
	case err != nil:
		return nil, false, c.cloudError(err)
	}
	cl := classify(inst, c.me) // by id, never by name: no name makes it ours
	if why := adoptionRefusal(c.r.cfg.Adoption, cl, c.me); why != "" {
		c.st.Status = ""
		c.refused(ReasonAdoptionRefused, fmt.Sprintf("The OTC instance %s named in instanceid is not adopted: %s", id, why))
		return nil, false, nil
	}
	if problems := c.adoptionProblems(inst); len(problems) > 0 {
		c.setReady(metav1.ConditionFalse, ReasonAdoptionMismatch, "The instance named in instanceid is not adopted; see the Synced condition.")
		c.setSynced(metav1.ConditionFalse, ReasonAdoptionMismatch,
			fmt.Sprintf("The OTC instance %s does not match the spec, so it is not adopted: %s", id, joinSentences(problems)))
		return nil, false, nil
	}
	if cl.Kind != Ours {
		// NOTE: the tags are written before status records the instance: were the answer lost,
		// the next call finds it tagged as ours and takes it over without a second change.
		tags := c.me.tags()
		err = c.cloudCall(ctx, func(ctx context.Context) error { return c.cloud.SetTags(ctx, inst.ID, tags) })
		if errors.Is(err, cloud.ErrBusy) {
			c.setSynced(metav1.ConditionTrue, ReasonInstanceBusy, "The instance is busy; it is adopted when OTC accepts its ownership tags.")
			c.askClass(inFlight)
			return nil, false, nil
		}
		if err != nil {
			return nil, false, c.cloudError(err)
		}
		adopted = true
	}
	c.log.Info("adopted instance", "instance", inst.ID, "was", cl.Kind.String())
	c.st.ID = inst.ID
	c.st.Adopted = true
	c.st.PasswordGenerated = false
	c.st.Restore = restoreBaseline(c.spec)
	return inst, adopted, nil
}

// refused reports a reference the tenancy rules refuse (InvalidSpec-style: the user must change
// the spec): a stable Synced and, unless set already, Ready condition, and no cloud change.
func (c *call) refused(reason, message string) {
	c.setSynced(metav1.ConditionFalse, reason, message)
	if getCondition(&c.st, v1alpha1.ConditionReady) == nil || c.st.ID == "" {
		c.setReady(metav1.ConditionFalse, reason, "The spec names an instance this object may not use; see the Synced condition.")
	}
}

// adoptionProblems lists what makes the instance differ from the spec in ways no change can fix.
func (c *call) adoptionProblems(inst *cloud.Instance) []string {
	var p problems
	if !strings.EqualFold(inst.Engine, c.spec.Datastoretype) {
		p.addf("it runs %s, the spec asks for %s.", inst.Engine, c.spec.Datastoretype)
	} else if !sameMajorVersion(c.spec.Datastoretype, inst.Version, c.spec.Datastoreversion) {
		p.addf("it runs version %s, the spec asks for %s.", inst.Version, c.spec.Datastoreversion)
	}
	if region := c.cloud.Region(); c.spec.Region != region || (inst.Region != "" && inst.Region != region) {
		shown := inst.Region
		if shown == "" {
			shown = region
		}
		p.addf("it is in region %s, the spec asks for %s.", shown, c.spec.Region)
	}
	switch {
	case inst.Type == "Replica":
		p.addf("it is a read replica.")
	case strings.EqualFold(inst.Type, "Ha") != IsHA(c.spec):
		want := "Single"
		if IsHA(c.spec) {
			want = "Ha"
		}
		p.addf("it is of type %s, the spec's hamode asks for %s.", inst.Type, want)
	}
	return p
}

// restorePointText shows a restore point in status.operation.target.
func restorePointText(p cloud.RestorePoint) string {
	if p.BackupID != "" {
		return "backup " + p.BackupID + " of " + p.InstanceID
	}
	return p.InstanceID + " at " + p.Time.UTC().Format(time.RFC3339)
}
