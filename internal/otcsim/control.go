package otcsim

import (
	"fmt"
	"net/http"
	"time"
)

// The control API (Options.EnableControl) lets demos and out-of-process tests steer the simulator.
// It needs no credentials and is not counted. All bodies are JSON. One name per thing across the
// calls: "now" is the simulated time, "calls" the requests per operation, "mutating" their sum over
// the mutating operations.
//
//	GET    /_sim/state                          {"now","project_id","instances","backups","alarms","faults","calls","mutating"}
//	GET    /_sim/counters                       {"calls":{op:n},"mutating":n}
//	DELETE /_sim/counters                       reset the counters
//	GET    /_sim/faults                         the active faults
//	POST   /_sim/faults                         add {"spec":"CreateInstance:commit-drop:rate=0.5"} or a Fault object
//	DELETE /_sim/faults                         clear the faults
//	POST   /_sim/clock/advance                  {"duration":"30s"} -> {"now":…} (manual clock only)
//	POST   /_sim/instances/{id}/status          {"status":"FAILED"}
//	POST   /_sim/instances/{id}/endpoint        {"host":"127.0.0.1","port":3307}
//	POST   /_sim/instances/{id}/fail-next-backup
//	GET    /_sim/instances/{id}/parameters      {"values":{name:value},"pending_restart":[names]}
//	POST   /_sim/instances/{id}/parameters      {"values":{name:value}}: a change made in the console
//	POST   /_sim/alarms/{id}/state              {"state":"alarm"}
//	POST   /_sim/metrics                        {"instance_id":"…","metric":"rds001_cpu_util","value":93.5}
func (s *Sim) controlRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /_sim/state", s.ctlState)
	mux.HandleFunc("GET /_sim/counters", s.ctlCounters)
	mux.HandleFunc("DELETE /_sim/counters", func(w http.ResponseWriter, r *http.Request) {
		s.ResetCounters()
		writeEmpty(w, http.StatusNoContent)
	})
	mux.HandleFunc("GET /_sim/faults", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"faults": faultViews(s.Faults())})
	})
	mux.HandleFunc("POST /_sim/faults", s.ctlAddFault)
	mux.HandleFunc("DELETE /_sim/faults", func(w http.ResponseWriter, r *http.Request) {
		s.ClearFaults()
		writeEmpty(w, http.StatusNoContent)
	})
	mux.HandleFunc("POST /_sim/clock/advance", s.ctlAdvance)
	mux.HandleFunc("POST /_sim/instances/{id}/status", s.ctlSetStatus)
	mux.HandleFunc("POST /_sim/instances/{id}/endpoint", s.ctlSetEndpoint)
	mux.HandleFunc("POST /_sim/instances/{id}/fail-next-backup", func(w http.ResponseWriter, r *http.Request) {
		if _, ok := s.Instance(r.PathValue("id")); !ok {
			ctlError(w, http.StatusNotFound, fmt.Errorf("instance %s does not exist", r.PathValue("id")))
			return
		}
		s.FailNextBackup(r.PathValue("id"))
		writeEmpty(w, http.StatusNoContent)
	})
	mux.HandleFunc("GET /_sim/instances/{id}/parameters", s.ctlGetParameters)
	mux.HandleFunc("POST /_sim/instances/{id}/parameters", s.ctlSetParameters)
	mux.HandleFunc("POST /_sim/alarms/{id}/state", s.ctlSetAlarmState)
	mux.HandleFunc("POST /_sim/metrics", s.ctlSetMetric)
}

func ctlError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, map[string]any{"error": err.Error()})
}

func decodeControl(w http.ResponseWriter, r *http.Request, v any) bool {
	if e := decodeBody(r, v); e != nil {
		ctlError(w, http.StatusBadRequest, fmt.Errorf("%s", e.Message))
		return false
	}
	return true
}

// faultView is a Fault with durations as strings.
type faultView struct {
	Op         string  `json:"op"`
	Kind       string  `json:"kind"`
	Rate       float64 `json:"rate,omitempty"`
	Count      int     `json:"count,omitempty"`
	Status     int     `json:"status,omitempty"`
	RetryAfter string  `json:"retry_after,omitempty"`
	Delay      string  `json:"delay,omitempty"`
}

