package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/server"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
)

// paddedRequestIn is a sync request of ns/name whose body is about size bytes: a tenant controls
// the size of the bodies Metacontroller sends for its objects (the Rds object itself, and the
// related Secrets its passwordsecretref and users' password Secrets name, up to 1 MiB each).
func paddedRequestIn(t *testing.T, ns, name string, size int) []byte {
	t.Helper()
	var req map[string]any
	require.NoError(t, json.Unmarshal(requestIn(t, ns, name), &req))
	meta := req["parent"].(map[string]any)["metadata"].(map[string]any)
	b, err := json.Marshal(req)
	require.NoError(t, err)
	meta["annotations"] = map[string]any{"pad": strings.Repeat("x", size-len(b)-40)}
	b, err = json.Marshal(req)
	require.NoError(t, err)
	return b
}

// TestBodyBudgetSharedByNamespace: one namespace's calls with large bodies (just under
// MaxBodyBytes: a tenant inflates them with its object and big related Secrets) hold at most half
// of MaxInFlightBytes, served or waiting; its calls beyond that get 429 at once. Another
// namespace's small calls are served meanwhile. (Found in review: the bytes were taken before the
// namespace was known and held through the wait, so the share of slots was bypassed.)
func TestBodyBudgetSharedByNamespace(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	inside := map[string]int{}
	h := newHarness(t, stubReconciler{sync: func(ctx context.Context, req *hook.Request) (*hook.SyncResponse, error) {
		mu.Lock()
		inside[req.Parent.Namespace]++
		mu.Unlock()
		if req.Parent.Namespace == "greedy" {
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return &hook.SyncResponse{Children: []any{}}, nil
	}}, func(o *server.Options) {
		o.MaxInFlight = 8 // share 4; bodies: 8 MiB each, 32 MiB at once (the defaults)
		o.InFlightWait = 300 * time.Millisecond
		o.HookTimeout = 5 * time.Second
	})
	greedy := make(chan int, 4)
	for i := range 4 {
		body := paddedRequestIn(t, "greedy", fmt.Sprintf("db-%d", i), 8<<20-64)
		go func() { greedy <- h.post("/sync", body).Code }()
	}
	require.Equal(t, http.StatusTooManyRequests, <-greedy, "beyond half of the bodies' memory, at once")
	require.Equal(t, http.StatusTooManyRequests, <-greedy)
	mu.Lock()
	assert.Equal(t, 2, inside["greedy"], "two 8 MiB calls are half of 32 MiB")
	mu.Unlock()
	codes := map[int]int{}
	for i := range 3 {
		codes[h.post("/sync", requestIn(t, "modest", fmt.Sprintf("db-%d", i))).Code]++
	}
	close(release)
	for range 2 {
		assert.Equal(t, http.StatusOK, <-greedy)
	}
	assert.Equal(t, map[int]int{http.StatusOK: 3}, codes, "another namespace's small calls, with slots and memory free")
}
