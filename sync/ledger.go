package reconcile

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// ledger remembers, for a while, the restarts this process sent (a key per object and
// restartrequest value). It is a second line behind the mark in OTC (oneshot.go), never the
// record, and never decides alone: it only tells a call that observes the mark and an ACTIVE
// instance, but no status recording the restart, that this process made it already.
//
// NOTE: OTC keeps no trace of a finished restart. A restart whose answer was lost, retried after
// the reboot ended, is indistinguishable from a restart still owed; within the process that sent
// it the ledger tells them apart. Another replica cannot (oneshot.go).
type ledger struct {
	ttl time.Duration
	now func() time.Time

	mu   sync.Mutex
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
func oneShotKey(uid types.UID, op, value string) string {
	return string(uid) + "\x00" + op + "\x00" + value
}
