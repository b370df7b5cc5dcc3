package otc

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

var _ cloud.Clouds = (*Pool)(nil)

// Defaults of PoolConfig.
const (
	DefaultPoolIdle = 30 * time.Minute
	DefaultPoolMax  = 1000
	// DefaultPoolMaxPerNamespace bounds one namespace's clients: a namespace whose Rds objects
	// name several Secrets needs a few, and one that cycles through credential sets (a Secret
	// patched again and again) pushes out only its own.
	DefaultPoolMaxPerNamespace = 16
	// MaxRefusedLoginsPerNamespace is how many logins of one namespace IAM may refuse within the
	// reauth backoff; further new logins of that namespace wait for the backoff without asking IAM.
	// A Secret may name any IAM user, another team's or the controller's own, with a new wrong
	// password each time: the controller must not become a way to lock that user out.
	MaxRefusedLoginsPerNamespace = 3
	// MaxRefusedLoginsPerUser is the same for the user logins of one identity endpoint (any
	// spelling of any user: a domain and a user can each be named by name or id), or one access
	// key, whichever namespaces name them: many namespaces guessing one user's password together
	// reach IAM no more often than one namespace may. A credential set IAM accepted before
	// (proven) is not held up by other sets' refusals.
	MaxRefusedLoginsPerUser = 3
	// loginInFlightWait is the Retry-After of a login held because the logins in flight would
	// reach a cap if IAM refused them: they end within a request timeout, mostly much sooner.
	loginInFlightWait = 5 * time.Second
	// provenFor is how long a credential set IAM accepted is remembered as proven.
	provenFor = 24 * time.Hour
)

// PoolConfig configures a Pool.
type PoolConfig struct {
	// Base is the controller's own config: its tunables (timeouts, reauth backoffs, transport,
	// observer) apply to every client of the pool, and its identity endpoint is the one a
	// credential set without OS_AUTH_URL uses. Its credentials are never used.
	Base Config
	// AuthURLs are the identity endpoints a credential set may name in OS_AUTH_URL. Empty: only
	// Base's. No other endpoint is ever contacted: a Secret cannot make the controller send a
	// login (or anything else) to an address of its choosing.
	AuthURLs []string
	// Idle is how long a client nobody asked for is kept. Zero: DefaultPoolIdle.
	Idle time.Duration
	// Max bounds the number of clients; the least recently used goes first. Zero: DefaultPoolMax.
	Max int
	// MaxPerNamespace bounds the clients of one namespace; beyond it, the namespace's least
	// recently used goes, never another namespace's. Zero: DefaultPoolMaxPerNamespace.
	MaxPerNamespace int
	// Now is the pool's clock. Default time.Now.
	Now func() time.Time
	// Wrap, if set, wraps each logged-in client once (e.g. in the shared view of its project,
	// sync/cloud/view), and the pool hands out what it returns.
	Wrap func(cloud.Cloud) cloud.Cloud
}

// Pool hands out one logged-in Client per credential set (cloud.Clouds). A set is known by the
// SHA-256 digest of its namespace and its login, which never leaves the pool. The first call for
// a set logs in with its own deadline while later calls for the same set wait for that login (one
// login, however many calls arrive at once); a refused login is remembered for Base's reauth
// backoff, so that calls do not lock the IAM user with failed logins. A client unused for Idle is
// dropped. The pool is safe for concurrent use.
type Pool struct {
	base      Config
	defaultIn string          // Base's identity endpoint
	allowed   map[string]bool // normalised identity endpoints
	idle      time.Duration
	max       int
	maxPerNS  int
	now       func() time.Time
	newClient func(ctx context.Context, cfg Config) (*Client, error)
	wrap      func(cloud.Cloud) cloud.Cloud

	mu      sync.Mutex
	entries map[[sha256.Size]byte]*list.Element // of *poolEntry
	lru     list.List                           // front: most recently used
	perNS   map[string]int                      // entries by namespace
	budgets map[string]*loginBudget             // by namespace and by IAM user (budgetKeys)
	proven  map[[sha256.Size]byte]time.Time     // credential sets IAM accepted, and when
}

// loginBudget is what counts against a cap of refused logins: the logins IAM refused within the
// reauth backoff, and the logins in flight, any of which IAM may refuse.
type loginBudget struct {
	refused  []time.Time
	inFlight int
}

type poolEntry struct {
	key      [sha256.Size]byte
	ns       string
	lastUsed time.Time
	done     chan struct{} // closed when the login finished
	client   cloud.Cloud   // set before done closes (wrapped by PoolConfig.Wrap), nil on failure
	err      error         // the login's error
	retryAt  time.Time     // a failed entry is dropped at its first use after retryAt
}

