package v1alpha1

import (
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConditionParameters reports spec.parameters: True (ParametersApplied) while OTC runs the
// instance with them, False while a value set waits for a restart (ParametersPendingRestart) or
// while one cannot be set (InvalidParameters, ParametersIgnored). It is only present while
// spec.parameters names any.
const ConditionParameters = "Parameters"

// The values of spec.parametersrestart: who restarts the instance when a parameter set needs it.
const (
	// ParametersRestartManual: the values are set and the pending restart reported; the instance
	// restarts only when spec.restartrequest asks for it. The default: a production database is
	// never restarted unasked.
	ParametersRestartManual = "Manual"
	// ParametersRestartImmediate: the hooks restart the instance as soon as it is ACTIVE again
	// after the values were set.
	ParametersRestartImmediate = "Immediate"
	// ParametersRestartInMaintenanceWindow: the hooks restart the instance in its maintenance
	// window (OTC's, as spec.maintenancewindow sets it), ACTIVE with nothing in flight.
	ParametersRestartInMaintenanceWindow = "InMaintenanceWindow"
)

// ParametersStatus is what the hooks last saw and did of spec.parameters.
type ParametersStatus struct {
	// Applied are the spec's parameters as OTC reported them set on the instance when the hooks
	// last read them or set them: a spec that names the same values needs no read before the next
	// drift check.
	Applied map[string]string `json:"applied,omitempty"`
	// PendingRestart are the parameters set whose values take effect only at the next restart,
	// sorted.
	PendingRestart []string `json:"pendingRestart,omitempty"`
	// RestartRequest is status.restartRequest when they were set: a restartrequest handled after
	// that (a restart the hooks issued) brings them into effect.
	RestartRequest string `json:"restartRequest,omitempty"`
	// Generation is the spec generation whose parameters were last checked against OTC.
	Generation int64 `json:"generation,omitempty"`
	// Changed is when the hooks last set values.
	Changed *metav1.Time `json:"changed,omitempty"`
	// Template is the parameter template the controller made for the create: the object's
	// templates are deleted once the instance is ACTIVE, and this is empty again.
	Template string `json:"template,omitempty"`
	// Checked is when the hooks last read the instance's parameters from OTC (the drift check).
	Checked *metav1.Time `json:"checked,omitempty"`
	// Flavor is the instance's flavor when they were checked: OTC derives some defaults from the
	// flavor's memory, so another flavor makes a check due.
	Flavor string `json:"flavor,omitempty"`
}

// DeepCopy returns a copy that shares no memory with p.
func (p *ParametersStatus) DeepCopy() *ParametersStatus {
	if p == nil {
		return nil
	}
	out := *p
	out.Applied = maps.Clone(p.Applied)
	out.PendingRestart = append([]string(nil), p.PendingRestart...)
	if p.Changed != nil {
		t := *p.Changed
		out.Changed = &t
	}
	if p.Checked != nil {
		t := *p.Checked
		out.Checked = &t
	}
	return &out
}
