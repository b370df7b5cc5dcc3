package reconcile

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// TestPlanDay2 is the day-2 decision as a table: spec, statuses and the instance in, the plan
// out. No cloud, fake or real, is involved: planDay2 reads only its input.
func TestPlanDay2(t *testing.T) {
	flavors := []cloud.Flavor{
		{SpecCode: "rds.mysql.c2.medium", Mode: "single", VCPUs: "1", RAMGB: 2, AZStatus: map[string]string{"eu-de-01": "normal", "eu-de-02": "normal"}},
		{SpecCode: "rds.mysql.c2.medium.ha", Mode: "ha", VCPUs: "1", RAMGB: 2, AZStatus: map[string]string{"eu-de-01": "normal", "eu-de-02": "normal"}},
		{SpecCode: "rds.mysql.c2.large", Mode: "single", VCPUs: "2", RAMGB: 4, AZStatus: map[string]string{"eu-de-01": "normal"}},
		{SpecCode: "rds.mysql.c2.xlarge", Mode: "single", VCPUs: "4", RAMGB: 8, AZStatus: map[string]string{"eu-de-01": "sellout"}},
	}
	mark := RequestMark("uid-1", "r1")
	tests := []struct {
		reason  string
		spec    func(*v1alpha1.RdsSpec)
		status  func(st, prior *v1alpha1.RdsStatus)
		inst    func(*cloud.Instance)
		flavors []cloud.Flavor
		sent    bool // this process sent the restart
		want    day2Plan
	}{
		{reason: "nothing differs", want: day2Plan{}},
		{
			reason: "a resize needs the flavor list first",
			spec:   func(s *v1alpha1.RdsSpec) { s.Flavorref = "rds.mysql.c2.large" },
			want:   day2Plan{needFlavors: true},
		},
		{
			reason:  "a resize to a flavor on sale",
			spec:    func(s *v1alpha1.RdsSpec) { s.Flavorref = "rds.mysql.c2.large" },
			flavors: flavors,
			want: day2Plan{change: &change{op: OpResize, target: "rds.mysql.c2.large",
				flavor: &flavorNeed{code: "rds.mysql.c2.large", azs: []string{"eu-de-01"}},
				act:    action{kind: actResize, instance: "inst-1", flavor: "rds.mysql.c2.large"}}},
		},
		{
			reason:  "a flavor sold out in the instance's AZ is refused until the spec changes",
			spec:    func(s *v1alpha1.RdsSpec) { s.Flavorref = "rds.mysql.c2.xlarge" },
			flavors: flavors,
			want: day2Plan{outcome: ptr.To(notSynced(ReasonFlavorUnavailable,
				"The flavor rds.mysql.c2.xlarge is not available in eu-de-01 (sellout).", settled))},
		},
		{
			reason:  "a flavor OTC does not offer",
			spec:    func(s *v1alpha1.RdsSpec) { s.Flavorref = "rds.mysql.x9.huge" },
			flavors: flavors,
			want: day2Plan{outcome: ptr.To(notSynced(ReasonFlavorUnavailable,
				"The flavor rds.mysql.x9.huge is not offered for MySQL 8.0.", settled))},
		},
		{
			reason:  "with autopilot on, a larger flavor than flavorref is kept as autopilot's growth",
			spec:    func(s *v1alpha1.RdsSpec) { s.Autopilot = true },
			inst:    func(in *cloud.Instance) { in.Flavor = "rds.mysql.c2.large" },
			flavors: flavors,
			want:    day2Plan{grown: true},
		},
		{
			reason: "a flavor autopilot moved to from the flavorref the spec still names is no difference",
			status: func(st, _ *v1alpha1.RdsStatus) {
				st.Autopilot = &v1alpha1.AutopilotStatus{Flavor: "rds.mysql.c2.large", FlavorFloor: "rds.mysql.c2.medium"}
			},
			inst: func(in *cloud.Instance) { in.Flavor = "rds.mysql.c2.large" },
			want: day2Plan{},
		},
		{
			reason: "storage grows",
			spec:   func(s *v1alpha1.RdsSpec) { s.Volumesize = 60 },
			want: day2Plan{change: &change{op: OpStorage, target: "60GB", whenFull: true,
				act: action{kind: actEnlargeVolume, instance: "inst-1", size: 60}}},
		},
		{
			reason: "storage growth is made while STORAGE FULL: it is the way out",
			spec:   func(s *v1alpha1.RdsSpec) { s.Volumesize = 60; s.Flavorref = "rds.mysql.c2.large" },
			inst:   func(in *cloud.Instance) { in.Status = cloud.StatusStorageFull },
			want: day2Plan{change: &change{op: OpStorage, target: "60GB", whenFull: true,
				act: action{kind: actEnlargeVolume, instance: "inst-1", size: 60}}},
		},
		{
			reason: "a resize waits while STORAGE FULL",
			spec:   func(s *v1alpha1.RdsSpec) { s.Flavorref = "rds.mysql.c2.large" },
			inst:   func(in *cloud.Instance) { in.Status = cloud.StatusStorageFull },
			want: day2Plan{outcome: ptr.To(notSynced(ReasonInstanceUnavailable,
				"The instance is STORAGE FULL in OTC; the pending resize to rds.mysql.c2.large waits until it is ACTIVE again. Grow volumesize to free it.", settled))},
		},
		{
			reason: "a volume never shrinks",
			spec:   func(s *v1alpha1.RdsSpec) { s.Volumesize = 20 },
			want: day2Plan{outcome: ptr.To(notSynced(ReasonUnsupportedChange,
				"volumesize 20 is below the instance's 40 GB: OTC cannot shrink a volume; set volumesize to 40 or more.", settled))},
		},
		{
			reason: "growth below OTC's 10 GB step is no difference",
			spec:   func(s *v1alpha1.RdsSpec) { s.Volumesize = 45 },
			want:   day2Plan{},
		},
		{
			reason: "a FAILED instance takes no change",
			spec:   func(s *v1alpha1.RdsSpec) { s.Volumesize = 60 },
			inst:   func(in *cloud.Instance) { in.Status = cloud.StatusFailed },
			want: day2Plan{outcome: ptr.To(notSynced(ReasonInstanceUnavailable,
				"The instance is FAILED in OTC; the pending storage growth to 60GB waits until it is ACTIVE again.", settled))},
		},
		{
			reason: "a rebooting instance: look again soon",
			spec:   func(s *v1alpha1.RdsSpec) { s.Volumesize = 60 },
			inst:   func(in *cloud.Instance) { in.Status = "REBOOTING" },
			want: day2Plan{outcome: ptr.To(syncedOK(ReasonWaitingForInstance,
				"The pending storage growth to 60GB waits until the instance is ACTIVE.", inFlight))},
		},
		{
			reason: "changes wait for the create",
			spec:   func(s *v1alpha1.RdsSpec) { s.Volumesize = 60 },
			inst:   func(in *cloud.Instance) { in.Status = cloud.StatusBuild },
			want:   day2Plan{outcome: ptr.To(syncedOK(ReasonWaitingForInstance, "Changes wait until the instance is created.", settled))},
		},
		{
			reason: "an operation in flight is followed, nothing else is made",
			spec:   func(s *v1alpha1.RdsSpec) { s.Volumesize = 60 },
			status: func(st, _ *v1alpha1.RdsStatus) {
				st.Operation = &v1alpha1.Operation{Type: OpResize, Target: "rds.mysql.c2.large", Generation: 2}
			},
			want: day2Plan{outcome: ptr.To(syncedOK(ReasonChangeInProgress, "Resizing to rds.mysql.c2.large, asked by generation 2.", inFlight).underway())},
		},
		{
			reason: "a deletion leaves the instance to finalize",
			spec:   func(s *v1alpha1.RdsSpec) { s.Volumesize = 60 },
			want:   day2Plan{},
			status: func(st, _ *v1alpha1.RdsStatus) {
				st.Operation = &v1alpha1.Operation{Type: OpDelete}
			},
		},
		{
			reason: "the backup policy follows the spec",
			spec:   func(s *v1alpha1.RdsSpec) { s.Backupkeepdays = 7 },
			want: day2Plan{change: &change{target: "backup policy 01:00-02:00, 7 days",
				act:     action{kind: actBackupPolicy, instance: "inst-1", policy: cloud.BackupStrategy{StartTime: "01:00-02:00", KeepDays: 7}},
				records: records{backupPolicy: &v1alpha1.BackupPolicy{StartTime: "01:00-02:00", KeepDays: 7}}}},
		},
		{
			reason: "a new tag is recorded in status before it is set",
			spec:   func(s *v1alpha1.RdsSpec) { s.Tags = []v1alpha1.Tag{{Key: "team", Value: "a"}} },
			want:   day2Plan{managedTags: []string{"team"}, pending: true},
		},
		{
			reason: "a recorded tag is set",
			spec:   func(s *v1alpha1.RdsSpec) { s.Tags = []v1alpha1.Tag{{Key: "team", Value: "a"}} },
			status: func(_, prior *v1alpha1.RdsStatus) { prior.ManagedTags = []string{"team"} },
			want: day2Plan{managedTags: []string{"team"}, change: &change{target: "tags team",
				act: action{kind: actSetTags, instance: "inst-1", tags: map[string]string{"team": "a"}}}},
		},
		{
			reason: "a managed tag the spec dropped is removed",
			status: func(st, _ *v1alpha1.RdsStatus) { st.ManagedTags = []string{"team"} },
			inst:   func(in *cloud.Instance) { in.Tags["team"] = "a" },
			want: day2Plan{managedTags: []string{"team"}, change: &change{target: "removal of tags team",
				act: action{kind: actDeleteTags, instance: "inst-1", keys: []string{"team"}}}},
		},
		{
			reason: "a restart request is marked in the cloud first",
			spec:   func(s *v1alpha1.RdsSpec) { s.Restartrequest = "r1" },
			want: day2Plan{change: &change{target: "mark of the restart (tag rds-restart-request)",
				act: action{kind: actSetTags, instance: "inst-1", tags: map[string]string{TagRestartRequest: mark}}}},
		},
		{
			reason: "a marked restart request restarts once, and status records it",
			spec:   func(s *v1alpha1.RdsSpec) { s.Restartrequest = "r1" },
			inst:   func(in *cloud.Instance) { in.Tags[TagRestartRequest] = mark },
			want: day2Plan{change: &change{op: OpRestart, target: "r1",
				act: action{kind: actRestart, instance: "inst-1"}, records: records{restartRequest: "r1"}}},
		},
		{
			reason: "a restart this process sent is recorded, not sent again",
			spec:   func(s *v1alpha1.RdsSpec) { s.Restartrequest = "r1" },
			inst:   func(in *cloud.Instance) { in.Tags[TagRestartRequest] = mark },
			sent:   true,
			want:   day2Plan{restartRequest: "r1"},
		},
		{
			reason: "single to HA adds a standby in the AZ the spec adds",
			spec: func(s *v1alpha1.RdsSpec) {
				s.Hamode, s.Availabilityzone, s.Flavorref = "Ha", "eu-de-01,eu-de-02", "rds.mysql.c2.medium.ha"
			},
			flavors: flavors,
			want: day2Plan{change: &change{op: OpSingleToHA, target: "eu-de-02",
				flavor: &flavorNeed{code: "rds.mysql.c2.medium.ha", ha: true, azs: []string{"eu-de-01", "eu-de-02"}},
				act:    action{kind: actSingleToHA, instance: "inst-1", standby: "eu-de-02"}}},
		},
		{
			reason: "an HA instance never goes back to single",
			inst:   func(in *cloud.Instance) { in.Type = "Ha" },
			want: day2Plan{outcome: ptr.To(notSynced(ReasonUnsupportedChange,
				"hamode Single: OTC cannot turn a primary/standby instance back into a single one; create a new Rds for that.", settled))},
		},
		{
			reason: "a major version is never changed in place",
			spec:   func(s *v1alpha1.RdsSpec) { s.Datastoreversion = "5.7" },
			want: day2Plan{outcome: ptr.To(notSynced(ReasonUnsupportedChange,
				`datastoreversion "5.7" is not of the instance's major version 8.0.28: create a new Rds to change the major version.`, settled))},
		},
		{
			reason: "the first difference is made, and a refused one is still told: one change per call",
			spec:   func(s *v1alpha1.RdsSpec) { s.Volumesize = 60; s.Datastoreversion = "5.7" },
			want: day2Plan{change: &change{op: OpStorage, target: "60GB", whenFull: true,
				act: action{kind: actEnlargeVolume, instance: "inst-1", size: 60}},
				outcome: wontAct(ReasonUnsupportedChange,
					`datastoreversion "5.7" is not of the instance's major version 8.0.28: create a new Rds to change the major version.`)},
		},
	}
	for _, tc := range tests {
		t.Run(tc.reason, func(t *testing.T) {
			spec := sampleSpec()
			if tc.spec != nil {
				tc.spec(&spec)
			}
			var st, prior v1alpha1.RdsStatus
			if tc.status != nil {
				tc.status(&st, &prior)
			}
			inst := activeInstance()
			if tc.inst != nil {
				tc.inst(inst)
			}
			got := planDay2(day2Input{spec: &spec, prior: &prior, st: soFar(&st), inst: inst, uid: "uid-1", generation: 1,
				sentRestart: tc.sent, flavors: tc.flavors})
			assert.Equal(t, tc.want, got)
		})
	}
}
