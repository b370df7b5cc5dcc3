package sync

import (
	"context"
	"fmt"
	"time"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// readKind names one read of the cloud port: the mirror of actionKind.
type readKind string

const (
	// readInstance: the instance by id, from the client's shared view when maxAge allows it
	// (observe_view.go), else fresh.
	readInstance      readKind = "ObserveInstance"
	readInstanceByID  readKind = "GetInstance"
	readInstancesName readKind = "FindInstancesByName"
	readNetwork       readKind = "ResolveNetwork"
	readFlavors       readKind = "ListFlavors"
	readJob           readKind = "GetJob"
	readRestoreTimes  readKind = "ListRestoreTimes"
	readBackups       readKind = "ListBackups"
	readMetrics       readKind = "InstanceMetrics"
)

// need is one read a decision asks of the cloud, as data: which read, of what. A plan names it;
// observe makes it.
type need struct {
	kind readKind
	id   string // the instance's id (readJob: the job's)

	name                       string          // readInstancesName
	maxAge                     time.Duration   // readInstance, readMetrics: how old a view may be
	engine, version            string          // readFlavors
	vpc, subnet, securityGroup string          // readNetwork
	of                         *cloud.Instance // readMetrics
	window                     time.Duration   // readMetrics
}

// seen is what a read found, or the read's error. The field its kind fills is set; the others are
// zero.
type seen struct {
	inst      *cloud.Instance   // readInstance, readInstanceByID
	instances []*cloud.Instance // readInstancesName
	network   cloud.Network     // readNetwork
	flavors   []cloud.Flavor    // readFlavors
	job       *cloud.Job        // readJob
	ranges    []cloud.TimeRange // readRestoreTimes
	backups   []cloud.Backup    // readBackups
	metrics   *cloud.InstanceMetrics
	err       error
}

// observe makes one read, under the per-call deadline. It is the one place a sync or finalize call
// reads OTC (besides the login, credentials.go), as act is the one place it changes it; a read
// changes nothing of the call.
func (c *call) observe(ctx context.Context, n need) (s seen) {
	s.err = withDeadline(ctx, c.r.cfg.CallTimeout, func(ctx context.Context) (err error) {
		switch n.kind {
		case readInstance:
			s.inst, err = cloud.ObserveInstance(ctx, c.cloud, n.id, n.maxAge)
		case readInstanceByID:
			s.inst, err = c.cloud.GetInstance(ctx, n.id)
		case readInstancesName:
			s.instances, err = c.cloud.FindInstancesByName(ctx, n.name)
		case readNetwork:
			s.network, err = c.cloud.ResolveNetwork(ctx, n.vpc, n.subnet, n.securityGroup)
		case readFlavors:
			s.flavors, err = c.cloud.ListFlavors(ctx, n.engine, n.version)
		case readJob:
			s.job, err = c.cloud.GetJob(ctx, n.id)
		case readRestoreTimes:
			s.ranges, err = c.cloud.ListRestoreTimes(ctx, n.id)
		case readBackups:
			s.backups, err = c.cloud.ListBackups(ctx, n.id)
		case readMetrics:
			reader, ok := c.cloud.(cloud.MetricsReader)
			if !ok {
				return cloud.ErrMetricsUnavailable
			}
			s.metrics, err = reader.InstanceMetrics(ctx, n.of, n.window, n.maxAge)
		default:
			return fmt.Errorf("sync: observe: unknown read %q", n.kind) // a programming error
		}
		return err
	})
	return s
}
