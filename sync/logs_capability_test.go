package reconcile

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/cloudtest"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
	"github.com/mcsps/rds-lambda-controller/sync/logsapi"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

func testCapability() logsCapability {
	return logsCapability{
		Instance: "inst-1", Namespace: "rds1", Name: "db", UID: "uid-1", Request: "r1",
		Types: []string{"error", "slow"}, Since: "1h", Lines: 200, Expires: t0.Add(15 * time.Minute).Unix(),
	}
}

// ownedInstance answers GetInstance with the instance tagged for testCapability's object: inst-1
// for uid-1, inst-2 for uid-2.
func ownedInstance(_ context.Context, id string) (*cloud.Instance, error) {
	inst := activeInstance()
	inst.ID = id
	inst.Tags = owner{Cluster: "local", Namespace: "rds1", Name: "db", UID: "uid-" + strings.TrimPrefix(id, "inst-")}.tags()
	return inst, nil
}

func TestCapabilitySealing(t *testing.T) {
	s, err := newCapabilitySealer(secret.New("key one"))
	require.NoError(t, err)
	c := testCapability()
	c.Creds = &cloud.Credentials{Namespace: "rds1", Secret: "otc-credentials", Env: map[string]string{"OS_PASSWORD": "team-password"}}
	token, err := s.seal(c)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(token, "rdslogs.v1."))
	again, err := s.seal(c)
	require.NoError(t, err)
	assert.Equal(t, token, again, "the same capability, the same token: two calls render the same Secret")
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(token, "rdslogs.v1."))
	require.NoError(t, err)
	for _, plain := range []string{"team-password", "inst-1", "otc-credentials", "rds1"} {
		assert.NotContains(t, string(raw), plain, "sealed: the Job reads nothing in its token")
	}
	got, err := s.open(token)
	require.NoError(t, err)
	assert.Equal(t, c, got)

	other := testCapability()
	other.Instance = "inst-2"
	otherToken, err := s.seal(other)
	require.NoError(t, err)
	assert.NotEqual(t, token[:30], otherToken[:30], "another capability, another nonce")

	s2, err := newCapabilitySealer(secret.New("key two"))
	require.NoError(t, err)
	cases := map[string]string{
		"another key":    mustSeal(t, s2, c),
		"a flipped byte": flip(token, len(token)/2),
		"cut":            token[:len(token)-4],
		"no prefix":      strings.TrimPrefix(token, "rdslogs.v1."),
		"empty":          "",
		"not base64":     "rdslogs.v1.!!!",
		"too long":       "rdslogs.v1." + strings.Repeat("A", 20000),
		"an OTC token":   "MIIDkgYJKoZIhvcNAQcCoIIDgzCCA38CAQExDTALBglghkgBZQMEAgEwgg",
	}
	for name, tok := range cases {
		_, err := s.open(tok)
		assert.ErrorIs(t, err, errCapabilityInvalid, name)
	}

	_, err = newCapabilitySealer(secret.Value{})
	assert.Error(t, err, "no stable secret, no key")
}

func mustSeal(t *testing.T, s *capabilitySealer, c logsCapability) string {
	t.Helper()
	tok, err := s.seal(c)
	require.NoError(t, err)
	return tok
}

