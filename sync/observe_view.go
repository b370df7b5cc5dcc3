package sync

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// readInstance reads the instance this object manages by id: from the client's shared view of the
// cloud when the object is steady (staleness bounded by the view, sync/cloud/view), else fresh.
func (c *call) readInstance(ctx context.Context) (*cloud.Instance, error) {
	return cloud.ObserveInstance(ctx, c.cloud, c.st.ID, viewMaxAge(c.parent, c.r.cfg.ResyncSteady))
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
