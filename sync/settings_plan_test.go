package reconcile

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// TestPlanSettings is the day-2 decision on the settings changed in place (settings.go) as a
// table: spec, status and the instance in, the plan out, with no cloud.
func TestPlanSettings(t *testing.T) {
	now := metav1.NewTime(t0)
	// OTC starts an instance stopped at t0 in the first maintenance window (02:00-06:00) seven
	// days later: 2026-11-30 02:00 UTC.
	stoppedNow := &v1alpha1.StoppedStatus{Since: now, AutoStart: metav1.NewTime(time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC))}
	stoppedMsg := "The instance is stopped (spec.stopped). OTC starts it by itself in the maintenance window from 2026-11-30T02:00:00Z; the controller then stops it again."
	ha := func(in *cloud.Instance) {
		in.Type, in.Flavor, in.Volume.Type, in.ReplicationMode = "Ha", "rds.mysql.c2.medium.ha", "CLOUDSSD", "async"
	}
	haSpec := func(s *v1alpha1.RdsSpec) {
		s.Hamode, s.Flavorref, s.Availabilityzone, s.Volumetype = "Ha", "rds.mysql.c2.medium.ha", "eu-de-01,eu-de-02", "CLOUDSSD"
	}
	stopOp := &v1alpha1.Operation{Type: OpStop, JobID: "job-1", Generation: 1, Target: cloud.StatusShutdown}
	stop := &change{op: OpStop, target: cloud.StatusShutdown,
		act: action{kind: actStop, instance: "inst-1"}, records: records{stopped: stoppedNow}}
	shutdown := func(in *cloud.Instance) { in.Status = cloud.StatusShutdown }
	tests := []struct {
		reason string
		spec   func(*v1alpha1.RdsSpec)
		status func(st *v1alpha1.RdsStatus)
		inst   func(*cloud.Instance)
		policy *cloud.BackupStrategy
		job    *cloud.Job
		jobErr error
		want   day2Plan
	}{
		{
			reason: "a primary/standby instance moves from CLOUDSSD to ESSD",
			spec:   func(s *v1alpha1.RdsSpec) { haSpec(s); s.Volumetype = "ESSD" },
			inst:   ha,
			want: day2Plan{change: &change{op: OpStorageType, target: "ESSD",
				act: action{kind: actStorageType, instance: "inst-1", storage: cloud.Storage{Engine: "MySQL", InstanceType: "Ha", VolumeType: "ESSD"}}}},
		},
		{
			reason: "a single MySQL instance has no move from CLOUDSSD to ESSD: refused, no call",
			spec:   func(s *v1alpha1.RdsSpec) { s.Volumetype = "ESSD" },
			inst:   func(in *cloud.Instance) { in.Volume.Type = "CLOUDSSD" },
			want: day2Plan{outcome: wontAct(ReasonStorageTypeUnavailable,
				"volumetype ESSD: OTC moves the storage of a single MySQL instance only between CLOUDSSD and Flexible SSD; CLOUDSSD to ESSD needs a primary/standby instance (hamode Ha).")},
		},
		{
			reason: "COMMON storage moves nowhere",
			spec:   func(s *v1alpha1.RdsSpec) { s.Volumetype = "CLOUDSSD" },
			want: day2Plan{outcome: wontAct(ReasonStorageTypeUnavailable,
				"volumetype CLOUDSSD: OTC cannot move COMMON storage to another type; create a new Rds for that, e.g. from a backup (restorefrom).")},
		},
		{
			reason: "the replication mode of a primary/standby instance follows hareplicationmode",
			spec:   func(s *v1alpha1.RdsSpec) { haSpec(s); s.Hareplicationmode = "semisync" },
			inst:   ha,
			want: day2Plan{change: &change{op: OpReplicationMode, target: "semisync",
				act: action{kind: actReplicationMode, instance: "inst-1", mode: "semisync"}}},
		},
		{
			reason: "a single instance has no replication mode to change",
			spec:   func(s *v1alpha1.RdsSpec) { s.Hareplicationmode = "semisync" },
			want:   day2Plan{},
		},
		{
			reason: "a new maintenance window is set at once",
			spec:   func(s *v1alpha1.RdsSpec) { s.Maintenancewindow = "22:00-02:00" },
			inst:   func(in *cloud.Instance) { in.MaintenanceWindow = "02:00-06:00" },
			want: day2Plan{change: &change{target: "maintenance window 22:00-02:00", what: "maintenance window change to 22:00-02:00",
				act: action{kind: actMaintenanceWindow, instance: "inst-1", window: "22:00-02:00"}}},
		},
		{
			reason: "backupperiod with days not known yet: the policy is read first",
			spec:   func(s *v1alpha1.RdsSpec) { s.Backupperiod = "1,3,5" },
			want:   day2Plan{needPolicy: true},
		},
		{
			reason: "backupperiod differs from the days read: the policy is written with them, and status records them",
			spec:   func(s *v1alpha1.RdsSpec) { s.Backupperiod = "5,3,1" },
			policy: &cloud.BackupStrategy{StartTime: "01:00-02:00", KeepDays: 12, Period: "1,2,3,4,5,6,7"},
			want: day2Plan{
				backupPolicy: &v1alpha1.BackupPolicy{StartTime: "01:00-02:00", KeepDays: 12, Period: "1,2,3,4,5,6,7"},
				change: &change{target: "backup policy 01:00-02:00, 12 days, days 1,3,5",
					act:     action{kind: actBackupPolicy, instance: "inst-1", policy: cloud.BackupStrategy{StartTime: "01:00-02:00", KeepDays: 12, Period: "1,3,5"}},
					records: records{backupPolicy: &v1alpha1.BackupPolicy{StartTime: "01:00-02:00", KeepDays: 12, Period: "1,3,5"}}}},
		},
		{
			reason: "days recorded with the policy OTC still lists: nothing to read, nothing to change",
			spec:   func(s *v1alpha1.RdsSpec) { s.Backupperiod = "1,3,5" },
			status: func(st *v1alpha1.RdsStatus) {
				st.BackupPolicy = &v1alpha1.BackupPolicy{StartTime: "01:00-02:00", KeepDays: 12, Period: "1,3,5"}
			},
			want: day2Plan{},
		},
		{
			reason: "a policy changed elsewhere since the days were recorded: read again",
			spec:   func(s *v1alpha1.RdsSpec) { s.Backupperiod = "1,3,5" },
			status: func(st *v1alpha1.RdsStatus) {
				st.BackupPolicy = &v1alpha1.BackupPolicy{StartTime: "03:00-04:00", KeepDays: 12, Period: "1,3,5"}
			},
			want: day2Plan{needPolicy: true},
		},
		{
			reason: "stopped stops a running instance, and status records since when",
			spec:   func(s *v1alpha1.RdsSpec) { s.Stopped = true },
			want:   day2Plan{change: stop},
		},
		{
			reason: "the stop comes after the changes the running instance can take",
			spec:   func(s *v1alpha1.RdsSpec) { s.Stopped, s.Maintenancewindow = true, "22:00-02:00" },
			inst:   func(in *cloud.Instance) { in.MaintenanceWindow = "02:00-06:00" },
			want: day2Plan{change: &change{target: "maintenance window 22:00-02:00", what: "maintenance window change to 22:00-02:00",
				act: action{kind: actMaintenanceWindow, instance: "inst-1", window: "22:00-02:00"}}},
		},
		{
			reason: "OTC started the instance after seven days: it is stopped again, once, a new change",
			spec:   func(s *v1alpha1.RdsSpec) { s.Stopped = true },
			status: func(st *v1alpha1.RdsStatus) {
				st.Stopped = &v1alpha1.StoppedStatus{Since: metav1.NewTime(t0.Add(-8 * 24 * time.Hour))}
			},
			want: day2Plan{change: stop},
		},
		{
			reason: "a stopped instance as the spec asks: Ready says so and when OTC starts it",
			spec:   func(s *v1alpha1.RdsSpec) { s.Stopped = true },
			inst:   shutdown,
			want:   day2Plan{stopped: stoppedNow, ready: ptr.To(notReady(ReasonStopped, stoppedMsg, settled))},
		},
		{
			reason: "the record of an earlier call is kept while the instance stays stopped",
			spec:   func(s *v1alpha1.RdsSpec) { s.Stopped = true },
			status: func(st *v1alpha1.RdsStatus) {
				st.Stopped = &v1alpha1.StoppedStatus{Since: metav1.NewTime(t0.Add(-time.Hour)), AutoStart: stoppedNow.AutoStart}
			},
			inst: shutdown,
			want: day2Plan{stopped: &v1alpha1.StoppedStatus{Since: metav1.NewTime(t0.Add(-time.Hour)), AutoStart: stoppedNow.AutoStart},
				ready: ptr.To(notReady(ReasonStopped, stoppedMsg, settled))},
		},
		{
			reason: "nothing else is changed while the instance is stopped: the difference waits, told",
			spec:   func(s *v1alpha1.RdsSpec) { s.Stopped, s.Volumesize = true, 60 },
			inst:   shutdown,
			want: day2Plan{stopped: stoppedNow, ready: ptr.To(notReady(ReasonStopped, stoppedMsg, settled)),
				outcome: ptr.To(notSynced(ReasonInstanceStopped, "The instance is stopped (spec.stopped); the pending storage growth to 60GB waits until stopped is false.", settled))},
		},
		{
			reason: "stopped false starts a stopped instance before anything else",
			spec:   func(s *v1alpha1.RdsSpec) { s.Volumesize = 60 },
			inst:   shutdown,
			want: day2Plan{stopped: stoppedNow, change: &change{op: OpStart, target: cloud.StatusActive, whenStopped: true,
				act: action{kind: actStart, instance: "inst-1"}}},
		},
		{
			reason: "a stop in flight while OTC still lists the instance ACTIVE: its job is read",
			spec:   func(s *v1alpha1.RdsSpec) { s.Stopped = true },
			status: func(st *v1alpha1.RdsStatus) { st.Operation, st.Stopped = stopOp, stoppedNow },
			want:   day2Plan{needJob: "job-1", stopped: stoppedNow},
		},
		{
			reason: "the stop's job runs: in progress, nothing sent again",
			spec:   func(s *v1alpha1.RdsSpec) { s.Stopped = true },
			status: func(st *v1alpha1.RdsStatus) { st.Operation, st.Stopped = stopOp, stoppedNow },
			job:    &cloud.Job{ID: "job-1", Status: cloud.JobRunning},
			want: day2Plan{stopped: stoppedNow,
				outcome: ptr.To(inProgress(stopOp).underway())},
		},
		{
			reason: "a job OTC has not registered yet still runs",
			spec:   func(s *v1alpha1.RdsSpec) { s.Stopped = true },
			status: func(st *v1alpha1.RdsStatus) { st.Operation, st.Stopped = stopOp, stoppedNow },
			jobErr: cloud.ErrNotFound,
			want: day2Plan{stopped: stoppedNow,
				outcome: ptr.To(inProgress(stopOp).underway())},
		},
		{
			reason: "the stop's job failed: the operation is over, told, and the stop asked again at the next steady look, not in this call (review #19: a change OTC fails every time was sent at every pending resync)",
			spec:   func(s *v1alpha1.RdsSpec) { s.Stopped = true },
			status: func(st *v1alpha1.RdsStatus) { st.Operation, st.Stopped = stopOp, stoppedNow },
			job:    &cloud.Job{ID: "job-1", Status: cloud.JobFailed},
			want: day2Plan{opOver: true,
				failed: ptr.To(notSynced(ReasonChangeFailed, "OTC's job for the stop ended Failed; the change is asked again at the next look.", settled))},
		},
		{
			reason: "a port move whose job failed is named as the move, not by its operation type",
			status: func(st *v1alpha1.RdsStatus) {
				st.Operation = &v1alpha1.Operation{Type: OpPort, JobID: "job-1", Generation: 1, Target: "5433"}
			},
			job: &cloud.Job{ID: "job-1", Status: cloud.JobFailed},
			want: day2Plan{opOver: true,
				failed: ptr.To(notSynced(ReasonChangeFailed, "OTC's job for the move to port 5433 ended Failed; the change is asked again at the next look.", settled))},
		},
		{
			reason: "the stop failed before: asked again",
			spec:   func(s *v1alpha1.RdsSpec) { s.Stopped = true },
			want:   day2Plan{change: stop},
		},
		{
			reason: "a replication mode job completed while OTC still reports the old mode (it falls back to async without a standby): failed, told, not asked again in this call (review #19: a new change at every pending resync)",
			spec:   func(s *v1alpha1.RdsSpec) { haSpec(s); s.Hareplicationmode = "semisync" },
			inst:   ha,
			status: func(st *v1alpha1.RdsStatus) {
				st.Operation = &v1alpha1.Operation{Type: OpReplicationMode, JobID: "job-1", Generation: 1, Target: "semisync"}
			},
			job: &cloud.Job{ID: "job-1", Status: cloud.JobCompleted},
			want: day2Plan{opOver: true,
				failed: ptr.To(notSynced(ReasonChangeFailed, "OTC's job for the replication mode change to semisync completed, but OTC does not show it; the change is asked again at the next look.", settled))},
		},
		{
			reason: "a job that cannot be read fails the step",
			spec:   func(s *v1alpha1.RdsSpec) { s.Stopped = true },
			status: func(st *v1alpha1.RdsStatus) { st.Operation, st.Stopped = stopOp, stoppedNow },
			jobErr: errors.New("no answer"),
			want:   day2Plan{jobErr: errors.New("no answer"), stopped: stoppedNow},
		},
		{
			reason: "OTC stops SQL Server instances not: refused, no call",
			spec:   func(s *v1alpha1.RdsSpec) { s.Stopped, s.Datastoretype = true, v1alpha1.EngineSQLServer },
			want:   day2Plan{outcome: wontAct(ReasonUnsupportedChange, "stopped: OTC stops MySQL and PostgreSQL instances only.")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.reason, func(t *testing.T) {
			spec := sampleSpec()
			if tc.spec != nil {
				tc.spec(&spec)
			}
			var st v1alpha1.RdsStatus
			if tc.status != nil {
				tc.status(&st)
			}
			inst := activeInstance()
			if tc.inst != nil {
				tc.inst(inst)
			}
			got := planDay2(day2Input{spec: &spec, prior: &v1alpha1.RdsStatus{}, st: soFar(&st), inst: inst, uid: "uid-1", generation: 1,
				now: now, policy: tc.policy, job: tc.job, jobErr: tc.jobErr})
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestAutoStart(t *testing.T) {
	cases := []struct {
		reason, window string
		since, want    time.Time
	}{
		{"the window's start on the seventh day, later that day", "02:00-06:00",
			time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC), time.Date(2026, 11, 29, 2, 0, 0, 0, time.UTC)},
		{"the seventh day's window has begun: the next day's", "02:00-06:00",
			time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)},
		{"a window across midnight", "22:00-02:00",
			time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC)},
		{"no window reported: OTC's default", "",
			time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC), time.Date(2026, 11, 29, 2, 0, 0, 0, time.UTC)},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, autoStart(tc.since, tc.window), tc.reason)
	}
}

