package reconcile_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net"
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
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/test/metacontroller"
	"github.com/mcsps/rds-lambda-controller/test/testutil"
)

// TestReadReplicaEndpointReachesMariaDB: a read replica's endpoint reaches a real MariaDB behind the
// simulator (test/mariadb.sh, TEST_MYSQL_*). The instance and its replica are backed by the server
// under two spellings of its address (localhost and 127.0.0.1, by their OTC names), so that the
// replica's is told from the instance's: a reader logs in at the connection Secret's readerhosts
// with root's account, and a read-only account, made on the instance, at its own Secret's.
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
	host, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1", host, "test/mariadb.sh listens on 127.0.0.1")
	primaryAddr := net.JoinHostPort("localhost", port)

	// A database and a read-only account of a random prefix, dropped afterwards: the server may be
	// shared.
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	prefix := "rr" + hex.EncodeToString(b)
	admin := openDB(t, addr, "root", rootPassword)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := admin.ExecContext(ctx, "DROP USER IF EXISTS '"+prefix+"ro'@'%'")
		assert.NoError(t, err)
		_, err = admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+prefix+"db")
		assert.NoError(t, err)
	})

	clock := otcsim.NewManualClock(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))
	replica := reconcile.ReplicaInstanceName("local", "team-a", "shop", "reader")
	srv := otcsim.NewServer(otcsim.Options{Clock: clock, Endpoints: map[string]string{
		reconcile.InstanceName("local", "team-a", "shop"): primaryAddr,
		replica: addr,
	}})
	t.Cleanup(srv.Close)
	r := reconcile.New(reconcile.Config{Cloud: testutil.Login(t, srv, nil), Now: clock.Now, CallTimeout: 5 * time.Second})
	mc := metacontroller.NewRds(v1alpha1.Rds{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "team-a", UID: "uid-rr", Generation: 1},
		Spec: v1alpha1.RdsSpec{
			Datastoretype: "MySQL", Datastoreversion: "8.0", Flavorref: "rds.mysql.n1.large.2",
			Volumetype: "CLOUDSSD", Volumesize: 40, Availabilityzone: "eu-de-01", Region: otcsim.Region,
			Vpc: otcsim.SeedVPCName, Subnet: otcsim.SeedSubnetName, Securitygroup: otcsim.SeedSecurityGroupName,
			// The instance's root password is the test server's: OTC replicates the accounts to a replica.
			Password:  rootPassword,
			Databases: []string{prefix + "db"},
			Users: []v1alpha1.User{{Name: prefix + "ro", Host: "%", Password: "Read-Only-Passw0rd",
				Privileges: []string{"GRANT SELECT ON " + prefix + "db.* TO '" + prefix + "ro'@'%'"}}},
			Readreplicas: []v1alpha1.ReadReplica{{Name: "reader", Flavorref: "rds.mysql.n1.large.2.rr", Availabilityzone: "eu-de-02"}},
		},
	})
	spec := mc.Rds().Spec
	require.Empty(t, reconcile.Validate(&spec), "TEST_MYSQL_PASSWORD must also be a valid OTC root password")

	var conn, user *corev1.Secret
	for i := 0; ; i++ {
		require.Less(t, i, 40, "the replica is not ACTIVE: %+v", mc.Status().ReadReplicas)
		resp, err := mc.Sync(context.Background(), r)
		require.NoError(t, err)
		for _, c := range resp.Children {
			switch s, _ := c.(*corev1.Secret); {
			case s == nil:
			case s.Name == reconcile.ConnectionSecretName("shop"):
				conn = s
			case s.Name == reconcile.UserSecretName("shop", prefix+"ro", "%"):
				user = s
			}
		}
		st := mc.Status()
		if len(st.ReadReplicas) == 1 && st.ReadReplicas[0].Status == "ACTIVE" && conn != nil && len(conn.Data[reconcile.KeyReaderHosts]) > 0 &&
			user != nil && len(user.Data[reconcile.KeyReaderHosts]) > 0 {
			break
		}
		clock.Advance(10 * time.Second)
	}
	assert.Equal(t, addr, string(conn.Data[reconcile.KeyReaderHosts]), "readerhosts is the replica's endpoint")
	assert.Equal(t, "localhost", string(conn.Data[reconcile.KeyHost]), "host stays the instance's")
	assert.Equal(t, addr, string(user.Data[reconcile.KeyReaderHosts]), "an account's Secret has the replicas too")
	assert.True(t, slices.ContainsFunc(srv.Sim.Instances(), func(v otcsim.InstanceView) bool { return v.Type == otcsim.TypeReplica && v.Name == replica }))

	var one int
	root := openDB(t, string(conn.Data[reconcile.KeyReaderHosts]), string(conn.Data[reconcile.KeyUsername]), string(conn.Data[reconcile.KeyPassword]))
	require.NoError(t, root.QueryRowContext(context.Background(), "SELECT 1").Scan(&one), "a reader reaches the server at readerhosts")
	ro := openDB(t, string(user.Data[reconcile.KeyReaderHosts]), string(user.Data[reconcile.KeyUsername]), string(user.Data[reconcile.KeyPassword]))
	require.NoError(t, ro.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = ?", prefix+"db").Scan(&one),
		"the read-only account reads at its readerhosts")
	assert.Equal(t, 1, one)
}

func openDB(t *testing.T, addr, user, password string) *sql.DB {
	t.Helper()
	cfg := mysql.NewConfig()
	cfg.Net, cfg.Addr, cfg.User, cfg.Passwd = "tcp", addr, user, password
	cfg.Timeout, cfg.ReadTimeout = 10*time.Second, 10*time.Second
	connector, err := mysql.NewConnector(cfg)
	require.NoError(t, err)
	db := sql.OpenDB(connector)
	t.Cleanup(func() { db.Close() })
	return db
}
