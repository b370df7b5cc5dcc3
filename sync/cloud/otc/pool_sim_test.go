package otc_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/otc"
	"github.com/mcsps/rds-lambda-controller/test/testutil"
)

// poolEnv is a pool over a simulator with the controller's project and two teams' projects.
type poolEnv struct {
	srv   *otcsim.MultiServer
	clock *otcsim.ManualClock
	pool  *otc.Pool
}

func newPoolEnv(t *testing.T, edit func(*otc.PoolConfig)) *poolEnv {
	t.Helper()
	clock := otcsim.NewManualClock(t0)
	srv := testutil.TwoProjects(t, clock)
	env := srv.Env(testutil.ProjectController)
	base, err := otc.ConfigFromEnv(func(k string) string { return env[k] })
	require.NoError(t, err)
	base.RequestTimeout = 5 * time.Second
	pc := otc.PoolConfig{Base: base, Now: clock.Now}
	if edit != nil {
		edit(&pc)
	}
	pool, err := otc.NewPool(pc)
	require.NoError(t, err)
	return &poolEnv{srv: srv, clock: clock, pool: pool}
}

// creds is project i's login as a namespace's Secret holds it.
func (e *poolEnv) creds(namespace string, i int) *cloud.Credentials {
	return &cloud.Credentials{Namespace: namespace, Secret: "otc-credentials", Env: e.srv.Env(i)}
}

func (e *poolEnv) logins(i int) int { return e.srv.Sims[i].Calls(otcsim.OpCreateToken) }

func TestPoolEachTeamSeesOnlyItsProject(t *testing.T) {
	e := newPoolEnv(t, nil)
	idA, err := e.srv.Sims[testutil.ProjectTeamA].AddInstance(otcsim.InstanceSpec{Name: "rds-team-a-db"})
	require.NoError(t, err)

	a, err := e.pool.For(ctxT(t), e.creds("team-a", testutil.ProjectTeamA))
	require.NoError(t, err)
	b, err := e.pool.For(ctxT(t), e.creds("team-b", testutil.ProjectTeamB))
	require.NoError(t, err)

	found, err := a.FindInstancesByName(ctxT(t), "rds-team-a-db")
	require.NoError(t, err)
	require.Len(t, found, 1)
	assert.Equal(t, idA, found[0].ID)

	found, err = b.FindInstancesByName(ctxT(t), "rds-team-a-db")
	require.NoError(t, err)
	assert.Empty(t, found, "team B's project does not list team A's instance")
	_, err = b.GetInstance(ctxT(t), idA)
	assert.ErrorIs(t, err, cloud.ErrNotFound, "nor does it find it by id")
	assert.Empty(t, e.srv.Sims[testutil.ProjectTeamB].Instances())
	assert.Empty(t, e.srv.Sims[testutil.ProjectController].Instances())
}

func TestPoolLogsInOncePerCredentialSet(t *testing.T) {
	e := newPoolEnv(t, nil)
	var wg sync.WaitGroup
	clients := make([]cloud.Cloud, 16)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := e.pool.For(ctxT(t), e.creds("team-a", testutil.ProjectTeamA))
			assert.NoError(t, err)
			clients[i] = c
		}()
	}
	wg.Wait()
	for _, c := range clients[1:] {
		assert.Same(t, clients[0], c, "one client per credential set")
	}
	for range 10 {
		c, err := e.pool.For(ctxT(t), e.creds("team-a", testutil.ProjectTeamA))
		require.NoError(t, err)
		_, err = c.GetInstance(ctxT(t), "x")
		require.ErrorIs(t, err, cloud.ErrNotFound)
	}
	assert.Equal(t, 1, e.logins(testutil.ProjectTeamA), "one login for 26 calls, 16 of them at once")

	// The same login read in another namespace gets a client of its own: a client never serves
	// another namespace's call.
	other, err := e.pool.For(ctxT(t), e.creds("team-a-copy", testutil.ProjectTeamA))
	require.NoError(t, err)
	assert.NotSame(t, clients[0], other)
	assert.Equal(t, 2, e.logins(testutil.ProjectTeamA))
	assert.Equal(t, 2, e.pool.Len())
}

