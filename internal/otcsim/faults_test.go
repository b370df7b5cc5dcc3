package otcsim

import (
	"errors"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	golangsdk "github.com/opentelekomcloud/gophertelekomcloud"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/instances"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFaultStatus(t *testing.T) {
	e := newEnv(t, Options{})
	e.sim.AddFault(Fault{Op: OpListInstances, Kind: FaultStatus, Count: 1})
	e.sim.AddFault(Fault{Op: OpGetJob, Kind: FaultStatus, Status: http.StatusServiceUnavailable})

	_, err := instances.List(e.rds, instances.ListOpts{})
	var e500 golangsdk.ErrDefault500
	require.ErrorAs(t, err, &e500)
	assert.JSONEq(t, `{"error_code":"DBS.108000","error_msg":"System error."}`, string(e500.Body))

	_, err = instances.List(e.rds, instances.ListOpts{})
	require.NoError(t, err, "Count 1 fires once")

	_, err = e.getJob(t, "whatever")
	assert.IsType(t, golangsdk.ErrDefault503{}, err)
	assert.Equal(t, 2, e.sim.Calls(OpListInstances))

	e.sim.ClearFaults()
	assert.Empty(t, e.sim.Faults())
}

func TestFaultBadGatewayIsRetriedOnceBySDK(t *testing.T) {
	e := newEnv(t, Options{})
	e.sim.AddFault(Fault{Op: OpListInstances, Kind: FaultStatus, Status: http.StatusBadGateway, Count: 1})
	_, err := instances.List(e.rds, instances.ListOpts{})
	require.NoError(t, err)
	assert.Equal(t, 2, e.sim.Calls(OpListInstances))
}

func TestFaultThrottle(t *testing.T) {
	e := newEnv(t, Options{})
	e.sim.AddFault(Fault{Op: OpCreateInstance, Kind: FaultThrottle, RetryAfter: 3 * time.Second, Count: 1})

	_, err := instances.Create(e.rds, createOpts("throttled"))
	var e429 golangsdk.ErrDefault429
	require.ErrorAs(t, err, &e429)
	assert.Contains(t, string(e429.Body), `"APIGW.0308"`)
	assert.Empty(t, e.sim.Instances(), "a throttled call performs nothing")

	// IAM throttles in its own style, with a Retry-After header.
	e.sim.AddFault(Fault{Op: OpCreateToken, Kind: FaultThrottle, RetryAfter: 3 * time.Second, Count: 1})
	resp, err := http.Post(e.srv.AuthURL()+"/auth/tokens", "application/json", nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, "3", resp.Header.Get("Retry-After"))
	var body struct {
		Code  string `json:"error_code"`
		Error struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	require.NoError(t, decodeJSON(resp, &body))
	assert.Equal(t, "IAM.0012", body.Code)
	assert.Equal(t, 429, body.Error.Code)
}

func TestFaultLatency(t *testing.T) {
	e := newEnv(t, Options{})
	e.sim.AddFault(Fault{Op: OpListInstances, Kind: FaultLatency, Delay: 80 * time.Millisecond})
	start := time.Now()
	_, err := instances.List(e.rds, instances.ListOpts{})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(start), 80*time.Millisecond)
}

func TestOptionsLatency(t *testing.T) {
	e := newEnv(t, Options{Latency: 30 * time.Millisecond})
	start := time.Now()
	_, err := instances.List(e.rds, instances.ListOpts{})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(start), 30*time.Millisecond)
}

func TestFaultHang(t *testing.T) {
	t.Run("until the client gives up", func(t *testing.T) {
		e := newEnv(t, Options{})
		e.sim.AddFault(Fault{Op: OpListInstances, Kind: FaultHang})
		e.provider.HTTPClient.Timeout = 100 * time.Millisecond
		_, err := instances.List(e.rds, instances.ListOpts{})
		require.Error(t, err)
		assert.True(t, isTimeout(err), "the client's deadline ended the call: %v", err)
	})
	t.Run("until the cap, then the connection closes", func(t *testing.T) {
		e := newEnv(t, Options{})
		e.sim.AddFault(Fault{Op: OpListInstances, Kind: FaultHang, Delay: 50 * time.Millisecond})
		_, err := instances.List(e.rds, instances.ListOpts{})
		require.Error(t, err)
		assert.False(t, isTimeout(err), "got %v", err)
	})
	t.Run("Close releases held requests", func(t *testing.T) {
		srv := NewServer(Options{Clock: NewManualClock(t0)})
		provider := login(t, srv)
		provider.HTTPClient.Timeout = 10 * time.Second
		rds, err := openstack.NewRDSV3(provider, golangsdk.EndpointOpts{})
		require.NoError(t, err)
		srv.Sim.AddFault(Fault{Kind: FaultHang})
		done := make(chan error)
		go func() {
			_, err := instances.List(rds, instances.ListOpts{})
			done <- err
		}()
		require.Eventually(t, func() bool { return srv.Sim.Calls(OpListInstances) == 1 }, 2*time.Second, 5*time.Millisecond)
		srv.Close()
		select {
		case err := <-done:
			require.Error(t, err)
		case <-time.After(3 * time.Second):
			t.Fatal("Close did not release the hanging request")
		}
	})
}