func flip(s string, i int) string {
	b := []byte(s)
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

// fakeClouds hands out one client and records the credentials it was asked for.
type fakeClouds struct {
	cloud cloud.Cloud
	asked []*cloud.Credentials
}

func (f *fakeClouds) For(_ context.Context, creds *cloud.Credentials) (cloud.Cloud, error) {
	f.asked = append(f.asked, creds)
	return f.cloud, nil
}

func TestReadLogs(t *testing.T) {
	now := t0.Add(time.Minute)
	own := &cloudtest.Fake{}
	team := &cloudtest.Fake{GetInstanceFn: ownedInstance, LogsFns: cloudtest.LogsFns{
		ListErrorLogsFn: func(_ context.Context, id string, q cloud.LogQuery) ([]cloud.ErrorLogEntry, int, error) {
			return []cloud.ErrorLogEntry{{Time: "2026-11-22T09:59:00", Level: "ERROR", Content: "a\x1b[31m\nb"}}, 3, nil
		},
	}}
	clouds := &fakeClouds{cloud: team}
	r := New(Config{Cloud: own, Clouds: clouds, Now: func() time.Time { return now }, PasswordKey: secret.New("k")})
	c := testCapability()
	c.Creds = &cloud.Credentials{Namespace: "rds1", Secret: "otc-credentials", Env: map[string]string{"OS_PASSWORD": "p"}}
	token := mustSeal(t, r.caps, c)

	resp, err := r.ReadLogs(context.Background(), token, logsapi.Request{Instance: "inst-1", Type: "error", Since: "30m", Lines: 50})
	require.NoError(t, err)
	assert.Equal(t, &logsapi.Response{
		Instance: "inst-1", Type: "error", Start: now.Add(-30 * time.Minute), End: now, Total: 3,
		Errors: []cloud.ErrorLogEntry{{Time: "2026-11-22T09:59:00", Level: "ERROR", Content: "a[31m b"}},
	}, resp, "cleaned entries of the window asked for")
	assert.Equal(t, []*cloud.Credentials{c.Creds}, clouds.asked, "read with the credentials the issuing call used")
	assert.Equal(t, []string{"GetInstance", "ListErrorLogs"}, team.Calls(), "the ownership tags are read fresh, then the log")
	assert.Empty(t, own.Calls(), "not with the controller's own")

	refusals := map[string]struct {
		req  logsapi.Request
		want string
	}{
		"another instance": {logsapi.Request{Instance: "inst-2", Type: "error"}, "the capability is for another instance"},
		"another log":      {logsapi.Request{Instance: "inst-1", Type: "general"}, `the capability does not cover the "general" log`},
		"more lines":       {logsapi.Request{Instance: "inst-1", Type: "error", Lines: 201}, "lines must be between 1 and 200"},
		"a longer window":  {logsapi.Request{Instance: "inst-1", Type: "error", Since: "2h"}, "since must be a duration up to 1h"},
		"a bad window":     {logsapi.Request{Instance: "inst-1", Type: "error", Since: "-1h"}, "since must be a duration up to 1h"},
	}
	for name, tc := range refusals {
		_, err := r.ReadLogs(context.Background(), token, tc.req)
		var refused *LogsRefusedError
		require.ErrorAs(t, err, &refused, name)
		assert.Equal(t, tc.want, refused.Reason, name)
	}

	future, err := r.ReadLogs(context.Background(), token, logsapi.Request{Instance: "inst-1", Type: "error", Until: now.Add(time.Hour)})
	require.NoError(t, err)
	assert.Equal(t, now, future.End, "a window ending in the future ends now")

	now = t0.Add(15 * time.Minute)
	_, err = r.ReadLogs(context.Background(), token, logsapi.Request{Instance: "inst-1", Type: "error"})
	var expired *CapabilityExpiredError
	require.ErrorAs(t, err, &expired)
	assert.Equal(t, t0.Add(15*time.Minute), expired.At)
	assert.Len(t, team.Calls(), 4, "an expired capability reads nothing")

	noKey := New(Config{Cloud: own})
	_, err = noKey.ReadLogs(context.Background(), token, logsapi.Request{Instance: "inst-1", Type: "error"})
	assert.ErrorIs(t, err, ErrLogsUnavailable)
}

func TestReadLogsCloudErrors(t *testing.T) {
	cases := map[string]struct {
		err  error
		kind cloud.Kind
		want string
	}{
		"gone":      {&cloud.Error{Kind: cloud.KindNotFound, Code: "DBS.200002", Sentence: "the instance does not exist", Message: "The DB instance does not exist."}, cloud.KindNotFound, "OTC does not know the instance: the instance does not exist (DBS.200002)"},
		"odd code":  {&cloud.Error{Kind: cloud.KindNotFound, Code: "DBS.200823", Message: "The DB instance does not exist."}, cloud.KindNotFound, "OTC does not know the instance (code DBS.200823)"},
		"throttled": {&cloud.Error{Kind: cloud.KindThrottled, RetryAfter: 5 * time.Second}, cloud.KindThrottled, "OTC is throttling requests; try again later"},
		"deadline":  {context.DeadlineExceeded, cloud.KindUnavailable, "OTC did not answer"},
		"refused":   {&cloud.Error{Kind: cloud.KindUnauthorized}, cloud.KindUnauthorized, "OTC refused the credentials the controller reads the logs with"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := &cloudtest.Fake{GetInstanceFn: ownedInstance, LogsFns: cloudtest.LogsFns{
				ListSlowLogsFn: func(context.Context, string, cloud.LogQuery) ([]cloud.SlowLogEntry, int, error) {
					return nil, 0, tc.err
				},
			}}
			r := New(Config{Cloud: f, Now: func() time.Time { return t0 }, PasswordKey: secret.New("k")})
			_, err := r.ReadLogs(context.Background(), mustSeal(t, r.caps, testCapability()), logsapi.Request{Instance: "inst-1", Type: "slow"})
			var ce *LogsCloudError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.kind, ce.Kind)
			assert.Equal(t, tc.want, ce.Error())
		})
	}
}