func TestPoolEvictsIdleAndLeastRecentlyUsedClients(t *testing.T) {
	e := newPoolEnv(t, func(pc *otc.PoolConfig) { pc.Idle, pc.Max = 30*time.Minute, 2 })
	use := func(ns string, i int) cloud.Cloud {
		c, err := e.pool.For(ctxT(t), e.creds(ns, i))
		require.NoError(t, err)
		return c
	}
	a := use("team-a", testutil.ProjectTeamA)
	e.clock.Advance(29 * time.Minute)
	assert.Same(t, a, use("team-a", testutil.ProjectTeamA), "used within the idle time: kept")
	e.clock.Advance(29 * time.Minute)
	assert.Same(t, a, use("team-a", testutil.ProjectTeamA), "each use starts the idle time again")
	assert.Equal(t, 1, e.logins(testutil.ProjectTeamA))

	e.clock.Advance(31 * time.Minute)
	use("team-b", testutil.ProjectTeamB)
	assert.Equal(t, 1, e.pool.Len(), "team A's client was idle for 31 minutes and is gone")
	assert.NotSame(t, a, use("team-a", testutil.ProjectTeamA))
	assert.Equal(t, 2, e.logins(testutil.ProjectTeamA), "a new login after eviction")

	// Max 2: a third set pushes out the least recently used (team B's).
	use("team-b2", testutil.ProjectTeamB)
	assert.Equal(t, 2, e.pool.Len())
	use("team-b", testutil.ProjectTeamB)
	assert.Equal(t, otc.MaxRefusedLoginsPerNamespace, e.logins(testutil.ProjectTeamB), "team-b was the least recently used and logs in again")
}

func TestPoolRefusesWhatANamespaceMayNotUse(t *testing.T) {
	var foreign atomic.Int32
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { foreign.Add(1) }))
	t.Cleanup(attacker.Close)

	for name, tc := range map[string]struct {
		edit   func(env map[string]string)
		reason string
	}{
		"OS_CLOUD reads the controller's clouds.yaml": {
			edit: func(env map[string]string) { env["OS_CLOUD"] = "otc" }, reason: "OS_CLOUD",
		},
		"a foreign identity endpoint": {
			edit: func(env map[string]string) { env["OS_AUTH_URL"] = attacker.URL + "/v3" }, reason: "OS_AUTH_URL",
		},
		"no password": {
			edit: func(env map[string]string) { delete(env, "OS_PASSWORD") }, reason: "OS_PASSWORD",
		},
		"no project": {
			edit: func(env map[string]string) { delete(env, "OS_PROJECT_NAME") }, reason: "OS_PROJECT_NAME",
		},
		"nothing at all": {
			edit: func(env map[string]string) { clear(env) }, reason: "no OTC login",
		},
	} {
		t.Run(name, func(t *testing.T) {
			e := newPoolEnv(t, nil)
			creds := e.creds("team-a", testutil.ProjectTeamA)
			tc.edit(creds.Env)
			_, err := e.pool.For(ctxT(t), creds)
			require.ErrorIs(t, err, cloud.ErrCredentialsInvalid)
			assert.Contains(t, err.Error(), tc.reason)
			assert.NotContains(t, err.Error(), "Team-A-s3cret-pw")
			assert.NotContains(t, err.Error(), attacker.URL)
			for i := range e.srv.Sims {
				assert.Zero(t, e.logins(i), "no login anywhere")
			}
			assert.Zero(t, foreign.Load(), "nothing sent to the foreign endpoint")
		})
	}
}

