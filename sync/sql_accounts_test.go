package reconcile

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// TestSQLLayerIsASeam shows the seam: MySQL and PostgreSQL have a SQL layer each, the message of
// the others names both, and an engine given a layer (a stand-in for SQL Server here) is checked
// and applied through it by the same plan, with nothing else changed.
func TestSQLLayerIsASeam(t *testing.T) {
	assert.Equal(t, "MySQL and PostgreSQL", sqlEngines(), "the EngineNotSupported message names both")
	assert.IsType(t, mysqlAccounts{}, sqlLayers[v1alpha1.EngineMySQL])
	assert.IsType(t, pgAccounts{}, sqlLayers[v1alpha1.EnginePostgreSQL])
	assert.Nil(t, sqlLayers[v1alpha1.EngineSQLServer], "SQL Server has no SQL layer")

	spec := usersSpec()
	spec.Datastoretype = v1alpha1.EngineSQLServer
	in := databasesInput{
		spec: &spec, object: "my-rds-single", instStatus: cloud.StatusActive,
		host: "192.168.0.10", port: 1433, rootPassword: secret.New("A12345678+"),
		related: map[string]*corev1.Secret{},
		secrets: map[string]*corev1.Secret{genSecret: {Data: map[string][]byte{KeyPassword: []byte("stored-Gen-pw1")}}},
		now:     metav1.NewTime(t0), driftCheck: time.Hour,
	}
	p := planDatabases(in)
	require.NotNil(t, p.ready)
	assert.Equal(t, ReasonEngineNotSupported, p.ready.reason, "without a layer")
	assert.Empty(t, validateUsers(&spec), "an engine without a layer is not checked")

	sqlLayers[v1alpha1.EngineSQLServer] = mysqlAccounts{} // the stand-in
	t.Cleanup(func() { delete(sqlLayers, v1alpha1.EngineSQLServer) })
	assert.Equal(t, "MySQL, PostgreSQL and SQLServer", sqlEngines())
	p = planDatabases(in)
	assert.NotNil(t, p.apply, "with a layer, the same plan applies the spec's state")
}
