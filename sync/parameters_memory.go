package reconcile

import (
	"maps"
	"slices"
	"sync"
	"time"
)

// parametersMemory remembers, per instance, the last values this process set that wait for a
// restart (parameters.go). OTC shows no pending restart: a call whose answer was lost, or a
// duplicate call on an older status, reads the values already set and finds nothing to do, so
// without this its answer would forget that a restart is owed. The remembered change is merged
// into a status that predates it (parametersInput.remembered).
//
// NOTE: like the restarts sent (ledger.go), it is this process's: a call on another replica with
// an older status can still forget the pending restart until the values change again.
type parametersMemory struct {
	mu  sync.Mutex
	now func() time.Time
	m   map[string]pendingChange // by instance id
}

// pendingChange is a change of values that waits for a restart: the parameters, status.restartRequest
// when they were set, and when.
type pendingChange struct {
	names          []string
	restartRequest string
	changed        time.Time
}

// parametersMemoryTTL is how long a pending change is remembered: far beyond any lost answer.
const parametersMemoryTTL = 24 * time.Hour

func newParametersMemory(now func() time.Time) *parametersMemory {
	return &parametersMemory{now: now, m: map[string]pendingChange{}}
}

// remembered is the instance's pending change, or nil.
func (p *parametersMemory) remembered(id string) *pendingChange {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.m[id]
	if !ok || p.now().Sub(c.changed) >= parametersMemoryTTL {
		return nil
	}
	c.names = slices.Clone(c.names)
	return &c
}

// record keeps the instance's pending change, the later of two.
func (p *parametersMemory) record(id string, c pendingChange) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	maps.DeleteFunc(p.m, func(_ string, old pendingChange) bool { return now.Sub(old.changed) >= parametersMemoryTTL })
	if old, ok := p.m[id]; ok && old.changed.After(c.changed) {
		return
	}
	c.names = slices.Clone(c.names)
	p.m[id] = c
}