func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

func TestFaultCommitThenDrop(t *testing.T) {
	e := newEnv(t, Options{})
	e.sim.AddFault(Fault{Op: OpCreateInstance, Kind: FaultCommitThenDrop, Count: 1})

	_, err := instances.Create(e.rds, createOpts("dropped-01"))
	require.Error(t, err, "the client sees no answer")
	assert.Len(t, e.sim.Instances(), 1, "but the instance was created")

	// NOTE: a naive retry with the same name makes a second, billed instance: OTC lets
	// instances share a name. A client must look the lost one up before it creates again.
	_, err = instances.Create(e.rds, createOpts("dropped-01"))
	require.NoError(t, err)
	res := mustList(t, e, instances.ListOpts{Name: "dropped-01"})
	assert.Equal(t, 2, res.TotalCount)
	assert.Equal(t, 2, e.sim.MutatingCalls())
}

func TestFaultCommitThenDropUniqueNames(t *testing.T) {
	e := newEnv(t, Options{UniqueNames: true})
	e.sim.AddFault(Fault{Op: OpCreateInstance, Kind: FaultCommitThenDrop, Count: 1})

	_, err := instances.Create(e.rds, createOpts("dropped-01"))
	require.Error(t, err, "the client sees no answer")
	assert.Len(t, e.sim.Instances(), 1, "but the instance was created")

	// In the strict mode a naive retry with the same name meets the instance it lost.
	_, err = instances.Create(e.rds, createOpts("dropped-01"))
	status, code := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusConflict, status)
	assert.Equal(t, "DBS.200022", code)

	res := mustList(t, e, instances.ListOpts{Name: "dropped-01"})
	assert.Equal(t, 1, res.TotalCount)
	assert.Equal(t, 2, e.sim.MutatingCalls())
}

func TestFaultRateIsSeeded(t *testing.T) {
	outcomes := func() []bool {
		e := newEnv(t, Options{Seed: 42})
		e.sim.AddFault(Fault{Kind: FaultStatus, Rate: 0.5}) // any operation
		var out []bool
		for range 20 {
			_, err := instances.List(e.rds, instances.ListOpts{})
			out = append(out, err == nil)
		}
		return out
	}
	first, second := outcomes(), outcomes()
	assert.Equal(t, first, second, "the same seed fails the same calls")
	assert.Contains(t, first, true)
	assert.Contains(t, first, false)
}

// TestOperations: the operations a fault can name are those requests are counted under, the
// ones a route tells apart by the body included.
func TestOperations(t *testing.T) {
	ops := Operations()
	assert.True(t, slices.IsSorted(ops))
	assert.Equal(t, len(ops), len(slices.Compact(slices.Clone(ops))), "no duplicates")
	for _, op := range []string{OpCreateInstance, OpRestoreToNew, OpResize, OpEnlargeVolume, OpInstanceAction, OpGetJob, OpCreateToken, OpDeleteAlarm} {
		assert.Contains(t, ops, op)
	}
	for op := range mutatingOps {
		assert.Contains(t, ops, op, "every mutating operation is served")
	}
}

