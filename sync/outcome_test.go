package reconcile

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
)

// TestSyncedHasOneOwnerPerCall: whatever order the steps tell their outcomes in, Synced is the
// first of the highest rank (OTC's refusal of the call's change > problem > the call's change >
// operation under way > wait > the default), and the resync is the shortest any outcome asked for.
func TestSyncedHasOneOwnerPerCall(t *testing.T) {
	waitRestore := syncedOK(ReasonRestoreWaiting, "The restore waits.", settled)
	change := syncedOK(ReasonChangeInProgress, "Resizing.", inFlight).made()
	underway := syncedOK(ReasonChangeInProgress, "Resizing.", inFlight).underway()
	refusedChange := notSynced(ReasonCloudRefused, "OTC refused the request.", waitsForUser).made()
	invalid := notSynced(ReasonInvalidSpec, "logs.since is invalid.", settled)
	refused := notSynced(ReasonFlavorUnavailable, "The flavor is sold out.", settled)
	busy := syncedOK(ReasonInstanceBusy, "The instance is busy.", retry)
	tests := []struct {
		name   string
		told   []outcome
		want   string
		resync time.Duration
	}{
		{"nothing told: the default", nil, ReasonReconcileSuccess, 5 * time.Minute},
		{"a wait replaces the default", []outcome{waitRestore}, ReasonRestoreWaiting, 5 * time.Minute},
		{"the call's change outranks an earlier wait", []outcome{waitRestore, change}, ReasonChangeInProgress, 10 * time.Second},
		{"a problem another step found shows over the call's change", []outcome{invalid, change}, ReasonInvalidSpec, 10 * time.Second},
		{"OTC's refusal of the call's change shows over an earlier problem", []outcome{refused, refusedChange}, ReasonCloudRefused, 5 * time.Minute},
		{"a problem found while an operation is under way shows", []outcome{underway, invalid}, ReasonInvalidSpec, 10 * time.Second},
		{"an operation under way outranks a wait", []outcome{waitRestore, underway}, ReasonChangeInProgress, 10 * time.Second},
		{"a wait after the change does not hide it", []outcome{change, busy}, ReasonChangeInProgress, 10 * time.Second},
		{"of two problems the earlier step's shows", []outcome{refused, invalid}, ReasonFlavorUnavailable, 5 * time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := New(Config{})
			c := r.begin(context.Background(), request(sampleSpec(), v1alpha1.RdsStatus{}))
			c.out.synced()
			for _, o := range tc.told {
				c.out.tell(o)
			}
			assert.Equal(t, tc.want, getConditionIn(c.out.render(c.now), v1alpha1.ConditionSynced).Reason)
			assert.Equal(t, tc.resync, c.out.resync())
		})
	}
}

// TestReadyHasOneOwnerPerCall: the instance's state is Ready's fallback, which a step's Ready about
// its change replaces; of two such outcomes the first of the higher rank stays.
func TestReadyHasOneOwnerPerCall(t *testing.T) {
	state := notReady("Modifying", "The instance is MODIFYING in OTC.", inFlight).fallback()
	restoring := notReady(ReasonRestoring, "The instance is being restored.", inFlight).made()
	creating := notReady(ReasonCreating, "The instance is being created.", inFlight)
	for name, tc := range map[string]struct {
		told []outcome
		want string
	}{
		"the instance's state when no step says more": {[]outcome{state}, "Modifying"},
		"a step's Ready replaces the state":           {[]outcome{state, restoring}, ReasonRestoring},
		"the state never replaces a step's Ready":     {[]outcome{restoring, state}, ReasonRestoring},
		"of two, the first of the higher rank":        {[]outcome{creating, restoring}, ReasonRestoring},
	} {
		t.Run(name, func(t *testing.T) {
			c := New(Config{}).begin(context.Background(), request(sampleSpec(), v1alpha1.RdsStatus{}))
			for _, o := range tc.told {
				c.out.tell(o)
			}
			assert.Equal(t, tc.want, getConditionIn(c.out.render(c.now), v1alpha1.ConditionReady).Reason)
		})
	}
}
