package reconcile

import (
	"context"
	"errors"
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
	// readInstancesAll: every instance of the client's project, all pages, fresh (finalize's
	// search by ownership tags: OTC filters no listing by tag).
	readInstancesAll readKind = "ListInstances"
	readNetwork      readKind = "ResolveNetwork"
	readFlavors      readKind = "ListFlavors"
	readJob          readKind = "GetJob"
	readRestoreTimes readKind = "ListRestoreTimes"
	readBackups      readKind = "ListBackups"
	readMetrics      readKind = "InstanceMetrics"
	// readBackupPolicy: the backup policy, whose days of the week the instance list lacks.
	readBackupPolicy readKind = "GetBackupPolicy"
	readParameters   readKind = "InstanceParameters"
	// readTemplates: the project's parameter templates; readTemplateParameters: one template's
	// parameters (a default template's: what OTC takes for an engine version).
	readTemplates          readKind = "ListParameterTemplates"
	readTemplateParameters readKind = "TemplateParameters"
)

// need is one read a decision asks of the cloud, as data: which read, of what, and with whose
// login. A plan names it; observe makes it.
type need struct {
	kind readKind
	id   string // the instance's id (readJob: the job's)
	// controller makes the read with the controller's own login (Config.Cloud), in its project,
	// instead of the call's client, which may be a namespace's login (credentials.go): finalize's
	// look for the object's instance in the controller's project (finalizePlan.searchOwn), which a
	// namespace login cannot see. It is a field, not read kinds of their own: the reads are the
	// same (by name, by id, the listing), only whose login makes them differs. Such a read is made
	// by observe like any other, so no step holds a client, the controller's neither; it changes
	// nothing, and nothing is ever changed with that login on a namespace login's call.
	controller bool

	name                       string          // readInstancesName
	maxAge                     time.Duration   // readInstance, readMetrics: how old a view may be
	engine, version            string          // readFlavors
	vpc, subnet, securityGroup string          // readNetwork
	of                         *cloud.Instance // readMetrics
	window                     time.Duration   // readMetrics
	since                      time.Time       // readInstancesAll: a shared view's listing must have begun since
}

// seen is what a read found, or the read's error. The field its kind fills is set; the others are
// zero.
type seen struct {
	inst       *cloud.Instance   // readInstance, readInstanceByID
	instances  []*cloud.Instance // readInstancesName, readInstancesAll
	network    cloud.Network     // readNetwork
	flavors    []cloud.Flavor    // readFlavors
	job        *cloud.Job        // readJob
	ranges     []cloud.TimeRange // readRestoreTimes
	backups    []cloud.Backup    // readBackups
	metrics    *cloud.InstanceMetrics
	policy     cloud.BackupStrategy      // readBackupPolicy
	parameters []cloud.Parameter         // readParameters, readTemplateParameters
	templates  []cloud.ParameterTemplate // readTemplates
	err        error
}

// errCannotList: the client cannot list its project's instances, so a search by ownership tags
// cannot be made (a client without it is a test's fake; OTC's and the shared view's list).
var errCannotList = &cloud.Error{Kind: cloud.KindUnknown, Op: string(readInstancesAll), Message: "the OTC client cannot list instances"}

// errNoControllerLogin: a read asked for the controller's own login (need.controller), and the
// controller has none (a programming error: finalize asks only when Config.Cloud is set).
var errNoControllerLogin = errors.New("sync: observe: the controller has no OTC login of its own")

// observe makes one read, under the per-call deadline. It is the one place a sync or finalize call
// reads OTC (besides the login, credentials.go), as act is the one place it changes it; a read
// changes nothing of the call.
func (c *call) observe(ctx context.Context, n need) (s seen) {
	client := c.cloud
	if n.controller {
		if client = c.r.cfg.Cloud; client == nil {
			s.err = errNoControllerLogin
			return s
		}
	}
	if n.kind == readInstance {
		// NOTE: an instance the shared view serves is read without a call to OTC, so without a
		// deadline; one it does not serve is read fresh, under it, below.
		if s.inst = cloud.ViewedInstance(client, n.id, n.maxAge); s.inst != nil {
			return s
		}
	}
	s.err = withDeadline(ctx, c.r.cfg.CallTimeout, func(ctx context.Context) (err error) {
		switch n.kind {
		case readInstance: // not served by the view (above)
			s.inst, err = client.GetInstance(ctx, n.id)
		case readInstanceByID:
			s.inst, err = client.GetInstance(ctx, n.id)
		case readInstancesName:
			s.instances, err = client.FindInstancesByName(ctx, n.name)
		case readInstancesAll:
			var all []cloud.Instance
			switch l := client.(type) {
			case cloud.FleetObserver: // the shared view: a listing begun since, not under this deadline alone
				all, err = l.ListedSince(ctx, n.since)
			case cloud.InstanceLister:
				all, err = l.ListInstances(ctx)
			default:
				return errCannotList
			}
			for i := range all {
				s.instances = append(s.instances, &all[i])
			}
		case readNetwork:
			s.network, err = client.ResolveNetwork(ctx, n.vpc, n.subnet, n.securityGroup)
		case readFlavors:
			s.flavors, err = client.ListFlavors(ctx, n.engine, n.version)
		case readJob:
			s.job, err = client.GetJob(ctx, n.id)
		case readRestoreTimes:
			s.ranges, err = client.ListRestoreTimes(ctx, n.id)
		case readBackups:
			s.backups, err = client.ListBackups(ctx, n.id)
		case readBackupPolicy:
			s.policy, err = client.GetBackupPolicy(ctx, n.id)
		case readMetrics:
			reader, ok := client.(cloud.MetricsReader)
			if !ok {
				return cloud.ErrMetricsUnavailable
			}
			s.metrics, err = reader.InstanceMetrics(ctx, n.of, n.window, n.maxAge)
		case readParameters:
			s.parameters, err = client.InstanceParameters(ctx, n.id)
		case readTemplates:
			s.templates, err = client.ListParameterTemplates(ctx)
		case readTemplateParameters:
			s.parameters, err = client.TemplateParameters(ctx, n.id)
		default:
			return fmt.Errorf("sync: observe: unknown read %q", n.kind) // a programming error
		}
		return err
	})
	return s
}
