package cloudtest

import (
	"context"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// ParametersFns holds the function fields of cloud.Parameters. It is embedded in Fake.
type ParametersFns struct {
	InstanceParametersFn func(ctx context.Context, id string) ([]cloud.Parameter, error)
	UpdateParametersFn   func(ctx context.Context, id string, values map[string]string) (cloud.ParametersChange, error)
}

// InstanceParameters implements cloud.Parameters.
func (f *Fake) InstanceParameters(ctx context.Context, id string) ([]cloud.Parameter, error) {
	f.record("InstanceParameters")
	if f.InstanceParametersFn == nil {
		return nil, unexpected("InstanceParameters")
	}
	return f.InstanceParametersFn(ctx, id)
}

// UpdateParameters implements cloud.Parameters.
func (f *Fake) UpdateParameters(ctx context.Context, id string, values map[string]string) (cloud.ParametersChange, error) {
	f.record("UpdateParameters")
	if f.UpdateParametersFn == nil {
		return cloud.ParametersChange{}, unexpected("UpdateParameters")
	}
	return f.UpdateParametersFn(ctx, id, values)
}
