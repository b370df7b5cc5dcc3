package cloud

import (
	"context"
	"time"
)

// Cloud Eye metrics autopilot reads (namespace SYS.RDS), all in percent.
const (
	MetricCPU  = "rds001_cpu_util"
	MetricMem  = "rds002_mem_util"
	MetricDisk = "rds039_disk_util"
)

// MetricPeriod is the Cloud Eye aggregation period autopilot reads: 5-minute averages, as the
// original's alarms used.
const MetricPeriod = 5 * time.Minute

// Point is one aggregated Cloud Eye datapoint: the average over [At, At+MetricPeriod).
type Point struct {
	At    time.Time
	Value float64
}

// MetricQuery names one metric of one instance.
type MetricQuery struct {
	InstanceID string
	Engine     string // MySQL, PostgreSQL or SQLServer: it picks the Cloud Eye dimension
	Metric     string
}

// StorageAutoscaling is OTC's storage autoscaling policy of an instance.
type StorageAutoscaling struct {
	Enabled            bool
	LimitGB            int
	TriggerFreePercent int // 10, 15 or 20
}

// Monitor is what autopilot asks of OTC beyond Cloud: Cloud Eye reads and the storage
// autoscaling policy. The OTC client implements it; a client that does not leaves autopilot
// without metrics (condition AutopilotMetricsUnavailable).
type Monitor interface {
	// BatchMetrics reads up to 10 metrics in one Cloud Eye call: 5-minute averages over
	// [from, to], oldest first. A metric Cloud Eye has no data for has no entry.
	BatchMetrics(ctx context.Context, queries []MetricQuery, from, to time.Time) (map[MetricQuery][]Point, error)
	// GetStorageAutoscaling reads the instance's storage autoscaling policy.
	GetStorageAutoscaling(ctx context.Context, id string) (StorageAutoscaling, error)
	// SetStorageAutoscaling sets it.
	SetStorageAutoscaling(ctx context.Context, id string, policy StorageAutoscaling) error
}

// InstanceMetrics is what the metrics view holds of one instance.
type InstanceMetrics struct {
	// At is when the reading started.
	At time.Time
	// Points are each metric's 5-minute averages, oldest first.
	Points map[string][]Point
	// Storage is OTC's storage autoscaling policy; nil where the engine has none or it was not
	// read yet.
	Storage *StorageAutoscaling
}

// MetricsReader serves autopilot's metric reads from a shared, periodically refreshed reading of
// every autopilot instance of a project (sync/cloud/view). It never calls Cloud Eye per read.
type MetricsReader interface {
	// InstanceMetrics registers the instance for the fleet-wide reading and returns its latest
	// one, at most maxAge old; ErrMetricsUnavailable if there is none yet.
	InstanceMetrics(ctx context.Context, inst *Instance, window, maxAge time.Duration) (*InstanceMetrics, error)
	// SetStorageAutoscaling sets the policy and updates the view's copy.
	SetStorageAutoscaling(ctx context.Context, id string, policy StorageAutoscaling) error
}

// NativeStorageAutoscaling reports whether OTC offers storage autoscaling for the engine
// (MySQL and PostgreSQL on CLOUDSSD or ESSD storage).
func NativeStorageAutoscaling(engine, volumeType string) bool {
	switch engine {
	case "MySQL", "PostgreSQL":
	default:
		return false
	}
	return volumeType == "CLOUDSSD" || volumeType == "ESSD"
}

// ErrMetricsUnavailable says the metrics view holds no reading of the instance yet (or none
// recent enough), or the client cannot read Cloud Eye.
var ErrMetricsUnavailable = &Error{Kind: KindUnavailable, Op: "InstanceMetrics", Message: "no Cloud Eye reading of the instance yet"}
