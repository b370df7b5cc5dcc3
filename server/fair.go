package server

import (
	"context"
	"sync"
)

// fairSlots are the hook calls served at once, shared fairly between namespaces: one namespace
// holds at most perKey of them however many of its calls arrive, and a freed slot goes to the
// waiting namespace that holds the fewest (the earliest call among those). Ten slow syncs of one
// team then cannot make another team's calls wait for a slot until they give up.
type fairSlots struct {
	max, perKey int

	mu      sync.Mutex
	total   int
	held    map[string]int
	waiting []*slotWaiter // in arrival order
}

type slotWaiter struct {
	key   string
	ready chan struct{} // closed when the slot is this waiter's
}

func newFairSlots(n, perKey int) *fairSlots {
	return &fairSlots{max: n, perKey: min(max(perKey, 1), n), held: map[string]int{}}
}

// acquire takes a slot for key, waiting until ctx ends. It returns the function that gives the
// slot back, or false when ctx ended first.
func (f *fairSlots) acquire(ctx context.Context, key string) (func(), bool) {
	f.mu.Lock()
	if len(f.waiting) == 0 && f.total < f.max && f.held[key] < f.perKey {
		f.takeLocked(key)
		f.mu.Unlock()
		return f.releaser(key), true
	}
	w := &slotWaiter{key: key, ready: make(chan struct{})}
	f.waiting = append(f.waiting, w)
	f.dispatchLocked() // a waiter of a namespace at its share does not hold up the others
	f.mu.Unlock()

	select {
	case <-w.ready:
		return f.releaser(key), true
	case <-ctx.Done():
		f.mu.Lock()
		defer f.mu.Unlock()
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

func (f *fairSlots) releaser(key string) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.releaseLocked(key)
		})
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
