package otc

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
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// fakeOTC is a minimal Keystone plus RDS for the adapter's own plumbing: renewal, deadlines and
// headers. The behaviour of the OTC API itself is tested against internal/otcsim.
type fakeOTC struct {
	*httptest.Server
	logins    atomic.Int32
	loginCode atomic.Int32                  // status of the next logins; 0 means 201
	loginHold atomic.Pointer[chan struct{}] // if set, logins wait until it is closed
	requests  atomic.Int32                  // requests other than logins
	token     atomic.Value                  // string: the token RDS accepts
	rds       http.HandlerFunc

	mu      sync.Mutex
	headers []http.Header
}

func newFakeOTC(t *testing.T, rds http.HandlerFunc) *fakeOTC {
	f := &fakeOTC{rds: rds}
	f.token.Store("")
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeOTC) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.headers = append(f.headers, r.Header.Clone())
	f.mu.Unlock()
	if r.URL.Path == "/v3/auth/tokens" {
		n := f.logins.Add(1)
		if hold := f.loginHold.Load(); hold != nil {
			<-*hold
		}
		if code := int(f.loginCode.Load()); code != 0 {
			w.WriteHeader(code)
			fmt.Fprint(w, `{"error":{"code":401,"title":"Unauthorized","message":"The username or password is wrong."}}`)
			return
		}
		tok := fmt.Sprintf("token-%d", n)
		f.token.Store(tok)
		w.Header().Set("X-Subject-Token", tok)
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"token":{"expires_at":"2099-01-01T00:00:00Z","project":{"id":"p1","name":"eu-de","domain":{"id":"d1"}},
			"user":{"id":"u1","domain":{"id":"d1"}},"catalog":[
			{"type":"rdsv3","endpoints":[{"interface":"public","region":"eu-de","url":"%[1]s/rds/v3/p1"}]},
			{"type":"network","endpoints":[{"interface":"public","region":"eu-de","url":"%[1]s/vpc/"}]}]}}`, f.URL)
		return
	}
	f.requests.Add(1)
	if r.Header.Get("X-Auth-Token") != f.token.Load().(string) {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"error_code":"APIGW.0301","error_msg":"Incorrect IAM authentication information: token expired"}`)
		return
	}
	f.rds(w, r)
}

// expire makes RDS refuse the current token, as after 24 h.
func (f *fakeOTC) expire() { f.token.Store("expired") }

func (f *fakeOTC) sawHeader(name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, h := range f.headers {
		if h.Get(name) != "" {
			return true
		}
	}
	return false
}

func emptyList(w http.ResponseWriter, _ *http.Request) {
	fmt.Fprint(w, `{"instances":[],"total_count":0}`)
}

func newTestClient(t *testing.T, f *fakeOTC, mod func(*Config)) *Client {
	t.Helper()
	cfg := Config{AuthURL: f.URL + "/v3", Username: "u", Password: secret.New("p"), DomainName: "d", ProjectName: "eu-de", RequestTimeout: 5 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(context.Background(), cfg)
	require.NoError(t, err)
	return c
}

// getInstance is one GetInstance under a deadline long enough for anything but a hang.
func getInstance(c *Client) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err := c.GetInstance(ctx, "i1in01")
	return err
}

func TestRenewalRefusedDoesNotHang(t *testing.T) {
	f := newFakeOTC(t, emptyList)
	clock := otcsim.NewManualClock(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))
	c := newTestClient(t, f, nil)
	c.auth.now = clock.Now
	f.expire()
	f.loginCode.Store(http.StatusUnauthorized) // the password was rotated

	for i := 0; i < 2; i++ { // the second call must not be stuck behind the first renewal either
		err := getInstance(c)
		require.Error(t, err)
		assert.Equal(t, cloud.KindUnauthorized, cloud.KindOf(err), "%v", err)
		assert.NotContains(t, err.Error(), "deadline", "answered by the renewal, not by our deadline")
	}
	assert.Equal(t, int32(2), f.logins.Load(), "the first login and one failed renewal: the second call did not log in")

	f.loginCode.Store(0) // credentials fixed: renewed once the refusal is no longer remembered
	clock.Advance(DefaultReauthBackoff - time.Second)
	assert.Equal(t, cloud.KindUnauthorized, cloud.KindOf(getInstance(c)), "still remembered")
	assert.Equal(t, int32(2), f.logins.Load())
	clock.Advance(time.Second)
	err := getInstance(c)
	assert.Equal(t, cloud.KindNotFound, cloud.KindOf(err), "%v", err)
	assert.Equal(t, int32(3), f.logins.Load())
}