func TestPoolAuthURL(t *testing.T) {
	t.Run("missing means the controller's", func(t *testing.T) {
		e := newPoolEnv(t, nil)
		creds := e.creds("team-a", testutil.ProjectTeamA)
		delete(creds.Env, "OS_AUTH_URL")
		_, err := e.pool.For(ctxT(t), creds)
		require.NoError(t, err)
		assert.Equal(t, 1, e.logins(testutil.ProjectTeamA))
	})
	t.Run("an allowlisted one, trailing slash and all", func(t *testing.T) {
		e := newPoolEnv(t, nil)
		e2 := newPoolEnv(t, func(pc *otc.PoolConfig) { pc.AuthURLs = []string{e.srv.AuthURL() + "/"} })
		creds := e.creds("team-a", testutil.ProjectTeamA)
		_, err := e2.pool.For(ctxT(t), creds)
		require.NoError(t, err)
		creds = e2.creds("team-a", testutil.ProjectTeamA)
		_, err = e2.pool.For(ctxT(t), creds)
		require.ErrorIs(t, err, cloud.ErrCredentialsInvalid, "an allowlist replaces the default: the controller's own endpoint is not on it")
	})
}

func TestPoolRemembersARefusedLogin(t *testing.T) {
	e := newPoolEnv(t, nil)
	creds := e.creds("team-a", testutil.ProjectTeamA)
	creds.Env["OS_PASSWORD"] = "Wrong-passw0rd"
	for range 5 {
		_, err := e.pool.For(ctxT(t), creds)
		var ce *cloud.Error
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, cloud.KindUnauthorized, ce.Kind)
		assert.NotContains(t, err.Error(), "Wrong-passw0rd")
	}
	assert.Equal(t, 1, e.logins(testutil.ProjectTeamA), "a refused login is not tried again on every call (IAM locks users)")

	e.clock.Advance(otc.DefaultReauthBackoff + time.Second)
	_, err := e.pool.For(ctxT(t), creds)
	require.Error(t, err)
	assert.Equal(t, 2, e.logins(testutil.ProjectTeamA), "tried again after the backoff")

	creds.Env["OS_PASSWORD"] = "Team-A-s3cret-pw" // the team fixed its Secret: another set, at once
	_, err = e.pool.For(ctxT(t), creds)
	require.NoError(t, err)
}

