package cloudtest

import (
	"context"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// ParametersFns holds the function fields of cloud.Parameters. It is embedded in Fake.
type ParametersFns struct {
	InstanceParametersFn func(ctx context.Context, id string) ([]cloud.Parameter, error)
	UpdateParametersFn   func(ctx context.Context, id string, values map[string]string) (cloud.ParametersChange, error)

	ListParameterTemplatesFn  func(ctx context.Context) ([]cloud.ParameterTemplate, error)
	TemplateParametersFn      func(ctx context.Context, id string) ([]cloud.Parameter, error)
	CreateParameterTemplateFn func(ctx context.Context, opts cloud.ParameterTemplateOpts) (*cloud.ParameterTemplate, error)
	DeleteParameterTemplateFn func(ctx context.Context, id string) error
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

// ListParameterTemplates implements cloud.ParameterTemplates.
func (f *Fake) ListParameterTemplates(ctx context.Context) ([]cloud.ParameterTemplate, error) {
	f.record("ListParameterTemplates")
	if f.ListParameterTemplatesFn == nil {
		return nil, unexpected("ListParameterTemplates")
	}
	return f.ListParameterTemplatesFn(ctx)
}

// TemplateParameters implements cloud.ParameterTemplates.
func (f *Fake) TemplateParameters(ctx context.Context, id string) ([]cloud.Parameter, error) {
	f.record("TemplateParameters")
	if f.TemplateParametersFn == nil {
		return nil, unexpected("TemplateParameters")
	}
	return f.TemplateParametersFn(ctx, id)
}

// CreateParameterTemplate implements cloud.ParameterTemplates.
func (f *Fake) CreateParameterTemplate(ctx context.Context, opts cloud.ParameterTemplateOpts) (*cloud.ParameterTemplate, error) {
	f.record("CreateParameterTemplate")
	if f.CreateParameterTemplateFn == nil {
		return nil, unexpected("CreateParameterTemplate")
	}
	return f.CreateParameterTemplateFn(ctx, opts)
}

// DeleteParameterTemplate implements cloud.ParameterTemplates.
func (f *Fake) DeleteParameterTemplate(ctx context.Context, id string) error {
	f.record("DeleteParameterTemplate")
	if f.DeleteParameterTemplateFn == nil {
		return unexpected("DeleteParameterTemplate")
	}
	return f.DeleteParameterTemplateFn(ctx, id)
}
