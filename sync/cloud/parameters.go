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

// ParameterTemplates are OTC's parameter templates ("configurations"), which a create can name
// (CreateInstanceOpts.ConfigurationID) so that a new instance starts with their values.
type ParameterTemplates interface {
	// ListParameterTemplates returns every template of the project, the engines' defaults
	// included, without their parameters.
	ListParameterTemplates(ctx context.Context) ([]ParameterTemplate, error)
	// TemplateParameters returns a template's parameters: a default template's are what OTC
	// takes for its engine version (names, types, ranges, flags).
	TemplateParameters(ctx context.Context, id string) ([]Parameter, error)
	// CreateParameterTemplate creates a template with these values. A name taken is of kind
	// Conflict.
	CreateParameterTemplate(ctx context.Context, opts ParameterTemplateOpts) (*ParameterTemplate, error)
	// DeleteParameterTemplate deletes a template; one that does not exist is of kind NotFound.
	DeleteParameterTemplate(ctx context.Context, id string) error
}

// ParameterTemplate is one of OTC's parameter templates.
type ParameterTemplate struct {
	ID, Name, Description string
	// Engine is OTC's datastore name (lowercase: mysql, postgresql, sqlserver); Version the
	// engine version, e.g. "8.0".
	Engine, Version string
	// UserDefined is false for an engine version's default template.
	UserDefined bool
}

// ParameterTemplateOpts is what CreateParameterTemplate needs.
type ParameterTemplateOpts struct {
	Name, Description string
	// Engine and Version are the datastore as a create names it (MySQL, 8.0).
	Engine, Version string
	Values          map[string]string
}
