package reconcile

import (
	"crypto/x509"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/dbusers"
)

// networkInstance is activeInstance with the network OTC reports for it.
func networkInstance() *cloud.Instance {
	inst := activeInstance()
	inst.VpcID, inst.SubnetID, inst.SecurityGroupID = "vpc-1", "sub-1", "sg-1"
	inst.SSL = ptr.To(false)
	return inst
}

// resolvedRefs are sampleSpec's network references resolved to networkInstance's ids.
func resolvedRefs() *v1alpha1.NetworkRefs {
	return &v1alpha1.NetworkRefs{Vpc: "frank-test", VpcID: "vpc-1", Subnet: "frank-test", SubnetID: "sub-1", Securitygroup: "golang", SecurityGroupID: "sg-1"}
}

// TestPlanNetwork is the network step's decision as a table: what cannot change is refused with
// InvalidSpec and no change; the spec's references are resolved only when they are not known.
func TestPlanNetwork(t *testing.T) {
	const key = "2b5a4c3e-8f0a-4d7e-9c1b-0e6f5a4b3c2d"
	invalid := func(msg string) *outcome { return ptr.To(notSynced(ReasonInvalidSpec, msg, waitsForUser)) }
	tests := []struct {
		reason  string
		spec    func(*v1alpha1.RdsSpec)
		status  func(*v1alpha1.RdsStatus)
		inst    func(*cloud.Instance)
		network *cloud.Network
		params  map[string]string
		// passwordDiffers: the spec's root password is not the connection Secret's.
		passwordDiffers bool
		// created: OTC builds the instance, or the last status still records the create.
		created bool
		want    networkPlan
	}{
		{
			reason: "names resolved before need no lookup",
			status: func(st *v1alpha1.RdsStatus) { st.NetworkRefs = resolvedRefs() },
			want:   networkPlan{refs: resolvedRefs()},
		},
		{
			reason: "ids the instance reports need no lookup",
			spec:   func(s *v1alpha1.RdsSpec) { s.Vpc, s.Subnet, s.Securitygroup = "vpc-1", "sub-1", "sg-1" },
			want:   networkPlan{},
		},
		{
			reason: "names never resolved are looked up (an object created before status kept them)",
			want:   networkPlan{needNetwork: true},
		},
		{
			reason:  "once resolved, the names and their ids are recorded",
			network: &cloud.Network{VpcID: "vpc-1", SubnetID: "sub-1", SecurityGroupID: "sg-1"},
			want:    networkPlan{refs: resolvedRefs()},
		},
		{
			reason: "a new security group name is looked up",
			spec:   func(s *v1alpha1.RdsSpec) { s.Securitygroup = "web" },
			status: func(st *v1alpha1.RdsStatus) { st.NetworkRefs = resolvedRefs() },
			want:   networkPlan{refs: resolvedRefs(), needNetwork: true},
		},
		{
			reason:  "and its id recorded for the day-2 change",
			spec:    func(s *v1alpha1.RdsSpec) { s.Securitygroup = "web" },
			status:  func(st *v1alpha1.RdsStatus) { st.NetworkRefs = resolvedRefs() },
			network: &cloud.Network{VpcID: "vpc-1", SubnetID: "sub-1", SecurityGroupID: "sg-2"},
			want: networkPlan{refs: &v1alpha1.NetworkRefs{Vpc: "frank-test", VpcID: "vpc-1", Subnet: "frank-test", SubnetID: "sub-1",
				Securitygroup: "web", SecurityGroupID: "sg-2"}},
		},
		{
			reason: "an instance that reports no network has nothing to compare",
			inst:   func(in *cloud.Instance) { in.VpcID, in.SubnetID, in.SecurityGroupID = "", "", "" },
			want:   networkPlan{},
		},
		{
			reason:  "another VPC is refused: OTC cannot move an instance",
			spec:    func(s *v1alpha1.RdsSpec) { s.Vpc = "other" },
			status:  func(st *v1alpha1.RdsStatus) { st.NetworkRefs = resolvedRefs() },
			network: &cloud.Network{VpcID: "vpc-2", SubnetID: "sub-1", SecurityGroupID: "sg-1"},
			want: networkPlan{stop: true,
				refs:    &v1alpha1.NetworkRefs{Vpc: "other", VpcID: "vpc-2", Subnet: "frank-test", SubnetID: "sub-1", Securitygroup: "golang", SecurityGroupID: "sg-1"},
				outcome: invalid(`vpc "other" is not the instance's VPC vpc-1: OTC cannot move an instance to another VPC; set vpc back, or create a new Rds there (restorefrom copies the data).`)},
		},
		{
			reason: "another subnet given by id is refused without a lookup",
			spec:   func(s *v1alpha1.RdsSpec) { s.Subnet = "sub-2" },
			status: func(st *v1alpha1.RdsStatus) {
				st.NetworkRefs = resolvedRefs()
				st.NetworkRefs.Subnet, st.NetworkRefs.SubnetID = "sub-2", "sub-2"
			},
			want: networkPlan{stop: true,
				refs:    &v1alpha1.NetworkRefs{Vpc: "frank-test", VpcID: "vpc-1", Subnet: "sub-2", SubnetID: "sub-2", Securitygroup: "golang", SecurityGroupID: "sg-1"},
				outcome: invalid(`subnet "sub-2" is not the instance's subnet sub-1: OTC cannot move an instance to another subnet; set subnet back, or create a new Rds there (restorefrom copies the data).`)},
		},
		{
			reason: "another name of the same VPC is no change",
			spec:   func(s *v1alpha1.RdsSpec) { s.Vpc = "vpc-alias" },
			status: func(st *v1alpha1.RdsStatus) {
				st.NetworkRefs = resolvedRefs()
				st.NetworkRefs.Vpc = "vpc-alias"
			},
			want: networkPlan{refs: &v1alpha1.NetworkRefs{Vpc: "vpc-alias", VpcID: "vpc-1", Subnet: "frank-test", SubnetID: "sub-1", Securitygroup: "golang", SecurityGroupID: "sg-1"}},
		},
		{
			reason: "the time zone the instance runs in is no change",
			spec:   func(s *v1alpha1.RdsSpec) { s.Timezone = "UTC+08:00" },
			status: func(st *v1alpha1.RdsStatus) { st.NetworkRefs = resolvedRefs() },
			inst:   func(in *cloud.Instance) { in.TimeZone = "UTC+08:00" },
			want:   networkPlan{refs: resolvedRefs()},
		},
		{
			reason: "another time zone is refused",
			spec:   func(s *v1alpha1.RdsSpec) { s.Timezone = "UTC+01:00" },
			status: func(st *v1alpha1.RdsStatus) { st.NetworkRefs = resolvedRefs() },
			want: networkPlan{refs: resolvedRefs(), stop: true,
				outcome: invalid(`timezone "UTC+01:00" is not the instance's time zone OTC's default (UTC): OTC sets the time zone at create only; set timezone back, or create a new Rds for another time zone.`)},
		},
		{
			reason: "UTC is OTC's default, which it reports as no zone",
			spec:   func(s *v1alpha1.RdsSpec) { s.Timezone = "UTC" },
			status: func(st *v1alpha1.RdsStatus) { st.NetworkRefs = resolvedRefs() },
			want:   networkPlan{refs: resolvedRefs()},
		},
		{
			reason: "a key on an unencrypted instance is refused",
			spec:   func(s *v1alpha1.RdsSpec) { s.Diskencryptionid = key },
			status: func(st *v1alpha1.RdsStatus) { st.NetworkRefs = resolvedRefs() },
			want: networkPlan{refs: resolvedRefs(), stop: true,
				outcome: invalid(`diskencryptionid "` + key + `": the instance's disk is not encrypted, and OTC encrypts a disk at create only; remove diskencryptionid, or create a new Rds with it (restorefrom copies the data).`)},
		},
		{
			reason: "the key that encrypts the disk is no change",
			spec:   func(s *v1alpha1.RdsSpec) { s.Diskencryptionid = key },
			status: func(st *v1alpha1.RdsStatus) { st.NetworkRefs = resolvedRefs() },
			inst:   func(in *cloud.Instance) { in.DiskEncryptionID = key },
			want:   networkPlan{refs: resolvedRefs()},
		},
		{
			reason: "another key is refused",
			spec:   func(s *v1alpha1.RdsSpec) { s.Diskencryptionid = key },
			status: func(st *v1alpha1.RdsStatus) { st.NetworkRefs = resolvedRefs() },
			inst:   func(in *cloud.Instance) { in.DiskEncryptionID = "0b5a4c3e-8f0a-4d7e-9c1b-0e6f5a4b3c2d" },
			want: networkPlan{refs: resolvedRefs(), stop: true,
				outcome: invalid(`diskencryptionid "` + key + `" is not the key 0b5a4c3e-8f0a-4d7e-9c1b-0e6f5a4b3c2d that encrypts the instance's disk: OTC chooses the key at create only; set diskencryptionid back.`)},
		},
		{
			reason: "lowercasetablenames the create asked for is no change",
			spec:   func(s *v1alpha1.RdsSpec) { s.Lowercasetablenames = ptr.To(0) },
			status: func(st *v1alpha1.RdsStatus) { st.NetworkRefs, st.LowerCaseTableNames = resolvedRefs(), ptr.To(0) },
			want:   networkPlan{refs: resolvedRefs()},
		},
		{
			reason: "another lowercasetablenames is refused",
			spec:   func(s *v1alpha1.RdsSpec) { s.Lowercasetablenames = ptr.To(1) },
			status: func(st *v1alpha1.RdsStatus) { st.NetworkRefs, st.LowerCaseTableNames = resolvedRefs(), ptr.To(0) },
			want: networkPlan{refs: resolvedRefs(), stop: true,
				outcome: invalid(`lowercasetablenames 1 is not the instance's 0: OTC sets lower_case_table_names at create only; set it back to 0.`)},
		},
		{
			reason: "without a record of the create, the instance's parameters are read",
			spec:   func(s *v1alpha1.RdsSpec) { s.Lowercasetablenames = ptr.To(1) },
			status: func(st *v1alpha1.RdsStatus) { st.NetworkRefs = resolvedRefs() },
			want:   networkPlan{refs: resolvedRefs(), needParams: true},
		},
		{
			reason: "and what they report is recorded and compared",
			spec:   func(s *v1alpha1.RdsSpec) { s.Lowercasetablenames = ptr.To(0) },
			status: func(st *v1alpha1.RdsStatus) { st.NetworkRefs = resolvedRefs() },
			params: map[string]string{"lower_case_table_names": "1"},
			want: networkPlan{refs: resolvedRefs(), lowerCase: ptr.To(1), stop: true,
				outcome: invalid(`lowercasetablenames 0 is not the instance's 1: OTC sets lower_case_table_names at create only; set it back to 1.`)},
		},
		{
			reason: "another engine is refused",
			spec:   func(s *v1alpha1.RdsSpec) { s.Datastoretype, s.Datastoreversion = "PostgreSQL", "16" },
			status: func(st *v1alpha1.RdsStatus) { st.NetworkRefs = resolvedRefs() },
			want: networkPlan{refs: resolvedRefs(), stop: true,
				outcome: invalid(`datastoretype "PostgreSQL" is not the instance's engine MySQL: OTC cannot change an instance's engine; set it back, or create a new Rds.`)},
		},
		{
			reason: "another AZ for a single instance is refused",
			spec:   func(s *v1alpha1.RdsSpec) { s.Availabilityzone = "eu-de-02" },
			status: func(st *v1alpha1.RdsStatus) { st.NetworkRefs = resolvedRefs() },
			want: networkPlan{refs: resolvedRefs(), stop: true,
				outcome: invalid(`availabilityzone "eu-de-02" is not where the instance runs (eu-de-01): OTC cannot move an instance to other AZs; set it back.`)},
		},
		{
			reason: "the standby's AZ a single instance turning HA adds is the day-2 step's",
			spec: func(s *v1alpha1.RdsSpec) {
				s.Hamode, s.Availabilityzone, s.Flavorref = "Ha", "eu-de-01,eu-de-02", "rds.mysql.c2.medium.ha"
			},
			status: func(st *v1alpha1.RdsStatus) { st.NetworkRefs = resolvedRefs() },
			want:   networkPlan{refs: resolvedRefs()},
		},
		{
			reason:  "until the create is over, the port OTC reports is what it made of the create's",
			status:  func(st *v1alpha1.RdsStatus) { st.NetworkRefs, st.PortRequest = resolvedRefs(), 3306 },
			inst:    func(in *cloud.Instance) { in.Port = 3307 },
			created: true,
			want:    networkPlan{refs: resolvedRefs(), portReported: 3307},
		},
		{
			reason: "once it runs, nothing more is recorded",
			status: func(st *v1alpha1.RdsStatus) { st.NetworkRefs, st.PortRequest = resolvedRefs(), 3306 },
			inst:   func(in *cloud.Instance) { in.Port = 3308 },
			want:   networkPlan{refs: resolvedRefs()},
		},
		{
			reason:          "a changed root password is told, not silently ignored: OTC's is not reset",
			status:          func(st *v1alpha1.RdsStatus) { st.NetworkRefs = resolvedRefs() },
			passwordDiffers: true,
			want: networkPlan{refs: resolvedRefs(), outcome: ptr.To(notSynced(ReasonUnsupportedChange,
				"The root password the spec names is not the instance's, which the Secret my-rds-single-connection holds: the controller does not reset OTC's root password; reset it in OTC and write it into that Secret, or set password (or passwordsecretref's Secret) back.", settled))},
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
			inst := networkInstance()
			if tc.inst != nil {
				tc.inst(inst)
			}
			got := planNetwork(networkInput{spec: &spec, st: soFar(&st), inst: inst, generation: 1, network: tc.network, params: tc.params,
				passwordDiffers: tc.passwordDiffers, connectionSecret: "my-rds-single-connection", created: tc.created})
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestNetworkChanges are the day-2 changes of the security group, the port and SSL, and how
// planDay2 guards them.
func TestNetworkChanges(t *testing.T) {
	port := func(p int) *intstr.IntOrString { return ptr.To(intstr.FromInt32(int32(p))) }
	tests := []struct {
		reason string
		spec   func(*v1alpha1.RdsSpec)
		status func(*v1alpha1.RdsStatus)
		inst   func(*cloud.Instance)
		want   day2Plan
	}{
		{reason: "nothing differs", want: day2Plan{}},
		{
			reason: "a new security group, resolved by the network step, moves the instance",
			spec:   func(s *v1alpha1.RdsSpec) { s.Securitygroup = "web" },
			status: func(st *v1alpha1.RdsStatus) {
				st.NetworkRefs = resolvedRefs()
				st.NetworkRefs.Securitygroup, st.NetworkRefs.SecurityGroupID = "web", "sg-2"
			},
			want: day2Plan{change: &change{op: OpSecurityGroup, target: "sg-2",
				act: action{kind: actSecurityGroup, instance: "inst-1", group: "sg-2"}}},
		},
		{
			reason: "a security group given by id (resolved too: it must exist) moves the instance",
			spec:   func(s *v1alpha1.RdsSpec) { s.Securitygroup = "sg-3" },
			status: func(st *v1alpha1.RdsStatus) {
				st.NetworkRefs = resolvedRefs()
				st.NetworkRefs.Securitygroup, st.NetworkRefs.SecurityGroupID = "sg-3", "sg-3"
			},
			want: day2Plan{change: &change{op: OpSecurityGroup, target: "sg-3",
				act: action{kind: actSecurityGroup, instance: "inst-1", group: "sg-3"}}},
		},
		{
			reason: "a new port moves the database",
			spec:   func(s *v1alpha1.RdsSpec) { s.Port = port(3307) },
			want: day2Plan{change: &change{op: OpPort, target: "3307",
				act: action{kind: actUpdatePort, instance: "inst-1", port: 3307}}},
		},
		{
			reason: "the create's port is no difference while the instance has the port OTC built it with (the simulator's real servers)",
			spec:   func(s *v1alpha1.RdsSpec) { s.Port = port(3306) },
			status: func(st *v1alpha1.RdsStatus) { st.PortRequest, st.PortReported = 3306, 3307 },
			inst:   func(in *cloud.Instance) { in.Port = 3307 },
			want:   day2Plan{},
		},
		{
			reason: "but it is once the port moved since (in the console, or by a change whose answer was lost)",
			spec:   func(s *v1alpha1.RdsSpec) { s.Port = port(3306) },
			status: func(st *v1alpha1.RdsStatus) { st.PortRequest, st.PortReported = 3306, 3307 },
			inst:   func(in *cloud.Instance) { in.Port = 3308 },
			want: day2Plan{change: &change{op: OpPort, target: "3306",
				act: action{kind: actUpdatePort, instance: "inst-1", port: 3306}}},
		},
		{
			reason: "an empty port keeps the instance's",
			spec:   func(s *v1alpha1.RdsSpec) { s.Port = nil },
			inst:   func(in *cloud.Instance) { in.Port = 5000 },
			want:   day2Plan{},
		},
		{
			reason: "ssl on switches SSL",
			spec:   func(s *v1alpha1.RdsSpec) { s.Ssl = ptr.To(true) },
			want: day2Plan{change: &change{op: OpSSL, target: "on",
				act: action{kind: actSwitchSSL, instance: "inst-1", ssl: true}}},
		},
		{
			reason: "ssl as OTC reports it is no change",
			spec:   func(s *v1alpha1.RdsSpec) { s.Ssl = ptr.To(false) },
			want:   day2Plan{},
		},
		{
			reason: "one change per call: the security group first, the port next time",
			spec:   func(s *v1alpha1.RdsSpec) { s.Securitygroup = "sg-3"; s.Port = port(3307) },
			status: func(st *v1alpha1.RdsStatus) {
				st.NetworkRefs = resolvedRefs()
				st.NetworkRefs.Securitygroup, st.NetworkRefs.SecurityGroupID = "sg-3", "sg-3"
			},
			want: day2Plan{change: &change{op: OpSecurityGroup, target: "sg-3",
				act: action{kind: actSecurityGroup, instance: "inst-1", group: "sg-3"}}},
		},
		{
			reason: "a change waits while another runs",
			spec:   func(s *v1alpha1.RdsSpec) { s.Ssl = ptr.To(true) },
			status: func(st *v1alpha1.RdsStatus) {
				st.Operation = &v1alpha1.Operation{Type: OpPort, Target: "3307", Generation: 1}
			},
			inst: func(in *cloud.Instance) { in.Status = cloud.StatusModifyingPort },
			want: day2Plan{outcome: ptr.To(syncedOK(ReasonChangeInProgress, "Moving the database to port 3307, asked by generation 1.", inFlight).underway())},
		},
		{
			reason: "a change waits until the instance is ACTIVE",
			spec:   func(s *v1alpha1.RdsSpec) { s.Ssl = ptr.To(true) },
			inst:   func(in *cloud.Instance) { in.Status = cloud.StatusBackingUp },
			want: day2Plan{outcome: ptr.To(syncedOK(ReasonWaitingForInstance,
				"The pending switch of SSL on waits until the instance is ACTIVE.", inFlight))},
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
				tc.status(&st)
			}
			inst := networkInstance()
			if tc.inst != nil {
				tc.inst(inst)
			}
			got := planDay2(day2Input{spec: &spec, prior: &prior, st: soFar(&st), inst: inst, uid: "uid-1", generation: 1})
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestSettingReached: a security group change ends when OTC lists the group, an SSL switch when it
// lists the setting (OTC may keep the instance ACTIVE meanwhile: settings.go).
func TestSettingReached(t *testing.T) {
	inst := networkInstance()
	assert.False(t, settingReached(&v1alpha1.Operation{Type: OpSecurityGroup, Target: "sg-2", JobID: "job-1"}, inst), "OTC still lists the old group")
	assert.True(t, settingReached(&v1alpha1.Operation{Type: OpSecurityGroup, Target: "sg-1", JobID: "job-1"}, inst), "OTC lists the new group")
	assert.False(t, settingReached(&v1alpha1.Operation{Type: OpSSL, Target: "on"}, inst), "OTC still lists SSL off")
	assert.True(t, settingReached(&v1alpha1.Operation{Type: OpSSL, Target: "off"}, inst), "OTC lists SSL off")
	assert.True(t, settledOp(&v1alpha1.Operation{Type: OpSecurityGroup}), "followed by its job and the listing")
	assert.True(t, settledOp(&v1alpha1.Operation{Type: OpPort}), "followed by its status, then its job and the listing: a failed job ends ACTIVE on the old port")
	assert.False(t, settingReached(&v1alpha1.Operation{Type: OpPort, Target: "3307", JobID: "job-1"}, inst), "OTC still lists the old port")
	assert.True(t, settingReached(&v1alpha1.Operation{Type: OpPort, Target: "3306", JobID: "job-1"}, inst), "OTC lists the new port")
}

// TestSecurityProblems: ssl and the create-only fields are checked before any cloud call.
func TestSecurityProblems(t *testing.T) {
	tests := []struct {
		reason string
		spec   func(*v1alpha1.RdsSpec)
		want   []string
	}{
		{reason: "none set", want: nil},
		{reason: "all set, valid", spec: func(s *v1alpha1.RdsSpec) {
			s.Ssl, s.Timezone, s.Lowercasetablenames, s.Diskencryptionid = ptr.To(true), "UTC+05:45", ptr.To(0), "2b5a4c3e-8f0a-4d7e-9c1b-0e6f5a4b3c2d"
		}},
		{reason: "ssl is MySQL's", spec: func(s *v1alpha1.RdsSpec) { s.Datastoretype, s.Ssl = "PostgreSQL", ptr.To(false) },
			want: []string{"ssl is for MySQL only: OTC switches SSL for MySQL instances alone; remove ssl."}},
		{reason: "a zone name is no offset", spec: func(s *v1alpha1.RdsSpec) { s.Timezone = "Europe/Berlin" },
			want: []string{`timezone "Europe/Berlin" is not a UTC offset such as UTC+08:00 (UTC-12:00 to UTC+14:00).`}},
		{reason: "beyond UTC-12:00", spec: func(s *v1alpha1.RdsSpec) { s.Timezone = "UTC-13:00" },
			want: []string{`timezone "UTC-13:00" is not a UTC offset such as UTC+08:00 (UTC-12:00 to UTC+14:00).`}},
		{reason: "beyond UTC+14:00", spec: func(s *v1alpha1.RdsSpec) { s.Timezone = "UTC+14:30" },
			want: []string{`timezone "UTC+14:30" is not a UTC offset such as UTC+08:00 (UTC-12:00 to UTC+14:00).`}},
		{reason: "UTC-12:00, the first zone, is one", spec: func(s *v1alpha1.RdsSpec) { s.Timezone = "UTC-12:00" }},
		{reason: "UTC+14:00, the last zone, is one", spec: func(s *v1alpha1.RdsSpec) { s.Timezone = "UTC+14:00" }},
		{reason: "UTC alone is one", spec: func(s *v1alpha1.RdsSpec) { s.Timezone = "UTC" }},
		{reason: "SQL Server's zones are Windows names", spec: func(s *v1alpha1.RdsSpec) { s.Datastoretype, s.Timezone = "SQLServer", "UTC+01:00" },
			want: []string{`timezone "UTC+01:00": SQL Server takes Windows time zone names, which this controller does not set yet; remove timezone.`}},
		{reason: "a restore keeps the source's time zone", spec: func(s *v1alpha1.RdsSpec) {
			s.Timezone, s.Restorefrom = "UTC+01:00", &v1alpha1.RestoreFrom{Instance: "src", Backupid: "b1"}
		}, want: []string{`timezone "UTC+01:00" cannot be set with restorefrom: OTC's restore into a new instance takes no time zone, the new instance has the source's; remove timezone.`}},
		{reason: "0 or 1", spec: func(s *v1alpha1.RdsSpec) { s.Lowercasetablenames = ptr.To(2) },
			want: []string{"lowercasetablenames 2 is not 0 or 1."}},
		{reason: "a KMS key id is a UUID", spec: func(s *v1alpha1.RdsSpec) { s.Diskencryptionid = "my-key" },
			want: []string{`diskencryptionid "my-key" is not a KMS key id (a UUID such as 2b5a4c3e-8f0a-4d7e-9c1b-0e6f5a4b3c2d).`}},
	}
	for _, tc := range tests {
		t.Run(tc.reason, func(t *testing.T) {
			spec := sampleSpec()
			if tc.spec != nil {
				tc.spec(&spec)
			}
			assert.Equal(t, tc.want, securityProblems(&spec))
		})
	}
}

// TestDatabasesSessionFollowsSSL: the SQL session to an instance with SSL on is TLS and verifies
// the server with the configured CA (dbusers.VerifyCA); with SSL off it is plain.
func TestDatabasesSessionFollowsSSL(t *testing.T) {
	for _, on := range []bool{false, true} {
		t.Run(onOff(on), func(t *testing.T) {
			e := newDBEnv()
			e.inst.SSL = ptr.To(on)
			spec := usersSpec()
			spec.Users = spec.Users[:1] // no generated password to store first
			spec.Ssl = ptr.To(on)
			e.call(t, spec, v1alpha1.RdsStatus{})
			if !assert.NotEmpty(t, e.rec.calls, "the databases were applied") {
				return
			}
			conn := e.rec.calls[len(e.rec.calls)-1].conn
			if !on {
				assert.Nil(t, conn.TLS, "plain while SSL is off")
				return
			}
			if assert.NotNil(t, conn.TLS, "TLS while SSL is on") {
				assert.NotNil(t, conn.TLS.VerifyPeerCertificate, "the server's chain is verified")
			}
		})
	}
}

// TestDatabasesSessionPostgreSQLVerifiedWithTheCA: a PostgreSQL instance offers TLS whatever its
// spec says; with OTC's CA (--db-ca-file) the session verifies the server with it
// (dbusers.VerifyCA, sslmode=verify-ca), without it pgusers asks for TLS unverified.
func TestDatabasesSessionPostgreSQLVerifiedWithTheCA(t *testing.T) {
	for _, withCA := range []bool{false, true} {
		t.Run(fmt.Sprintf("CA %v", withCA), func(t *testing.T) {
			e := newDBEnv()
			var ca *x509.CertPool
			if withCA {
				ca = x509.NewCertPool()
			}
			e.r = New(Config{Cloud: e.f, Now: func() time.Time { return e.now }, Databases: DatabasesConfig{Apply: e.rec.apply, DriftCheck: e.drift, CA: ca}})
			postgresInstance("15", "rds.pg.c2.medium")(e.inst)
			spec := pgSpec()
			spec.Users = nil
			e.call(t, spec, v1alpha1.RdsStatus{})
			require.NotEmpty(t, e.rec.calls, "the databases were applied")
			conn := e.rec.calls[len(e.rec.calls)-1].conn
			if !withCA {
				assert.Nil(t, conn.TLS, "pgusers' own sslmode=prefer")
				return
			}
			if assert.NotNil(t, conn.TLS, "TLS, verified") {
				assert.NotNil(t, conn.TLS.VerifyPeerCertificate, "the server's chain is verified")
			}
		})
	}
}

// TestUntrustedCertificateOutcome: a refused server says what the operator must look at, and its
// sentence holds for both engines: a certificate no CA of --db-ca-file signs (MySQL with SSL on,
// PostgreSQL with the CA), one the server cannot prove it holds (a replayed certificate), or
// (PostgreSQL, whose instances OTC never runs without SSL) a server that offers no TLS.
func TestUntrustedCertificateOutcome(t *testing.T) {
	for _, err := range []error{
		fmt.Errorf("connect to 10.0.0.1:3306: %w: bad chain", dbusers.ErrUntrusted),
		fmt.Errorf("connect to 10.0.0.1:5432: %w: tls: invalid signature by the server certificate", dbusers.ErrUntrusted),
		fmt.Errorf("connect to 10.0.0.1:5432: %w: the server offers no TLS", dbusers.ErrUntrusted),
	} {
		o := databasesOutcome(err, t0)
		assert.Equal(t, ReasonDatabaseCertificateUntrusted, o.reason, err.Error())
		assert.Contains(t, o.message, "did not prove that it holds a certificate signed by a CA of the controller's --db-ca-file, or it offers no TLS", err.Error())
		assert.Contains(t, o.message, "something other than the instance answers at its address", err.Error())
		assert.Contains(t, o.message, "nothing was sent to it", err.Error())
	}
	o := databasesOutcome(fmt.Errorf("connect to 10.0.0.1:3306: %w: bad chain", dbusers.ErrUntrusted), t0)
	assert.Contains(t, o.message, "--db-ca-file")
	assert.True(t, unreachable(fmt.Errorf("x: %w", dbusers.ErrUntrusted)), "retried after the backoff, not at every call")
}

// TestUnsafeLoginOutcome: a server that asks for the root password in a form it could read is
// named so, with the way out of MySQL's case (SSL), and tried again only after the backoff.
func TestUnsafeLoginOutcome(t *testing.T) {
	o := databasesOutcome(fmt.Errorf("connect to 10.0.0.1:5432: %w: require_auth check failed", dbusers.ErrUnsafeLogin), t0)
	assert.Equal(t, ReasonDatabaseLoginUnsafe, o.reason)
	assert.Contains(t, o.message, "the password was not sent")
	assert.Contains(t, o.message, "turn ssl on")
	assert.True(t, unreachable(fmt.Errorf("x: %w", dbusers.ErrUnsafeLogin)), "retried after the backoff, not at every call")
}
