package sync_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	"github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/test/metacontroller"
)

// REVIEW2 (finalize, item 1): an adopted instance keeps its own name, so the finalize search by
// the object's names never finds it; it looks it up by spec.instanceid only. A tenant who may
// patch rds/status clears spec.instanceid (allowed: sync refuses only a different non-empty value)
// and points status.id at an id OTC does not list, then deletes the object with deletionpolicy
// Delete. Finalize answers "The instance is gone." and releases the object at once: no final
// backup, no delete. The instance stays in OTC, billed, with ownership tags naming a uid that no
// longer exists: OwnedByOther for every object for ever (nobody may adopt, restore from, or delete
// it through the controller), while the tenant keeps using it with the root password it knows.
func TestReview2FinalizeReleasesAdoptedInstanceWhenStatusForged(t *testing.T) {
	w := newLogsLoop(t)
	id, err := w.sim.AddInstance(otcsim.InstanceSpec{Name: "console-made-db", Engine: "MySQL", Version: "8.0",
		Flavor: "rds.mysql.n1.large.2", VolumeType: "CLOUDSSD", VolumeSize: 40, AZs: []string{"eu-de-01"}})
	require.NoError(t, err)
	spec := restoreSpec()
	spec.Instanceid = id
	w.mc = metacontroller.NewRds(v1alpha1.Rds{
		ObjectMeta: metav1.ObjectMeta{Name: "lg", Namespace: "team-a", UID: types.UID("uid-lg"), Generation: 1},
		Spec:       spec,
	})
	w.active()
	require.Equal(t, id, w.status().ID)
	inst, ok := w.sim.Instance(id)
	require.True(t, ok)
	require.Equal(t, "uid-lg", inst.Tags[sync.TagOwnerUID], "adopted: the ownership tags name the object")

	// The tenant: clear instanceid (a spec edit sync accepts), forge status.id, delete.
	w.edit(func(s *v1alpha1.RdsSpec) { s.Instanceid = "" })
	w.sync()
	st := w.status()
	st.ID = "00000000000000000000000000000000in01"
	w.mc.SetStatus(st)
	for range 10 {
		if w.mc.Gone() {
			break
		}
		w.finalize()
		w.clock.Advance(10 * time.Second)
	}
	_, stillThere := w.sim.Instance(id)
	backups := 0
	for _, b := range w.sim.Backups() {
		if b.InstanceID == id && b.Type == "manual" {
			backups++
		}
	}
	t.Logf("object gone: %v, instance still in OTC: %v, final backups: %d", w.mc.Gone(), stillThere, backups)
	assert.False(t, w.mc.Gone() && stillThere, "the object is released while its own instance stays in OTC, untracked")
}
