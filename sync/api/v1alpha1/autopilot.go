package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ConditionAutopilot reports what autopilot can do: True while it watches the instance, False
// with a reason when it cannot act (AutopilotAtLimit, AutopilotMetricsUnavailable, ...). It is
// only present while spec.autopilot is on.
const ConditionAutopilot = "Autopilot"

// AutopilotStatus is autopilot's report and memory.
type AutopilotStatus struct {
	// Last is the last change autopilot made, or the last growth OTC's storage autoscaling made.
	Last *AutopilotAction `json:"last,omitempty"`
	// Next says what autopilot would do next, and when.
	Next string `json:"next,omitempty"`
	// FlavorFloor is spec.flavorref when autopilot last moved the flavor, and Flavor where it
	// moved it: while both hold, the instance's flavor is no drift, even with autopilot off.
	FlavorFloor string `json:"flavorFloor,omitempty"`
	Flavor      string `json:"flavor,omitempty"`
	// VolumeFloor is spec.volumesize when autopilot or OTC last grew the volume, and Volume the
	// size it grew to (GB).
	VolumeFloor int `json:"volumeFloor,omitempty"`
	Volume      int `json:"volume,omitempty"`
	// Storage is OTC's storage autoscaling policy as autopilot set it; nil where OTC offers none
	// for the engine (autopilot grows the volume itself).
	Storage *AutopilotStorage `json:"storage,omitempty"`
}

// AutopilotAction is one change autopilot made or saw.
type AutopilotAction struct {
	// Action is Resize, EnlargeVolume or CloudEnlargeVolume (OTC's autoscaling grew it).
	Action string `json:"action"`
	// Reason says why, with the measured value, e.g. "rds001_cpu_util 95.0% >= 90% for 15m".
	Reason string `json:"reason,omitempty"`
	From   string `json:"from,omitempty"`
	To     string `json:"to,omitempty"`
	// Time is when it was issued or seen.
	Time metav1.Time `json:"time"`
}

// AutopilotStorage is OTC's storage autoscaling policy.
type AutopilotStorage struct {
	// LimitGB is the largest size OTC grows to.
	LimitGB int `json:"limitGB,omitempty"`
	// TriggerFreePercent is the free space in percent below which OTC grows the volume.
	TriggerFreePercent int `json:"triggerFreePercent,omitempty"`
}

// DeepCopy returns a copy that shares no memory with a.
func (a *AutopilotStatus) DeepCopy() *AutopilotStatus {
	if a == nil {
		return nil
	}
	out := *a
	if a.Last != nil {
		l := *a.Last
		out.Last = &l
	}
	if a.Storage != nil {
		s := *a.Storage
		out.Storage = &s
	}
	return &out
}
