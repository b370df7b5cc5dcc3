package server_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcsps/rds-lambda-controller/server"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
)

// largeBody is a sync call just under the 8 MiB body limit: the sample request with one child
// Secret holding about 6 MiB of data (8 MiB in base64).
func largeBody(b *testing.B) []byte {
	var req map[string]any
	if err := json.Unmarshal(sampleRequest(b), &req); err != nil {
		b.Fatal(err)
	}
	const limit = 8 << 20
	blob := make([]byte, (limit-64<<10)/4*3)
	req["children"] = map[string]any{hook.SecretGroup: map[string]any{"big": map[string]any{
		"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "big", "namespace": "rds1"},
		"data": map[string]any{"blob": base64.StdEncoding.EncodeToString(blob)},
	}}}
	body, err := json.Marshal(req)
	if err != nil {
		b.Fatal(err)
	}
	if len(body) > limit {
		b.Fatalf("body of %d bytes is over the limit", len(body))
	}
	return body
}

// heapPeak samples the bytes of live heap objects until stopped and keeps the largest value.
type heapPeak struct {
	peak atomic.Uint64
	stop chan struct{}
	done chan struct{}
}

func startHeapPeak() *heapPeak {
	p := &heapPeak{stop: make(chan struct{}), done: make(chan struct{})}
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(200 * time.Microsecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > p.peak.Load() {
				p.peak.Store(v)
			}
			select {
			case <-p.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

func (p *heapPeak) finish() uint64 {
	close(p.stop)
	<-p.done
	return p.peak.Load()
}

// BenchmarkLargeBodies sends 16 concurrent 8 MiB sync calls per operation and reports the peak of
// heap objects (live and not yet collected) above the idle process: without a cap, with the
// default caps (8 calls, 32 MiB of bodies in flight), with the default caps and a GOMEMLIMIT.
//
//	go test ./server/ -run '^$' -bench LargeBodies -benchtime 5x
func BenchmarkLargeBodies(b *testing.B) {
	const concurrent = 16
	body := largeBody(b)
	const unlimited = 1 << 40
	for _, tc := range []struct {
		name        string
		maxInFlight int
		maxBytes    int64
		memLimit    int64 // GOMEMLIMIT, as manifests/deployment.yaml sets it; 0: none
	}{
		{"no cap", concurrent, unlimited, 0},
		{"max-inflight=8 only", 8, unlimited, 0},
		{"defaults (8 calls, 32 MiB of bodies)", 0, 0, 0},
		{"defaults with GOMEMLIMIT=200MiB", 0, 0, 200 << 20},
		{"max-inflight=1", 1, unlimited, 0},
	} {
		b.Run(tc.name, func(b *testing.B) {
			if tc.memLimit > 0 {
				defer debug.SetMemoryLimit(debug.SetMemoryLimit(tc.memLimit))
			}
			h := newHarness(b, stubReconciler{sync: func(context.Context, *hook.Request) (*hook.SyncResponse, error) {
				time.Sleep(5 * time.Millisecond) // a cloud call
				return &hook.SyncResponse{Children: []any{}}, nil
			}}, func(o *server.Options) {
				o.MaxInFlight, o.MaxInFlightBytes, o.InFlightWait = tc.maxInFlight, tc.maxBytes, time.Minute
			})
			runtime.GC()
			base := startHeapPeak().finish()
			peak := startHeapPeak()
			b.ReportAllocs()
			b.SetBytes(int64(len(body)) * concurrent)
			b.ResetTimer()
			for range b.N {
				var wg sync.WaitGroup
				for range concurrent {
					wg.Add(1)
					go func() {
						defer wg.Done()
						w := httptest.NewRecorder()
						req := httptest.NewRequest(http.MethodPost, "/sync", bytes.NewReader(body))
						req.Header.Set("Authorization", "Bearer "+testToken)
						h.srv.ServeHTTP(w, req)
						if w.Code != http.StatusOK {
							b.Errorf("status %d: %s", w.Code, w.Body.String())
						}
					}()
				}
				wg.Wait()
			}
			b.StopTimer()
			b.ReportMetric(float64(peak.finish()-min(base, peak.peak.Load()))/(1<<20), "peak-heap-MiB")
		})
	}
}
