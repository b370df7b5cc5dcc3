package otcsim

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// FaultKind is what an injected fault does to a request.
type FaultKind int

const (
	// FaultStatus answers with Status (default 500) and a proper error body; nothing is performed.
	FaultStatus FaultKind = iota + 1
	// FaultThrottle answers 429 with a Retry-After header; nothing is performed.
	FaultThrottle
	// FaultLatency waits Delay, then serves the request normally.
	FaultLatency
	// FaultHang never answers: it holds the request until the client gives up, the Sim is closed, or
	// Delay (default 5 minutes) passes, then closes the connection.
	FaultHang
	// FaultCommitThenDrop performs the request, then closes the connection without any response.
	FaultCommitThenDrop
)

// defaultHangCap bounds how long a FaultHang holds a request when Fault.Delay is zero.
const defaultHangCap = 5 * time.Minute

var faultKindNames = map[FaultKind]string{
	FaultStatus:         "status",
	FaultThrottle:       "throttle",
	FaultLatency:        "latency",
	FaultHang:           "hang",
	FaultCommitThenDrop: "commit-drop",
}

func (k FaultKind) String() string {
	if n, ok := faultKindNames[k]; ok {
		return n
	}
	return "FaultKind(" + strconv.Itoa(int(k)) + ")"
}

// ParseFaultKind parses the names String returns.
func ParseFaultKind(s string) (FaultKind, error) {
	for k, n := range faultKindNames {
		if strings.EqualFold(n, s) {
			return k, nil
		}
	}
	return 0, fmt.Errorf("unknown fault kind %q (want status, throttle, latency, hang or commit-drop)", s)
}

// MarshalText implements encoding.TextMarshaler.
func (k FaultKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (k *FaultKind) UnmarshalText(b []byte) error {
	v, err := ParseFaultKind(string(b))
	if err != nil {
		return err
	}
	*k = v
	return nil
}

// Fault is an injected failure.
type Fault struct {
	Op         string        `json:"op,omitempty"`          // operation name (see the Op* constants); "" or "*" = any
	Kind       FaultKind     `json:"kind"`                  //
	Rate       float64       `json:"rate,omitempty"`        // probability per matching request; 0 = always
	Count      int           `json:"count,omitempty"`       // how many times it fires; 0 = unlimited
	Status     int           `json:"status,omitempty"`      // FaultStatus: default 500
	RetryAfter time.Duration `json:"retry_after,omitempty"` // FaultThrottle: default 1s
	Delay      time.Duration `json:"delay,omitempty"`       // FaultLatency: the delay; FaultHang: the cap
}

// ParseFault parses "OP:KIND[:key=value[,key=value...]]", e.g. "CreateInstance:commit-drop:rate=0.5"
// or "*:status:status=503,count=2". Keys: rate, count, status, retry-after, delay.
func ParseFault(spec string) (Fault, error) {
	parts := strings.SplitN(spec, ":", 3)
	if len(parts) < 2 {
		return Fault{}, fmt.Errorf("fault %q: want OP:KIND[:key=value,...]", spec)
	}
	kind, err := ParseFaultKind(parts[1])
	if err != nil {
		return Fault{}, fmt.Errorf("fault %q: %w", spec, err)
	}
	f := Fault{Op: parts[0], Kind: kind}
	if f.Op == "*" {
		f.Op = ""
	}
	if f.Op != "" && !slices.Contains(Operations(), f.Op) {
		return Fault{}, fmt.Errorf("fault %q: unknown operation %q (want * or one of %s)", spec, f.Op, strings.Join(Operations(), ", "))
	}
	if len(parts) == 3 && parts[2] != "" {
		for kv := range strings.FieldsFuncSeq(parts[2], func(r rune) bool { return r == ',' || r == ':' }) {
			key, val, ok := strings.Cut(kv, "=")
			if !ok {
				return Fault{}, fmt.Errorf("fault %q: %q is not key=value", spec, kv)
			}
			if err := f.set(key, val); err != nil {
				return Fault{}, fmt.Errorf("fault %q: %w", spec, err)
			}
		}
	}
	return f, nil
}

func (f *Fault) set(key, val string) error {
	var err error
	switch key {
	case "rate":
		f.Rate, err = strconv.ParseFloat(val, 64)
		if err == nil && (f.Rate < 0 || f.Rate > 1) {
			err = fmt.Errorf("rate %v is outside 0..1", f.Rate)
		}
	case "count":
		f.Count, err = strconv.Atoi(val)
	case "status":
		f.Status, err = strconv.Atoi(val)
	case "retry-after", "retry_after":
		f.RetryAfter, err = parseSeconds(val)
	case "delay":
		f.Delay, err = time.ParseDuration(val)
	default:
		err = fmt.Errorf("unknown key %q", key)
	}
	return err
}

// parseSeconds parses a duration ("2s", "1m30s") or, as HTTP's Retry-After, a number of seconds ("7").
func parseSeconds(s string) (time.Duration, error) {
	if n, err := strconv.ParseUint(s, 10, 32); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	return time.ParseDuration(s)
}

func (f Fault) String() string {
	op := f.Op
	if op == "" {
		op = "*"
	}
	return fmt.Sprintf("%s:%s", op, f.Kind)
}

// faultState is a Fault with its remaining count.
type faultState struct {
	Fault
	fired int
}

// AddFault injects f. Faults are checked in the order they were added.
func (s *Sim) AddFault(f Fault) {
	if f.Op == "*" {
		f.Op = ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &faultState{Fault: f})
}

// ClearFaults removes every fault.
func (s *Sim) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

// Faults returns the active faults.
func (s *Sim) Faults() []Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Fault, 0, len(s.faults))
	for _, f := range s.faults {
		out = append(out, f.Fault)
	}
	return out
}

