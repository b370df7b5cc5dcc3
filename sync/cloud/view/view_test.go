package view_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/cloudtest"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/view"
	"github.com/mcsps/rds-lambda-controller/test/testutil"
)

var t0 = time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)

// fixture is a view over the real adapter, logged in to a simulator, on the view's own manual clock.
type fixture struct {
	sim   *otcsim.Sim
	view  *view.View
	clock *otcsim.ManualClock
	ids   []string
}

func newFixture(t *testing.T, instances int, simOpts otcsim.Options) *fixture {
	t.Helper()
	simOpts.Logger = slog.New(slog.DiscardHandler)
	srv := otcsim.NewServer(simOpts)
	t.Cleanup(srv.Close)
	f := &fixture{sim: srv.Sim, clock: otcsim.NewManualClock(t0)}
	for i := range instances {
		id, err := srv.Sim.AddInstance(otcsim.InstanceSpec{Name: fmt.Sprintf("inst-%04d", i)})
		require.NoError(t, err)
		f.ids = append(f.ids, id)
	}
	f.view = view.New(testutil.Login(t, srv, nil), view.Options{MaxAge: 2 * time.Minute, Settle: 30 * time.Second, Now: f.clock.Now})
	srv.Sim.ResetCounters()
	return f
}

func (f *fixture) refresh(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, f.view.Refresh(ctx))
}

func (f *fixture) observe(t *testing.T, id string, maxAge time.Duration) *cloud.Instance {
	t.Helper()
	inst, err := f.view.ObserveInstance(context.Background(), id, maxAge)
	require.NoError(t, err)
	return inst
}

// waitListing waits until no background listing runs (a read may start one).
func (f *fixture) waitListing(t *testing.T) {
	t.Helper()
	f.refresh(t) // joins the running listing, or runs one
}

// TestViewPagesOverAllInstances: one listing reads every page (3 for 250 instances) and then every
// instance is served from it without a call.
func TestViewPagesOverAllInstances(t *testing.T) {
	f := newFixture(t, 250, otcsim.Options{})
	f.refresh(t)
	assert.Equal(t, 3, f.sim.Calls(otcsim.OpListInstances), "one request per page of 100")

	f.sim.ResetCounters()
	for _, i := range []int{0, 99, 100, 199, 249} {
		inst := f.observe(t, f.ids[i], time.Minute)
		assert.Equal(t, fmt.Sprintf("inst-%04d", i), inst.Name)
		assert.Equal(t, cloud.StatusActive, inst.Status)
	}
	assert.Zero(t, f.sim.Calls(otcsim.OpListInstances), "served from the view")
	assert.Equal(t, view.Stats{Refreshes: 1, Served: 5}, f.view.Stats())
}

// TestViewRefreshIsSingleFlight: many readers of a cold view, and many explicit refreshes at once,
// list once.
func TestViewRefreshIsSingleFlight(t *testing.T) {
	f := newFixture(t, 150, otcsim.Options{})
	f.sim.AddFault(otcsim.Fault{Op: otcsim.OpListInstances, Kind: otcsim.FaultLatency, Delay: 100 * time.Millisecond})

	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			_, err := f.view.ObserveInstance(context.Background(), f.ids[i], time.Minute)
			assert.NoError(t, err)
		})
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			assert.NoError(t, f.view.Refresh(ctx))
		})
	}
	wg.Wait()
	f.waitListing(t)
	st := f.view.Stats()
	// The cold readers read their instance by id (16 calls) rather than wait; the 16 refreshes and the
	// readers' trigger shared one listing of 2 pages; waitListing's own refresh is a second listing.
	assert.Equal(t, int64(16), st.Fresh)
	assert.Equal(t, int64(2), st.Refreshes)
	assert.Equal(t, 16+2*2, f.sim.Calls(otcsim.OpListInstances))
}