// NewPool returns an empty pool. Base needs an identity endpoint (set, or from its clouds.yaml
// cloud) only when credential sets may omit OS_AUTH_URL.
func NewPool(cfg PoolConfig) (*Pool, error) {
	p := &Pool{
		base: cfg.Base, idle: cfg.Idle, max: cfg.Max, maxPerNS: cfg.MaxPerNamespace, now: cfg.Now, newClient: New, wrap: cfg.Wrap,
		allowed: map[string]bool{}, entries: map[[sha256.Size]byte]*list.Element{}, perNS: map[string]int{},
		budgets: map[string]*loginBudget{}, proven: map[[sha256.Size]byte]time.Time{},
	}
	if p.idle <= 0 {
		p.idle = DefaultPoolIdle
	}
	if p.max <= 0 {
		p.max = DefaultPoolMax
	}
	if p.maxPerNS <= 0 {
		p.maxPerNS = DefaultPoolMaxPerNamespace
	}
	if p.now == nil {
		p.now = time.Now
	}
	// Every client shares one transport, so that their connections to OTC are pooled together.
	if p.base.Transport == nil {
		p.base.Transport = NewTransport()
	}
	if opts, _, err := loginOptions(cfg.Base); err == nil {
		p.defaultIn = normaliseURL(opts.GetIdentityEndpoint())
	}
	if p.defaultIn == "" {
		p.defaultIn = normaliseURL(cfg.Base.AuthURL)
	}
	for _, u := range cfg.AuthURLs {
		if u = normaliseURL(u); u != "" {
			p.allowed[u] = true
		}
	}
	if len(p.allowed) == 0 && p.defaultIn != "" {
		p.allowed[p.defaultIn] = true
	}
	return p, nil
}

func normaliseURL(u string) string { return strings.TrimRight(strings.TrimSpace(u), "/") }

// Len is the number of clients (and logins in flight or remembered as failed) in the pool.
func (p *Pool) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.entries)
}

// For returns the client for creds, logging in if the pool has none. Errors are
// cloud.ErrCredentialsInvalid (no OTC call was made) or the login's *cloud.Error.
func (p *Pool) For(ctx context.Context, creds *cloud.Credentials) (cloud.Cloud, error) {
	if creds == nil {
		return nil, fmt.Errorf("%w: no credentials", cloud.ErrCredentialsInvalid)
	}
	cfg, err := p.config(creds)
	if err != nil {
		return nil, err
	}
	key := digest(creds.Namespace, cfg)

	p.mu.Lock()
	now := p.now()
	p.sweep(now)
	el, found := p.entries[key]
	var e *poolEntry
	if found {
		e = el.Value.(*poolEntry)
		select {
		case <-e.done:
			if e.client == nil && !now.Before(e.retryAt) {
				p.remove(el) // the failure is old enough: log in again
				found = false
			}
		default:
		}
	}
	if found {
		e.lastUsed = now
		p.lru.MoveToFront(el)
		p.mu.Unlock()
		return e.wait(ctx)
	}
	budgets := p.budgetKeys(creds.Namespace, cfg, key)
	if wait, msg := p.loginWait(budgets, now); wait > 0 {
		p.mu.Unlock()
		return nil, &cloud.Error{Kind: cloud.KindThrottled, Op: "Authenticate", RetryAfter: wait, Message: msg}
	}
	for _, b := range budgets {
		p.budget(b).inFlight++
	}
	e = &poolEntry{key: key, ns: creds.Namespace, lastUsed: now, done: make(chan struct{})}
	p.entries[key] = p.lru.PushFront(e)
	p.perNS[e.ns]++
	// NOTE: a namespace over its share pushes out its own least recently used client first, so
	// that its churn never logs another namespace out.
	for el := p.lru.Back(); p.perNS[e.ns] > p.maxPerNS && el != nil; {
		prev := el.Prev()
		if el.Value.(*poolEntry).ns == e.ns {
			p.remove(el)
		}
		el = prev
	}
	for p.lru.Len() > p.max {
		p.remove(p.lru.Back())
	}
	p.mu.Unlock()

	// NOTE: the login runs under the first caller's deadline; callers arriving meanwhile wait for
	// it (or their own deadline). A login cut short by that deadline is not remembered as failed.
	client, err := p.newClient(ctx, cfg)
	var served cloud.Cloud
	if err == nil {
		served = client
		if p.wrap != nil {
			served = p.wrap(client)
		}
	}
	p.mu.Lock()
	e.client = served
	refused := false
	if err != nil {
		e.err = loginFailure(err)
		e.retryAt = p.now()
		var ce *cloud.Error
		if errors.As(e.err, &ce) && ctx.Err() == nil {
			switch ce.Kind {
			case cloud.KindUnauthorized, cloud.KindInvalid, cloud.KindNotFound:
				refused = true
				delete(p.proven, key)
				e.retryAt = e.retryAt.Add(p.base.reauthBackoff())
			default:
				e.retryAt = e.retryAt.Add(p.base.reauthRetry())
			}
		}
	} else {
		p.prove(key, p.now())
	}
	for _, b := range budgets {
		lb := p.budget(b)
		lb.inFlight--
		if refused {
			lb.refused = append(lb.refused, e.retryAt.Add(-p.base.reauthBackoff()))
		}
	}
	close(e.done)
	p.mu.Unlock()
	if err != nil {
		return nil, e.err
	}
	return served, nil
}

