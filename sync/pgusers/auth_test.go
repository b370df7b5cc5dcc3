package pgusers

import (
	"bytes"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/testnet"
	"github.com/mcsps/rds-lambda-controller/sync/dbusers"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// TestAdminPasswordIsNeverSentInClear: a server at the instance's address that asks for the
// admin's password in clear text, or lets the admin in without one, is refused: the session
// ends before the password or any statement is sent, with ErrUnsafeLogin.
func TestAdminPasswordIsNeverSentInClear(t *testing.T) {
	const password = "the-admin-password-4711"
	for _, tc := range []struct {
		reason string
		asks   pgproto3.BackendMessage
	}{
		{"a server that asks for the password in clear text", &pgproto3.AuthenticationCleartextPassword{}},
		{"a server that asks for nothing (trust)", &pgproto3.AuthenticationOk{}},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			srv := fakeServer(t, tc.asks)
			conn := dbusers.Conn{Host: "127.0.0.1", Port: srv.Port, User: "root", Password: secret.New(password), Timeout: 5 * time.Second}
			_, err := Apply(t.Context(), conn, dbusers.Desired{Databases: []string{"shop"}}, dbusers.ManagedState{})
			require.ErrorIs(t, err, dbusers.ErrUnsafeLogin)
			assert.ErrorContains(t, err, "require_auth")
			assert.NotContains(t, err.Error(), password)

			got := srv.received()
			assert.Positive(t, srv.asked(), "the server was reached and asked")
			assert.NotContains(t, string(got), password, "the password was sent")
			assert.NotContains(t, string(got), "shop", "a statement was sent")
		})
	}
}

// fake is a PostgreSQL server that refuses TLS, answers every startup with one authentication
// request, and records every byte the client sends after it.
type fake struct {
	*testnet.Listener

	mu    sync.Mutex
	after bytes.Buffer
	asks  int
}

func fakeServer(t *testing.T, asks pgproto3.BackendMessage) *fake {
	t.Helper()
	f := &fake{}
	f.Listener = testnet.Serve(t, func(c net.Conn) {
		b := pgproto3.NewBackend(c, c)
		if !startupRefusingTLS(b, c) {
			return
		}
		b.Send(asks)
		if err := b.Flush(); err != nil {
			return
		}
		f.mu.Lock()
		f.asks++
		f.mu.Unlock()
		rest, _ := io.ReadAll(c)
		f.mu.Lock()
		f.after.Write(rest)
		f.mu.Unlock()
	})
	return f
}

// received waits for the client's connections to end and returns what it sent after the request.
func (f *fake) received() []byte {
	f.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	return bytes.Clone(f.after.Bytes())
}

func (f *fake) asked() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.asks
}