// TestViewReadsFreshAfterOwnChange: an instance this process changed through the view is read by id
// for Settle, then served from the view again.
func TestViewReadsFreshAfterOwnChange(t *testing.T) {
	f := newFixture(t, 3, otcsim.Options{})
	f.refresh(t)
	id := f.ids[1]
	require.NoError(t, f.view.SetTags(context.Background(), id, map[string]string{"team": "a"}))

	f.sim.ResetCounters()
	inst := f.observe(t, id, time.Minute)
	assert.Equal(t, "a", inst.Tags["team"], "the change is seen at once")
	assert.Equal(t, 1, f.sim.Calls(otcsim.OpListInstances), "read by id")

	f.clock.Advance(29 * time.Second)
	f.observe(t, id, time.Minute)
	assert.Equal(t, 2, f.sim.Calls(otcsim.OpListInstances), "still read by id within Settle")

	f.observe(t, f.ids[0], time.Minute)
	assert.Equal(t, 2, f.sim.Calls(otcsim.OpListInstances), "an untouched instance is served")

	f.clock.Advance(2 * time.Second)
	inst = f.observe(t, id, time.Minute)
	assert.Equal(t, "a", inst.Tags["team"])
	assert.Equal(t, 2, f.sim.Calls(otcsim.OpListInstances), "served again once settled")
}

// TestViewStalenessIsBounded: a change made behind the process's back is served stale for at most
// MaxAge (capped whatever the caller asks), maxAge 0 always reads fresh, and an instance seen to
// change is read fresh for Settle.
func TestViewStalenessIsBounded(t *testing.T) {
	f := newFixture(t, 2, otcsim.Options{})
	f.refresh(t)
	id := f.ids[0]
	require.NoError(t, f.sim.ForceInstanceStatus(id, cloud.StatusFrozen))

	f.clock.Advance(50 * time.Second) // within MaxAge and before the Refresh age (MaxAge/2)
	assert.Equal(t, cloud.StatusActive, f.observe(t, id, time.Hour).Status, "stale within the bound")
	assert.Equal(t, cloud.StatusFrozen, f.observe(t, id, 0).Status, "maxAge 0 reads fresh")
	assert.Equal(t, cloud.StatusFrozen, f.observe(t, id, time.Hour).Status, "changed just now: read fresh")

	other := f.ids[1]
	require.NoError(t, f.sim.ForceInstanceStatus(other, cloud.StatusFrozen))
	assert.Equal(t, cloud.StatusActive, f.observe(t, other, 51*time.Second).Status, "as old as the caller allows")
	assert.Equal(t, cloud.StatusFrozen, f.observe(t, other, 49*time.Second).Status, "older than the caller allows: fresh")

	// Past the bound nothing old is served, however old the caller would take it. The read also
	// starts a listing (older than Refresh); wait for it so that it does not race the next steps.
	require.NoError(t, f.sim.ForceInstanceStatus(other, cloud.StatusActive))
	f.clock.Advance(2*time.Minute + time.Second)
	assert.Equal(t, cloud.StatusActive, f.observe(t, other, time.Hour).Status)
	f.waitListing(t)

	// The instance changed (FROZEN -> ACTIVE) in the last Settle: read fresh, then served once settled.
	f.sim.ResetCounters()
	f.observe(t, other, time.Hour)
	assert.Equal(t, 1, f.sim.Calls(otcsim.OpListInstances), "changed recently: fresh")
	f.clock.Advance(31 * time.Second)
	f.observe(t, other, time.Hour)
	assert.Equal(t, 1, f.sim.Calls(otcsim.OpListInstances), "settled: served")
}

// TestViewNeverSaysNotFound: an instance the view does not hold is read by id, so a new instance is
// found and a deleted one is reported NotFound by OTC, not by the view.
func TestViewNeverSaysNotFound(t *testing.T) {
	f := newFixture(t, 1, otcsim.Options{})
	f.refresh(t)
	id, err := f.sim.AddInstance(otcsim.InstanceSpec{Name: "late"})
	require.NoError(t, err)
	assert.Equal(t, "late", f.observe(t, id, time.Minute).Name)

	_, err = f.view.ObserveInstance(context.Background(), "0123456789abcdef0123456789abcdefin01", time.Minute)
	require.ErrorIs(t, err, cloud.ErrNotFound)
	assert.Equal(t, int64(2), f.view.Stats().Fresh)
}

