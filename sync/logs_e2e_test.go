package sync_test

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

	"github.com/mcsps/rds-lambda-controller/server"
	"github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
	"github.com/mcsps/rds-lambda-controller/sync/logsapi"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
	"github.com/mcsps/rds-lambda-controller/test/otcsim"
	"github.com/mcsps/rds-lambda-controller/test/testutil"
)

// logsCluster plays Metacontroller for one Rds object: it feeds each answer's status and children
// back as the next call's observed state. With overHTTP it calls /sync with the JSON Metacontroller
// sends and reads the children from the JSON answer.
type logsCluster struct {
	r        *sync.Reconciler
	overHTTP bool
	parent   v1alpha1.Rds
	secrets  map[string]*corev1.Secret
	jobs     map[string]*batchv1.Job
}

func (k *logsCluster) sync(t *testing.T) {
	t.Helper()
	var children []any
	if k.overHTTP {
		children = k.syncHTTP(t)
	} else {
		req := &hook.Request{Parent: k.parent, Secrets: k.secrets, Jobs: k.jobs, Related: map[string]*corev1.Secret{}, Version: hook.V1}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := k.r.Sync(ctx, req)
		require.NoError(t, err)
		k.parent.Status = *resp.Status.DeepCopy()
		children = resp.Children
	}
	secrets, jobs := map[string]*corev1.Secret{}, map[string]*batchv1.Job{}
	for _, ch := range children {
		switch ch := ch.(type) {
		case *corev1.Secret:
			secrets[ch.Name] = ch.DeepCopy()
		case *batchv1.Job:
			if old := k.jobs[ch.Name]; old != nil {
				jobs[ch.Name] = old // keeps the status the cluster gave it
			} else {
				jobs[ch.Name] = ch.DeepCopy()
			}
		}
	}
	k.secrets, k.jobs = secrets, jobs
}

func (k *logsCluster) syncHTTP(t *testing.T) []any {
	t.Helper()
	body, err := json.Marshal(map[string]any{
		"controller": map[string]any{"spec": map[string]any{"hooks": map[string]any{"sync": map[string]any{"version": "v1"}}}},
		"parent":     k.parent,
		"children":   map[string]any{hook.SecretGroup: k.secrets, hook.JobGroup: k.jobs},
	})
	require.NoError(t, err)
	w := httptest.NewRecorder()
	server.New(server.Options{Reconciler: k.r}).ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/sync", bytes.NewReader(body)))
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	var resp struct {
		Status   v1alpha1.RdsStatus `json:"status"`
		Children []json.RawMessage  `json:"children"`
	}
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &resp))
	k.parent.Status = resp.Status
	var out []any
	for _, raw := range resp.Children {
		var meta metav1.TypeMeta
		require.NoError(t, json.Unmarshal(raw, &meta))
		switch meta.APIVersion + " " + meta.Kind {
		case "v1 Secret":
			var s corev1.Secret
			require.NoError(t, json.Unmarshal(raw, &s))
			out = append(out, &s)
		case "batch/v1 Job":
			var j batchv1.Job
			require.NoError(t, json.Unmarshal(raw, &j))
			out = append(out, &j)
		default:
			t.Fatalf("unexpected child %s", meta)
		}
	}
	return out
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

	id, err := srv.Sim.AddInstance(otcsim.InstanceSpec{Name: sync.InstanceName("local", "shop", "orders"), Engine: "MySQL", Version: "8.0"})
	require.NoError(t, err)
	require.NoError(t, srv.Sim.AddErrorLog(id, clock.Now().Add(-20*time.Minute), "ERROR", "Table 'orders' is full"))

	port := intstr.FromInt32(3306)
	k := &logsCluster{
		r:        sync.New(sync.Config{Cloud: client, Now: clock.Now, JobImage: "ghcr.io/mcsps/rds-lambda-controller:e2e", PasswordKey: secret.New("e2e key")}),
		overHTTP: overHTTP,
		parent: v1alpha1.Rds{
			TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.Kind},
			ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: "shop", UID: "uid-orders", Generation: 1},
			Spec: v1alpha1.RdsSpec{
				Datastoretype: "MySQL", Datastoreversion: "8.0", Flavorref: "rds.mysql.n1.large.2", Volumetype: "CLOUDSSD",
				Volumesize: 40, Availabilityzone: "eu-de-01", Region: "eu-de", Vpc: "frank-test", Subnet: "frank-test",
				Securitygroup: "golang", Port: &port, Password: "Sim-Added-Instance-1",
			},
		},
		secrets: map[string]*corev1.Secret{}, jobs: map[string]*batchv1.Job{},
	}
	k.sync(t) // adopts the instance
	k.sync(t)
	require.Equal(t, id, k.parent.Status.ID)
	srv.Sim.ResetCounters()

	// Requested.
	k.parent.Spec.Logs = &v1alpha1.LogsRequest{Request: "incident-7", Since: "1h", Types: []string{"error"}}
	k.parent.Generation = 2
	k.sync(t)
	ls := k.parent.Status.Logs
	require.NotNil(t, ls)
	assert.Equal(t, v1alpha1.LogsStarting, ls.State)
	cred := k.secrets[ls.Job+"-credentials"]
	require.NotNil(t, cred)
	assert.Zero(t, srv.Sim.Calls(otcsim.OpCreateTemporaryCredential), "no OTC credential is issued")

	// The Job starts; repeated calls change nothing in the cloud.
	for range 3 {
		clock.Advance(5 * time.Second)
		k.sync(t)
	}
	require.Equal(t, v1alpha1.LogsRunning, k.parent.Status.Logs.State)
	job := k.jobs[ls.Job]
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
	status, err := json.Marshal(k.parent.Status)
	require.NoError(t, err)
	assert.NotContains(t, string(status), string(cred.Data["RDS_LOGS_TOKEN"]), "the capability is not in status")

	// Completed: the Secret goes, the Job stays, and goes after the retention.
	job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	clock.Advance(time.Minute)
	k.sync(t)
	assert.Equal(t, v1alpha1.LogsSucceeded, k.parent.Status.Logs.State)
	assert.NotContains(t, k.secrets, ls.Job+"-credentials")
	assert.Contains(t, k.jobs, ls.Job)

	clock.Advance(16 * time.Minute)
	code, _ = read(id)
	assert.Equal(t, http.StatusUnauthorized, code, "the capability has expired")

	clock.Advance(time.Hour)
	k.sync(t)
	assert.NotContains(t, k.jobs, ls.Job, "removed after the retention")
	k.sync(t)
	assert.Empty(t, k.jobs, "and never returned again")

	assert.Zero(t, srv.Sim.Calls(otcsim.OpCreateTemporaryCredential), "no credential for the request")
	assert.Zero(t, srv.Sim.MutatingCalls(), "and no change in the cloud")
}
