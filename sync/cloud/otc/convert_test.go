package otc

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	golangsdk "github.com/opentelekomcloud/gophertelekomcloud"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/common/tags"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/backups"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/instances"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

func TestCreateOpts(t *testing.T) {
	cases := map[string]struct {
		in   cloud.CreateInstanceOpts
		want string // the request body's JSON
	}{
		"single, defaults": {
			in: cloud.CreateInstanceOpts{
				Name: "pg-demo-01", Engine: "PostgreSQL", Version: "15", Flavor: "rds.pg.n1.large.2",
				VolumeType: "CLOUDSSD", VolumeSize: 100, AvailabilityZones: []string{"eu-de-01"},
				VpcID: "v", SubnetID: "s", SecurityGroupID: "g", Password: secret.New("Postgres!120521"),
			},
			want: `{"name":"pg-demo-01","datastore":{"type":"PostgreSQL","version":"15"},"password":"Postgres!120521",
				"flavor_ref":"rds.pg.n1.large.2","volume":{"type":"CLOUDSSD","size":100},"region":"eu-de",
				"availability_zone":"eu-de-01","vpc_id":"v","subnet_id":"s","security_group_id":"g"}`,
		},
		"ha with port and backups": {
			in: cloud.CreateInstanceOpts{
				Name: "pg-demo-01", Engine: "PostgreSQL", Version: "15", Flavor: "rds.pg.n1.large.2.ha",
				VolumeType: "CLOUDSSD", VolumeSize: 100, Region: "eu-nl", AvailabilityZones: []string{"eu-nl-01", "eu-nl-02"},
				VpcID: "v", SubnetID: "s", SecurityGroupID: "g", Port: 8635, Password: secret.New("pw"),
				BackupStrategy: &cloud.BackupStrategy{StartTime: "08:15-09:15", KeepDays: 7},
				HAMode:         "ha", ReplicationMode: "async",
			},
			want: `{"name":"pg-demo-01","datastore":{"type":"PostgreSQL","version":"15"},"password":"pw",
				"ha":{"mode":"ha","replication_mode":"async"},"port":"8635",
				"backup_strategy":{"start_time":"08:15-09:15","keep_days":7},
				"flavor_ref":"rds.pg.n1.large.2.ha","volume":{"type":"CLOUDSSD","size":100},"region":"eu-nl",
				"availability_zone":"eu-nl-01,eu-nl-02","vpc_id":"v","subnet_id":"s","security_group_id":"g"}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b, err := json.Marshal(createOpts(tc.in, "eu-de"))
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(b))
		})
	}
}

func TestToInstance(t *testing.T) {
	in := instances.InstanceResponse{
		Id: "i1in01", Name: "pg", Status: "ACTIVE", Type: "Ha", Port: 8635, Region: "eu-de",
		PrivateIps: []string{"192.168.0.142"},
		DataStore:  instances.Datastore{Type: "PostgreSQL", Version: "15", CompleteVersion: "15.4"},
		FlavorRef:  "rds.pg.n1.large.2.ha", Volume: instances.Volume{Type: "CLOUDSSD", Size: 100},
		VpcId: "v", SubnetId: "s", SecurityGroupId: "g", Ha: instances.Ha{ReplicationMode: "async"},
		BackupStrategy: instances.BackupStrategy{StartTime: "08:15-09:15", KeepDays: 7}, MaintenanceWindow: "22:00-02:00",
		Nodes: []instances.Nodes{
			{Id: "n1no01", Name: "pg_node0", Role: "master", Status: "ACTIVE", AvailabilityZone: "eu-de-01"},
			{Id: "n2no01", Name: "pg_node1", Role: "slave", Status: "ACTIVE", AvailabilityZone: "eu-de-02"},
		},
		Tags:    []tags.ResourceTag{{Key: "owner", Value: "team-a"}},
		Created: "2018-08-20T02:33:49+0800",
	}
	// Created is in UTC, whatever offset OTC writes: the shared view keeps the instant alone, and
	// an instance it serves must not differ from one read fresh (sync/cloud/view/packed.go).
	assert.Equal(t, &cloud.Instance{
		ID: "i1in01", Name: "pg", Status: "ACTIVE", Type: "Ha", Engine: "PostgreSQL", Version: "15", CompleteVersion: "15.4",
		Flavor: "rds.pg.n1.large.2.ha", Volume: cloud.Volume{Type: "CLOUDSSD", Size: 100}, PrivateIPs: []string{"192.168.0.142"},
		Port: 8635, Region: "eu-de", VpcID: "v", SubnetID: "s", SecurityGroupID: "g", ReplicationMode: "async",
		BackupStrategy: cloud.BackupStrategy{StartTime: "08:15-09:15", KeepDays: 7}, MaintenanceWindow: "22:00-02:00",
		Nodes: []cloud.Node{
			{ID: "n1no01", Name: "pg_node0", Role: "master", Status: "ACTIVE", AvailabilityZone: "eu-de-01"},
			{ID: "n2no01", Name: "pg_node1", Role: "slave", Status: "ACTIVE", AvailabilityZone: "eu-de-02"},
		},
		Tags:    map[string]string{"owner": "team-a"},
		Created: time.Date(2018, 8, 19, 18, 33, 49, 0, time.UTC),
	}, toInstance(in))
}

func TestToJob(t *testing.T) {
	reason := "Create failed:\n  quota\texceeded"
	got := toJob(golangsdk.Job{Id: "j", Name: "CreateMysqlSingleHAInstance", Status: "Failed", Instance: golangsdk.RDSJobInstance{Id: "i"}, FailReason: &reason})
	assert.Equal(t, &cloud.Job{ID: "j", Name: "CreateMysqlSingleHAInstance", Status: "Failed", InstanceID: "i", FailReason: "Create failed: quota exceeded"}, got)
	assert.Empty(t, toJob(golangsdk.Job{Id: "j", Status: "Running"}).FailReason, "fail_reason null")
}

func TestToBackup(t *testing.T) {
	got := toBackup(backups.Backup{
		ID: "b1br01", InstanceID: "i", Name: "manual-1", Type: "manual", Size: 2803, Status: backups.StatusCompleted,
		BeginTime: "2018-08-06T12:41:14+0800", EndTime: "2018-08-06T12:43:14+0800",
	})
	assert.Equal(t, "COMPLETED", got.Status)
	assert.Equal(t, 2803, got.SizeKB)
	assert.True(t, got.Begin.Equal(time.Date(2018, 8, 6, 4, 41, 14, 0, time.UTC)))
	assert.Equal(t, 2*time.Minute, got.End.Sub(got.Begin))
}

func TestParseTime(t *testing.T) {
	want := time.Date(2026, 5, 1, 10, 41, 14, 0, time.UTC)
	for _, s := range []string{"2026-05-01T10:41:14+0000", "2026-05-01T10:41:14Z", "2026-05-01T12:41:14+02:00", "2026-05-01T10:41:14"} {
		assert.True(t, parseTime(s).Equal(want), s)
	}
	assert.True(t, parseTime("").IsZero())
	assert.True(t, parseTime("yesterday").IsZero())
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	cases := map[string]time.Duration{
		"":       0,
		"12":     12 * time.Second,
		"0":      0,
		"-3":     0,
		"soon":   0,
		"999999": maxRetryAfter,
		now.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second,
		now.Add(-time.Minute).Format(http.TimeFormat):     0,
	}
	for in, want := range cases {
		assert.Equal(t, want, parseRetryAfter(in, now), in)
	}
}

func TestPick(t *testing.T) {
	type item struct{ id, name string }
	key := func(i item) ([]string, string) { return []string{i.id}, i.name }
	items := []item{{"id-1", "net"}, {"id-2", "dup"}, {"id-3", "dup"}, {"id-4", "id-1"}}
	cases := map[string]struct {
		ref     string
		want    string
		wantErr string
	}{
		"by id":           {ref: "id-2", want: "id-2"},
		"by name":         {ref: "net", want: "id-1"},
		"id wins":         {ref: "id-1", want: "id-1"},
		"ambiguous":       {ref: "dup", wantErr: `Op: Invalid: VPC name "dup" is ambiguous in X: 2 match, give the id`},
		"missing":         {ref: "nope", wantErr: `Op: Invalid: VPC "nope" not found in X`},
		"case sensitive":  {ref: "NET", wantErr: `Op: Invalid: VPC "NET" not found in X`},
		"no partial name": {ref: "ne", wantErr: `Op: Invalid: VPC "ne" not found in X`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := pick("Op", "VPC", tc.ref, " in X", items, key)
			if tc.wantErr != "" {
				require.EqualError(t, err, tc.wantErr)
				assert.Equal(t, cloud.KindInvalid, cloud.KindOf(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got.id)
		})
	}
}

func TestCheckFilter(t *testing.T) {
	assert.NoError(t, checkFilter("Op", "instance id", "abcin01"))
	for _, bad := range []string{"", "*", "*abc"} {
		err := checkFilter("Op", "instance id", bad)
		assert.Equal(t, cloud.KindInvalid, cloud.KindOf(err), "%q would list fuzzily or everything", bad)
	}
}

func TestVolumeCode(t *testing.T) {
	cases := []struct {
		reason string
		in     cloud.Storage
		want   string
		ok     bool
	}{
		{"a primary/standby MySQL instance to ESSD", cloud.Storage{Engine: "MySQL", InstanceType: "Ha", VolumeType: "ESSD"}, "rds.mysql.volume.essd.ha", true},
		{"a single SQL Server instance to CLOUDSSD", cloud.Storage{Engine: "SQLServer", InstanceType: "Single", VolumeType: "CLOUDSSD"}, "rds.mssql.volume.cloudssd", true},
		{"a PostgreSQL read replica", cloud.Storage{Engine: "PostgreSQL", InstanceType: "Replica", VolumeType: "ESSD"}, "rds.pg.volume.essd.rr", true},
		{"an engine OTC has no code for", cloud.Storage{Engine: "Oracle", InstanceType: "Ha", VolumeType: "ESSD"}, "", false},
		{"no type", cloud.Storage{Engine: "MySQL", InstanceType: "Ha"}, "", false},
	}
	for _, tc := range cases {
		got, ok := volumeCode(tc.in)
		assert.Equal(t, tc.want, got, tc.reason)
		assert.Equal(t, tc.ok, ok, tc.reason)
	}
}
