package otcsim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAddInstance(t *testing.T) {
	e := newEnv(t, Options{})
	id, err := e.sim.AddInstance(InstanceSpec{
		Name: "preexisting", HA: true, Endpoint: "127.0.0.1:3307", Tags: map[string]string{"owner": "team-a"},
	})
	require.NoError(t, err)
	assert.Zero(t, e.sim.MutatingCalls(), "not an API call")

	in := e.getInstance(t, id)
	assert.Equal(t, StatusActive, in.Status)
	assert.Equal(t, TypeHa, in.Type)
	assert.Equal(t, "rds.mysql.n1.large.2.ha", in.FlavorRef)
	assert.Equal(t, []string{"127.0.0.1"}, in.PrivateIps)
	assert.Equal(t, 3307, in.Port)
	assert.Equal(t, "2026-05-01T10:00:00+0000", in.Created)
	require.Len(t, in.Nodes, 2)
	assert.Equal(t, "team-a", in.Tags[0].Value)

	pg, err := e.sim.AddInstance(InstanceSpec{Name: "pg-existing", Engine: "PostgreSQL", Version: "16"})
	require.NoError(t, err)
	assert.Equal(t, 5432, e.getInstance(t, pg).Port)

	for name, spec := range map[string]InstanceSpec{
		"bad engine":   {Name: "bad-engine", Engine: "Oracle"},
		"bad endpoint": {Name: "bad-endpoint", Endpoint: "localhost"},
		"sold out":     {Name: "sold-out", Flavor: "rds.mysql.n1.2xlarge.4", AZs: []string{"eu-de-03"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := e.sim.AddInstance(spec)
			require.Error(t, err)
		})
	}
	assert.Len(t, e.sim.Instances(), 2)
}
