package otc

import (
	"context"

	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/flavors"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// ListFlavors returns the spec codes OTC offers for an engine and version.
func (c *Client) ListFlavors(ctx context.Context, engine, version string) ([]cloud.Flavor, error) {
	const op = "ListFlavors"
	if engine == "" {
		return nil, cloud.Errorf(cloud.KindInvalid, op, "", "no engine")
	}
	return call(ctx, c, op, func(s services) ([]cloud.Flavor, error) {
		res, err := flavors.ListFlavors(s.rds, flavors.ListOpts{DatabaseName: engine, VersionName: version})
		if err != nil {
			return nil, err
		}
		out := make([]cloud.Flavor, 0, len(res))
		for _, f := range res {
			out = append(out, cloud.Flavor{
				SpecCode: f.SpecCode,
				VCPUs:    f.VCPUs,
				RAMGB:    f.RAM,
				Mode:     f.InstanceMode,
				Versions: f.VersionName,
				AZStatus: f.AzStatus,
			})
		}
		return out, nil
	})
}
