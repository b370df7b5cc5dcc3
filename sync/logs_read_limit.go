package reconcile

import (
	"errors"
	"sync"
	"time"
)

// ErrCapabilityBusy: another read with the same capability is in flight in this process.
var ErrCapabilityBusy = errors.New("another read with this capability is in flight; try again shortly")

// maxReadsPerCapability bounds the reads one capability is served by one process: rds-logs reads
// each of two logs with up to 5 attempts, in at most two pods (backoffLimit 1).
const maxReadsPerCapability = 20

// NOTE: anyone holding a token (the tenant can read its Job's Secret) could otherwise read in a
// loop, with the controller's or the namespace's login, until OTC throttles that login for every
// object using it, and hold every slot of the logs port. One read at a time and a bounded number
// per capability keep a Job's needs and no more. The state is per process: each replica allows
// as much, which still bounds it.

// capabilityReads counts the reads of each capability (by object and request, so that a renewed
// expiry shares the count) until it expires.
type capabilityReads struct {
	mu      sync.Mutex
	entries map[string]*capabilityUse
}

type capabilityUse struct {
	reads    int
	inFlight bool
	expires  time.Time
	first    time.Time // the first read
}

func newCapabilityReads() *capabilityReads {
	return &capabilityReads{entries: map[string]*capabilityUse{}}
}

// begin takes one read of the capability at now, or says why not; done ends it.
func (r *capabilityReads) begin(c *logsCapability, now time.Time) (done func(), err error) {
	key := c.UID + "/" + c.Request
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, u := range r.entries {
		// NOTE: kept for the window of log requests too, so that a request accepted again for a
		// status that forgot it (logs_limit.go) shares the count of its first capability.
		if !u.inFlight && now.After(u.expires.Add(capabilitySkew)) && now.Sub(u.first) >= logRequestWindow {
			delete(r.entries, k)
		}
	}
	u := r.entries[key]
	if u == nil {
		u = &capabilityUse{first: now}
		r.entries[key] = u
	}
	u.expires = maxTime(u.expires, c.expires())
	switch {
	case u.inFlight:
		return nil, ErrCapabilityBusy
	case u.reads >= maxReadsPerCapability:
		return nil, &LogsRefusedError{Reason: "the capability has served all the reads a log Job needs; set a new logs.request to read the logs again"}
	}
	u.reads++
	u.inFlight = true
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		u.inFlight = false
	}, nil
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
