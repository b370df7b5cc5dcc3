package sync

import (
	gosync "sync"
	"time"
)

// ledger remembers, for a while, the one-shot requests this process has sent to OTC (a restart for
// a restartrequest value, a minor upgrade for a datastoreversion).
//
// NOTE: status is where such a request is remembered, but Metacontroller can call with a status
// that does not show it yet: the answer that recorded it was never applied (its status update
// failed), a duplicate call ran next to the first, or the informer cache was stale. OTC keeps no
// trace of a restart once it is over, so the hook could not tell from the cloud that it already
// acted. The ledger closes that gap for calls this process answers; it is a second line behind
// status, not the record: a restart of the hooks forgets it, and several replicas do not share it.
type ledger struct {
	ttl time.Duration
	now func() time.Time

	mu   gosync.Mutex
	sent map[string]time.Time
}

func newLedger(ttl time.Duration, now func() time.Time) *ledger {
	return &ledger{ttl: ttl, now: now, sent: map[string]time.Time{}}
}

// record notes that key was sent now.
func (l *ledger) record(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for k, at := range l.sent { // drop what expired, so the ledger stays small
		if now.Sub(at) >= l.ttl {
			delete(l.sent, k)
		}
	}
	l.sent[key] = now
}

// seen reports whether key was sent within the ledger's time to live.
func (l *ledger) seen(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	at, ok := l.sent[key]
	return ok && l.now().Sub(at) < l.ttl
}

// oneShotKey identifies a one-shot request of one object.
func (c *call) oneShotKey(op, value string) string {
	return string(c.parent.UID) + "\x00" + op + "\x00" + value
}
