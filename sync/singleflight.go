package reconcile

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/mcsps/rds-lambda-controller/sync/hook"
)

// ErrCallInFlight says that another call for the same object held it for longer than this call
// could wait: the server answers 429 with Retry-After, and Metacontroller asks again soon without
// an Event or a backoff.
var ErrCallInFlight = errors.New("another call for this object is in flight")

// NOTE: two calls for one object at once would both find no instance and both create one: OTC lets
// instances share a name, so nothing outside this process stops the second. Calls for one object
// are therefore serialised here (single flight by uid); the second call then sees what the first
// one did. Metacontroller itself sends one call per object at a time, but a retry after its
// timeout, a second Metacontroller or a curl user do not wait for the first answer.

// keyedMutex is a mutex per key. An entry lives only while a call holds or waits for it, so the
// map never grows beyond the calls in flight.
type keyedMutex struct {
	mu      sync.Mutex
	entries map[string]*keyedEntry
}

type keyedEntry struct {
	held  chan struct{} // a token in the channel: the key is held
	users int           // holders and waiters
}

func newKeyedMutex() *keyedMutex { return &keyedMutex{entries: map[string]*keyedEntry{}} }

// lock takes the key's mutex, waiting at most until ctx is done. The returned func releases it.
func (k *keyedMutex) lock(ctx context.Context, key string) (unlock func(), err error) {
	return k.lockWithin(ctx, key, 0)
}

// lockWithin is lock waiting at most wait too, if positive. A key that is free is taken without a
// timer: the wait is set up only when the key is held.
func (k *keyedMutex) lockWithin(ctx context.Context, key string, wait time.Duration) (unlock func(), err error) {
	k.mu.Lock()
	e := k.entries[key]
	if e == nil {
		e = &keyedEntry{held: make(chan struct{}, 1)}
		k.entries[key] = e
	}
	e.users++
	k.mu.Unlock()
	unlock = func() {
		<-e.held
		k.leave(key, e)
	}

	select {
	case e.held <- struct{}{}:
		return unlock, nil
	default:
	}
	if wait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	select {
	case e.held <- struct{}{}:
		return unlock, nil
	case <-ctx.Done():
		k.leave(key, e)
		return nil, ctx.Err()
	}
}

func (k *keyedMutex) leave(key string, e *keyedEntry) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if e.users--; e.users == 0 {
		delete(k.entries, key)
	}
}

// size is the number of keys held or waited for.
func (k *keyedMutex) size() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.entries)
}

// objectKey is the key calls for one object share: its uid, or namespace/name for a request
// without one (curl).
func objectKey(req *hook.Request) string {
	if uid := string(req.Parent.UID); uid != "" {
		return "uid:" + uid
	}
	return "name:" + req.Parent.Namespace + "/" + req.Parent.Name
}

// serialise waits until no other call for the object is in flight, at most LockWait (and never
// beyond ctx), and returns the release.
func (r *Reconciler) serialise(ctx context.Context, req *hook.Request) (func(), error) {
	unlock, err := r.locks.lockWithin(ctx, objectKey(req), r.cfg.LockWait) // NOTE: no timer for an object no call holds
	if err != nil {
		LoggerFrom(ctx).Info("another call for this object is in flight; asking Metacontroller to retry", "waited", r.cfg.LockWait.String())
		return nil, ErrCallInFlight
	}
	return unlock, nil
}
