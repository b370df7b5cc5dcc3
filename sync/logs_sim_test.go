package reconcile_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	"github.com/mcsps/rds-lambda-controller/server"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/logsapi"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
	"github.com/mcsps/rds-lambda-controller/test/metacontroller"
	"github.com/mcsps/rds-lambda-controller/test/testutil"
)

// logsCluster runs one Rds object through the Metacontroller stand-in: in process, or with
// overHTTP through the hook server, with the JSON Metacontroller sends.
type logsCluster struct {
	r        *reconcile.Reconciler
	overHTTP bool
	mc       *metacontroller.Object
}

func (k *logsCluster) sync(t *testing.T) {
	t.Helper()
	if k.overHTTP {
		hooks := httptest.NewServer(server.New(server.Options{Reconciler: k.r, Insecure: true /* an authenticated Metacontroller */}))
		defer hooks.Close()
		x, err := k.mc.Post(nil, hooks.URL)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, x.Code, string(x.Body))
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := k.mc.Sync(ctx, k.r)
	require.NoError(t, err)
}

func TestLogsEndToEnd(t *testing.T) {
	for name, overHTTP := range map[string]bool{"in process": false, "over HTTP": true} {
		t.Run(name, func(t *testing.T) { testLogsEndToEnd(t, overHTTP) })
	}
}

func testLogsEndToEnd(t *testing.T, overHTTP bool) {
	clock := otcsim.NewManualClock(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))
	srv := otcsim.NewServer(otcsim.Options{Clock: clock})
	t.Cleanup(srv.Close)
	client := testutil.Login(t, srv, nil)

	id, err := srv.Sim.AddInstance(otcsim.InstanceSpec{Name: reconcile.InstanceName("local", "shop", "orders"), Engine: "MySQL", Version: "8.0"})
	require.NoError(t, err)
	require.NoError(t, srv.Sim.AddErrorLog(id, clock.Now().Add(-20*time.Minute), "ERROR", "Table 'orders' is full"))

	port := intstr.FromInt32(3306)
	k := &logsCluster{
		r:        reconcile.New(reconcile.Config{Cloud: client, Now: clock.Now, JobImage: "ghcr.io/mcsps/rds-lambda-controller:e2e", PasswordKey: secret.New("e2e key")}),
		overHTTP: overHTTP,
		mc: metacontroller.NewRds(v1alpha1.Rds{
			ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: "shop", UID: "uid-orders", Generation: 1},
			Spec: v1alpha1.RdsSpec{
				Datastoretype: "MySQL", Datastoreversion: "8.0", Flavorref: "rds.mysql.n1.large.2", Volumetype: "CLOUDSSD",
				Volumesize: 40, Availabilityzone: "eu-de-01", Region: "eu-de", Vpc: "frank-test", Subnet: "frank-test",
				Securitygroup: "golang", Port: &port, Password: "Sim-Added-Instance-1",
			},
		}),
	}
	k.sync(t) // adopts the instance
	k.sync(t)
	require.Equal(t, id, k.mc.Status().ID)
	srv.Sim.ResetCounters()

	// Requested.
	k.mc.EditRds(func(s *v1alpha1.RdsSpec) {
		s.Logs = &v1alpha1.LogsRequest{Request: "incident-7", Since: "1h", Types: []string{"error"}}
	})
	k.sync(t)
	ls := k.mc.Status().Logs
	require.NotNil(t, ls)
	assert.Equal(t, v1alpha1.LogsStarting, ls.State)
	cred := k.mc.Secrets[ls.Job+"-credentials"]
	require.NotNil(t, cred)
	assert.Zero(t, srv.Sim.Calls(otcsim.OpCreateTemporaryCredential), "no OTC credential is issued")

	// The Job starts; repeated calls change nothing in the cloud.
	for range 3 {
		clock.Advance(5 * time.Second)
		k.sync(t)
	}
	require.Equal(t, v1alpha1.LogsRunning, k.mc.Status().Logs.State)
	job := k.mc.Jobs[ls.Job]
	require.NotNil(t, job)
	assert.Equal(t, []string{"--instance=" + id, "--since=1h", "--lines=200", "--types=error"}, job.Spec.Template.Spec.Containers[0].Args)

	// What the Job's rds-logs does with its Secret: present the capability to the logs port.
	logs := httptest.NewServer(server.NewLogs(server.LogsOptions{Reader: k.r}))
	t.Cleanup(logs.Close)
	read := func(instance string) (int, logsapi.Response) {
		body, err := json.Marshal(logsapi.Request{Instance: instance, Type: "error"})
		require.NoError(t, err)
		req, err := http.NewRequest(http.MethodPost, logs.URL+"/v1/logs", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+string(cred.Data["RDS_LOGS_TOKEN"]))
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var out logsapi.Response
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	code, got := read(id)
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, 2, got.Total, "ours and the simulator's start-up line")
	require.Len(t, got.Errors, 2)
	assert.Contains(t, []string{got.Errors[0].Content, got.Errors[1].Content}, "Table 'orders' is full")
	assert.Equal(t, clock.Now().Add(-time.Hour), got.Start, "the request's window, ending now")
	for key := range cred.Data {
		assert.Contains(t, []string{"RDS_LOGS_TOKEN", "RDS_LOGS_URL"}, key, "no OTC credential, nothing of the controller's login")
	}
	for _, v := range srv.Env() {
		assert.NotContains(t, string(cred.Data["RDS_LOGS_TOKEN"]), v, "the controller's login is not readable in the token")
	}
	status, err := json.Marshal(k.mc.Status())
	require.NoError(t, err)
	assert.NotContains(t, string(status), string(cred.Data["RDS_LOGS_TOKEN"]), "the capability is not in status")

	// Completed: the Secret goes, the Job stays, and goes after the retention.
	job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	clock.Advance(time.Minute)
	k.sync(t)
	assert.Equal(t, v1alpha1.LogsSucceeded, k.mc.Status().Logs.State)
	assert.NotContains(t, k.mc.Secrets, ls.Job+"-credentials")
	assert.Contains(t, k.mc.Jobs, ls.Job)

	clock.Advance(16 * time.Minute)
	code, _ = read(id)
	assert.Equal(t, http.StatusUnauthorized, code, "the capability has expired")

	clock.Advance(time.Hour)
	k.sync(t)
	assert.NotContains(t, k.mc.Jobs, ls.Job, "removed after the retention")
	k.sync(t)
	assert.Empty(t, k.mc.Jobs, "and never returned again")

	assert.Zero(t, srv.Sim.Calls(otcsim.OpCreateTemporaryCredential), "no credential for the request")
	assert.Zero(t, srv.Sim.MutatingCalls(), "and no change in the cloud")
}
