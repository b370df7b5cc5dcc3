package otcsim

import (
	"net/http"
	"net/url"
	"testing"
	"time"

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
	assert.Equal(t, "1500", p.Value, "the default of a 2 GB flavor")
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

// TestInstanceParametersCatalog: what an instance reports depends on its engine version (MySQL
// 5.7's query cache is gone in 8.0) and on its flavor's memory (the buffer pool, the connection
// limit); a template, which has no flavor, shows the plain default.
func TestInstanceParametersCatalog(t *testing.T) {
	e := newEnv(t, Options{})
	small := e.createActive(t, createOpts("catalog-small")) // rds.mysql.c2.medium: 2 GB
	bigOpts := createOpts("catalog-big")
	bigOpts.FlavorRef = "rds.mysql.n1.xlarge.4" // 16 GB
	big := e.createActive(t, bigOpts)
	old := createOpts("catalog-57")
	old.Datastore.Version = "5.7"
	v57 := e.createActive(t, old)

	value := func(id, name string) (string, bool) {
		c, err := configurations.GetForInstance(e.rds, id)
		require.NoError(t, err)
		p, ok := paramValue(c, name)
		return p.Value, ok
	}
	smallPool, _ := value(small, "innodb_buffer_pool_size")
	bigPool, _ := value(big, "innodb_buffer_pool_size")
	assert.Equal(t, "1073741824", smallPool, "half of 2 GB")
	assert.Equal(t, "12884901888", bigPool, "three quarters of 16 GB")
	conns, _ := value(big, "max_connections")
	assert.Equal(t, "10000", conns)
	_, ok := value(small, "query_cache_type")
	assert.False(t, ok, "MySQL 8.0 has no query cache")
	qc, ok := value(v57, "query_cache_type")
	assert.True(t, ok)
	assert.Equal(t, "OFF", qc)

	// Setting query_cache_type on 8.0: OTC ignores a name it does not know for the version.
	res, err := configurations.UpdateInstanceConfiguration(e.rds, configurations.UpdateInstanceConfigurationOpts{
		InstanceId: small, Values: map[string]any{"query_cache_type": "ON"},
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"query_cache_type"}, res.IgnoredParams)
	assert.False(t, res.RestartRequired)

	for name, tc := range map[string]struct {
		value string
		ok    bool
	}{
		"empty":           {"", false},
		"list ok":         {"STRICT_TRANS_TABLES,ANSI_QUOTES", true},
		"list bad":        {"STRICT_TRANS_TABLES,NO_SUCH_MODE", false},
		"boolean ok":      {"false", true},
		"boolean bad":     {"yes", false},
		"integer as real": {"10.5", false},
	} {
		param := map[string]string{"list ok": "sql_mode", "list bad": "sql_mode", "boolean ok": "explicit_defaults_for_timestamp", "boolean bad": "explicit_defaults_for_timestamp"}[name]
		if param == "" {
			param = "max_connections"
		}
		_, err := configurations.UpdateInstanceConfiguration(e.rds, configurations.UpdateInstanceConfigurationOpts{
			InstanceId: small, Values: map[string]any{param: tc.value},
		})
		if tc.ok {
			assert.NoError(t, err, name)
			continue
		}
		status, code := rdsErrorCode(t, err)
		assert.Equal(t, http.StatusBadRequest, status, name)
		assert.Equal(t, "DBS.212002", code, name)
	}
}

// TestParametersPendingUntilRestart: a value that needs a restart is reported set at once (the API
// shows no pending state), is pending in the simulator's control view, and stops being pending
// with the next restart; a console change (the control API) is the same change behind the API's
// back; a busy instance refuses a change.
func TestParametersPendingUntilRestart(t *testing.T) {
	e := newEnv(t, Options{EnableControl: true})
	id := e.createActive(t, createOpts("pending-01"))

	res, err := configurations.UpdateInstanceConfiguration(e.rds, configurations.UpdateInstanceConfigurationOpts{
		InstanceId: id, Values: map[string]any{"innodb_buffer_pool_size": "2147483648", "long_query_time": "2"},
	})
	require.NoError(t, err)
	assert.True(t, res.RestartRequired)
	v, ok := e.sim.InstanceParameters(id)
	require.True(t, ok)
	assert.Equal(t, "2147483648", v.Values["innodb_buffer_pool_size"], "shown set at once")
	assert.Equal(t, []string{"innodb_buffer_pool_size"}, v.PendingRestart)

	restart, ignored, err := e.sim.SetInstanceParameters(id, map[string]string{"max_connections": "300", "no_such": "1"})
	require.NoError(t, err)
	assert.False(t, restart)
	assert.Equal(t, []string{"no_such"}, ignored)
	c, err := configurations.GetForInstance(e.rds, id)
	require.NoError(t, err)
	p, _ := paramValue(c, "max_connections")
	assert.Equal(t, "300", p.Value, "the console's change shows in the API")

	_, err = instances.Restart(e.rds, instances.RestartOpts{InstanceId: id})
	require.NoError(t, err)
	_, err = configurations.UpdateInstanceConfiguration(e.rds, configurations.UpdateInstanceConfigurationOpts{
		InstanceId: id, Values: map[string]any{"max_connections": "400"},
	})
	status, _ := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusConflict, status, "no change while the instance restarts")
	e.clock.Advance(10 * time.Minute)
	v, _ = e.sim.InstanceParameters(id)
	assert.Empty(t, v.PendingRestart, "the restart brought the value into effect")
}
