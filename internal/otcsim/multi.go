package otcsim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
)

// Multi serves several Sims, one OTC project and IAM user each, behind one address, as OTC serves
// every project from the same endpoints: a login goes to the Sim whose user it names, a call with
// a project in its path to that project's Sim, any other call to the Sim that issued its token.
// Each project's instances, backups and counters are its own Sim's: one project never lists
// another's instances.
type Multi struct {
	sims      []*Sim
	byProject map[string]*Sim
}

// NewMulti returns a Multi over sims. Their projects, users and seeds must differ (equal seeds
// would issue equal token ids); it panics otherwise.
func NewMulti(sims ...*Sim) *Multi {
	m := &Multi{sims: sims, byProject: map[string]*Sim{}}
	users, seeds := map[string]bool{}, map[int64]bool{}
	for _, s := range sims {
		o := s.opts
		if m.byProject[o.ProjectID] != nil || users[o.Username] || seeds[o.Seed] {
			panic(fmt.Sprintf("otcsim: NewMulti needs distinct projects, users and seeds (project %s, user %s, seed %d)", o.ProjectID, o.Username, o.Seed))
		}
		m.byProject[o.ProjectID], users[o.Username], seeds[o.Seed] = s, true, true
	}
	return m
}

// ServeHTTP routes the request to one Sim.
func (m *Multi) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.route(r).Handler().ServeHTTP(w, r)
}

func (m *Multi) route(r *http.Request) *Sim {
	// /rds/v3/<pid>/..., /vpc/v1/<pid>/..., /vpc/v3/<pid>/..., /ces/V1.0/<pid>/..., /evs/v2/<pid>/...
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if len(parts) >= 3 && (parts[0] == "rds" || parts[0] == "ces" || parts[0] == "evs" || (parts[0] == "vpc" && (parts[1] == "v1" || parts[1] == "v3"))) {
		if s := m.byProject[parts[2]]; s != nil {
			return s
		}
	}
	if s := m.byProject[r.Header.Get("X-Project-Id")]; s != nil {
		return s
	}
	if tok := r.Header.Get("X-Auth-Token"); tok != "" {
		for _, s := range m.sims {
			if s.hasToken(tok) {
				return s
			}
		}
	}
	if r.Method == http.MethodPost && r.URL.Path == "/v3/auth/tokens" {
		if s := m.loginSim(r); s != nil {
			return s
		}
	}
	return m.sims[0]
}

// loginSim picks the Sim a login names by its user (or, for a token login, by its token), and
// leaves the body readable for that Sim.
func (m *Multi) loginSim(r *http.Request) *Sim {
	data, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	r.Body = io.NopCloser(bytes.NewReader(data))
	if err != nil {
		return nil
	}
	var req authRequest
	if json.Unmarshal(data, &req) != nil {
		return nil
	}
	id := req.Auth.Identity
	for _, s := range m.sims {
		if p := id.Password; p != nil && ((p.User.Name != "" && p.User.Name == s.opts.Username) || (p.User.ID != "" && p.User.ID == s.userID)) {
			return s
		}
		if t := id.Token; t != nil && t.ID != "" && s.hasToken(t.ID) {
			return s
		}
	}
	return nil
}

func (s *Sim) hasToken(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokens[id] != nil
}

// MultiServer is a Multi listening on a loopback port.
type MultiServer struct {
	URL  string
	Sims []*Sim
	srv  *Server
}

// NewMultiServer starts a Multi of one Sim per options on 127.0.0.1 with a free port.
func NewMultiServer(opts ...Options) *MultiServer {
	sims := make([]*Sim, len(opts))
	for i, o := range opts {
		sims[i] = New(o)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("otcsim: listen: %v", err))
	}
	srv := serveHandler(l, sims[0], NewMulti(sims...))
	for _, s := range sims[1:] {
		srv.onClose = append(srv.onClose, s.Close)
	}
	return &MultiServer{URL: srv.URL, Sims: sims, srv: srv}
}

// AuthURL is the identity endpoint, URL + "/v3".
func (m *MultiServer) AuthURL() string { return m.URL + "/v3" }

// Env returns the OS_* variables that log in as the i-th Sim's user to its project.
func (m *MultiServer) Env(i int) map[string]string { return m.Sims[i].Env(m.AuthURL()) }

// Close stops the server.
func (m *MultiServer) Close() { m.srv.Close() }
