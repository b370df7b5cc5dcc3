package reconcile

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// restorePointInput is what the check of spec.restorefrom reads: the spec, this object as
// ownership tags name it, whether the call uses the namespace's own OTC project, and the reads.
type restorePointInput struct {
	spec       *v1alpha1.RdsSpec
	me         owner
	ownProject bool
	// sources are the instances read for restorefrom.instance: the one with that id, or those
	// with that name; sourcesErr is the read's error.
	sources    []*cloud.Instance
	sourcesErr error
	// backups are the source's backups; nil until the plan asked for them (needBackups).
	backups *backupsRead
	// ranges are the source's restorable periods; nil until the plan asked for them (needRanges).
	ranges *rangesRead
}

// backupsRead is a read of an instance's backups (ListBackups), or its error.
type backupsRead struct {
	backups []cloud.Backup
	err     error
}

// restorePointPlan is the decision on spec.restorefrom before a restore into a new instance. A plan
// that asks for a read (needBackups, needRanges) is made again with what was read.
type restorePointPlan struct {
	// point is where to restore from; nil: the call stops, blocked or cloudErr says why.
	point    *cloud.RestorePoint
	blocked  *blocked
	cloudErr error
	// needBackups and needRanges name the source whose backups or restorable periods to read.
	needBackups string
	needRanges  string
}

// planRestorePoint resolves and checks spec.restorefrom from what was read of the source. It
// calls nothing.
func planRestorePoint(in restorePointInput) restorePointPlan {
	rf := in.spec.Restorefrom
	waitFor := func(reason, message string) restorePointPlan {
		return restorePointPlan{blocked: &blocked{outcome: notSynced(reason, message, waitsForUser)}}
	}
	// NOTE: with the controller's credentials, a source of another namespace and one that does not
	// exist answer alike (refused): instance names are computable, and different answers would
	// tell a tenant which Rds objects other namespaces have. Among instances sharing the name only
	// those of this namespace count. The tenancy boundary comes before anything else is checked
	// or read of the source.
	sources := in.sources
	if !in.ownProject {
		sources = slices.DeleteFunc(slices.Clone(sources), func(src *cloud.Instance) bool {
			return restoreSourceRefusal(classify(src, in.me), in.me, in.ownProject) != ""
		})
	}
	switch err := in.sourcesErr; {
	case (errors.Is(err, cloud.ErrNotFound) || (err == nil && len(sources) == 0)) && !in.ownProject:
		return restorePointPlan{blocked: &blocked{tenancy: true, outcome: notSynced(ReasonRestoreSourceRefused, fmt.Sprintf(
			"The source instance in restorefrom is refused: %s", restoreSourceRefusal(claim{}, in.me, false)), waitsForUser)}}
	case errors.Is(err, cloud.ErrNotFound) || (err == nil && len(sources) == 0):
		return waitFor(ReasonRestoreSourceInvalid, fmt.Sprintf("The source instance %q in restorefrom does not exist in OTC.", rf.Instance))
	case errors.Is(err, cloud.ErrConflict) || (err == nil && len(sources) > 1):
		return waitFor(ReasonRestoreSourceInvalid, fmt.Sprintf("Several OTC instances are named %q: name the source in restorefrom by its id.", rf.Instance))
	case err != nil:
		return restorePointPlan{cloudErr: err}
	}
	src := sources[0]
	if problems := sourceProblems(in.spec, src); len(problems) > 0 {
		return waitFor(ReasonRestoreSourceInvalid, fmt.Sprintf("The source instance %s cannot be restored into this one: %s", src.ID, joinSentences(problems)))
	}
	point := &cloud.RestorePoint{InstanceID: src.ID, BackupID: rf.Backupid}
	if rf.Backupid != "" {
		switch b := in.backups; {
		case b == nil:
			return restorePointPlan{needBackups: src.ID}
		case b.err != nil:
			return restorePointPlan{cloudErr: b.err}
		}
		i := slices.IndexFunc(in.backups.backups, func(b cloud.Backup) bool { return b.ID == rf.Backupid })
		switch {
		case i < 0:
			return waitFor(ReasonRestoreSourceInvalid, fmt.Sprintf("The backup %s in restorefrom is not a backup of instance %s.", rf.Backupid, src.ID))
		case in.backups.backups[i].Status != cloud.BackupCompleted:
			return waitFor(ReasonRestoreSourceInvalid, fmt.Sprintf("The backup %s in restorefrom is %s, not COMPLETED.", rf.Backupid, in.backups.backups[i].Status))
		}
		return restorePointPlan{point: point}
	}
	point.Time, _ = time.Parse(time.RFC3339, rf.Restoretime) // validated
	switch r := in.ranges; {
	case r == nil:
		return restorePointPlan{needRanges: src.ID}
	case r.err != nil:
		return restorePointPlan{cloudErr: r.err}
	case !r.contains(point.Time):
		return waitFor(ReasonRestoreTimeOutOfRange, fmt.Sprintf(
			"restorefrom.restoretime %s lies outside the periods OTC can restore instance %s to (from its oldest kept backup until now).", rf.Restoretime, src.ID))
	}
	return restorePointPlan{point: point}
}

// sourcesNeed is the read of the instances restorefrom.instance names: the one with that id, or
// those with that name.
func sourcesNeed(ref string) need {
	if instanceIDPattern.MatchString(ref) {
		return need{kind: readInstanceByID, id: ref}
	}
	return need{kind: readInstancesName, name: ref}
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

// restorePointText shows a restore point in status.operation.target.
func restorePointText(p cloud.RestorePoint) string {
	if p.BackupID != "" {
		return "backup " + p.BackupID + " of " + p.InstanceID
	}
	return p.InstanceID + " at " + p.Time.UTC().Format(time.RFC3339)
}