// wait returns the entry's client once its login finished, or ctx's error.
func (e *poolEntry) wait(ctx context.Context) (cloud.Cloud, error) {
	select {
	case <-e.done:
	case <-ctx.Done():
		return nil, &cloud.Error{Kind: cloud.KindUnavailable, Op: "Authenticate", Message: "the login to OTC did not finish in time"}
	}
	if e.client == nil {
		return nil, e.err
	}
	return e.client, nil
}

// loginFailure keeps a login's error to a *cloud.Error; anything else (no endpoint in the catalog,
// no region) is the credential set's fault and reported without its text.
func loginFailure(err error) error {
	var ce *cloud.Error
	if errors.As(err, &ce) {
		return ce
	}
	return &cloud.Error{Kind: cloud.KindInvalid, Op: "Authenticate",
		Message: "the login succeeded, but its project offers no RDS in the region"}
}

// budgetKeys names the caps of refused logins a login counts against: its namespace's, and its
// IAM user's unless IAM accepted this very credential set before (key, proven). The caller holds
// p.mu.
//
// NOTE: the user's cap is shared by every namespace, so a namespace guessing a user's password
// holds up the new logins of that user in other namespaces for the backoff; a set that logged in
// before is let through, so a team already working keeps working when its client is renewed.
func (p *Pool) budgetKeys(ns string, cfg Config, key [sha256.Size]byte) []string {
	keys := []string{"namespace\x00" + ns}
	if user := iamUser(cfg); user != "" {
		if at, ok := p.proven[key]; !ok || p.now().Sub(at) >= provenFor {
			keys = append(keys, user)
		}
	}
	return keys
}

// iamUser is the cap of refused logins a login shares with the others that may name the same IAM
// user, as a digest: "" for a token login (it names no user). A user login shares it with every
// user login of the same identity endpoint: a Secret may name one user by domain name or domain
// id, by user name or user id, and IAM locks the user whatever the spelling, so no spelling of the
// Secret's can tell two users apart before IAM accepted one (a login it accepted before is not
// held up: budgetKeys). An access key is the key of one credential, whatever else is named.
func iamUser(c Config) string {
	var parts []string
	switch {
	case c.AccessKey != "":
		parts = []string{"aksk", c.AccessKey}
	case c.Username != "" || c.UserID != "":
		parts = []string{"user", normaliseURL(c.AuthURL)}
	default:
		return ""
	}
	h := sha256.New()
	for _, v := range parts {
		_ = binary.Write(h, binary.BigEndian, uint64(len(v)))
		h.Write([]byte(v))
	}
	return "user\x00" + string(h.Sum(nil))
}

// loginWait is how long a new login waits because a cap it counts against is reached, counting
// the logins in flight as if IAM refused them, and why; 0: it may log in. The caller holds p.mu.
func (p *Pool) loginWait(keys []string, now time.Time) (time.Duration, string) {
	var wait time.Duration
	msg := ""
	for _, k := range keys {
		b := p.budgets[k]
		if b == nil {
			continue
		}
		for len(b.refused) > 0 && !now.Before(b.refused[0].Add(p.base.reauthBackoff())) {
			b.refused = b.refused[1:]
		}
		if len(b.refused) == 0 && b.inFlight == 0 {
			delete(p.budgets, k)
			continue
		}
		max := MaxRefusedLoginsPerNamespace
		who := "this namespace"
		if strings.HasPrefix(k, "user\x00") {
			max, who = MaxRefusedLoginsPerUser, "new credentials for this identity endpoint"
		}
		var w time.Duration
		switch {
		case len(b.refused) >= max:
			w = b.refused[len(b.refused)-max].Add(p.base.reauthBackoff()).Sub(now)
			msg = "IAM refused several logins of " + who + "; new ones wait"
		case len(b.refused)+b.inFlight >= max:
			w = loginInFlightWait
			if msg == "" {
				msg = "IAM is checking several logins of " + who + "; new ones wait"
			}
		}
		wait = max2(wait, w)
	}
	return wait, msg
}

