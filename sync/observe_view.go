package reconcile

import (
	"context"
	"errors"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// NOTE: an observation from the view may predate a change made meanwhile by another replica (each
// keeps its own view) or behind the controller's back. A call that read the view therefore makes
// no change on it: the loop stops a step that would (runStep), the driver gives it a client that
// refuses every change with errViewStale (readOnly), and Sync makes the call again on a fresh
// read, which decides anew.

// viewed says a read of the instance by id with maxAge comes from client's shared view.
func viewed(client cloud.Cloud, maxAge time.Duration) bool {
	_, ok := client.(cloud.InstanceObserver)
	return ok && maxAge > 0
}

// viewMaxAge is how old an observation of the instance may be for this call: as old as the steady
// resync (the view caps it at its own bound) when the last call left the object steady: not being
// deleted, no operation in flight, a settled status, the current spec already observed, and Ready
// and Synced True, no one-shot request pending. Anything else reads fresh (0).
//
// NOTE: a one-shot request (oneshot.go) is carried out on an observation of its tag and of the
// instance not REBOOTING: a view older than another replica's restart would show neither.
func viewMaxAge(p *v1alpha1.Rds, steady time.Duration) time.Duration {
	st := &p.Status
	if p.DeletionTimestamp != nil || st.Operation != nil || st.Status == "" || transitional(st.Status) ||
		st.ObservedGeneration != p.Generation || oneShotPending(&p.Spec, st) {
		return 0
	}
	for _, typ := range []string{v1alpha1.ConditionReady, v1alpha1.ConditionSynced} {
		if cond := getCondition(st, typ); cond == nil || cond.Status != metav1.ConditionTrue {
			return 0
		}
	}
	return steady
}

// oneShotPending reports whether the spec asks for a one-shot request status does not record as
// handled: a restartrequest, a minor upgrade above the version status last reported.
func oneShotPending(spec *v1alpha1.RdsSpec, st *v1alpha1.RdsStatus) bool {
	if spec.Restartrequest != "" && spec.Restartrequest != st.RestartRequest {
		return true
	}
	upgrade, _ := minorUpgradeAsked(spec.Datastoretype, spec.Datastoreversion, st.Version)
	return upgrade && spec.Datastoreversion != st.UpgradeRequest
}

// errViewStale is what readOnly answers a change: the call decided it on the shared view, and is
// made again on a fresh read. It never leaves the package.
var errViewStale = errors.New("a change decided on the shared view waits for a fresh read")

// readOnly passes reads through and refuses every change with errViewStale. A mutating method
// added to cloud.Cloud must be added here (and to sync/cloud/view).
type readOnly struct{ cloud.Cloud }

// Project names the client's project, as the client does (cloud.ProjectOf).
func (r readOnly) Project() string { return cloud.ProjectOf(r.Cloud) }

func (readOnly) CreateInstance(context.Context, cloud.CreateInstanceOpts) (string, string, error) {
	return "", "", errViewStale
}
func (readOnly) DeleteInstance(context.Context, string) (string, error) { return "", errViewStale }
func (readOnly) CreateBackup(context.Context, string, string, string) (*cloud.Backup, error) {
	return nil, errViewStale
}
func (readOnly) ResizeFlavor(context.Context, string, string) (string, error) {
	return "", errViewStale
}
func (readOnly) EnlargeVolume(context.Context, string, int) (string, error) { return "", errViewStale }
func (readOnly) RestartInstance(context.Context, string) (string, error)    { return "", errViewStale }
func (readOnly) UpgradeMinorVersion(context.Context, string) (string, error) {
	return "", errViewStale
}
func (readOnly) SingleToHA(context.Context, string, string, secret.Value) (string, error) {
	return "", errViewStale
}
func (readOnly) UpdateBackupPolicy(context.Context, string, cloud.BackupStrategy) error {
	return errViewStale
}
func (readOnly) SetSecurityGroup(context.Context, string, string) (string, error) {
	return "", errViewStale
}
func (readOnly) UpdatePort(context.Context, string, int) (string, error)  { return "", errViewStale }
func (readOnly) SwitchSSL(context.Context, string, bool) (string, error)  { return "", errViewStale }
func (readOnly) SetTags(context.Context, string, map[string]string) error { return errViewStale }
func (readOnly) DeleteTags(context.Context, string, []string) error       { return errViewStale }
func (readOnly) RestoreInPlace(context.Context, string, time.Time) (string, error) {
	return "", errViewStale
}
func (readOnly) RestoreToNew(context.Context, cloud.RestoreToNewOpts) (string, string, error) {
	return "", "", errViewStale
}
func (readOnly) CreateReplica(context.Context, cloud.CreateReplicaOpts) (string, string, error) {
	return "", "", errViewStale
}

// ObserveInstance passes a read of the shared view through: the read replicas of a call that read
// its instance there are read there too (replicas.go).
func (r readOnly) ObserveInstance(ctx context.Context, id string, maxAge time.Duration) (*cloud.Instance, error) {
	return cloud.ObserveInstance(ctx, r.Cloud, id, maxAge)
}

// ViewedInstance passes the read of the shared view alone through, as ObserveInstance.
func (r readOnly) ViewedInstance(id string, maxAge time.Duration) *cloud.Instance {
	return cloud.ViewedInstance(r.Cloud, id, maxAge)
}

var _ cloud.InstanceObserver = readOnly{}

func (readOnly) CreateParameterTemplate(context.Context, cloud.ParameterTemplateOpts) (*cloud.ParameterTemplate, error) {
	return nil, errViewStale
}
func (readOnly) DeleteParameterTemplate(context.Context, string) error { return errViewStale }
func (readOnly) UpdateParameters(context.Context, string, map[string]string) (cloud.ParametersChange, error) {
	return cloud.ParametersChange{}, errViewStale
}

// InstanceMetrics passes autopilot's fleet-wide reading through: it is a read (sync/autopilot.go).
func (r readOnly) InstanceMetrics(ctx context.Context, inst *cloud.Instance, window, maxAge time.Duration) (*cloud.InstanceMetrics, error) {
	if m, ok := r.Cloud.(cloud.MetricsReader); ok {
		return m.InstanceMetrics(ctx, inst, window, maxAge)
	}
	return nil, cloud.ErrMetricsUnavailable
}

func (readOnly) SetStorageAutoscaling(context.Context, string, cloud.StorageAutoscaling) error {
	return errViewStale
}

func (readOnly) ChangeStorageType(context.Context, string, cloud.Storage) (string, error) {
	return "", errViewStale
}
func (readOnly) ChangeReplicationMode(context.Context, string, string) (string, error) {
	return "", errViewStale
}
func (readOnly) ChangeMaintenanceWindow(context.Context, string, string) error { return errViewStale }
func (readOnly) StopInstance(context.Context, string) (string, error)          { return "", errViewStale }
func (readOnly) StartInstance(context.Context, string) (string, error)         { return "", errViewStale }