// BenchmarkPoolFor is the cost of a call's look-up of its namespace's client once logged in
// (validation, digest and the LRU under one lock).
func BenchmarkPoolFor(b *testing.B) {
	srv := testutil.TwoProjects(b, nil)
	env := srv.Env(testutil.ProjectController)
	base, err := otc.ConfigFromEnv(func(k string) string { return env[k] })
	require.NoError(b, err)
	pool, err := otc.NewPool(otc.PoolConfig{Base: base})
	require.NoError(b, err)
	creds := &cloud.Credentials{Namespace: "team-a", Secret: "otc-credentials", Env: srv.Env(testutil.ProjectTeamA)}
	ctx := context.Background()
	_, err = pool.For(ctx, creds)
	require.NoError(b, err)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := pool.For(ctx, creds); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// One namespace cycling through credential sets (a Secret patched again and again) pushes out its
// own clients only, never another namespace's: the other team logs in once.
func TestPoolANamespaceEvictsOnlyItsOwnClients(t *testing.T) {
	e := newPoolEnv(t, func(pc *otc.PoolConfig) { pc.Max, pc.MaxPerNamespace = 4, 2 })
	a, err := e.pool.For(ctxT(t), e.creds("team-a", testutil.ProjectTeamA))
	require.NoError(t, err)
	for i := range 10 {
		creds := e.creds("evil", testutil.ProjectTeamB)
		creds.Env["OS_PASSWORD"] = fmt.Sprintf("Wrong-%d", i)
		_, err := e.pool.For(ctxT(t), creds)
		require.Error(t, err)
	}
	again, err := e.pool.For(ctxT(t), e.creds("team-a", testutil.ProjectTeamA))
	require.NoError(t, err)
	assert.Same(t, a, again, "team A's client survives another namespace's churn")
	assert.Equal(t, 1, e.logins(testutil.ProjectTeamA))
	assert.LessOrEqual(t, e.pool.Len(), 3, "evil holds at most its share")
}

// A namespace's Secret may name any IAM user (another team's, or the controller's own) with a new
// wrong password each time: the controller must not become a way to lock that user out. After a
// few refused logins the namespace's new logins wait for the backoff, without asking IAM.
func TestPoolBoundsANamespacesRefusedLogins(t *testing.T) {
	e := newPoolEnv(t, nil)
	_, err := e.pool.For(ctxT(t), e.creds("team-a", testutil.ProjectTeamA))
	require.NoError(t, err)
	_, err = e.pool.For(ctxT(t), e.creds("team-b", testutil.ProjectTeamB))
	require.NoError(t, err)
	e.clock.Advance(otc.DefaultPoolIdle + time.Second)
	for i := range 10 {
		creds := e.creds("evil", testutil.ProjectTeamA)
		creds.Env["OS_PASSWORD"] = fmt.Sprintf("Guess-%d", i)
		_, err := e.pool.For(ctxT(t), creds)
		require.Error(t, err)
	}
	assert.Equal(t, 1+otc.MaxRefusedLoginsPerNamespace, e.logins(testutil.ProjectTeamA), "IAM saw a bounded number of failed logins")

	// Logins IAM accepted before (their clients idled out) are not held up, another user's or the
	// guessed user's. A login never accepted before waits for the backoff, whichever user it
	// names: no spelling tells users apart before IAM accepts one (TestRefusedLoginCapHoldsForEverySpelling).
	_, err = e.pool.For(ctxT(t), e.creds("team-b", testutil.ProjectTeamB))
	require.NoError(t, err)
	_, err = e.pool.For(ctxT(t), e.creds("team-a", testutil.ProjectTeamA))
	require.NoError(t, err)
	_, err = e.pool.For(ctxT(t), e.creds("team-c", testutil.ProjectTeamB))
	require.ErrorContains(t, err, "new ones wait", "a new login while someone guesses")

	// After the backoff, the namespace logs in again (its fixed Secret works).
	e.clock.Advance(otc.DefaultReauthBackoff + time.Second)
	_, err = e.pool.For(ctxT(t), e.creds("evil", testutil.ProjectTeamB))
	require.NoError(t, err)
}

// wrongLogins makes n logins with a wrong password for team A's IAM user at once, Secret i in the
// namespace ns(i), while IAM takes a while to answer (so that they overlap), and returns how many
// reached IAM.
func (e *poolEnv) wrongLogins(t *testing.T, n int, ns func(i int) string) int {
	t.Helper()
	e.srv.Sims[testutil.ProjectTeamA].AddFault(otcsim.Fault{Op: otcsim.OpCreateToken, Kind: otcsim.FaultLatency, Delay: 50 * time.Millisecond})
	defer e.srv.Sims[testutil.ProjectTeamA].ClearFaults()
	before := e.logins(testutil.ProjectTeamA)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			creds := e.creds(ns(i), testutil.ProjectTeamA)
			creds.Secret = fmt.Sprintf("guess-%d", i)
			creds.Env["OS_PASSWORD"] = fmt.Sprintf("Guess-%d", i)
			_, err := e.pool.For(ctxT(t), creds)
			assert.Error(t, err)
		}()
	}
	wg.Wait()
	return e.logins(testutil.ProjectTeamA) - before
}

// Logins in flight count against the cap of refused logins: 16 (or 64) Secrets of one namespace
// with wrong passwords, all synced at once, reach IAM at most MaxRefusedLoginsPerNamespace times
// (security review #17, attack 7).
func TestPoolConcurrentWrongPasswordsReachIAMAtMostTheCap(t *testing.T) {
	for _, n := range []int{16, 64} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			e := newPoolEnv(t, nil)
			got := e.wrongLogins(t, n, func(int) string { return "evil" })
			assert.LessOrEqual(t, got, otc.MaxRefusedLoginsPerNamespace, "logins that reached IAM")
			assert.Positive(t, got)

			// After the backoff the namespace's correct login works.
			e.clock.Advance(otc.DefaultReauthBackoff + time.Second)
			_, err := e.pool.For(ctxT(t), e.creds("evil", testutil.ProjectTeamA))
			require.NoError(t, err)
		})
	}
}