func max2(a, b time.Duration) time.Duration {
	if a > b {
		return a
	}
	return b
}

// budget is the budget of key k, made when missing. The caller holds p.mu.
func (p *Pool) budget(k string) *loginBudget {
	b := p.budgets[k]
	if b == nil {
		b = &loginBudget{}
		p.budgets[k] = b
	}
	return b
}

// prove remembers that IAM accepted the credential set key at now, keeping at most p.max sets
// (the oldest go first). The caller holds p.mu.
func (p *Pool) prove(key [sha256.Size]byte, now time.Time) {
	p.proven[key] = now
	for k, at := range p.proven {
		if now.Sub(at) >= provenFor {
			delete(p.proven, k)
		}
	}
	for len(p.proven) > p.max {
		var oldest [sha256.Size]byte
		var at time.Time
		for k, t := range p.proven {
			if at.IsZero() || t.Before(at) {
				oldest, at = k, t
			}
		}
		delete(p.proven, oldest)
	}
}

// sweep drops the clients idle for longer than p.idle. The caller holds p.mu.
func (p *Pool) sweep(now time.Time) {
	for el := p.lru.Back(); el != nil; {
		e := el.Value.(*poolEntry)
		if now.Sub(e.lastUsed) < p.idle {
			return // the rest were used more recently
		}
		prev := el.Prev()
		p.remove(el)
		el = prev
	}
}

func (p *Pool) remove(el *list.Element) {
	e := el.Value.(*poolEntry)
	if p.perNS[e.ns]--; p.perNS[e.ns] <= 0 {
		delete(p.perNS, e.ns)
	}
	delete(p.entries, e.key)
	p.lru.Remove(el)
}

// config turns a credential set into a Config with the pool's tunables, refusing what a namespace
// may not use. Its errors name variables, never values.
func (p *Pool) config(creds *cloud.Credentials) (Config, error) {
	if v := strings.TrimSpace(creds.Env["OS_CLOUD"]); v != "" {
		return Config{}, fmt.Errorf("%w: OS_CLOUD is not allowed (it names a cloud in the controller's own clouds.yaml)", cloud.ErrCredentialsInvalid)
	}
	cfg, err := ConfigFromEnv(func(k string) string { return creds.Env[k] })
	if errors.Is(err, ErrNoCredentials) {
		return Config{}, fmt.Errorf("%w: no OTC login (OS_USERNAME and OS_PASSWORD, or OS_ACCESS_KEY and OS_SECRET_KEY)", cloud.ErrCredentialsInvalid)
	}
	if cfg.AuthURL == "" {
		cfg.AuthURL = p.defaultIn
		if err != nil {
			err = cfg.validate() // OS_AUTH_URL was only missing because it defaults to the controller's
		}
	}
	if err != nil {
		return Config{}, fmt.Errorf("%w: %s", cloud.ErrCredentialsInvalid, strings.TrimPrefix(err.Error(), "incomplete OTC credentials: "))
	}
	if !p.allowed[normaliseURL(cfg.AuthURL)] {
		return Config{}, fmt.Errorf("%w: OS_AUTH_URL is not one of the identity endpoints the administrator allowed", cloud.ErrCredentialsInvalid)
	}
	cfg.RequestTimeout, cfg.RetryAfter = p.base.RequestTimeout, p.base.RetryAfter
	cfg.ReauthBackoff, cfg.ReauthRetry = p.base.ReauthBackoff, p.base.ReauthRetry
	cfg.Transport, cfg.Observe = p.base.Transport, p.base.Observe
	return cfg, nil
}

// digest identifies a credential set: the namespace it was read in (a client is never handed to
// another namespace's call) and everything the login depends on, each length-prefixed.
func digest(namespace string, c Config) [sha256.Size]byte {
	h := sha256.New()
	for _, v := range []string{
		namespace, normaliseURL(c.AuthURL), c.Username, c.UserID, c.Password.Reveal(), c.DomainName,
		c.DomainID, c.ProjectName, c.ProjectID, c.Token.Reveal(), c.AccessKey, c.SecretKey.Reveal(),
		c.SecurityToken.Reveal(), c.Region,
	} {
		_ = binary.Write(h, binary.BigEndian, uint64(len(v)))
		h.Write([]byte(v))
	}
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out
}
