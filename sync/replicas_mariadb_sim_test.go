package sync_test

import (
	"context"
	"database/sql"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	rdssync "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/test/metacontroller"
	"github.com/mcsps/rds-lambda-controller/test/testutil"
)

// TestReadReplicaEndpointReachesMariaDB: a read replica's endpoint reaches a real MariaDB behind the
// simulator (test/mariadb.sh, TEST_MYSQL_*): only the replica, by its OTC name, is backed by the
// server, and a reader logs in at the connection Secret's readerhosts with the Secret's account.
// Without TEST_MYSQL_ADDR it fails, unless -short is given.
func TestReadReplicaEndpointReachesMariaDB(t *testing.T) {
	addr := os.Getenv("TEST_MYSQL_ADDR")
	if addr == "" {
		if testing.Short() {
			t.Skip("end-to-end SQL test: TEST_MYSQL_ADDR is not set and -short is given")
		}
		t.Fatal(`TEST_MYSQL_ADDR is not set: start a throwaway MariaDB with eval "$(bash test/mariadb.sh)" or run bash test/run.sh`)
	}
	rootPassword := os.Getenv("TEST_MYSQL_PASSWORD")

	clock := otcsim.NewManualClock(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))
	replica := rdssync.ReplicaInstanceName("local", "team-a", "shop", "reader")
	srv := otcsim.NewServer(otcsim.Options{Clock: clock, Endpoints: map[string]string{replica: addr}})
	t.Cleanup(srv.Close)
	r := rdssync.New(rdssync.Config{Cloud: testutil.Login(t, srv, nil), Now: clock.Now, CallTimeout: 5 * time.Second})
	mc := metacontroller.NewRds(v1alpha1.Rds{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "team-a", UID: "uid-rr", Generation: 1},
		Spec: v1alpha1.RdsSpec{
			Datastoretype: "MySQL", Datastoreversion: "8.0", Flavorref: "rds.mysql.n1.large.2",
			Volumetype: "CLOUDSSD", Volumesize: 40, Availabilityzone: "eu-de-01", Region: otcsim.Region,
			Vpc: otcsim.SeedVPCName, Subnet: otcsim.SeedSubnetName, Securitygroup: otcsim.SeedSecurityGroupName,
			// The instance's root password is the test server's: OTC replicates the accounts to a replica.
			Password:     rootPassword,
			Readreplicas: []v1alpha1.ReadReplica{{Name: "reader", Flavorref: "rds.mysql.n1.large.2.rr", Availabilityzone: "eu-de-02"}},
		},
	})
	spec := mc.Rds().Spec
	require.Empty(t, rdssync.Validate(&spec), "TEST_MYSQL_PASSWORD must also be a valid OTC root password")

	var conn *corev1.Secret
	for i := 0; ; i++ {
		require.Less(t, i, 40, "the replica is not ACTIVE: %+v", mc.Status().ReadReplicas)
		resp, err := mc.Sync(context.Background(), r)
		require.NoError(t, err)
		for _, c := range resp.Children {
			if s, ok := c.(*corev1.Secret); ok && s.Name == rdssync.ConnectionSecretName("shop") {
				conn = s
			}
		}
		st := mc.Status()
		if len(st.ReadReplicas) == 1 && st.ReadReplicas[0].Status == "ACTIVE" && conn != nil && len(conn.Data[rdssync.KeyReaderHosts]) > 0 {
			break
		}
		clock.Advance(10 * time.Second)
	}
	readers := string(conn.Data[rdssync.KeyReaderHosts])
	assert.Equal(t, addr, readers, "readerhosts is the replica's endpoint")
	assert.NotEqual(t, addr, string(conn.Data[rdssync.KeyHost])+":"+string(conn.Data[rdssync.KeyPort]), "host stays the primary's")
	assert.True(t, slices.ContainsFunc(srv.Sim.Instances(), func(v otcsim.InstanceView) bool { return v.Type == otcsim.TypeReplica && v.Name == replica }))

	cfg := mysql.NewConfig()
	cfg.Net, cfg.Addr, cfg.User, cfg.Passwd = "tcp", readers, string(conn.Data[rdssync.KeyUsername]), string(conn.Data[rdssync.KeyPassword])
	cfg.Timeout, cfg.ReadTimeout = 10*time.Second, 10*time.Second
	connector, err := mysql.NewConnector(cfg)
	require.NoError(t, err)
	db := sql.OpenDB(connector)
	t.Cleanup(func() { db.Close() })
	var one int
	require.NoError(t, db.QueryRowContext(context.Background(), "SELECT 1").Scan(&one), "a reader reaches the server at readerhosts")
	assert.Equal(t, 1, one)
}
