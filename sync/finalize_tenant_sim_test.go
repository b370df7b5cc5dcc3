package reconcile_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/test/metacontroller"
	"github.com/mcsps/rds-lambda-controller/test/testutil"
)

// An adopted instance keeps its own name, so finalize's search by the object's names never finds
// it, and spec.instanceid and status.id are the tenant's to clear and forge. Finalize then finds
// it by its ownership tags (rds-owner-uid names the object) and takes it apart as usual: final
// backup, delete. Found in review (issue #17): finalize answered "The instance is gone." and the
// instance stayed in OTC, billed and untracked, tagged with a uid that no longer exists.
func TestFinalizeFindsAdoptedInstanceByTagsWhenStatusForged(t *testing.T) {
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
	require.Equal(t, "uid-lg", inst.Tags[reconcile.TagOwnerUID], "adopted: the ownership tags name the object")

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
	assert.True(t, w.mc.Gone(), "the instance found by its tags is deleted, then the object goes")
	assert.False(t, stillThere)
	assert.Equal(t, 1, backups, "no deletion without a completed final backup")
}

// With namespace credentials (Optional), status.credentialsSecret and status.credentialsProject
// say which login found the instance, and both are status: a tenant who may patch rds/status
// names its own project's Secret there. Finalize does not take that login's "nothing here" for
// "gone": it looks in the controller's project with the controller's own login as well, finds the
// instance by its ownership tags, records what it found and waits (CredentialsChanged,
// DeletionWaitsForCredentials); once the object uses the controller's login again, the instance
// is backed up and deleted as usual. Found in review (issue #17): finalize looked only in the
// forged project and released the object, its instance left billed in the controller's project.
func TestFinalizeLooksInTheControllersProjectWhateverStatusSays(t *testing.T) {
	w := newCredsWorld(t, reconcile.CredentialsOptional)
	a := w.object("team-a", "db", func(s *v1alpha1.RdsSpec) { s.Skipfinalbackup = false })
	w.syncUntilActive(a)
	id := a.status().ID
	ctrl := w.srv.Sims[testutil.ProjectController]
	_, ok := ctrl.Instance(id)
	require.True(t, ok, "created with the controller's login, in its project")

	// The tenant: a Secret with its own project's login, and status naming it.
	login := w.loginSecret("team-a", reconcile.DefaultCredentialsSecret, testutil.ProjectTeamA, nil)
	a.mc.Related[login.Name] = login
	st := a.status()
	st.CredentialsSecret = login.Name
	st.CredentialsProject = ""
	a.mc.SetStatus(*st)
	for range 10 {
		if a.mc.Gone() {
			break
		}
		a.finalize()
		w.clock.Advance(10 * time.Second)
	}
	_, stillThere := ctrl.Instance(id)
	t.Logf("object gone: %v, instance still in the controller's project: %v", a.mc.Gone(), stillThere)
	assert.False(t, a.mc.Gone() && stillThere, "the object is released while its instance stays billed in the controller's project")
	require.False(t, a.mc.Gone())
	assert.Equal(t, id, a.status().ID, "what OTC showed is recorded: the instance is the controller's login's")
	assert.Empty(t, a.status().CredentialsSecret)
	assert.Equal(t, reconcile.ReasonCredentialsChanged, a.synced().Reason)
	assert.Contains(t, a.synced().Message, `found with the controller's own OTC login, but this object would now use the OTC login in Secret "otc-credentials"`)
	assert.Equal(t, reconcile.ReasonDeletionWaitsForCredentials, conditionOf(*a.status(), v1alpha1.ConditionReady).Reason)

	// The way out: the Secret goes, the controller's own login serves the object again.
	delete(a.mc.Related, login.Name)
	for range 20 {
		if a.mc.Gone() {
			break
		}
		a.finalize()
		w.clock.Advance(10 * time.Second)
	}
	_, stillThere = ctrl.Instance(id)
	assert.True(t, a.mc.Gone())
	assert.False(t, stillThere, "backed up and deleted with the controller's login")
	finals := 0
	for _, b := range ctrl.Backups() {
		if b.InstanceID == id && b.Type == "manual" {
			finals++
		}
	}
	assert.Equal(t, 1, finals, "no deletion without a completed final backup")
}

// Finalize without a usable login never releases the object: status.id and the connection Secret
// are the tenant's to erase (a status patch, kubectl delete) and the login its to break (a Secret
// that does not exist), so neither says "nothing was ever created". The object waits with
// DeletionWaitsForCredentials, and its instance stays tracked. Found in review (issue #17): the
// object went without a single cloud call, its instance left billed in the controller's project.
func TestFinalizeWithoutLoginWaitsWhenStatusIDErased(t *testing.T) {
	w := newCredsWorld(t, reconcile.CredentialsOptional)
	a := w.object("team-a", "db", func(s *v1alpha1.RdsSpec) { s.Skipfinalbackup = false })
	w.syncUntilActive(a)
	id := a.status().ID
	ctrl := w.srv.Sims[testutil.ProjectController]

	a.edit(func(s *v1alpha1.RdsSpec) { s.Credentialssecret = "no-such-secret" })
	st := a.status()
	st.ID = ""
	a.mc.SetStatus(*st)
	delete(a.mc.Secrets, st.ConnectionSecret)
	w.resetCounters()
	a.finalize()
	_, stillThere := ctrl.Instance(id)
	t.Logf("object gone: %v after %d cloud calls, instance still in OTC: %v", a.mc.Gone(), w.calls(), stillThere)
	assert.False(t, a.mc.Gone() && stillThere, "the object is released while its instance stays billed in the controller's project")
	assert.False(t, a.mc.Gone(), "without a login the object is never released")
	assert.Zero(t, w.calls())
	assert.Equal(t, reconcile.ReasonWaitingForCredentials, a.synced().Reason, "Synced names the Secret to provide")
	assert.Equal(t, reconcile.ReasonDeletionWaitsForCredentials, conditionOf(*a.status(), v1alpha1.ConditionReady).Reason)
}