func faultViews(fs []Fault) []faultView {
	out := make([]faultView, 0, len(fs))
	for _, f := range fs {
		v := faultView{Op: f.Op, Kind: f.Kind.String(), Rate: f.Rate, Count: f.Count, Status: f.Status}
		if f.RetryAfter > 0 {
			v.RetryAfter = f.RetryAfter.String()
		}
		if f.Delay > 0 {
			v.Delay = f.Delay.String()
		}
		if v.Op == "" {
			v.Op = "*"
		}
		out = append(out, v)
	}
	return out
}

func (s *Sim) ctlState(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"now":        s.now().UTC().Format(time.RFC3339),
		"project_id": s.opts.ProjectID,
		"instances":  s.Instances(),
		"backups":    s.Backups(),
		"alarms":     s.Alarms(),
		"faults":     faultViews(s.Faults()),
		"calls":      s.CallCounts(),
		"mutating":   s.MutatingCalls(),
	})
}

func (s *Sim) ctlCounters(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"calls": s.CallCounts(), "mutating": s.MutatingCalls()})
}

func (s *Sim) ctlAddFault(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Spec string `json:"spec"`
		faultView
	}
	if !decodeControl(w, r, &req) {
		return
	}
	spec := req.Spec
	if spec == "" {
		// Build the same text form from the object, so both go through one parser.
		spec = req.Op + ":" + req.Kind + ":"
		if req.Op == "" {
			spec = "*:" + req.Kind + ":"
		}
		for k, v := range map[string]string{
			"rate": fmt.Sprint(req.Rate), "count": fmt.Sprint(req.Count), "status": fmt.Sprint(req.Status),
			"retry-after": req.RetryAfter, "delay": req.Delay,
		} {
			if v != "" && v != "0" {
				spec += k + "=" + v + ","
			}
		}
	}
	f, err := ParseFault(spec)
	if err != nil {
		ctlError(w, http.StatusBadRequest, err)
		return
	}
	s.AddFault(f)
	writeJSON(w, http.StatusCreated, map[string]any{"fault": faultViews([]Fault{f})[0]})
}

func (s *Sim) ctlAdvance(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Duration string `json:"duration"`
	}
	if !decodeControl(w, r, &req) {
		return
	}
	d, err := time.ParseDuration(req.Duration)
	if err != nil || d < 0 {
		ctlError(w, http.StatusBadRequest, fmt.Errorf("duration %q: want a positive Go duration such as 30s", req.Duration))
		return
	}
	mc, ok := s.opts.Clock.(*ManualClock)
	if !ok {
		ctlError(w, http.StatusConflict, fmt.Errorf("the simulator runs on real time; start it with a manual clock"))
		return
	}
	mc.Advance(d)
	writeJSON(w, http.StatusOK, map[string]any{"now": mc.Now().UTC().Format(time.RFC3339)})
}

func (s *Sim) ctlSetStatus(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Status string `json:"status"`
	}
	if !decodeControl(w, r, &req) {
		return
	}
	if err := s.ForceInstanceStatus(r.PathValue("id"), req.Status); err != nil {
		ctlError(w, http.StatusBadRequest, err)
		return
	}
	writeEmpty(w, http.StatusNoContent)
}

func (s *Sim) ctlSetEndpoint(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Host string `json:"host"`
		Port int    `json:"port"`
	}
	if !decodeControl(w, r, &req) {
		return
	}
	if err := s.SetInstanceEndpoint(r.PathValue("id"), req.Host, req.Port); err != nil {
		ctlError(w, http.StatusBadRequest, err)
		return
	}
	writeEmpty(w, http.StatusNoContent)
}

func (s *Sim) ctlSetAlarmState(w http.ResponseWriter, r *http.Request) {
	var req struct {
		State string `json:"state"`
	}
	if !decodeControl(w, r, &req) {
		return
	}
	if err := s.SetAlarmState(r.PathValue("id"), req.State); err != nil {
		ctlError(w, http.StatusBadRequest, err)
		return
	}
	writeEmpty(w, http.StatusNoContent)
}

func (s *Sim) ctlSetMetric(w http.ResponseWriter, r *http.Request) {
	var req struct {
		InstanceID string  `json:"instance_id"`
		Metric     string  `json:"metric"`
		Value      float64 `json:"value"`
	}
	if !decodeControl(w, r, &req) {
		return
	}
	if req.InstanceID == "" || req.Metric == "" {
		ctlError(w, http.StatusBadRequest, fmt.Errorf("instance_id and metric are required"))
		return
	}
	s.SetMetric(req.InstanceID, req.Metric, req.Value)
	writeEmpty(w, http.StatusNoContent)
}