func TestValidateSettings(t *testing.T) {
	cases := []struct {
		reason string
		spec   func(*v1alpha1.RdsSpec)
		want   []string
	}{
		{"a four-hour window", func(s *v1alpha1.RdsSpec) { s.Maintenancewindow = "22:00-02:00" }, nil},
		{"a two-hour window", func(s *v1alpha1.RdsSpec) { s.Maintenancewindow = "22:00-00:00" },
			[]string{`maintenancewindow "22:00-00:00" is not a four-hour window hh:mm-HH:MM (UTC) with minutes 00, 15, 30 or 45, e.g. 02:00-06:00.`}},
		{"minutes that differ", func(s *v1alpha1.RdsSpec) { s.Maintenancewindow = "02:15-06:00" },
			[]string{`maintenancewindow "02:15-06:00" is not a four-hour window hh:mm-HH:MM (UTC) with minutes 00, 15, 30 or 45, e.g. 02:00-06:00.`}},
		{"days of the week", func(s *v1alpha1.RdsSpec) { s.Backupperiod = "7,1,3" }, nil},
		{"a day twice", func(s *v1alpha1.RdsSpec) { s.Backupperiod = "1,1" },
			[]string{`backupperiod "1,1" is not days of the week 1 (Monday) to 7 (Sunday), comma-separated, e.g. 1,3,5.`}},
		{"day 8", func(s *v1alpha1.RdsSpec) { s.Backupperiod = "8" },
			[]string{`backupperiod "8" is not days of the week 1 (Monday) to 7 (Sunday), comma-separated, e.g. 1,3,5.`}},
		{"a stopped PostgreSQL instance", func(s *v1alpha1.RdsSpec) {
			s.Stopped, s.Datastoretype, s.Datastoreversion, s.Flavorref, s.Port = true, "PostgreSQL", "16", "rds.pg.c2.medium", nil
		}, nil},
		{"a stopped SQL Server instance", func(s *v1alpha1.RdsSpec) {
			s.Stopped, s.Datastoretype, s.Datastoreversion, s.Flavorref, s.Port = true, "SQLServer", "2022_SE", "rds.mssql.c2.medium", nil
		}, []string{"stopped: OTC stops MySQL and PostgreSQL instances only, not SQLServer."}},
	}
	for _, tc := range cases {
		spec := sampleSpec()
		tc.spec(&spec)
		assert.Equal(t, tc.want, Validate(&spec), tc.reason)
	}
}