// TestReadLogsOnlyOfTheObjectsInstance: a capability sealed for an instance that another object
// owns (its namespace forged status.id before the token was issued) reads nothing: the ownership
// tags are read fresh on every read.
func TestReadLogsOnlyOfTheObjectsInstance(t *testing.T) {
	for name, tags := range map[string]map[string]string{
		"another object's":       owner{Cluster: "local", Namespace: "team-b", Name: "db", UID: "uid-b"}.tags(),
		"another cluster's":      owner{Cluster: "other", Namespace: "rds1", Name: "db", UID: "uid-1"}.tags(),
		"released by the object": owner{Cluster: "local", Namespace: "rds1", Name: "db", UID: "uid-1"}.releaseTags(),
		"untagged, another name": {},
	} {
		t.Run(name, func(t *testing.T) {
			f := &cloudtest.Fake{GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) {
				inst := activeInstance()
				inst.ID, inst.Name, inst.Tags = "inst-1", "rds-team-b-db-0123456789abcdef", tags
				return inst, nil
			}}
			r := New(Config{Cloud: f, Now: func() time.Time { return t0 }, PasswordKey: secret.New("k")})
			_, err := r.ReadLogs(context.Background(), mustSeal(t, r.caps, testCapability()), logsapi.Request{Instance: "inst-1", Type: "error"})
			var refused *LogsRefusedError
			require.ErrorAs(t, err, &refused)
			assert.Equal(t, []string{"GetInstance"}, f.Calls(), "no log is read")
		})
	}
}

// The capability carries the credential set of the call that issued it (the seam per-namespace
// credentials fill in), and the read uses it.
func TestLogsCapabilityCarriesTheCallsCredentials(t *testing.T) {
	w := newLogsWorld(t)
	req := request(w.spec, v1alpha1.RdsStatus{ID: "inst-1"}, storedSecret("A12345678+"))
	c := w.r.begin(context.Background(), req)
	c.creds = &cloud.Credentials{Namespace: "rds1", Secret: "otc-credentials", Env: map[string]string{"OS_PASSWORD": "team"}}
	inst := activeInstance()
	c.logsInstance = inst.ID
	_, err := c.runStep(context.Background(), newLogsStep(c, inst.Engine, false))
	require.NoError(t, err)
	secrets, _ := logsChildren(&hook.SyncResponse{Children: c.logChildren()})
	require.Len(t, secrets, 1)
	got := w.capability(t, secrets[0])
	assert.Equal(t, c.creds, got.Creds)
	assert.NotContains(t, string(secrets[0].Data["RDS_LOGS_TOKEN"]), "team")

	// A capability naming another namespace's credentials is never used.
	forged := got
	forged.Creds = &cloud.Credentials{Namespace: "other", Secret: "otc-credentials"}
	_, err = w.r.ReadLogs(context.Background(), mustSeal(t, w.r.caps, forged), logsapi.Request{Instance: "inst-1", Type: "error"})
	assert.ErrorIs(t, err, ErrCapabilityInvalid)
}

