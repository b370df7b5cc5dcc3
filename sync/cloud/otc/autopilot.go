package otc

import (
	"context"
	"strconv"
	"time"

	golangsdk "github.com/opentelekomcloud/gophertelekomcloud"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/ces/v1/metricdata"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/instances"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

var _ cloud.Monitor = (*Client)(nil)

// cesDimensions are the Cloud Eye instance dimensions of each engine (namespace SYS.RDS).
var cesDimensions = map[string]string{
	"MySQL":      "rds_cluster_id",
	"PostgreSQL": "postgresql_cluster_id",
	"SQLServer":  "rds_cluster_sqlserver_id",
}

// maxBatchMetrics is how many metrics one batch query may name.
const maxBatchMetrics = 10

// BatchMetrics reads up to 10 metrics in one Cloud Eye batch query: 5-minute averages.
func (c *Client) BatchMetrics(ctx context.Context, queries []cloud.MetricQuery, from, to time.Time) (map[cloud.MetricQuery][]cloud.Point, error) {
	const op = "BatchListMetricData"
	switch {
	case c.ces == nil:
		return nil, cloud.Errorf(cloud.KindUnavailable, op, "", "no Cloud Eye endpoint in the service catalog")
	case len(queries) == 0 || len(queries) > maxBatchMetrics:
		return nil, cloud.Errorf(cloud.KindInvalid, op, "", "1 to 10 metrics per query")
	}
	opts := metricdata.BatchListMetricDataOpts{
		From: from.UnixMilli(), To: to.UnixMilli(), Filter: "average",
		Period: strconv.Itoa(int(cloud.MetricPeriod / time.Second)),
	}
	byKey := map[[2]string]cloud.MetricQuery{}
	for _, q := range queries {
		dim := cesDimensions[q.Engine]
		if dim == "" {
			return nil, cloud.Errorf(cloud.KindInvalid, op, "", "no Cloud Eye dimension for engine %s", q.Engine)
		}
		opts.Metrics = append(opts.Metrics, metricdata.Metric{
			Namespace: "SYS.RDS", MetricName: q.Metric,
			Dimensions: []metricdata.MetricsDimension{{Name: dim, Value: q.InstanceID}},
		})
		byKey[[2]string{q.InstanceID, q.Metric}] = q
	}
	return call(ctx, c, op, func(s services) (map[cloud.MetricQuery][]cloud.Point, error) {
		res, err := metricdata.BatchListMetricData(s.ces, opts)
		if err != nil {
			return nil, err
		}
		out := map[cloud.MetricQuery][]cloud.Point{}
		for _, m := range res {
			if len(m.Dimensions) == 0 {
				continue
			}
			q, ok := byKey[[2]string{m.Dimensions[0].Value, m.MetricName}]
			if !ok || len(m.Datapoints) == 0 {
				continue
			}
			points := make([]cloud.Point, 0, len(m.Datapoints))
			for _, p := range m.Datapoints {
				points = append(points, cloud.Point{At: time.UnixMilli(p.Timestamp).UTC(), Value: p.Average})
			}
			out[q] = points
		}
		return out, nil
	})
}

// GetStorageAutoscaling reads the instance's storage autoscaling policy.
func (c *Client) GetStorageAutoscaling(ctx context.Context, id string) (cloud.StorageAutoscaling, error) {
	const op = "GetAutoScaling"
	if err := checkFilter(op, "instance id", id); err != nil {
		return cloud.StorageAutoscaling{}, err
	}
	return call(ctx, c, op, func(s services) (cloud.StorageAutoscaling, error) {
		res, err := instances.GetAutoScaling(s.rds, id)
		if err != nil {
			return cloud.StorageAutoscaling{}, err
		}
		out := cloud.StorageAutoscaling{Enabled: res.SwitchOption}
		if res.LimitSize != nil {
			out.LimitGB = *res.LimitSize
		}
		if res.TriggerThreshold != nil {
			out.TriggerFreePercent = *res.TriggerThreshold
		}
		return out, nil
	})
}

// SetStorageAutoscaling sets the instance's storage autoscaling policy.
func (c *Client) SetStorageAutoscaling(ctx context.Context, id string, p cloud.StorageAutoscaling) error {
	const op = "ManageAutoScaling"
	if err := checkFilter(op, "instance id", id); err != nil {
		return err
	}
	if !p.Enabled {
		// NOTE: the SDK's ScalingOpts marks switch_option required, so its body builder refuses
		// false (the zero value) before any request: switching off is sent as a plain body.
		_, err := call(ctx, c, op, func(s services) (struct{}, error) {
			_, err := s.rds.Put(s.rds.ServiceURL("instances", id, "disk-auto-expansion"),
				map[string]any{"switch_option": false}, nil, &golangsdk.RequestOpts{OkCodes: []int{200}})
			return struct{}{}, err
		})
		return err
	}
	opts := instances.ScalingOpts{SwitchOption: true, LimitSize: &p.LimitGB, TriggerThreshold: &p.TriggerFreePercent}
	_, err := call(ctx, c, op, func(s services) (struct{}, error) {
		return struct{}{}, instances.ManageAutoScaling(s.rds, id, opts)
	})
	return err
}
