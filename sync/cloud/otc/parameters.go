package otc

import (
	"context"
	"slices"

	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/configurations"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// InstanceParameters returns the instance's parameters as OTC reports them (GET
// /instances/{id}/configurations).
func (c *Client) InstanceParameters(ctx context.Context, id string) ([]cloud.Parameter, error) {
	const op = "InstanceParameters"
	if err := checkFilter(op, "instance id", id); err != nil {
		return nil, err
	}
	return call(ctx, c, op, func(s services) ([]cloud.Parameter, error) {
		res, err := configurations.GetForInstance(s.rds, id)
		if err != nil {
			return nil, err
		}
		return toParameters(res.Parameters), nil
	})
}

// UpdateParameters sets the values in one change (PUT /instances/{id}/configurations).
//
// NOTE: OTC takes every value as a string, and answers a name it does not know, or a read-only
// one, in ignored_params instead of refusing the request.
func (c *Client) UpdateParameters(ctx context.Context, id string, values map[string]string) (cloud.ParametersChange, error) {
	const op = "UpdateParameters"
	if err := checkFilter(op, "instance id", id); err != nil {
		return cloud.ParametersChange{}, err
	}
	if len(values) == 0 {
		return cloud.ParametersChange{}, cloud.Errorf(cloud.KindInvalid, op, "", "no parameter values to set")
	}
	return call(ctx, c, op, func(s services) (cloud.ParametersChange, error) {
		vals := make(map[string]any, len(values))
		for k, v := range values {
			vals[k] = v
		}
		res, err := configurations.UpdateInstanceConfiguration(s.rds, configurations.UpdateInstanceConfigurationOpts{InstanceId: id, Values: vals})
		if err != nil {
			return cloud.ParametersChange{}, err
		}
		ignored := slices.Clone(res.IgnoredParams)
		slices.Sort(ignored)
		return cloud.ParametersChange{RestartRequired: res.RestartRequired, JobID: res.JobId, Ignored: ignored}, nil
	})
}

// ListParameterTemplates returns the project's parameter templates (GET /configurations).
func (c *Client) ListParameterTemplates(ctx context.Context) ([]cloud.ParameterTemplate, error) {
	const op = "ListParameterTemplates"
	return call(ctx, c, op, func(s services) ([]cloud.ParameterTemplate, error) {
		res, err := configurations.List(s.rds)
		if err != nil {
			return nil, err
		}
		out := make([]cloud.ParameterTemplate, 0, len(res))
		for _, t := range res {
			out = append(out, toTemplate(t))
		}
		return out, nil
	})
}

// TemplateParameters returns a template's parameters (GET /configurations/{id}).
func (c *Client) TemplateParameters(ctx context.Context, id string) ([]cloud.Parameter, error) {
	const op = "TemplateParameters"
	if err := checkFilter(op, "template id", id); err != nil {
		return nil, err
	}
	return call(ctx, c, op, func(s services) ([]cloud.Parameter, error) {
		res, err := configurations.Get(s.rds, id)
		if err != nil {
			return nil, err
		}
		return toParameters(res.Parameters), nil
	})
}

// CreateParameterTemplate creates a template (POST /configurations).
func (c *Client) CreateParameterTemplate(ctx context.Context, o cloud.ParameterTemplateOpts) (*cloud.ParameterTemplate, error) {
	const op = "CreateParameterTemplate"
	return call(ctx, c, op, func(s services) (*cloud.ParameterTemplate, error) {
		res, err := configurations.Create(s.rds, configurations.CreateOpts{
			Name: o.Name, Description: o.Description, Values: o.Values,
			DataStore: configurations.DataStore{Type: o.Engine, Version: o.Version},
		})
		if err != nil {
			return nil, err
		}
		t := toTemplate(*res)
		return &t, nil
	})
}

// DeleteParameterTemplate deletes a template (DELETE /configurations/{id}).
func (c *Client) DeleteParameterTemplate(ctx context.Context, id string) error {
	const op = "DeleteParameterTemplate"
	if err := checkFilter(op, "template id", id); err != nil {
		return err
	}
	_, err := call(ctx, c, op, func(s services) (struct{}, error) {
		return struct{}{}, configurations.Delete(s.rds, id)
	})
	return err
}

func toTemplate(t configurations.Configuration) cloud.ParameterTemplate {
	return cloud.ParameterTemplate{
		ID: t.ID, Name: t.Name, Description: t.Description, Engine: t.DatastoreName,
		Version: t.DatastoreVersionName, UserDefined: t.UserDefined,
	}
}

func toParameters(ps []configurations.Parameter) []cloud.Parameter {
	out := make([]cloud.Parameter, 0, len(ps))
	for _, p := range ps {
		out = append(out, cloud.Parameter{
			Name: p.Name, Value: p.Value, Type: p.Type, ValueRange: p.ValueRange,
			RestartRequired: p.RestartRequired, ReadOnly: p.ReadOnly,
		})
	}
	return out
}