// BenchmarkCapability: sealing runs on every call that renders a log Secret, opening on every read.
func BenchmarkCapability(b *testing.B) {
	s, err := newCapabilitySealer(secret.New("bench key"))
	require.NoError(b, err)
	c := testCapability()
	c.Creds = &cloud.Credentials{Namespace: "rds1", Secret: "otc-credentials", Env: map[string]string{"OS_USERNAME": "u", "OS_PASSWORD": "p"}}
	token, err := s.seal(c)
	require.NoError(b, err)
	b.Run("seal", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.seal(c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("open", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.open(token); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A tenant who may patch its object's status forges status.logs: the capability the next call
// seals must still expire within the TTL of now and stay within the request bounds, and a token
// that would outlive the TTL is refused.
func TestLogsCapabilityFromForgedStatus(t *testing.T) {
	w := newLogsWorld(t)
	_, o := w.sync(t, w.first())
	forged := o.status.DeepCopy()
	far := metav1.NewTime(t0.Add(10 * 365 * 24 * time.Hour))
	forged.Logs.CredentialExpires = &far
	forged.Logs.State = v1alpha1.LogsRunning
	forged.Logs.Lines = 1_000_000
	forged.Logs.Since = "100000h"
	o.status = *forged
	o.secrets = map[string]*corev1.Secret{"my-rds-single-connection": o.secrets["my-rds-single-connection"]}
	w.now = t0.Add(time.Minute)
	resp, _ := w.sync(t, o)
	secrets, _ := logsChildren(resp)
	for _, s := range secrets {
		c := w.capability(t, s)
		assert.LessOrEqual(t, c.Expires, w.now.Add(w.r.cfg.LogsCapabilityTTL).Unix(), "no capability outlives the TTL")
		assert.LessOrEqual(t, c.Lines, maxLogsLines)
		since, err := time.ParseDuration(c.Since)
		require.NoError(t, err)
		assert.LessOrEqual(t, since, maxLogsSince)
	}

	// Starting with a forged expiry: the call issues one within the TTL instead.
	starting := o.status.DeepCopy()
	_, o2 := w.sync(t, w.first())
	starting.Logs = o2.status.Logs.DeepCopy()
	starting.Logs.CredentialExpires = &far
	o.status = *starting
	resp, next := w.sync(t, o)
	assert.Equal(t, w.now.Add(w.r.cfg.LogsCapabilityTTL), next.status.Logs.CredentialExpires.Time)
	secrets, _ = logsChildren(resp)
	require.Len(t, secrets, 1)
	assert.Equal(t, w.now.Add(w.r.cfg.LogsCapabilityTTL).Unix(), w.capability(t, secrets[0]).Expires)

	// A token that would read for longer than the TTL from now was not sealed by a call that
	// checked its status: refused.
	long := testCapability()
	long.Expires = w.now.Add(w.r.cfg.LogsCapabilityTTL + time.Hour).Unix()
	_, err := w.r.ReadLogs(context.Background(), mustSeal(t, w.r.caps, long), logsapi.Request{Instance: "inst-1", Type: "error"})
	assert.ErrorIs(t, err, ErrCapabilityInvalid)
	assert.NotContains(t, w.fake.Calls(), "ListErrorLogs", "nothing read")
}

// Until only narrows the window: a capability for the last hour reads no hour of last week.
func TestReadLogsWindowStaysWithinTheCapability(t *testing.T) {
	now := t0.Add(time.Minute)
	f := &cloudtest.Fake{GetInstanceFn: ownedInstance, LogsFns: cloudtest.LogsFns{
		ListErrorLogsFn: func(context.Context, string, cloud.LogQuery) ([]cloud.ErrorLogEntry, int, error) { return nil, 0, nil },
	}}
	r := New(Config{Cloud: f, Now: func() time.Time { return now }, PasswordKey: secret.New("k")})
	c := testCapability() // issued at t0 for 1h, expires at t0+15m
	token := mustSeal(t, r.caps, c)
	_, err := r.ReadLogs(context.Background(), token, logsapi.Request{Instance: "inst-1", Type: "error", Until: now.Add(-7 * 24 * time.Hour)})
	var refused *LogsRefusedError
	require.ErrorAs(t, err, &refused, "a window a week back")
	assert.Empty(t, f.Calls())
	resp, err := r.ReadLogs(context.Background(), token, logsapi.Request{Instance: "inst-1", Type: "error", Until: now.Add(-30 * time.Second)})
	require.NoError(t, err, "a Job whose clock is a little behind")
	assert.Equal(t, now.Add(-30*time.Second), resp.End)
}

// One capability is one Job's read of each log, not a licence to hammer OTC with the controller's
// login (throttling every tenant): reads with one capability run one at a time, and a bounded number.
func TestReadLogsOneCapabilityIsBounded(t *testing.T) {
	now := t0.Add(time.Minute)
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	f := &cloudtest.Fake{GetInstanceFn: ownedInstance, LogsFns: cloudtest.LogsFns{
		ListErrorLogsFn: func(ctx context.Context, id string, q cloud.LogQuery) ([]cloud.ErrorLogEntry, int, error) {
			if q.Max == 7 {
				started <- struct{}{}
				<-release
			}
			return nil, 0, nil
		},
	}}
	r := New(Config{Cloud: f, Now: func() time.Time { return now }, PasswordKey: secret.New("k")})
	token := mustSeal(t, r.caps, testCapability())
	read := func(lines int) error {
		_, err := r.ReadLogs(context.Background(), token, logsapi.Request{Instance: "inst-1", Type: "error", Lines: lines})
		return err
	}
	done := make(chan error)
	go func() { done <- read(7) }()
	<-started
	assert.ErrorIs(t, read(0), ErrCapabilityBusy, "a second read with the same capability waits for the first")
	other := testCapability()
	other.UID, other.Instance = "uid-2", "inst-2"
	_, err := r.ReadLogs(context.Background(), mustSeal(t, r.caps, other), logsapi.Request{Instance: "inst-2", Type: "error"})
	assert.NoError(t, err, "another object's Job is not held up")
	close(release)
	require.NoError(t, <-done)

	n := 1
	for ; n < 1000; n++ {
		if err := read(0); err != nil {
			var refused *LogsRefusedError
			require.ErrorAs(t, err, &refused)
			break
		}
	}
	assert.Equal(t, maxReadsPerCapability, n, "a bounded number of reads")
	calls := len(f.Calls())
	_, err = r.ReadLogs(context.Background(), token, logsapi.Request{Instance: "inst-1", Type: "error"})
	assert.Error(t, err)
	assert.Len(t, f.Calls(), calls, "no OTC call once spent")
}

// TestForgedLogsStatusGetsNoWiderCapability: status.logs is written by the controller, but a
// tenant who may write its object's status can forge it, and the Job's capability is rendered
// from it. A capability wider than any request could ask for (lines, window) or longer-lived than
// a capability is ever issued for reads nothing.
func TestForgedLogsStatusGetsNoWiderCapability(t *testing.T) {
	forever := metav1.NewTime(t0.AddDate(50, 0, 0))
	cases := map[string]func(ls *v1alpha1.LogsStatus){
		"an expiry decades away": func(ls *v1alpha1.LogsStatus) { ls.CredentialExpires = &forever },
		"a million lines":        func(ls *v1alpha1.LogsStatus) { ls.Lines = 1_000_000 },
		"ten years of logs":      func(ls *v1alpha1.LogsStatus) { ls.Since = "87600h" },
	}
	for name, forge := range cases {
		t.Run(name, func(t *testing.T) {
			f := &cloudtest.Fake{GetInstanceFn: ownedInstance, LogsFns: cloudtest.LogsFns{
				ListErrorLogsFn: func(context.Context, string, cloud.LogQuery) ([]cloud.ErrorLogEntry, int, error) { return nil, 0, nil },
			}}
			r := New(Config{Cloud: f, Now: func() time.Time { return t0 }, PasswordKey: secret.New("k"), JobImage: "img"})
			exp := metav1.NewTime(t0.Add(15 * time.Minute))
			ls := &v1alpha1.LogsStatus{Request: "r1", Job: "db-logs-x", State: v1alpha1.LogsStarting, Since: "1h", Lines: 200,
				Types: []string{"error"}, CredentialExpires: &exp}
			forge(ls)
			spec := sampleSpec()
			spec.Logs = &v1alpha1.LogsRequest{Request: "r1"}
			req := request(spec, v1alpha1.RdsStatus{ID: "inst-1", Logs: ls}, storedSecret("A12345678+"))
			req.Parent.Name, req.Parent.UID = "db", "uid-1"
			resp, err := r.Sync(context.Background(), req)
			require.NoError(t, err)
			var token string
			for _, ch := range resp.Children {
				if s, ok := ch.(*corev1.Secret); ok && s.Name == "db-logs-x-credentials" {
					token = string(s.Data[logsapi.EnvToken])
				}
			}
			if token == "" {
				return // no capability rendered at all: fine
			}
			// Either the call issued a capability within the bounds instead of the forged one (a
			// Starting request is sealed anew), or the forged one reads nothing.
			c, err := r.caps.open(token)
			require.NoError(t, err)
			if c.Expires <= t0.Add(r.cfg.LogsCapabilityTTL).Unix() && c.Lines <= maxLogsLines && c.Since == "1h" {
				return
			}
			_, err = r.ReadLogs(context.Background(), token, logsapi.Request{Instance: "inst-1", Type: "error"})
			require.ErrorIs(t, err, ErrCapabilityInvalid, "a forged capability reads nothing")
			_, err = r.ReadLogs(context.Background(), token, logsapi.Request{Instance: "inst-1", Type: "error", Lines: 10, Since: "1m"})
			require.ErrorIs(t, err, ErrCapabilityInvalid, "not even a narrow read")
		})
	}
}