// TestViewsAreIsolatedPerClient: two clients (two OTC projects) have two views; one never serves
// the other's instances.
func TestViewsAreIsolatedPerClient(t *testing.T) {
	a := newFixture(t, 2, otcsim.Options{ProjectID: "aaaa4486e864c26be5654c522f440f2a", Seed: 1})
	b := newFixture(t, 2, otcsim.Options{ProjectID: "bbbb4486e864c26be5654c522f440f2b", Seed: 2})
	a.refresh(t)
	b.refresh(t)
	require.NotEqual(t, a.ids[0], b.ids[0])

	assert.Equal(t, "inst-0000", a.observe(t, a.ids[0], time.Minute).Name)
	_, err := b.view.ObserveInstance(context.Background(), a.ids[0], time.Minute)
	require.ErrorIs(t, err, cloud.ErrNotFound, "b's project has no such instance")
	assert.Equal(t, view.Stats{Refreshes: 1, Served: 1}, a.view.Stats())
	assert.Equal(t, view.Stats{Refreshes: 1, Fresh: 1}, b.view.Stats())
}

// TestWrapNeedsAListingClient: a client that cannot list all instances is not wrapped, and
// cloud.ObserveInstance reads it fresh.
func TestWrapNeedsAListingClient(t *testing.T) {
	fake := &cloudtest.Fake{GetInstanceFn: func(_ context.Context, id string) (*cloud.Instance, error) {
		return &cloud.Instance{ID: id, Status: cloud.StatusActive}, nil
	}}
	require.Same(t, cloud.Cloud(fake), view.Wrap(fake, view.Options{}))
	inst, err := cloud.ObserveInstance(context.Background(), fake, "x", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, "x", inst.ID)
}

// TestViewFailedListing: a listing that fails leaves readers to read by id, and is tried again only
// once the Refresh age has passed.
func TestViewFailedListing(t *testing.T) {
	f := newFixture(t, 2, otcsim.Options{})
	f.sim.AddFault(otcsim.Fault{Op: otcsim.OpListInstances, Kind: otcsim.FaultStatus, Status: 500, Count: 1})
	require.Error(t, f.view.Refresh(context.Background()))

	f.sim.ResetCounters()
	assert.Equal(t, "inst-0000", f.observe(t, f.ids[0], time.Minute).Name, "read by id")
	assert.Equal(t, "inst-0001", f.observe(t, f.ids[1], time.Minute).Name)
	assert.Equal(t, 2, f.sim.Calls(otcsim.OpListInstances), "no new listing before Refresh has passed")
	assert.Equal(t, int64(0), f.view.Stats().Refreshes)

	f.clock.Advance(time.Minute)
	f.observe(t, f.ids[0], time.Minute) // starts the listing in the background
	require.Eventually(t, func() bool { return f.view.Stats().Refreshes == 1 }, 10*time.Second, 10*time.Millisecond)
}

// TestViewServesCopies: what a caller does to a served instance does not change the view.
func TestViewServesCopies(t *testing.T) {
	f := newFixture(t, 1, otcsim.Options{})
	f.refresh(t)
	inst := f.observe(t, f.ids[0], time.Minute)
	inst.Status = cloud.StatusFailed
	inst.Nodes[0].Status = "broken"
	again := f.observe(t, f.ids[0], time.Minute)
	assert.Equal(t, cloud.StatusActive, again.Status)
	assert.NotEqual(t, "broken", again.Nodes[0].Status)
}

// TestViewNeverServesWhatPrecedesOwnChange: the read that decided a change (fresh, just before it)
// leaves the view holding the instance as it was before the change. Once Settle has passed without
// another read, that observation is still within MaxAge, but it predates this process's own change:
// serving it would make the next steady call decide the same change again. It is read fresh.
func TestViewNeverServesWhatPrecedesOwnChange(t *testing.T) {
	f := newFixture(t, 2, otcsim.Options{})
	f.refresh(t)
	id := f.ids[0]
	f.clock.Advance(10 * time.Second)
	assert.Empty(t, f.observe(t, id, 0).Tags["team"], "the deciding read, fresh")
	require.NoError(t, f.view.SetTags(context.Background(), id, map[string]string{"team": "a"}))

	f.clock.Advance(31 * time.Second) // past Settle, within MaxAge, before the next listing
	f.sim.ResetCounters()
	assert.Equal(t, "a", f.observe(t, id, time.Hour).Tags["team"], "never the observation from before the change")
	assert.Equal(t, 1, f.sim.Calls(otcsim.OpListInstances), "read by id")
}

