package cloud

import "context"

// Parameters are an instance's engine parameters (OTC's "configurations"): what OTC reports of
// them, and one change of their values.
type Parameters interface {
	// InstanceParameters returns every parameter of the instance as OTC reports it: its value now,
	// its type, the values it takes and whether a change needs a restart or is refused.
	InstanceParameters(ctx context.Context, id string) ([]Parameter, error)
	// UpdateParameters sets the values, in one change. OTC does not refuse a name it does not know
	// or a read-only one: it answers it ignored.
	UpdateParameters(ctx context.Context, id string, values map[string]string) (ParametersChange, error)
}

// Parameter is one engine parameter as OTC reports it for an instance.
type Parameter struct {
	Name  string
	Value string
	// Type is integer, float, string, boolean or list, as OTC names it.
	Type string
	// ValueRange is "lo-hi" for numbers, the allowed values comma-separated otherwise; empty: any.
	ValueRange      string
	RestartRequired bool
	ReadOnly        bool
}

// ParametersChange is OTC's answer to UpdateParameters.
type ParametersChange struct {
	// RestartRequired says a value set takes effect only once the instance is restarted.
	RestartRequired bool
	JobID           string
	// Ignored are the names OTC did not set: unknown to it, or read-only.
	Ignored []string
}
