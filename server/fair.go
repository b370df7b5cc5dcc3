package server

import (
	"context"
	"sync"
)

// fairSlots are the hook calls served at once, shared fairly between namespaces: one namespace
// holds at most perKey of them however many of its calls arrive, and a freed slot goes to the
// waiting namespace that holds the fewest (the earliest call among those). Ten slow syncs of one
// team then cannot make another team's calls wait for a slot until they give up.
//
// The bodies of a namespace's calls, served or waiting, are shared too: at most perKeyBytes of
// them (but always one call, however large), so that a team whose objects and Secrets make large
// bodies cannot hold all the memory the server reads bodies into while its calls wait. A call
// beyond that is refused at once: waiting, it would hold its body.
type fairSlots struct {
	max, perKey int
	perKeyBytes int64

	mu      sync.Mutex
	total   int
	held    map[string]int
	bytes   map[string]int64 // the bodies of the calls served or waiting, by key
	waiting []*slotWaiter    // in arrival order
}

type slotWaiter struct {
	key   string
	ready chan struct{} // closed when the slot is this waiter's
}

func newFairSlots(n, perKey int, perKeyBytes int64) *fairSlots {
	return &fairSlots{max: n, perKey: min(max(perKey, 1), n), perKeyBytes: perKeyBytes, held: map[string]int{}, bytes: map[string]int64{}}
}

// tryAcquire takes a slot for key at once if it may; wait says that acquire would wait for one,
// false with ok false that the key's bodies would exceed perKeyBytes.
func (f *fairSlots) tryAcquire(key string, size int64) (release func(), ok, wait bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tryLocked(key, size)
}

func (f *fairSlots) tryLocked(key string, size int64) (release func(), ok, wait bool) {
	switch {
	case f.bytes[key] > 0 && f.bytes[key]+size > f.perKeyBytes:
		return nil, false, false
	case len(f.waiting) == 0 && f.total < f.max && f.held[key] < f.perKey:
		f.bytes[key] += size
		f.takeLocked(key)
		return f.releaser(key, size), true, false
	}
	return nil, false, true
}

// acquire takes a slot for key, for a call whose body is size bytes, waiting until ctx ends. It
// returns the function that gives the slot back, or false when ctx ended first or the key's bodies
// would exceed perKeyBytes.
func (f *fairSlots) acquire(ctx context.Context, key string, size int64) (func(), bool) {
	f.mu.Lock()
	if release, ok, wait := f.tryLocked(key, size); !wait {
		f.mu.Unlock()
		return release, ok
	}
	f.bytes[key] += size // the waiter's body counts while it waits
	w := &slotWaiter{key: key, ready: make(chan struct{})}
	f.waiting = append(f.waiting, w)
	f.dispatchLocked() // a waiter of a namespace at its share does not hold up the others
	f.mu.Unlock()

	select {
	case <-w.ready:
		return f.releaser(key, size), true
	case <-ctx.Done():
		f.mu.Lock()
		defer f.mu.Unlock()
		f.unbytesLocked(key, size)
		select {
		case <-w.ready: // granted meanwhile: give it on
			f.releaseLocked(key)
		default:
			for i, x := range f.waiting {
				if x == w {
					f.waiting = append(f.waiting[:i], f.waiting[i+1:]...)
					break
				}
			}
		}
		return nil, false
	}
}

func (f *fairSlots) releaser(key string, size int64) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.unbytesLocked(key, size)
			f.releaseLocked(key)
		})
	}
}

func (f *fairSlots) unbytesLocked(key string, size int64) {
	if f.bytes[key] -= size; f.bytes[key] <= 0 {
		delete(f.bytes, key)
	}
}

func (f *fairSlots) takeLocked(key string) {
	f.total++
	f.held[key]++
}

func (f *fairSlots) releaseLocked(key string) {
	f.total--
	if f.held[key]--; f.held[key] == 0 {
		delete(f.held, key)
	}
	f.dispatchLocked()
}

// dispatchLocked hands free slots to waiters: each time to the earliest waiter of the namespaces
// that hold the fewest slots and are under their share.
func (f *fairSlots) dispatchLocked() {
	for f.total < f.max {
		best := -1
		for i, w := range f.waiting {
			if f.held[w.key] >= f.perKey {
				continue
			}
			if best < 0 || f.held[w.key] < f.held[f.waiting[best].key] {
				best = i
			}
		}
		if best < 0 {
			return
		}
		w := f.waiting[best]
		f.waiting = append(f.waiting[:best], f.waiting[best+1:]...)
		f.takeLocked(w.key)
		close(w.ready)
	}
}