func TestParseFault(t *testing.T) {
	cases := map[string]struct {
		spec    string
		want    Fault
		wantErr bool
	}{
		"commit drop with rate":  {spec: "CreateInstance:commit-drop:rate=0.5", want: Fault{Op: "CreateInstance", Kind: FaultCommitThenDrop, Rate: 0.5}},
		"any op status":          {spec: "*:status:status=503,count=2", want: Fault{Kind: FaultStatus, Status: 503, Count: 2}},
		"throttle":               {spec: "CreateToken:throttle:retry-after=2s", want: Fault{Op: "CreateToken", Kind: FaultThrottle, RetryAfter: 2 * time.Second}},
		"retry-after in seconds": {spec: "CreateToken:throttle:retry-after=7", want: Fault{Op: "CreateToken", Kind: FaultThrottle, RetryAfter: 7 * time.Second}},
		"restore is an op":       {spec: "RestoreToNew:status", want: Fault{Op: OpRestoreToNew, Kind: FaultStatus}},
		"resize is an op":        {spec: "Resize:hang", want: Fault{Op: OpResize, Kind: FaultHang}},
		"unknown op":             {spec: "Bogus:status", wantErr: true},
		"op in the wrong case":   {spec: "createinstance:status", wantErr: true},
		"bad retry-after":        {spec: "CreateToken:throttle:retry-after=soon", wantErr: true},
		"latency":                {spec: "ListInstances:latency:delay=150ms", want: Fault{Op: "ListInstances", Kind: FaultLatency, Delay: 150 * time.Millisecond}},
		"hang":                   {spec: "GetJob:hang", want: Fault{Op: "GetJob", Kind: FaultHang}},
		"unknown kind":           {spec: "GetJob:explode", wantErr: true},
		"bad rate":               {spec: "GetJob:status:rate=2", wantErr: true},
		"unknown key":            {spec: "GetJob:status:colour=red", wantErr: true},
		"no kind":                {spec: "GetJob", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseFault(tc.spec)
			if tc.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestFaultsArePerRoute checks that a fault hits only its operation, and that every service
// throttles with a Retry-After header and its own error body.
func TestFaultsArePerRoute(t *testing.T) {
	e := newEnv(t, Options{})
	e.sim.AddFault(Fault{Op: OpCreateInstance, Kind: FaultThrottle, RetryAfter: 90 * time.Second})
	e.sim.AddFault(Fault{Op: OpListAlarms, Kind: FaultThrottle})

	_, err := instances.List(e.rds, instances.ListOpts{})
	require.NoError(t, err, "other operations are served")
	_, err = instances.Create(e.rds, createOpts("throttled"))
	require.ErrorAs(t, err, &golangsdk.ErrDefault429{})

	for name, tc := range map[string]struct {
		method, path, retryAfter, code string
	}{
		"rds": {http.MethodPost, "/rds/v3/" + DefaultProjectID + "/instances", "90", `"error_code":"APIGW.0308"`},
		"ces": {http.MethodGet, "/ces/V1.0/" + DefaultProjectID + "/alarms", "1", `"code":"ces.0429"`},
	} {
		t.Run(name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, e.srv.URL+tc.path, nil)
			require.NoError(t, err)
			req.Header.Set("X-Auth-Token", e.provider.TokenID)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
			assert.Equal(t, tc.retryAfter, resp.Header.Get("Retry-After"))
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Contains(t, string(body), tc.code)
		})
	}
	assert.Empty(t, e.sim.Instances(), "throttled creates perform nothing")
}

// TestFaultLatencyBeyondDeadlinePerformsNothing: a latency fault runs before the request is
// handled, so a client that gives up first leaves no change behind (unlike commit-drop).
func TestFaultLatencyBeyondDeadlinePerformsNothing(t *testing.T) {
	e := newEnv(t, Options{})
	e.sim.AddFault(Fault{Op: OpCreateInstance, Kind: FaultLatency, Delay: time.Minute})
	e.provider.HTTPClient.Timeout = 100 * time.Millisecond
	_, err := instances.Create(e.rds, createOpts("too-slow"))
	require.Error(t, err)
	assert.True(t, isTimeout(err), "got %v", err)
	assert.Empty(t, e.sim.Instances())
	assert.Equal(t, 1, e.sim.Calls(OpCreateInstance))
}

// TestFaultCommitThenDropOnAction: the enlarge happens although the client saw no answer; a retry
// meets the running operation (409 DBS.200019), and a look at the instance shows the change.
func TestFaultCommitThenDropOnAction(t *testing.T) {
	e := newEnv(t, Options{})
	id := e.createActive(t, ssdOpts("dropped-enlarge"))
	e.sim.AddFault(Fault{Op: OpEnlargeVolume, Kind: FaultCommitThenDrop, Count: 1})

	_, err := instances.EnlargeVolume(e.rds, instances.EnlargeVolumeRdsOpts{InstanceId: id, Size: 200})
	require.Error(t, err, "the client sees no answer")
	assert.Equal(t, StatusModifying, e.getInstance(t, id).Status, "but the enlarge runs")

	_, err = instances.EnlargeVolume(e.rds, instances.EnlargeVolumeRdsOpts{InstanceId: id, Size: 200})
	status, code := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusConflict, status)
	assert.Equal(t, "DBS.200019", code)

	e.clock.Advance(e.sim.Options().Durations.Enlarge)
	assert.Equal(t, 200, e.getInstance(t, id).Volume.Size)
	assert.Equal(t, 2, e.sim.Calls(OpEnlargeVolume))
}
