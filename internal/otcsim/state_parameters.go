package otcsim

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
)

// ParametersView is what the simulator knows of an instance's parameters beyond what OTC's API
// shows: the values set (as GET /instances/{id}/configurations reports them) and those whose
// values take effect only at the next restart.
type ParametersView struct {
	// Values are every parameter's value as the API reports it, by name.
	Values map[string]string `json:"values"`
	// PendingRestart are the parameters set whose values are not in effect until a restart, sorted.
	PendingRestart []string `json:"pending_restart"`
}

// InstanceParameters returns the instance's parameters and those waiting for a restart.
func (s *Sim) InstanceParameters(id string) (ParametersView, bool) {
	s.lockAt()
	defer s.mu.Unlock()
	in := s.instances[id]
	if in == nil {
		return ParametersView{}, false
	}
	v := ParametersView{Values: map[string]string{}, PendingRestart: slices.Sorted(maps.Keys(in.pendingRestart))}
	for _, p := range paramsJSON(in.engine, in.version, in.flavor.ramGB, in.configValues) {
		v.Values[p["name"].(string)] = p["value"].(string)
	}
	if v.PendingRestart == nil {
		v.PendingRestart = []string{}
	}
	return v, true
}

// SetInstanceParameters changes the instance's parameters as a user in OTC's console does, behind
// the controller's back: checked like the API (an ACTIVE idle instance, values in range), unknown
// and read-only names ignored, a value that needs a restart pending until the next one. No call
// is counted.
func (s *Sim) SetInstanceParameters(id string, values map[string]string) (restart bool, ignored []string, err error) {
	s.lockAt()
	defer s.mu.Unlock()
	in := s.instances[id]
	if in == nil {
		return false, nil, fmt.Errorf("instance %s does not exist", id)
	}
	restart, ignored, apiErr := s.setParameters(in, values)
	if apiErr != nil {
		return false, nil, apiErr
	}
	return restart, ignored, nil
}

// ctlGetParameters serves GET /_sim/instances/{id}/parameters.
func (s *Sim) ctlGetParameters(w http.ResponseWriter, r *http.Request) {
	v, ok := s.InstanceParameters(r.PathValue("id"))
	if !ok {
		ctlError(w, http.StatusNotFound, fmt.Errorf("instance %s does not exist", r.PathValue("id")))
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// ctlSetParameters serves POST /_sim/instances/{id}/parameters {"values":{…}}: a console change.
func (s *Sim) ctlSetParameters(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Values map[string]string `json:"values"`
	}
	if !decodeControl(w, r, &req) {
		return
	}
	restart, ignored, err := s.SetInstanceParameters(r.PathValue("id"), req.Values)
	if err != nil {
		ctlError(w, http.StatusBadRequest, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"restart_required": restart, "ignored_params": nonNil(ignored)})
}
