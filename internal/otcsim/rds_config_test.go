package otcsim

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/opentelekomcloud/gophertelekomcloud/openstack/common/tags"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/configurations"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/instances"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func urlEncode(s string) string { return url.QueryEscape(s) }

func paramValue(c *configurations.Configuration, name string) (configurations.Parameter, bool) {
	for _, p := range c.Parameters {
		if p.Name == name {
			return p, true
		}
	}
	return configurations.Parameter{}, false
}

func TestInstanceConfiguration(t *testing.T) {
	e := newEnv(t, Options{})
	id := e.createActive(t, createOpts("config-01"))

	c, err := configurations.GetForInstance(e.rds, id)
	require.NoError(t, err)
	assert.Equal(t, "mysql", c.DatastoreName)
	assert.Equal(t, "8.0", c.DatastoreVersionName)
	assert.Empty(t, c.ID)
	p, ok := paramValue(c, "max_connections")
	require.True(t, ok)
	assert.Equal(t, "2500", p.Value)
	assert.Equal(t, "integer", p.Type)

	res, err := configurations.UpdateInstanceConfiguration(e.rds, configurations.UpdateInstanceConfigurationOpts{
		InstanceId: id,
		Values:     map[string]any{"max_connections": 500, "character_set_server": "utf8", "no_such_param": "1", "lower_case_table_names": "0"},
	})
	require.NoError(t, err)
	assert.True(t, res.RestartRequired, "character_set_server needs a reboot")
	assert.NotEmpty(t, res.JobId)
	assert.Equal(t, []string{"lower_case_table_names", "no_such_param"}, res.IgnoredParams)

	c, err = configurations.GetForInstance(e.rds, id)
	require.NoError(t, err)
	p, _ = paramValue(c, "max_connections")
	assert.Equal(t, "500", p.Value)

	_, err = configurations.UpdateInstanceConfiguration(e.rds, configurations.UpdateInstanceConfigurationOpts{
		InstanceId: id, Values: map[string]any{"max_connections": "5"},
	})
	status, code := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusBadRequest, status, "below the range")
	assert.Equal(t, "DBS.212002", code)
}

func TestParameterTemplates(t *testing.T) {
	e := newEnv(t, Options{})
	id := e.createActive(t, createOpts("template-01"))

	all, err := configurations.List(e.rds)
	require.NoError(t, err)
	assert.NotEmpty(t, all)

	created, err := configurations.Create(e.rds, configurations.CreateOpts{
		Name: "mysql80-custom", Description: "demo", Values: map[string]string{"long_query_time": "0.5"},
		DataStore: configurations.DataStore{Type: "MySQL", Version: "8.0"},
	})
	require.NoError(t, err)
	assert.Regexp(t, `pr01$`, created.ID)
	assert.True(t, created.UserDefined)

	require.NoError(t, configurations.Update(e.rds, configurations.UpdateOpts{
		ConfigId: created.ID, Values: map[string]string{"max_connections": "800"},
	}))
	got, err := configurations.Get(e.rds, created.ID)
	require.NoError(t, err)
	p, _ := paramValue(got, "max_connections")
	assert.Equal(t, "800", p.Value)

	applied, err := configurations.Apply(e.rds, configurations.ApplyOpts{ConfigId: created.ID, InstanceIDs: []string{id, "nope"}})
	require.NoError(t, err)
	assert.False(t, applied.Success, "one of the instances does not exist")
	require.Len(t, applied.ApplyResults, 2)
	assert.True(t, applied.ApplyResults[0].Success)
	assert.Equal(t, "template-01", applied.ApplyResults[0].InstanceName)

	c, err := configurations.GetForInstance(e.rds, id)
	require.NoError(t, err)
	p, _ = paramValue(c, "long_query_time")
	assert.Equal(t, "0.5", p.Value)

	_, err = configurations.Create(e.rds, configurations.CreateOpts{
		Name: "mysql80-custom", DataStore: configurations.DataStore{Type: "MySQL", Version: "8.0"},
	})
	status, _ := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusConflict, status, "template names are unique")

	require.NoError(t, configurations.Delete(e.rds, created.ID))
	_, err = configurations.Get(e.rds, created.ID)
	status, code := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, "DBS.212001", code)

	// Create checks configuration_id.
	opts := createOpts("with-template")
	opts.ConfigurationId = "00000000000000000000000000000000pr01"
	_, err = instances.Create(e.rds, opts)
	status, code = rdsErrorCode(t, err)
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, "DBS.212001", code)
}

func TestTags(t *testing.T) {
	e := newEnv(t, Options{})
	id := e.createActive(t, createOpts("tagged-01"))

	require.NoError(t, tags.Create(e.rds, "instances", id, []tags.ResourceTag{{Key: "owner", Value: "team-a"}, {Key: "env", Value: "dev"}}).Err)
	require.NoError(t, tags.Create(e.rds, "instances", id, []tags.ResourceTag{{Key: "env", Value: "prod"}}).Err)
	got, err := tags.Get(e.rds, "instances", id).Extract()
	require.NoError(t, err)
	assert.Equal(t, []tags.ResourceTag{{Key: "owner", Value: "team-a"}, {Key: "env", Value: "prod"}}, got)
	assert.Equal(t, []tags.ResourceTag{{Key: "owner", Value: "team-a"}, {Key: "env", Value: "prod"}}, e.getInstance(t, id).Tags)

	require.NoError(t, tags.Delete(e.rds, "instances", id, []tags.ResourceTag{{Key: "owner"}}).Err)
	got, err = tags.Get(e.rds, "instances", id).Extract()
	require.NoError(t, err)
	assert.Equal(t, []tags.ResourceTag{{Key: "env", Value: "prod"}}, got)

	err = tags.Create(e.rds, "instances", id, []tags.ResourceTag{{Key: "bad key!", Value: "x"}}).Err
	status, _ := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, 4, e.sim.Calls(OpTagsAction))
}