func TestRenewalBackoff(t *testing.T) {
	cases := map[string]struct {
		reason    string
		loginCode int
		mod       func(*Config)
		kind      cloud.Kind
		backoff   time.Duration
	}{
		"refused": {
			reason:    "a password rotation must not make one failed login per call: IAM locks the user",
			loginCode: http.StatusUnauthorized, kind: cloud.KindUnauthorized, backoff: DefaultReauthBackoff,
		},
		"refused, configured": {
			reason:    "Config.ReauthBackoff sets the wait",
			loginCode: http.StatusUnauthorized, mod: func(cfg *Config) { cfg.ReauthBackoff = time.Minute },
			kind: cloud.KindUnauthorized, backoff: time.Minute,
		},
		"keystone down": {
			reason:    "Keystone unavailable is retried sooner than a refusal",
			loginCode: http.StatusServiceUnavailable, kind: cloud.KindUnavailable, backoff: DefaultReauthRetry,
		},
		"keystone throttles, configured": {
			reason:    "Config.ReauthRetry sets the wait",
			loginCode: http.StatusTooManyRequests, mod: func(cfg *Config) { cfg.ReauthRetry = 10 * time.Second },
			kind: cloud.KindThrottled, backoff: 10 * time.Second,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFakeOTC(t, emptyList)
			clock := otcsim.NewManualClock(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))
			c := newTestClient(t, f, tc.mod)
			c.auth.now = clock.Now
			f.expire()
			f.loginCode.Store(int32(tc.loginCode))

			var wg sync.WaitGroup
			for i := 0; i < 8; i++ { // 8 objects' calls at once share one failed renewal
				wg.Go(func() {
					err := getInstance(c)
					assert.Equal(t, tc.kind, cloud.KindOf(err), "%s: %v", tc.reason, err)
				})
			}
			wg.Wait()
			require.Equal(t, int32(2), f.logins.Load(), "%s: the first login and one renewal", tc.reason)

			clock.Advance(tc.backoff - time.Second)
			for i := 0; i < 3; i++ {
				assert.Equal(t, tc.kind, cloud.KindOf(getInstance(c)), tc.reason)
			}
			assert.Equal(t, int32(2), f.logins.Load(), "%s: failed at once, without logging in", tc.reason)

			clock.Advance(time.Second)
			assert.Equal(t, tc.kind, cloud.KindOf(getInstance(c)), tc.reason)
			assert.Equal(t, int32(3), f.logins.Load(), "%s: tried again once the wait is over", tc.reason)
		})
	}
}

func TestConcurrent401sRenewOnce(t *testing.T) {
	f := newFakeOTC(t, emptyList)
	c := newTestClient(t, f, nil)
	f.expire()

	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Go(func() {
			_, err := c.GetInstance(context.Background(), "i1in01")
			assert.Equal(t, cloud.KindNotFound, cloud.KindOf(err), "%v", err)
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, f.logins.Load(), int32(3), "one login plus (about) one renewal, not one per call")
}

// waitDropped waits until the client has refused n requests of calls that had ended.
func waitDropped(t *testing.T, c *Client, n int64) {
	t.Helper()
	require.Eventually(t, func() bool { return c.transport.dropped.Load() >= n }, 5*time.Second, 10*time.Millisecond,
		"the abandoned SDK goroutine tried to send again")
}

func TestNothingSentAfterTheCallEnded(t *testing.T) {
	t.Run("the SDK's retry of a 502", func(t *testing.T) {
		f := newFakeOTC(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) })
		c := newTestClient(t, f, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond) // < the SDK's 500 ms sleep
		defer cancel()
		_, err := c.GetInstance(ctx, "i1in01")
		assert.Equal(t, cloud.KindUnavailable, cloud.KindOf(err), "%v", err)
		waitDropped(t, c, 1)
		assert.Equal(t, int32(1), f.requests.Load(), "the retry after the deadline never reached the server")
	})

	t.Run("the retry after waiting for a renewal", func(t *testing.T) {
		f := newFakeOTC(t, emptyList)
		c := newTestClient(t, f, nil)
		f.expire()
		hold := make(chan struct{})
		f.loginHold.Store(&hold)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := c.GetInstance(ctx, "i1in01")
		assert.Equal(t, cloud.KindUnavailable, cloud.KindOf(err), "%v", err)
		close(hold) // the renewal ends after the call did
		waitDropped(t, c, 1)
		assert.Equal(t, int32(1), f.requests.Load(), "only the request that got the 401")
		assert.Equal(t, int32(2), f.logins.Load(), "the renewal itself went through: other calls share it")
	})
}

func TestCallHeaderStaysInside(t *testing.T) {
	f := newFakeOTC(t, emptyList)
	c := newTestClient(t, f, nil)
	_, _ = c.GetInstance(context.Background(), "i1in01")
	assert.False(t, f.sawHeader(callHeader))
}

func TestRetryAfterFromHeader(t *testing.T) {
	f := newFakeOTC(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "17")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	c := newTestClient(t, f, nil)
	start := time.Now()
	_, err := c.GetInstance(context.Background(), "i1in01")
	var ce *cloud.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, cloud.KindThrottled, ce.Kind)
	assert.Equal(t, 17*time.Second, ce.RetryAfter)
	assert.Less(t, time.Since(start), 2*time.Second, "the SDK's 60 s sleep on 429 is off")
}

func TestDeadlineCutsHangingCall(t *testing.T) {
	release := make(chan struct{})
	var aborted atomic.Bool
	f := newFakeOTC(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done(): // the client went away: our transport cancelled the request
			aborted.Store(true)
		}
	})
	defer close(release)
	var observed []string
	c := newTestClient(t, f, func(cfg *Config) {
		cfg.Observe = func(op, result string, _ time.Duration) { observed = append(observed, op+"="+result) }
	})

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.GetInstance(ctx, "i1in01")
	assert.Less(t, time.Since(start), time.Second)
	assert.Equal(t, cloud.KindUnavailable, cloud.KindOf(err), "%v", err)
	assert.Eventually(t, aborted.Load, 2*time.Second, 10*time.Millisecond, "the abandoned request is cancelled, not left to the HTTP timeout")
	assert.Equal(t, []string{"Authenticate=ok", "GetInstance=unavailable"}, observed)
}

func TestLoginRefused(t *testing.T) {
	f := newFakeOTC(t, emptyList)
	f.loginCode.Store(http.StatusUnauthorized)
	_, err := New(context.Background(), Config{AuthURL: f.URL + "/v3", Username: "u", Password: secret.New("Secr3t!pw"), DomainName: "d", ProjectName: "eu-de"})
	require.Error(t, err)
	assert.Equal(t, cloud.KindUnauthorized, cloud.KindOf(err))
	assert.NotContains(t, err.Error(), f.URL)
	assert.NotContains(t, err.Error(), "Secr3t!pw")
}
