package cloud

import (
	"context"
	"time"
)

// InstanceObserver reads an instance with an explicit freshness: a client wrapped in a shared view
// of the cloud (sync/cloud/view) serves it from its last listing when that is recent enough.
type InstanceObserver interface {
	// ObserveInstance returns the instance with this id as OTC reported it at most maxAge ago
	// (capped at the implementation's own bound); maxAge <= 0 reads it fresh. Errors as GetInstance.
	ObserveInstance(ctx context.Context, id string, maxAge time.Duration) (*Instance, error)
	// ViewedInstance is ObserveInstance's read of the view alone: the instance with this id at
	// most maxAge old when the view serves it, nil when it must be read fresh (GetInstance). It
	// makes no call to OTC.
	ViewedInstance(id string, maxAge time.Duration) *Instance
}

// InstanceLister lists every instance of the client's project, all pages.
type InstanceLister interface {
	ListInstances(ctx context.Context) ([]Instance, error)
}

// FleetObserver serves a listing of every instance of the client's project that began at or after
// a time, from a shared view (sync/cloud/view): it lists anew, in the background and bounded by
// the view's own listing timeout, when its last listing began before.
type FleetObserver interface {
	ListedSince(ctx context.Context, since time.Time) ([]Instance, error)
}

// ObserveInstance reads the instance with this id at most maxAge old when c keeps a view of the
// cloud (InstanceObserver), and fresh otherwise.
func ObserveInstance(ctx context.Context, c Core, id string, maxAge time.Duration) (*Instance, error) {
	if o, ok := c.(InstanceObserver); ok && maxAge > 0 {
		return o.ObserveInstance(ctx, id, maxAge)
	}
	return c.GetInstance(ctx, id)
}

// ViewedInstance is ObserveInstance without a call to OTC: the instance c's view serves, at most
// maxAge old, or nil when it must be read fresh (GetInstance; c keeps no view, or the view has no
// recent enough observation). It needs no deadline.
func ViewedInstance(c Core, id string, maxAge time.Duration) *Instance {
	if o, ok := c.(InstanceObserver); ok && maxAge > 0 {
		return o.ViewedInstance(id, maxAge)
	}
	return nil
}
