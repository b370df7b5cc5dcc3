package reconcile_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/test/testutil"
)

// TestCredentialsSecretNowNamingAnotherProject: the namespace's Secret keeps its name but now holds
// another project's login (a team rewrote it). The instance is not in that project: the object
// must neither report it gone nor finalize without deleting it, which would leave it in its own
// project, billed, tagged as a deleted object's that nobody may adopt.
func TestCredentialsSecretNowNamingAnotherProject(t *testing.T) {
	w := newCredsWorld(t, reconcile.CredentialsOptional)
	simA := w.srv.Sims[testutil.ProjectTeamA]
	a := w.object("team-a", "db", nil, w.loginSecret("team-a", reconcile.DefaultCredentialsSecret, testutil.ProjectTeamA, nil))
	w.syncUntilActive(a)
	id := a.status().ID
	require.NotEmpty(t, id)

	a.mc.Related[reconcile.DefaultCredentialsSecret] = w.loginSecret("team-a", reconcile.DefaultCredentialsSecret, testutil.ProjectTeamB, nil)
	resp := w.sync(a)
	assert.Equal(t, id, resp.Status.ID)
	assert.Equal(t, reconcile.ReasonCredentialsChanged, a.synced().Reason, "waits, does not report the instance gone")

	fin := a.finalize()
	assert.False(t, fin.Finalized, "the instance is in another project than the login now reaches")
	assert.Equal(t, reconcile.ReasonCredentialsChanged, a.synced().Reason)
	assert.Len(t, simA.Instances(), 1)

	// The earlier login back in the Secret: the deletion goes on in the instance's project.
	a.mc.Related[reconcile.DefaultCredentialsSecret] = w.loginSecret("team-a", reconcile.DefaultCredentialsSecret, testutil.ProjectTeamA, nil)
	for range 20 {
		if fin = a.finalize(); fin.Finalized {
			break
		}
		w.clock.Advance(10 * time.Second)
	}
	assert.True(t, fin.Finalized)
	assert.Empty(t, simA.Instances())
}