// TestViewListsOnlyWhenItPays: a listing costs one call per page. A client that reads fewer
// instances between listings than its project has pages (a namespace's login with one object in a
// large project) reads them by id; as many reads as pages start the next listing.
func TestViewListsOnlyWhenItPays(t *testing.T) {
	f := newFixture(t, 250, otcsim.Options{})
	f.refresh(t) // 3 pages
	id := f.ids[7]
	f.observe(t, id, time.Hour)

	f.sim.ResetCounters()
	f.clock.Advance(2*time.Minute + time.Second) // past the bound and the Refresh age
	f.observe(t, id, time.Hour)                  // too old: read by id
	assert.Equal(t, 1, f.sim.Calls(otcsim.OpListInstances), "one read by id, no listing of 3 pages")

	// NOTE: the reads since the last listing began count the one before the clock moved: this is
	// the third, as many as the project has pages, so it starts a listing in the background while
	// it is served from the read by id. The listing's calls are counted once it has finished.
	stats := f.view.Stats()
	f.observe(t, id, time.Hour)
	assert.Equal(t, stats.Served+1, f.view.Stats().Served, "served from the read by id")
	require.Eventually(t, func() bool { return f.view.Stats().Refreshes == stats.Refreshes+1 }, 10*time.Second, time.Millisecond,
		"the read started a listing")
	assert.Equal(t, 1+3, f.sim.Calls(otcsim.OpListInstances), "one listing of 3 pages")
}

// TestViewKeepsOnlyWhatItReadsWhenItDoesNotList: a view that reads too few instances to list again
// drops the rest of its last listing once it is too old to be served, so that a namespace's login
// with one object does not hold a large project's instances for ever.
func TestViewKeepsOnlyWhatItReadsWhenItDoesNotList(t *testing.T) {
	f := newFixture(t, 250, otcsim.Options{})
	f.refresh(t)
	assert.Equal(t, 250, f.view.Len())

	f.clock.Advance(2*time.Minute + time.Second)
	f.observe(t, f.ids[3], time.Hour)
	assert.Equal(t, 1, f.view.Len(), "only the instance read by id")
}

// TestViewListedSince: finalize's search by ownership tags is served only a listing begun at or
// after the time it asks for (the deletion's): an older one is listed anew, a newer one is served
// as it is, and what the listing shows is every instance with its tags.
func TestViewListedSince(t *testing.T) {
	f := newFixture(t, 3, otcsim.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f.refresh(t)
	require.Equal(t, int64(1), f.view.Stats().Refreshes)

	list, err := f.view.ListedSince(ctx, t0)
	require.NoError(t, err)
	assert.Len(t, list, 3)
	assert.Equal(t, int64(1), f.view.Stats().Refreshes, "a listing begun at the time asked for is served")

	require.NoError(t, f.view.SetTags(ctx, f.ids[0], map[string]string{"rds-owner-uid": "uid-1"}))
	f.clock.Advance(time.Second)
	list, err = f.view.ListedSince(ctx, f.clock.Now())
	require.NoError(t, err)
	assert.Equal(t, int64(2), f.view.Stats().Refreshes, "a listing begun before is never served: listed anew")
	i := slices.IndexFunc(list, func(in cloud.Instance) bool { return in.ID == f.ids[0] })
	require.GreaterOrEqual(t, i, 0)
	assert.Equal(t, "uid-1", list[i].Tags["rds-owner-uid"], "the listing shows what was done before it")
}

// TestViewedInstanceCallsNothing: the read of the view alone serves what the view holds and
// answers nil for what it does not, without a call to OTC either way; ObserveInstance then reads
// that one fresh.
func TestViewedInstanceCallsNothing(t *testing.T) {
	f := newFixture(t, 2, otcsim.Options{})
	assert.Nil(t, cloud.ViewedInstance(f.view, f.ids[0], time.Minute), "nothing listed yet")
	f.waitListing(t) // the read above began the first listing
	f.sim.ResetCounters()

	inst := cloud.ViewedInstance(f.view, f.ids[1], time.Minute)
	require.NotNil(t, inst)
	assert.Equal(t, "inst-0001", inst.Name)
	assert.Nil(t, cloud.ViewedInstance(f.view, f.ids[1], 0), "maxAge 0 reads fresh")
	assert.Nil(t, cloud.ViewedInstance(f.view, "0123456789abcdef0123456789abcdefin01", time.Minute), "not in the view")
	assert.Empty(t, f.sim.CallCounts())
}