// faultPlan is what the faults decided for one request.
type faultPlan struct {
	delay       time.Duration // from FaultLatency
	terminal    *Fault        // FaultStatus, FaultThrottle or FaultHang
	commitThenD bool          // FaultCommitThenDrop
}

// pickFaults decides which faults fire for op. Latency faults add up; the first other fault that
// fires decides the outcome.
func (s *Sim) pickFaults(op string) faultPlan {
	s.mu.Lock()
	defer s.mu.Unlock()
	var plan faultPlan
	kept := s.faults[:0]
	for _, f := range s.faults {
		fires := (f.Op == "" || f.Op == op) &&
			(plan.terminal == nil && !plan.commitThenD || f.Kind == FaultLatency) &&
			(f.Rate <= 0 || s.faultRng.Float64() < f.Rate)
		if fires {
			f.fired++
			switch f.Kind {
			case FaultLatency:
				plan.delay += f.Delay
			case FaultCommitThenDrop:
				plan.commitThenD = true
			default:
				ff := f.Fault
				plan.terminal = &ff
			}
		}
		if f.Count == 0 || f.fired < f.Count {
			kept = append(kept, f)
		}
	}
	clear(s.faults[len(kept):])
	s.faults = kept
	return plan
}

// applyTerminal answers r according to a terminal fault. It returns when the answer is given.
func (s *Sim) applyTerminal(w http.ResponseWriter, r *http.Request, svc service, f *Fault) {
	switch f.Kind {
	case FaultThrottle:
		ra := f.RetryAfter
		if ra <= 0 {
			ra = time.Second
		}
		w.Header().Set("Retry-After", retryAfterSeconds(ra))
		writeError(w, svc, throttled(svc))
	case FaultHang:
		limit := f.Delay
		if limit <= 0 {
			limit = defaultHangCap
		}
		t := time.NewTimer(limit)
		defer t.Stop()
		select {
		case <-r.Context().Done():
		case <-s.closed:
		case <-t.C:
		}
		dropConnection(w)
	default:
		status := f.Status
		if status == 0 {
			status = http.StatusInternalServerError
		}
		writeError(w, svc, serverError(svc, status))
	}
}

// dropConnection closes the client connection without writing a response. If the connection cannot
// be hijacked (HTTP/2), it aborts the handler, which makes net/http reset the stream.
func dropConnection(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}
