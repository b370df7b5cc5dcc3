// Package view keeps one shared view of the cloud per OTC client (per credential set): every
// instance of the project from one paged listing, so that steady syncs read it instead of asking OTC
// once per object.
//
// The rules, which bound what a caller can be served:
//   - Staleness: an instance is served from the view only if its entry was observed (the listing or
//     a fresh read by id started) at most min(maxAge, Options.MaxAge) ago. Otherwise, and for
//     maxAge <= 0, it is read fresh by id.
//   - Refresh: a read that finds the listing older than Options.Refresh starts a new one in the
//     background, one at a time (single flight), once the reads since the last listing began are at
//     least as many as its pages (ListPageSize instances each): a client that reads few instances of
//     a large project (a namespace's login with one object) reads them by id instead. Readers never
//     wait for it: a reader that cannot be served reads its one instance fresh. Only reads start
//     listings, so an idle view costs nothing.
//   - Own changes: an instance this process changed (any mutating call through the view) is read
//     fresh for Options.Settle after the call, and after that until an observation begun after the
//     call; so is one whose observation changed in the last Options.Settle (seen by a listing or a
//     fresh read).
//   - Absence: an instance the view does not hold is read fresh; the view never says "not found".
//   - A fresh read by id updates its entry; a listing never overwrites an entry observed after the
//     listing began.
package view

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// ListPageSize is the number of instances per page of a listing (OTC's largest page).
const ListPageSize = 100

// Defaults of Options.
const (
	DefaultMaxAge      = 2 * time.Minute
	DefaultSettle      = 30 * time.Second
	DefaultListTimeout = 2 * time.Minute
)

// Options configure a View. Zero fields take their defaults.
type Options struct {
	// MaxAge bounds the staleness of anything the view serves. Default DefaultMaxAge.
	MaxAge time.Duration
	// Refresh is the age at which a read starts a new listing. Default MaxAge/2, so that a
	// listing normally completes before the view passes its bound.
	Refresh time.Duration
	// Settle is how long an instance this process changed, or whose observation changed, is read
	// fresh. Default DefaultSettle.
	Settle time.Duration
	// ListTimeout bounds one listing (all pages). Default DefaultListTimeout.
	ListTimeout time.Duration
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Logger receives failed listings. Default: discard.
	Logger *slog.Logger
	// MetricsInterval is how often autopilot's Cloud Eye reading of every instance that asked
	// for it is refreshed (metrics.go). Default DefaultMetricsInterval.
	MetricsInterval time.Duration
}

