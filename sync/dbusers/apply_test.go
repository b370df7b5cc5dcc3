package dbusers

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// These tests need no database server.

// closedPort returns a local port nobody listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}

// silentServer accepts connections and never says anything: a server that hangs.
func silentServer(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return l.Addr().(*net.TCPAddr).Port
}

func TestApplyConnectionFailures(t *testing.T) {
	spec := Desired{Databases: []string{"shop"}}
	cases := map[string]struct {
		reason      string
		conn        func(t *testing.T) Conn
		ctxTimeout  time.Duration
		want        error
		wantMessage string
	}{
		"refused": {
			reason: "nobody listens: a quick, clean error to retry later",
			conn: func(t *testing.T) Conn {
				return Conn{Host: "127.0.0.1", Port: closedPort(t), User: "root", Password: secret.New("pw"), Timeout: 2 * time.Second}
			},
			want:        ErrUnreachable,
			wantMessage: "connection refused",
		},
		"handshake timeout": {
			reason: "a server that accepts and hangs is given up after Conn.Timeout",
			conn: func(t *testing.T) Conn {
				return Conn{Host: "127.0.0.1", Port: silentServer(t), User: "root", Password: secret.New("pw"), Timeout: 300 * time.Millisecond}
			},
			want:        ErrUnreachable,
			wantMessage: "timed out", // the driver says "connection lost or timed out" or "timed out"
		},
		"connect timeout": {
			reason: "Conn.ConnectTimeout gives up a server that accepts and hangs, whatever Conn.Timeout says",
			conn: func(t *testing.T) Conn {
				return Conn{Host: "127.0.0.1", Port: silentServer(t), User: "root", Password: secret.New("pw"), Timeout: time.Minute, ConnectTimeout: 300 * time.Millisecond}
			},
			want:        ErrUnreachable,
			wantMessage: "timed out",
		},
		"caller deadline": {
			reason: "the caller's context bounds the call even with a long Conn.Timeout",
			conn: func(t *testing.T) Conn {
				return Conn{Host: "127.0.0.1", Port: silentServer(t), User: "root", Password: secret.New("pw"), Timeout: time.Minute}
			},
			ctxTimeout: 300 * time.Millisecond,
			want:       ErrUnreachable,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			if tc.ctxTimeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.ctxTimeout)
				defer cancel()
			}
			conn := tc.conn(t)
			// NOTE: how fast Apply gives up is not asserted here (tests assert behaviour, not
			// speed; see BenchmarkApplyUnreachable): a timeout that did not fire would hang the
			// test instead, and the error kind shows which limit ended the call.
			res, err := Apply(ctx, conn, spec, ManagedState{Databases: []string{"old"}})
			require.Error(t, err, tc.reason)
			assert.True(t, errors.Is(err, tc.want), "%v should match %v", err, tc.want)
			assert.Contains(t, err.Error(), "connect to 127.0.0.1:"+strconv.Itoa(conn.Port))
			assert.Contains(t, err.Error(), tc.wantMessage)
			assert.NotContains(t, err.Error(), "pw")
			assert.Empty(t, res.Changes)
			assert.Equal(t, ManagedState{Databases: []string{"old"}}, res.Managed, "the remembered state survives a failed call")
		})
	}
}

func TestApplyRefusesBeforeConnecting(t *testing.T) {
	pw := secret.New("pw")
	cases := map[string]struct {
		reason  string
		conn    *Conn // nil: a valid address where nothing listens
		d       Desired
		managed ManagedState
		want    string
	}{
		"invalid spec": {
			reason: "spec problems are reported without touching the server",
			d:      Desired{Databases: []string{"mysql"}},
			want:   `databases[0]: database "mysql" is a system schema`,
		},
		"own account": {
			reason: "changing the admin's own password would lock the controller out",
			d:      Desired{Users: []UserSpec{{Name: "admin", Password: pw}}},
			want:   `users[0]: "admin" is the account the controller connects with`,
		},
		"tampered state: root": {
			reason:  "a remembered state naming root must never lead to DROP USER root",
			managed: ManagedState{Users: []ManagedUser{{Name: "root", Host: "%"}}},
			want:    `managed users[0]: user "root" is reserved`,
		},
		"tampered state: injection": {
			reason:  "names from the status pass the same allow-lists",
			managed: ManagedState{Databases: []string{"x`; DROP DATABASE mysql; --"}},
			want:    `managed databases[0]: database name`,
		},
		"tampered state: own account": {
			reason:  "the admin account is never dropped",
			managed: ManagedState{Users: []ManagedUser{{Name: "admin", Host: "10.%"}}},
			want:    `managed users[0]: "admin" is the account the controller connects with`,
		},
		"bad connection": {
			reason: "connection settings are checked too",
			conn:   &Conn{Host: "", Port: 0, User: ""},
			want:   "connection: host",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// Nothing listens here: a connection attempt would give ErrUnreachable.
			conn := Conn{Host: "127.0.0.1", Port: closedPort(t), User: "admin", Password: pw}
			if tc.conn != nil {
				conn = *tc.conn
			}
			_, err := Apply(t.Context(), conn, tc.d, tc.managed)
			require.Error(t, err, tc.reason)
			assert.True(t, errors.Is(err, ErrInvalid), tc.reason)
			assert.False(t, errors.Is(err, ErrUnreachable), "must fail before connecting")
			assert.Contains(t, err.Error(), tc.want, tc.reason)
		})
	}
}

// BenchmarkApplyUnreachable measures how long Apply takes to give up on a server that accepts and
// never answers, with a 50ms Conn.Timeout: the cost a hook pays per call while RDS hangs.
func BenchmarkApplyUnreachable(b *testing.B) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	defer l.Close()
	go func() {
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				_ = c.Close()
			}
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	conn := Conn{Host: "127.0.0.1", Port: l.Addr().(*net.TCPAddr).Port, User: "root", Password: secret.New("pw"), Timeout: 50 * time.Millisecond}
	spec := Desired{Databases: []string{"shop"}}
	for b.Loop() {
		if _, err := Apply(b.Context(), conn, spec, ManagedState{}); !errors.Is(err, ErrUnreachable) {
			b.Fatalf("want ErrUnreachable, got %v", err)
		}
	}
}
