package otcsim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Server is a Sim listening on a loopback port, like httptest.Server.
type Server struct {
	URL string // base URL, e.g. http://127.0.0.1:41234
	Sim *Sim

	srv       *http.Server
	done      chan struct{}
	closeOnce sync.Once
	onClose   []func() // further Sims to close (MultiServer)

	mu      sync.Mutex
	fresh   map[net.Conn]struct{} // connections that have not sent a request yet
	closing bool
}

// NewServer starts a Sim on 127.0.0.1 with a free port. It panics if it cannot listen, as
// httptest.NewServer does.
func NewServer(opts Options) *Server {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("otcsim: listen: %v", err))
	}
	return Serve(l, New(opts))
}

// Serve serves sim on l until Close.
func Serve(l net.Listener, sim *Sim) *Server { return serveHandler(l, sim, sim.Handler()) }

// serveHandler serves h, which is sim's handler or routes to it, on l until Close.
func serveHandler(l net.Listener, sim *Sim, h http.Handler) *Server {
	s := &Server{
		URL:   "http://" + l.Addr().String(),
		Sim:   sim,
		done:  make(chan struct{}),
		fresh: map[net.Conn]struct{}{},
	}
	s.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ConnState: s.connState}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			sim.log.Error("otcsim server stopped", "err", err)
		}
	}()
	return s
}

// Close releases hanging requests, stops the server and waits for it.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.Sim.Close()
		for _, f := range s.onClose {
			f()
		}
		s.closeFresh()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.srv.Shutdown(ctx); err != nil {
			_ = s.srv.Close()
		}
		<-s.done
	})
}

// connState keeps the connections that have not sent a request yet (closeFresh).
func (s *Server) connState(c net.Conn, state http.ConnState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case state == http.StateNew && s.closing:
		_ = c.Close()
	case state == http.StateNew:
		s.fresh[c] = struct{}{}
	default:
		delete(s.fresh, c)
	}
}

// closeFresh closes the connections that have not sent a request, and those that come while the
// server closes. They lose nothing; Shutdown would wait 5 s for each (net/http counts a new
// connection idle only after 5 s), and an HTTP client that keeps connections opens one ahead of a
// request that then takes an idle one.
func (s *Server) closeFresh() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closing = true
	for c := range s.fresh {
		_ = c.Close()
	}
	clear(s.fresh)
}

// AuthURL is the identity endpoint, URL + "/v3".
func (s *Server) AuthURL() string { return s.URL + "/v3" }

// Env returns the OS_* variables that make openstack.AuthOptionsFromEnv log in to the simulator.
func (s *Server) Env() map[string]string {
	return s.Sim.Env(s.AuthURL())
}

// Env returns the OS_* variables for a simulator whose identity endpoint is authURL.
func (s *Sim) Env(authURL string) map[string]string {
	return map[string]string{
		"OS_AUTH_URL":     authURL,
		"OS_USERNAME":     s.opts.Username,
		"OS_PASSWORD":     s.opts.Password,
		"OS_DOMAIN_NAME":  s.opts.DomainName,
		"OS_PROJECT_NAME": s.opts.ProjectName,
		"OS_REGION_NAME":  Region,
	}
}
