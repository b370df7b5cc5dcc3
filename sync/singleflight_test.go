package reconcile

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/cloudtest"
)

func TestKeyedMutex(t *testing.T) {
	k := newKeyedMutex()
	ctx := context.Background()

	unlockA, err := k.lock(ctx, "a")
	require.NoError(t, err)
	unlockB, err := k.lock(ctx, "b")
	require.NoError(t, err, "another key is not blocked")

	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	_, err = k.lock(short, "a")
	require.ErrorIs(t, err, context.DeadlineExceeded, "a held key blocks until the deadline")
	assert.Equal(t, 2, k.size(), "a waiter that gave up leaves no entry behind")

	got := make(chan struct{})
	go func() {
		unlock, err := k.lock(ctx, "a")
		if err == nil {
			unlock()
		}
		close(got)
	}()
	unlockA()
	<-got
	unlockB()
	assert.Zero(t, k.size(), "no entry outlives its last user")
}

// TestKeyedMutexSerialises: many goroutines on few keys never overlap on one key (run with -race),
// and the map is empty afterwards.
func TestKeyedMutexSerialises(t *testing.T) {
	k := newKeyedMutex()
	var inside [3]atomic.Int32
	var wg sync.WaitGroup
	for i := range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := i % 3
			unlock, err := k.lock(context.Background(), string(rune('a'+key)))
			if !assert.NoError(t, err) {
				return
			}
			defer unlock()
			assert.Equal(t, int32(1), inside[key].Add(1), "one holder per key")
			time.Sleep(time.Millisecond)
			inside[key].Add(-1)
		}()
	}
	wg.Wait()
	assert.Zero(t, k.size())
}

// TestConcurrentCallsForOneObjectAreSerialised: four identical create calls at once make one
// CreateInstance; the others find the instance it made. A call that cannot get the object within
// LockWait gives up with ErrCallInFlight.
func TestConcurrentCallsForOneObjectAreSerialised(t *testing.T) {
	var mu sync.Mutex
	var created *cloud.Instance
	var creates atomic.Int32
	release := make(chan struct{})
	f := &cloudtest.Fake{
		FindInstanceByNameFn: func(context.Context, string) (*cloud.Instance, error) {
			mu.Lock()
			defer mu.Unlock()
			if created == nil {
				return nil, cloud.ErrNotFound
			}
			in := *created
			return &in, nil
		},
		ResolveNetworkFn: func(context.Context, string, string, string) (cloud.Network, error) {
			return cloud.Network{VpcID: "vpc", SubnetID: "subnet", SecurityGroupID: "sg"}, nil
		},
		CreateInstanceFn: func(_ context.Context, o cloud.CreateInstanceOpts) (string, string, error) {
			creates.Add(1)
			<-release // hold the object while the others arrive
			mu.Lock()
			defer mu.Unlock()
			created = &cloud.Instance{ID: "inst-1", Name: o.Name, Status: cloud.StatusBuild, Engine: o.Engine, Version: o.Version}
			return "inst-1", "job-1", nil
		},
	}
	r := New(Config{Cloud: f, Now: func() time.Time { return t0 }, LockWait: 5 * time.Second})
	spec := sampleSpec()
	req := request(spec, v1alpha1.RdsStatus{}, storedSecret(spec.Password))

	var wg sync.WaitGroup
	ids := make(chan string, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := r.Sync(context.Background(), req)
			if assert.NoError(t, err) {
				ids <- resp.Status.ID
			}
		}()
	}
	require.Eventually(t, func() bool { return creates.Load() == 1 }, 5*time.Second, time.Millisecond)
	time.Sleep(20 * time.Millisecond) // the others are waiting for the object now
	close(release)
	wg.Wait()
	close(ids)
	assert.Equal(t, int32(1), creates.Load(), "exactly one CreateInstance")
	for id := range ids {
		assert.Equal(t, "inst-1", id, "every answer names the one instance")
	}
	assert.Zero(t, r.locks.size(), "no lock entry is left behind")

	// A call that cannot get the object in time gives up.
	r = New(Config{Cloud: f, Now: func() time.Time { return t0 }, LockWait: 10 * time.Millisecond})
	unlock, err := r.locks.lock(context.Background(), objectKey(req))
	require.NoError(t, err)
	_, err = r.Sync(context.Background(), req)
	require.ErrorIs(t, err, ErrCallInFlight)
	_, err = r.Finalize(context.Background(), req)
	require.ErrorIs(t, err, ErrCallInFlight)
	unlock()
	assert.Zero(t, r.locks.size())
}
