package reconcile

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

func TestPlanRestorePoint(t *testing.T) {
	at := t0.Add(-30 * time.Minute) // restoreAt
	source := func(edits ...func(*cloud.Instance)) *cloud.Instance {
		i := activeInstance()
		i.ID, i.Name = restoreSourceID, "source-db"
		for _, e := range edits {
			e(i)
		}
		return i
	}
	untagged := func(i *cloud.Instance) { i.Tags = map[string]string{} }
	otherNamespace := func(i *cloud.Instance) {
		i.Tags = owner{Cluster: "local", Namespace: "rds2", Name: "x", UID: "uid-9"}.tags()
	}
	fromBackup := &v1alpha1.RestoreFrom{Instance: restoreSourceID, Backupid: "backup-1"}
	fromTime := &v1alpha1.RestoreFrom{Instance: "source-db", Restoretime: restoreAt}
	in := func(from *v1alpha1.RestoreFrom, edits ...func(*restorePointInput)) restorePointInput {
		spec := sampleSpec()
		spec.Restorefrom = from
		in := restorePointInput{spec: &spec, me: planMe, sources: []*cloud.Instance{source()}}
		for _, e := range edits {
			e(&in)
		}
		return in
	}
	sources := func(s ...*cloud.Instance) func(*restorePointInput) {
		return func(in *restorePointInput) { in.sources = s }
	}
	readErr := func(err error) func(*restorePointInput) {
		return func(in *restorePointInput) { in.sources, in.sourcesErr = nil, err }
	}
	ownProject := func(in *restorePointInput) { in.ownProject = true }
	backups := func(status string) func(*restorePointInput) {
		return func(in *restorePointInput) {
			in.backups = &backupsRead{backups: []cloud.Backup{{ID: "other", Status: cloud.BackupCompleted}, {ID: "backup-1", Status: status}}}
		}
	}
	inRange := func(in *restorePointInput) {
		in.ranges = &rangesRead{ranges: []cloud.TimeRange{{Start: t0.Add(-24 * time.Hour), End: t0}}}
	}
	invalid := func(message string) restorePointPlan {
		return restorePointPlan{blocked: &blocked{outcome: notSynced(ReasonRestoreSourceInvalid, message, waitsForUser)}}
	}
	refusedPlan := func(string) restorePointPlan {
		return restorePointPlan{blocked: &blocked{tenancy: true, outcome: notSynced(ReasonRestoreSourceRefused,
			`The source instance in restorefrom is refused: no instance of an Rds object of this namespace has that id or name, and only such an instance can be restored from with the controller's credentials.`, waitsForUser)}}
	}
	busy := &cloud.Error{Kind: cloud.KindBusy}

	cases := map[string]struct {
		reason string
		in     restorePointInput
		want   restorePointPlan
	}{
		"from a backup: read the backups": {
			reason: "the backup must be a completed one of the source",
			in:     in(fromBackup),
			want:   restorePointPlan{needBackups: restoreSourceID},
		},
		"from a completed backup": {
			reason: "the point names the source and the backup",
			in:     in(fromBackup, backups(cloud.BackupCompleted)),
			want:   restorePointPlan{point: &cloud.RestorePoint{InstanceID: restoreSourceID, BackupID: "backup-1"}},
		},
		"backup still building": {
			reason: "only a completed backup restores",
			in:     in(fromBackup, backups(cloud.BackupBuilding)),
			want:   invalid("The backup backup-1 in restorefrom is BUILDING, not COMPLETED."),
		},
		"backup of another instance": {
			reason: "the backup must belong to the source",
			in:     in(&v1alpha1.RestoreFrom{Instance: restoreSourceID, Backupid: "backup-2"}, backups(cloud.BackupCompleted)),
			want:   invalid("The backup backup-2 in restorefrom is not a backup of instance " + restoreSourceID + "."),
		},
		"backups unreadable": {
			reason: "a cloud error, like any",
			in:     in(fromBackup, func(in *restorePointInput) { in.backups = &backupsRead{err: busy} }),
			want:   restorePointPlan{cloudErr: busy},
		},
		"from a time: read the periods": {
			reason: "the time must lie within the source's periods",
			in:     in(fromTime),
			want:   restorePointPlan{needRanges: restoreSourceID},
		},
		"from a time within the periods": {
			reason: "the point names the source and the time",
			in:     in(fromTime, inRange),
			want:   restorePointPlan{point: &cloud.RestorePoint{InstanceID: restoreSourceID, Time: at}},
		},
		"time out of range": {
			reason: "checked before anything is created",
			in:     in(&v1alpha1.RestoreFrom{Instance: "source-db", Restoretime: "2026-01-01T00:00:00Z"}, inRange),
			want: restorePointPlan{blocked: &blocked{outcome: notSynced(ReasonRestoreTimeOutOfRange,
				"restorefrom.restoretime 2026-01-01T00:00:00Z lies outside the periods OTC can restore instance "+restoreSourceID+" to (from its oldest kept backup until now).", waitsForUser)}},
		},
		"periods unreadable": {
			reason: "a cloud error, like any",
			in:     in(fromTime, func(in *restorePointInput) { in.ranges = &rangesRead{err: busy} }),
			want:   restorePointPlan{cloudErr: busy},
		},
		"source missing, controller's credentials": {
			reason: "refused like another namespace's: no tenant learns what exists",
			in:     in(&v1alpha1.RestoreFrom{Instance: "nowhere", Backupid: "b-1"}, sources()),
			want:   refusedPlan("nowhere"),
		},
		"source missing by id, controller's credentials": {
			reason: "the same answer for a read by id",
			in:     in(fromBackup, readErr(cloud.ErrNotFound)),
			want:   refusedPlan(restoreSourceID),
		},
		"source of another namespace": {
			reason: "with the controller's credentials only this namespace's instances are sources",
			in:     in(fromBackup, sources(source(otherNamespace))),
			want:   refusedPlan(restoreSourceID),
		},
		"untagged source": {
			reason: "an instance of no Rds object is no source with the controller's credentials",
			in:     in(fromTime, sources(source(untagged))),
			want:   refusedPlan("source-db"),
		},
		"another namespace's instance of the same name does not count": {
			reason: "among instances sharing the name only those of this namespace count",
			in:     in(fromTime, sources(source(otherNamespace), source(func(i *cloud.Instance) { i.ID = "src-2" })), inRange),
			want:   restorePointPlan{point: &cloud.RestorePoint{InstanceID: "src-2", Time: at}},
		},
		"source missing, own project": {
			reason: "the namespace's own project: say that it does not exist",
			in:     in(&v1alpha1.RestoreFrom{Instance: "nowhere", Backupid: "b-1"}, sources(), ownProject),
			want:   invalid(`The source instance "nowhere" in restorefrom does not exist in OTC.`),
		},
		"source missing by id, own project": {
			reason: "the same for a read by id",
			in:     in(fromBackup, readErr(cloud.ErrNotFound), ownProject),
			want:   invalid(`The source instance "` + restoreSourceID + `" in restorefrom does not exist in OTC.`),
		},
		"untagged source, own project": {
			reason: "the namespace's own project holds only what it may use",
			in:     in(fromBackup, sources(source(untagged)), ownProject, backups(cloud.BackupCompleted)),
			want:   restorePointPlan{point: &cloud.RestorePoint{InstanceID: restoreSourceID, BackupID: "backup-1"}},
		},
		"several of the name": {
			reason: "OTC lets instances share a name: ask for the id",
			in:     in(fromTime, sources(source(), source(func(i *cloud.Instance) { i.ID = "src-2" }))),
			want:   invalid(`Several OTC instances are named "source-db": name the source in restorefrom by its id.`),
		},
		"conflict answered": {
			reason: "a conflict of the read says the same",
			in:     in(fromTime, readErr(cloud.ErrConflict)),
			want:   invalid(`Several OTC instances are named "source-db": name the source in restorefrom by its id.`),
		},
		"source unreadable": {
			reason: "a cloud error, like any",
			in:     in(fromTime, readErr(busy)),
			want:   restorePointPlan{cloudErr: busy},
		},
		"source of another engine": {
			reason: "OTC keeps the source's engine",
			in:     in(fromBackup, sources(source(func(i *cloud.Instance) { i.Engine, i.Version = "PostgreSQL", "16" }))),
			want:   invalid("The source instance " + restoreSourceID + " cannot be restored into this one: it runs PostgreSQL, the spec asks for MySQL."),
		},
		"PostgreSQL source of another major version": {
			reason: "for PostgreSQL the major version is the part before the first dot",
			in: in(fromBackup, sources(source(func(i *cloud.Instance) { i.Engine, i.Version = "PostgreSQL", "15.4" })), func(in *restorePointInput) {
				in.spec.Datastoretype, in.spec.Datastoreversion = v1alpha1.EnginePostgreSQL, "16"
			}),
			want: invalid("The source instance " + restoreSourceID + " cannot be restored into this one: it runs version 15.4, the spec asks for 16."),
		},
		"source of another major version, volume too small": {
			reason: "every problem is said at once",
			in:     in(fromTime, sources(source(func(i *cloud.Instance) { i.Version, i.Volume.Size = "5.7", 100 }))),
			want: invalid("The source instance " + restoreSourceID +
				" cannot be restored into this one: it runs version 5.7, the spec asks for 8.0. volumesize 40 is smaller than its 100 GB."),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := slices.Clone(tc.in.sources)
			assert.Equal(t, tc.want, planRestorePoint(tc.in), tc.reason)
			assert.Equal(t, before, tc.in.sources, "the input is not changed")
		})
	}
}