func (o Options) withDefaults() Options {
	if o.MaxAge <= 0 {
		o.MaxAge = DefaultMaxAge
	}
	if o.Refresh <= 0 {
		o.Refresh = o.MaxAge / 2
	}
	if o.Settle <= 0 {
		o.Settle = DefaultSettle
	}
	if o.ListTimeout <= 0 {
		o.ListTimeout = DefaultListTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MetricsInterval <= 0 {
		o.MetricsInterval = DefaultMetricsInterval
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Client is what a View wraps: a cloud client that can list all its instances.
type Client interface {
	cloud.Cloud
	cloud.InstanceLister
}

// View is a cloud.Cloud that serves ObserveInstance from a shared listing. Every other method
// passes through to the wrapped client; the mutating ones mark their instance as changed.
//
// NOTE: it wraps the cloud.Cloud interface, so a method the wrapped client has beyond it is not
// visible through the view. A mutating method added to the interface must be added here, or its
// instance is not marked changed (it is still read fresh while its status is transitional, as the
// caller asks).
type View struct {
	Client
	opts Options

	mu        sync.Mutex
	entries   map[string]entry
	listedAt  time.Time            // start of the last successful listing; zero once pruned
	triedAt   time.Time            // start of the last listing, successful or not
	reads     int                  // reads that may be served, since the last listing began
	prunedAt  time.Time            // last prune
	pages     int                  // pages of the last successful listing; 1 before any
	listing   *listing             // non-nil while a listing runs
	touched   map[string]time.Time // instance -> end of this process's last mutating call on it
	refreshes atomic.Int64
	// metrics is autopilot's fleet-wide Cloud Eye reading (metrics.go), under mu.
	metrics         metricsState
	policyStale     map[string]bool
	metricsReadings atomic.Int64
	served          atomic.Int64
	fresh           atomic.Int64
}

// listing is one run of ListInstances; err is set before done is closed.
type listing struct {
	done chan struct{}
	err  error
}

type entry struct {
	inst    packed
	at      time.Time // when the observation started
	changed time.Time // when an observation differed from the one before; zero if never seen to
}

// Wrap returns c in a View when it can list its instances, else c itself. Wrap each client (one per
// credential set) in its own View: one line where the client is made.
func Wrap(c cloud.Cloud, o Options) cloud.Cloud {
	if cl, ok := c.(Client); ok {
		return New(cl, o)
	}
	return c
}

// New returns a View of c; it lists nothing until it is read.
func New(c Client, o Options) *View {
	return &View{Client: c, opts: o.withDefaults(), entries: map[string]entry{}, touched: map[string]time.Time{}, policyStale: map[string]bool{}}
}

// Stats count what the view did.
type Stats struct {
	Refreshes int64 // listings that completed
	Served    int64 // reads served from the view
	Fresh     int64 // reads by id sent to OTC
}

// Stats returns the counters.
func (v *View) Stats() Stats {
	return Stats{Refreshes: v.refreshes.Load(), Served: v.served.Load(), Fresh: v.fresh.Load()}
}

// Len is the number of instances the view holds.
func (v *View) Len() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.entries)
}

// ObserveInstance implements cloud.InstanceObserver.
func (v *View) ObserveInstance(ctx context.Context, id string, maxAge time.Duration) (*cloud.Instance, error) {
	if inst := v.ViewedInstance(id, maxAge); inst != nil {
		return inst, nil
	}
	return v.GetInstance(ctx, id)
}

// ViewedInstance implements cloud.InstanceObserver: the read of the view, which counts as a read
// (and may begin a listing in the background) whether or not it serves the instance.
func (v *View) ViewedInstance(id string, maxAge time.Duration) *cloud.Instance {
	now := v.opts.Now()
	maxAge = min(maxAge, v.opts.MaxAge)
	v.mu.Lock()
	if maxAge > 0 {
		v.reads++
	}
	// NOTE: a listing costs one call per page, a read by id one call: a client that reads fewer
	// instances than its project has pages would pay more for the listing than for its reads.
	if maxAge > 0 && now.Sub(v.triedAt) >= v.opts.Refresh && v.listing == nil {
		if v.reads >= max(v.pages, 1) {
			v.startListing()
		} else if now.Sub(v.prunedAt) >= v.opts.Refresh {
			v.prune(now)
		}
	}
	var inst *cloud.Instance
	if e, ok := v.entries[id]; maxAge > 0 && ok && now.Sub(e.at) <= maxAge && !v.settling(id, e, now) {
		inst = e.inst.unpack()
	}
	v.mu.Unlock()
	if inst != nil {
		v.served.Add(1)
	}
	return inst
}

// prune drops the entries too old to be served: a view that reads too few instances to list
// again keeps only those it reads, not the whole project of its last listing. v.mu held.
func (v *View) prune(now time.Time) {
	v.prunedAt = now
	maps.DeleteFunc(v.entries, func(_ string, e entry) bool { return now.Sub(e.at) > v.opts.MaxAge })
	// Without the listing, an entry read by id is not "new since the listing" (put).
	v.listedAt = time.Time{}
	maps.DeleteFunc(v.touched, func(_ string, t time.Time) bool { return now.Sub(t) > max(v.opts.Settle, v.opts.MaxAge) })
}

// settling reports whether the instance changed too recently to be served from the view. v.mu held.
func (v *View) settling(id string, e entry, now time.Time) bool {
	// NOTE: the read that decided a change, made just before it, leaves the entry as it was before
	// the change: past Settle it is still within MaxAge, and serving it would decide the same
	// change again. Only an observation begun after the change is served.
	if t, ok := v.touched[id]; ok && (now.Sub(t) < v.opts.Settle || !e.at.After(t)) {
		return true
	}
	return !e.changed.IsZero() && now.Sub(e.changed) < v.opts.Settle
}

// GetInstance reads the instance fresh by id and updates its entry.
func (v *View) GetInstance(ctx context.Context, id string) (*cloud.Instance, error) {
	v.fresh.Add(1)
	start := v.opts.Now()
	inst, err := v.Client.GetInstance(ctx, id)
	v.mu.Lock()
	defer v.mu.Unlock()
	switch old, ok := v.entries[id]; {
	case ok && old.at.After(start):
		// A listing that began after this read holds a newer observation.
	case err == nil:
		v.put(id, inst, start)
	case errors.Is(err, cloud.ErrNotFound):
		delete(v.entries, id)
	}
	return inst, err
}

// put records an observation that started at `at`. v.mu held.
func (v *View) put(id string, inst *cloud.Instance, at time.Time) {
	e := entry{inst: pack(inst), at: at}
	if old, ok := v.entries[id]; ok {
		e.changed = old.changed
		if !old.inst.equal(e.inst) {
			e.changed = at
		}
	} else if !v.listedAt.IsZero() {
		e.changed = at // new since the last listing: created just now, here or elsewhere
	}
	v.entries[id] = e
}

// Refresh lists the instances now, or waits for the listing already running (single flight), and
// returns its error.
func (v *View) Refresh(ctx context.Context) error {
	v.mu.Lock()
	if v.listing == nil {
		v.startListing()
	}
	l := v.listing
	v.mu.Unlock()
	select {
	case <-l.done:
		return l.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ListedSince implements cloud.FleetObserver: every instance of a listing begun at or after since
// (with what fresh reads saw since), waiting for a new listing when the last one began before.
// It never serves an older listing, so a caller that must not miss an instance (finalize's search
// by ownership tags) sees everything done before since. The listing runs on with ListTimeout when
// ctx ends first: a caller that gave up finds it done on its next call.
func (v *View) ListedSince(ctx context.Context, since time.Time) ([]cloud.Instance, error) {
	for range 3 {
		v.mu.Lock()
		if !v.listedAt.IsZero() && !v.listedAt.Before(since) {
			out := make([]cloud.Instance, 0, len(v.entries))
			for _, e := range v.entries {
				out = append(out, *e.inst.unpack())
			}
			v.mu.Unlock()
			return out, nil
		}
		if v.listing == nil {
			v.startListing()
		}
		l := v.listing
		v.mu.Unlock()
		select {
		case <-l.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if l.err != nil {
			return nil, l.err
		}
		// A listing begun before since does not serve: the next turn starts another.
	}
	return nil, errors.New("view: no listing began after the time asked for")
}

// startListing lists in the background. v.mu held; v.listing nil.
func (v *View) startListing() {
	start := v.opts.Now()
	v.triedAt, v.reads = start, 0
	l := &listing{done: make(chan struct{})}
	v.listing = l
	go func() {
		defer close(l.done)
		ctx, cancel := context.WithTimeout(context.Background(), v.opts.ListTimeout)
		defer cancel()
		list, err := v.Client.ListInstances(ctx)
		v.mu.Lock()
		defer v.mu.Unlock()
		v.listing, l.err = nil, err
		if err != nil {
			v.opts.Logger.Warn("listing the instances for the shared view failed", "error", err.Error())
			return
		}
		v.merge(list, start)
		v.listedAt = start
		v.pages = (len(list) + ListPageSize - 1) / ListPageSize
		v.refreshes.Add(1)
	}()
}

// merge replaces the entries observed before start with the listing. v.mu held.
func (v *View) merge(list []cloud.Instance, start time.Time) {
	listed := make(map[string]bool, len(list))
	for i := range list {
		id := list[i].ID
		listed[id] = true
		if old, ok := v.entries[id]; ok && old.at.After(start) {
			continue
		}
		v.put(id, &list[i], start)
	}
	for id, e := range v.entries {
		if !listed[id] && !e.at.After(start) {
			delete(v.entries, id)
		}
	}
	now := v.opts.Now()
	// An entry older than MaxAge is never served, so a change older than that need not be kept.
	maps.DeleteFunc(v.touched, func(_ string, t time.Time) bool { return now.Sub(t) > max(v.opts.Settle, v.opts.MaxAge) })
}

// touch marks an instance as changed by this process, when the call that changed it ends.
func (v *View) touch(id string) {
	if id == "" {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.touched[id] = v.opts.Now()
}

// Project is the wrapped client's project (cloud.ProjectNamer).
func (v *View) Project() string { return cloud.ProjectOf(v.Client) }

// The mutating calls: each marks its instance as changed by this process.

func (v *View) CreateInstance(ctx context.Context, opts cloud.CreateInstanceOpts) (id, jobID string, err error) {
	id, jobID, err = v.Client.CreateInstance(ctx, opts)
	v.touch(id)
	return id, jobID, err
}

func (v *View) DeleteInstance(ctx context.Context, id string) (string, error) {
	defer v.touch(id)
	return v.Client.DeleteInstance(ctx, id)
}

func (v *View) CreateBackup(ctx context.Context, instanceID, name, description string) (*cloud.Backup, error) {
	defer v.touch(instanceID)
	return v.Client.CreateBackup(ctx, instanceID, name, description)
}

func (v *View) ResizeFlavor(ctx context.Context, id, flavor string) (string, error) {
	defer v.touch(id)
	return v.Client.ResizeFlavor(ctx, id, flavor)
}

func (v *View) EnlargeVolume(ctx context.Context, id string, sizeGB int) (string, error) {
	defer v.touch(id)
	return v.Client.EnlargeVolume(ctx, id, sizeGB)
}

func (v *View) RestartInstance(ctx context.Context, id string) (string, error) {
	defer v.touch(id)
	return v.Client.RestartInstance(ctx, id)
}

func (v *View) UpgradeMinorVersion(ctx context.Context, id string) (string, error) {
	defer v.touch(id)
	return v.Client.UpgradeMinorVersion(ctx, id)
}

func (v *View) SingleToHA(ctx context.Context, id, standbyAZ string, password secret.Value) (string, error) {
	defer v.touch(id)
	return v.Client.SingleToHA(ctx, id, standbyAZ, password)
}

func (v *View) UpdateBackupPolicy(ctx context.Context, id string, policy cloud.BackupStrategy) error {
	defer v.touch(id)
	return v.Client.UpdateBackupPolicy(ctx, id, policy)
}

func (v *View) SetTags(ctx context.Context, id string, tags map[string]string) error {
	defer v.touch(id)
	return v.Client.SetTags(ctx, id, tags)
}

func (v *View) DeleteTags(ctx context.Context, id string, keys []string) error {
	defer v.touch(id)
	return v.Client.DeleteTags(ctx, id, keys)
}

func (v *View) RestoreInPlace(ctx context.Context, instanceID string, at time.Time) (string, error) {
	defer v.touch(instanceID)
	return v.Client.RestoreInPlace(ctx, instanceID, at)
}

func (v *View) RestoreToNew(ctx context.Context, opts cloud.RestoreToNewOpts) (id, jobID string, err error) {
	id, jobID, err = v.Client.RestoreToNew(ctx, opts)
	v.touch(id)
	return id, jobID, err
}

// CreateReplica marks both the new replica and its primary: OTC lists the replica among the
// primary's related instances.
func (v *View) CreateReplica(ctx context.Context, opts cloud.CreateReplicaOpts) (id, jobID string, err error) {
	defer v.touch(opts.Of)
	id, jobID, err = v.Client.CreateReplica(ctx, opts)
	v.touch(id)
	return id, jobID, err
}

// UpdateParameters passes through; the instance's listing shows nothing of it, so it is not
// touched: its status does not change (the restart it may need is the user's call).
func (v *View) UpdateParameters(ctx context.Context, id string, values map[string]string) (cloud.ParametersChange, error) {
	return v.Client.UpdateParameters(ctx, id, values)
}

// The parameter templates pass through: no instance's listing shows them.

func (v *View) CreateParameterTemplate(ctx context.Context, opts cloud.ParameterTemplateOpts) (*cloud.ParameterTemplate, error) {
	return v.Client.CreateParameterTemplate(ctx, opts)
}

func (v *View) DeleteParameterTemplate(ctx context.Context, id string) error {
	return v.Client.DeleteParameterTemplate(ctx, id)
}

var (
	_ cloud.Cloud            = (*View)(nil)
	_ cloud.InstanceObserver = (*View)(nil)
)
