package otcsim

import (
	"net/http"
	"testing"

	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/instances"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/upgrade"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pgOpts is a single PostgreSQL instance of the given major version.
func pgOpts(name, version string) instances.CreateRdsOpts {
	o := createOpts(name)
	o.Datastore = &instances.Datastore{Type: "PostgreSQL", Version: version}
	o.FlavorRef = "rds.pg.n1.medium.2"
	o.Port = ""
	return o
}

func TestMajorVersionUpgrade(t *testing.T) {
	e := newEnv(t, Options{})
	id := e.createActive(t, pgOpts("pg-major-01", "15"))

	available, err := upgrade.GetAvailableVersion(e.rds, upgrade.GetAvailableVersionOpts{InstanceId: id})
	require.NoError(t, err)
	assert.Equal(t, []string{"16", "17"}, available.AvailableVersions)

	reportID, err := upgrade.PreCheck(e.rds, upgrade.PreCheckOpts{InstanceId: id, TargetVersion: "17"})
	require.NoError(t, err)
	assert.Regexp(t, `^[0-9a-f-]{36}$`, reportID)
	assert.Equal(t, StatusActive, e.getInstance(t, id).Status, "the pre-check changes nothing")

	job, err := upgrade.UpgradeMajorVersion(e.rds, upgrade.UpgradeMajorVersionOpts{InstanceId: id, TargetVersion: "17"})
	require.NoError(t, err)
	assert.NotEmpty(t, job.JobId)
	assert.Equal(t, "15", e.getInstance(t, id).DataStore.Version, "the old version shows while the upgrade runs")
	e.expectTransient(t, id, StatusModifying, e.sim.Options().Durations.Upgrade)
	in := e.getInstance(t, id)
	assert.Equal(t, "17", in.DataStore.Version)
	assert.Equal(t, "17.2", in.DataStore.CompleteVersion)
	assert.Equal(t, 1, e.sim.Calls(OpUpgradeMajorVersion))
	assert.True(t, IsMutating(OpUpgradeMajorVersion))
	assert.False(t, IsMutating(OpMajorVersionPreCheck))

	available, err = upgrade.GetAvailableVersion(e.rds, upgrade.GetAvailableVersionOpts{InstanceId: id})
	require.NoError(t, err)
	assert.Empty(t, available.AvailableVersions, "17 is the newest version")
	assert.NotNil(t, available.AvailableVersions, "an empty list, not null")

	mysql := e.createActive(t, createOpts("mysql-major-01"))
	pg16 := e.createActive(t, pgOpts("pg-major-02", "16"))
	cases := map[string]struct {
		reason string
		id     string
		target string
		status int
		code   string
	}{
		"mysql":          {"major upgrades are PostgreSQL only", mysql, "8.0", 400, "DBS.200086"},
		"downgrade":      {"only newer versions", pg16, "15", 400, "DBS.200001"},
		"same version":   {"only newer versions", pg16, "16", 400, "DBS.200001"},
		"unknown":        {"the version must exist", pg16, "18", 400, "DBS.200001"},
		"unknown id":     {"the instance must exist", "nope", "17", 404, "DBS.200002"},
		"missing target": {"target_version is required", pg16, "", 400, "DBS.200001"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := upgrade.UpgradeMajorVersion(e.rds, upgrade.UpgradeMajorVersionOpts{InstanceId: tc.id, TargetVersion: tc.target})
			status, code := rdsErrorCode(t, err)
			assert.Equal(t, tc.status, status, tc.reason)
			assert.Equal(t, tc.code, code, tc.reason)
		})
	}
	_, err = upgrade.GetAvailableVersion(e.rds, upgrade.GetAvailableVersionOpts{InstanceId: mysql})
	status, code := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "DBS.200086", code)
	assert.Equal(t, "16", e.getInstance(t, pg16).DataStore.Version, "refused upgrades change nothing")
}