// The cap also holds for the IAM user the logins name: many namespaces naming one user (the
// controller's own, say) with wrong passwords, at once or one after another, reach IAM at most
// MaxRefusedLoginsPerUser times within the backoff; a credential set that logged in before is not
// held up by them.
func TestPoolBoundsTheRefusedLoginsOfOneIAMUser(t *testing.T) {
	t.Run("at once", func(t *testing.T) {
		e := newPoolEnv(t, nil)
		got := e.wrongLogins(t, 64, func(i int) string { return fmt.Sprintf("evil-%d", i) })
		assert.LessOrEqual(t, got, otc.MaxRefusedLoginsPerUser, "logins that reached IAM")
	})
	t.Run("one after another", func(t *testing.T) {
		e := newPoolEnv(t, func(pc *otc.PoolConfig) { pc.Idle = time.Minute })
		team, err := e.pool.For(ctxT(t), e.creds("team-a", testutil.ProjectTeamA))
		require.NoError(t, err)
		for i := range 10 {
			creds := e.creds(fmt.Sprintf("evil-%d", i), testutil.ProjectTeamA)
			creds.Env["OS_PASSWORD"] = fmt.Sprintf("Guess-%d", i)
			_, err := e.pool.For(ctxT(t), creds)
			require.Error(t, err)
		}
		assert.Equal(t, 1+otc.MaxRefusedLoginsPerUser, e.logins(testutil.ProjectTeamA), "team A's login and the capped guesses")

		// Team A's client idles out; its known-good login is let through, a new one is not.
		e.clock.Advance(2 * time.Minute)
		again, err := e.pool.For(ctxT(t), e.creds("team-a", testutil.ProjectTeamA))
		require.NoError(t, err)
		assert.NotSame(t, team, again)
		_, err = e.pool.For(ctxT(t), e.creds("team-a-new", testutil.ProjectTeamA))
		var ce *cloud.Error
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, cloud.KindThrottled, ce.Kind, "an unproven login of the user waits")
		assert.Positive(t, ce.RetryAfter)

		e.clock.Advance(otc.DefaultReauthBackoff)
		_, err = e.pool.For(ctxT(t), e.creds("team-a-new", testutil.ProjectTeamA))
		require.NoError(t, err)
	})
}

// TestPoolANamespaceSigningWithAKSK: a namespace whose credentials Secret holds an AK/SK pair and
// its project, as docs/credentials.md allows, has its calls served in its own project: the
// simulator verifies every signature, as API Gateway does.
func TestPoolANamespaceSigningWithAKSK(t *testing.T) {
	clock := otcsim.NewManualClock(t0)
	const teamA = "a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a1"
	srv := otcsim.NewMultiServer(
		otcsim.Options{Seed: 1, Clock: clock},
		otcsim.Options{Seed: 2, ProjectID: teamA, ProjectName: "eu-de_team-a", Username: "team-a-user", Password: "Team-A-s3cret-pw",
			AccessKey: "TEAMAACCESSKEY", SecretKey: "team-a-secret-key", Clock: clock},
	)
	t.Cleanup(srv.Close)
	env := srv.Env(0)
	base, err := otc.ConfigFromEnv(func(k string) string { return env[k] })
	require.NoError(t, err)
	base.RequestTimeout = 5 * time.Second
	pool, err := otc.NewPool(otc.PoolConfig{Base: base, Now: clock.Now})
	require.NoError(t, err)

	c, err := pool.For(ctxT(t), &cloud.Credentials{Namespace: "team-a", Secret: "otc-credentials", Env: map[string]string{
		"OS_PROJECT_ID": teamA, "OS_REGION_NAME": otcsim.Region,
		"OS_ACCESS_KEY": "TEAMAACCESSKEY", "OS_SECRET_KEY": "team-a-secret-key",
	}})
	require.NoError(t, err)
	_, _, err = c.CreateInstance(ctxT(t), mysqlOpts("rds-team-a-aksk"))
	require.NoError(t, err, "a change, signed")
	found, err := c.FindInstancesByName(ctxT(t), "rds-team-a-aksk")
	require.NoError(t, err, "a read, signed")
	require.Len(t, found, 1)
	assert.Len(t, srv.Sims[1].Instances(), 1, "in the team's project")
	assert.Empty(t, srv.Sims[0].Instances(), "not in the controller's")
}
