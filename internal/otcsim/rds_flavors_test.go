package otcsim

import (
	"testing"

	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/flavors"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestListFlavors(t *testing.T) {
	e := newEnv(t, Options{})

	all, err := flavors.ListFlavors(e.rds, flavors.ListOpts{DatabaseName: "mysql", VersionName: "8.0"})
	require.NoError(t, err)
	assert.NotEmpty(t, all)
	specs := map[string]flavors.Flavor{}
	for _, f := range all {
		specs[f.SpecCode] = f
	}
	require.Contains(t, specs, "rds.mysql.c2.medium")
	require.Contains(t, specs, "rds.mysql.n1.large.2.ha")
	require.Contains(t, specs, "rds.mysql.n1.large.2.rr")

	f := specs["rds.mysql.n1.large.2.ha"]
	assert.Equal(t, "2", f.VCPUs)
	assert.Equal(t, 4, f.RAM)
	assert.Equal(t, "ha", f.InstanceMode)
	assert.Equal(t, []string{"5.7", "8.0"}, f.VersionName)
	assert.Equal(t, map[string]string{"eu-de-01": "normal", "eu-de-02": "normal", "eu-de-03": "normal"}, f.AzStatus)
	assert.Equal(t, "sellout", specs["rds.mysql.n1.2xlarge.4"].AzStatus["eu-de-03"])

	// The path segment is case-insensitive; spec_code filters.
	one, err := flavors.ListFlavors(e.rds, flavors.ListOpts{DatabaseName: "PostgreSQL", VersionName: "17", SpecCode: "rds.pg.n1.xlarge.4"})
	require.NoError(t, err)
	require.Len(t, one, 1)
	assert.Equal(t, "4", one[0].VCPUs)
	assert.Equal(t, 16, one[0].RAM)

	none, err := flavors.ListFlavors(e.rds, flavors.ListOpts{DatabaseName: "postgresql", VersionName: "9.6"})
	require.NoError(t, err)
	assert.Empty(t, none)

	mssql, err := flavors.ListFlavors(e.rds, flavors.ListOpts{DatabaseName: "sqlserver", VersionName: "2019_EE"})
	require.NoError(t, err)
	assert.NotEmpty(t, mssql)
}

func TestListDatastoresAndStorageTypes(t *testing.T) {
	e := newEnv(t, Options{})
	ds, err := flavors.ListDatastores(e.rds, "PostgreSQL")
	require.NoError(t, err)
	var names []string
	for _, d := range ds {
		names = append(names, d.Name)
	}
	assert.Equal(t, []string{"13", "14", "15", "16", "17"}, names)

	st, err := flavors.ListStorageTypes(e.rds, flavors.ListStorageTypesOpts{DatabaseName: "MySQL", VersionName: "8.0"})
	require.NoError(t, err)
	require.NotEmpty(t, st.StorageType)
	assert.Equal(t, "CLOUDSSD", st.StorageType[0].Name)
	assert.Equal(t, "normal", st.StorageType[0].AzStatus["eu-de-01"])
	for _, x := range st.StorageType {
		if x.Name == "ESSD" {
			assert.Equal(t, "unsupported", x.AzStatus["eu-de-03"], "create refuses ESSD there")
		}
	}

	// The docs' ha_mode filter (the SDK never sends it) is checked.
	var raw flavors.ListStorageTypesResponse
	_, err = e.rds.Get(e.rds.ServiceURL("storage-type", "MySQL")+"?version_name=8.0&ha_mode=ha", &raw, nil)
	require.NoError(t, err)
	assert.Len(t, raw.StorageType, len(st.StorageType))
	_, err = e.rds.Get(e.rds.ServiceURL("storage-type", "MySQL")+"?version_name=8.0&ha_mode=cluster", &raw, nil)
	status, code := rdsErrorCode(t, err)
	assert.Equal(t, 400, status)
	assert.Equal(t, "DBS.200001", code)
}
