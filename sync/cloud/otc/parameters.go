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
		out := make([]cloud.Parameter, 0, len(res.Parameters))
		for _, p := range res.Parameters {
			out = append(out, cloud.Parameter{
				Name: p.Name, Value: p.Value, Type: p.Type, ValueRange: p.ValueRange,
				RestartRequired: p.RestartRequired, ReadOnly: p.ReadOnly,
			})
		}
		return out, nil
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

