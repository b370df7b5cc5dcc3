// Package otcsim simulates the parts of Open Telekom Cloud that the project drives through the
// gophertelekomcloud SDK: IAM (tokens, catalog, temporary AK/SK), RDS v3, VPC/Neutron lookups and
// Cloud Eye. It is an in-memory HTTP server meant to be driven by the real SDK in tests and demos.
//
// All state lives in a Sim; there is no global state. Transient states are a function of the Sim's
// Clock: an operation records when it started and how long it lasts, and every request first
// advances the state to "now". With a ManualClock, tests are deterministic.
package otcsim

import (
	"encoding/hex"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sort"
	"sync"
	"time"
)

// Sim is one simulated OTC tenant. It is safe for concurrent use.
type Sim struct {
	opts Options
	log  *slog.Logger

	handler http.Handler

	closeOnce sync.Once
	closed    chan struct{} // releases hanging requests

	mu       sync.Mutex // guards everything below
	faultRng *rand.Rand
	idRng    *rand.Rand
	seq      int

	userID, domainID string
	tokens           map[string]*token
	credentials      map[string]*tempCredential // by access key

	vpcs    []*vpc
	subnets []*subnet
	groups  []*secGroup

	instances      map[string]*instance
	backups        map[string]*backup
	jobs           map[string]*job
	configurations map[string]*configuration
	alarms         map[string]*alarm
	metrics        map[metricKey]float64

	faults []*faultState

	calls    map[string]int
	mutating int
}

// New returns a Sim with the seed network (VPC and subnet "frank-test", security groups "golang" and
// "default") and no instances.
func New(opts Options) *Sim {
	opts = opts.withDefaults()
	opts.Endpoints = validEndpoints(opts.Endpoints, opts.Logger)
	s := &Sim{
		opts:           opts,
		log:            opts.Logger,
		closed:         make(chan struct{}),
		faultRng:       rand.New(rand.NewPCG(uint64(opts.Seed), 0x0fa17)),
		idRng:          rand.New(rand.NewPCG(uint64(opts.Seed), 0x1d5)),
		tokens:         map[string]*token{},
		credentials:    map[string]*tempCredential{},
		instances:      map[string]*instance{},
		backups:        map[string]*backup{},
		jobs:           map[string]*job{},
		configurations: map[string]*configuration{},
		alarms:         map[string]*alarm{},
		metrics:        map[metricKey]float64{},
		calls:          map[string]int{},
	}
	s.userID = stableHex("user/" + opts.Username)
	s.domainID = stableHex("domain/" + opts.DomainName)
	s.seedNetwork()
	s.seedConfigurations()
	s.handler = s.routes()
	return s
}

// Handler returns the simulator's HTTP handler. Mount it at the root of a server.
func (s *Sim) Handler() http.Handler { return s.handler }

// Close releases requests held by a FaultHang. The Sim stays usable.
func (s *Sim) Close() {
	s.closeOnce.Do(func() { close(s.closed) })
}

// ProjectID is the id of the simulated project.
func (s *Sim) ProjectID() string { return s.opts.ProjectID }

// Options returns the effective options (defaults applied).
func (s *Sim) Options() Options { return s.opts }

// now returns the simulated time.
func (s *Sim) now() time.Time { return s.opts.Clock.Now() }

// lockAt locks the state, advances it to the current time and returns that time.
// The caller must unlock s.mu.
func (s *Sim) lockAt() time.Time {
	s.mu.Lock()
	now := s.now()
	s.advance(now)
	return now
}

// advance applies every transition that is due at now, in this order: the operations that end,
// the backups whose delete ends, storage autoscaling (rds_actions.go), and OTC's start of an
// instance stopped for seven days (rds_settings.go); each step oldest instance first. It is
// idempotent.
func (s *Sim) advance(now time.Time) {
	// NOTE: this runs on every request; sorting only the instances with a due operation keeps a
	// fleet of 10,000 (test/scale) from paying a sort of all of them per request.
	for _, in := range s.sortedInstancesWhere(func(in *instance) bool { return in.op != nil && !now.Before(in.op.end) }) {
		if in.op != nil && !now.Before(in.op.end) {
			op := in.op
			in.op = nil
			if op.finish != nil {
				op.finish(in, op.end)
			}
			in.updated = op.end
		}
		if !in.endpointPinned {
			in.endpointHost, in.endpointPort = s.endpointOf(in)
		}
	}
	for id, b := range s.backups {
		if b.deleting && !now.Before(b.deleteEnd) {
			delete(s.backups, id)
		}
	}
	// NOTE: one scan for the two steps after the operations, made after them: they see the
	// instances as the operations left them (a stop that ended starts its seven days, a deleted
	// instance is gone; TestAdvanceOrder), so it cannot be the scan before them. Neither step
	// changes which instances the other takes: autoscaling grows an ACTIVE or STORAGE_FULL
	// instance and stops none, the start starts a SHUTDOWN one and sets no policy.
	both := s.sortedInstancesEach(autoscaled, stoppedByStop)
	for _, in := range both[0] {
		s.autoscale(in, now)
	}
	for _, in := range both[1] {
		s.autoStart(in, now)
	}
}

// sortedInstances returns all instances, oldest first.
func (s *Sim) sortedInstances() []*instance {
	return s.sortedInstancesWhere(func(*instance) bool { return true })
}

// sortedInstancesWhere returns the instances that keep accepts, oldest first.
func (s *Sim) sortedInstancesWhere(keep func(*instance) bool) []*instance {
	return s.sortedInstancesEach(keep)[0]
}

// sortedInstancesEach returns, in one scan of the instances, for each of keeps the instances it
// accepts, oldest first.
func (s *Sim) sortedInstancesEach(keeps ...func(*instance) bool) [][]*instance {
	out := make([][]*instance, len(keeps))
	for _, in := range s.instances {
		for i, keep := range keeps {
			if keep(in) {
				out[i] = append(out[i], in)
			}
		}
	}
	for _, list := range out {
		sort.Slice(list, func(i, j int) bool { return list[i].seq < list[j].seq })
	}
	return out
}

func (s *Sim) nextSeq() int {
	s.seq++
	return s.seq
}

// randHex returns n random hex digits from the seeded id source.
func (s *Sim) randHex(n int) string {
	b := make([]byte, (n+1)/2)
	for i := range b {
		b[i] = byte(s.idRng.UintN(256))
	}
	return hex.EncodeToString(b)[:n]
}

// randUUID returns a random RFC 4122 version 4 UUID from the seeded id source.
func (s *Sim) randUUID() string {
	return uuidFromHex(s.randHex(32))
}

func uuidFromHex(h string) string {
	b := []byte(h)
	b[12] = '4'
	b[16] = "89ab"[int(b[16])%4]
	return fmt.Sprintf("%s-%s-%s-%s-%s", b[0:8], b[8:12], b[12:16], b[16:20], b[20:32])
}
