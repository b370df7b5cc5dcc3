package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
)

// TestConcurrentIdenticalCreates: OTC lets instances share a name, so two calls that both find no
// instance would both create one. Four identical sync calls at once, the password Secret already
// observed so that the create is due, make exactly one CreateInstance, and every answer names the
// one instance.
func TestConcurrentIdenticalCreates(t *testing.T) {
	w := newWorld(t)
	mc := w.newObject(nil)
	mc.sync() // the connection Secret with the password
	require.NotNil(t, mc.secret("my-rds-single-connection"))
	// A slow create keeps the first call in flight while the others arrive.
	w.sim.AddFault(otcsim.Fault{Op: otcsim.OpCreateInstance, Kind: otcsim.FaultLatency, Delay: 300 * time.Millisecond})

	body := mc.envelope()
	type answer struct {
		code int
		resp hookResponse
	}
	answers := make([]answer, 4)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Post(w.hooks.URL+"/sync", "application/json", bytes.NewReader(body))
			if !assert.NoError(t, err) {
				return
			}
			defer resp.Body.Close()
			answers[i].code = resp.StatusCode
			assert.NoError(t, json.NewDecoder(resp.Body).Decode(&answers[i].resp))
		}()
	}
	wg.Wait()

	assert.Equal(t, 1, w.sim.Calls(otcsim.OpCreateInstance), "exactly one CreateInstance")
	require.Len(t, w.sim.Instances(), 1)
	id := w.sim.Instances()[0].ID
	for i, a := range answers {
		require.Equal(t, http.StatusOK, a.code, "answer %d", i)
		assert.Equal(t, id, a.resp.Status.ID, "answer %d names the one instance", i)
		ready := condition(a.resp.Status, v1alpha1.ConditionReady)
		require.NotNil(t, ready)
		assert.Equal(t, reconcile.ReasonCreating, ready.Reason, "answer %d", i)
		assert.Equal(t, "The instance is being created.", ready.Message, "answer %d", i)
		assert.Len(t, a.resp.Children, 1, "answer %d keeps the connection Secret", i)
	}

	// Later calls keep to the one instance.
	w.sim.ClearFaults()
	w.clock.Advance(otcsim.DefaultDurations().Create)
	resp := mc.sync()
	assert.Equal(t, id, resp.Status.ID)
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpCreateInstance))
}

// TestCallInFlightAnswers429: a call for an object another call still holds (here: a create OTC
// does not answer) waits a little, then answers 429 with Retry-After: 1, never a 500, and makes no
// cloud call; Metacontroller retries it without an Event or a backoff.
func TestCallInFlightAnswers429(t *testing.T) {
	w := newWorld(t)
	mc := w.newObject(nil)
	mc.sync()
	w.sim.AddFault(otcsim.Fault{Op: otcsim.OpCreateInstance, Kind: otcsim.FaultHang, Count: 1})

	body := mc.envelope()
	first := make(chan int, 1)
	go func() {
		resp, err := http.Post(w.hooks.URL+"/sync", "application/json", bytes.NewReader(body))
		if err != nil {
			first <- 0
			return
		}
		resp.Body.Close()
		first <- resp.StatusCode
	}()
	require.Eventually(t, func() bool { return w.sim.Calls(otcsim.OpCreateInstance) == 1 }, 5*time.Second, 5*time.Millisecond)

	before := w.sim.CallCounts()
	code, header, out := w.post("/sync", body)
	assert.Equal(t, http.StatusTooManyRequests, code, string(out))
	assert.Equal(t, "1", header.Get("Retry-After"))
	assert.Equal(t, before, w.sim.CallCounts(), "the waiting call made no cloud call")
	assert.Equal(t, http.StatusOK, <-first, "the first call answers once its create times out")
}
