package pgusers

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"regexp"
	"strconv"
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

// TestUserPasswordsNeverReachAnImpostorInClear: MD5 proves the admin's password to the server and
// nothing of the server to the controller, so whoever answers at the instance's address may ask
// for it and answer "authenticated" to any proof. Such a server then chooses the
// server_version_num the controller reads: one before PostgreSQL 10 must not make the controller
// send the users' passwords in clear (they would log in to the real instance).
func TestUserPasswordsNeverReachAnImpostorInClear(t *testing.T) {
	const userPassword = "the-user-password-0815"
	for _, version := range []string{"90624", "100023", "170002"} {
		t.Run("server_version_num "+version, func(t *testing.T) {
			srv := impostorServer(t, version)
			conn := dbusers.Conn{Host: "127.0.0.1", Port: srv.Port, User: "root", Password: secret.New("the-admin-password-4711"), Timeout: 5 * time.Second}
			d := dbusers.Desired{Users: []dbusers.UserSpec{{Name: "shop_app", Password: secret.New(userPassword)}}}
			_, err := Apply(t.Context(), conn, d, dbusers.ManagedState{})
			require.NoError(t, err, "the impostor is taken for the instance: MD5 cannot tell")

			got := srv.received()
			require.Contains(t, got, "CREATE ROLE \"shop_app\" LOGIN PASSWORD ", "the role was created")
			assert.NotContains(t, got, userPassword, "the user's password was sent in clear")
		})
	}
}

// impostor is a PostgreSQL server that refuses TLS, asks for an MD5 proof and accepts any,
// answers server_version_num with version and every other query with no rows, and records the
// statements it receives.
type impostor struct {
	*testnet.Listener
	version string

	mu         sync.Mutex
	statements bytes.Buffer
}

func impostorServer(t *testing.T, version string) *impostor {
	t.Helper()
	f := &impostor{version: version}
	f.Listener = testnet.Serve(t, f.serve)
	return f
}

var placeholderRE = regexp.MustCompile(`\$(\d+)`)

func (f *impostor) serve(c net.Conn) {
	b := pgproto3.NewBackend(c, c)
	if !startupRefusingTLS(b, c) {
		return
	}
	b.Send(&pgproto3.AuthenticationMD5Password{Salt: [4]byte{1, 2, 3, 4}})
	if b.Flush() != nil || b.SetAuthType(pgproto3.AuthTypeMD5Password) != nil {
		return
	}
	if _, err := b.Receive(); err != nil { // the proof, whatever it is
		return
	}
	b.Send(&pgproto3.AuthenticationOk{})
	b.Send(&pgproto3.ParameterStatus{Name: "standard_conforming_strings", Value: "on"})
	b.Send(&pgproto3.ParameterStatus{Name: "client_encoding", Value: "UTF8"})
	b.Send(&pgproto3.BackendKeyData{ProcessID: 1, SecretKey: []byte{0, 0, 0, 1}})
	b.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
	if b.Flush() != nil {
		return
	}
	statements := map[string]string{} // prepared statement -> SQL
	var portal string                 // the SQL of the portal bound last
	var formats []int16
	for {
		msg, err := b.Receive()
		if err != nil {
			return
		}
		switch m := msg.(type) {
		case *pgproto3.Query:
			f.record(m.String)
			b.Send(&pgproto3.CommandComplete{CommandTag: []byte("OK")})
			b.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
		case *pgproto3.Parse:
			f.record(m.Query)
			statements[m.Name] = m.Query
			b.Send(&pgproto3.ParseComplete{})
		case *pgproto3.Describe:
			sql := statements[m.Name]
			params := 0
			for _, p := range placeholderRE.FindAllStringSubmatch(sql, -1) {
				n, _ := strconv.Atoi(p[1])
				params = max(params, n)
			}
			oids := make([]uint32, params)
			for i := range oids {
				oids[i] = 25 // text
			}
			b.Send(&pgproto3.ParameterDescription{ParameterOIDs: oids})
			if isVersionQuery(sql) {
				b.Send(&pgproto3.RowDescription{Fields: []pgproto3.FieldDescription{{Name: []byte("current_setting"), DataTypeOID: 23, DataTypeSize: 4, TypeModifier: -1}}})
			} else {
				b.Send(&pgproto3.NoData{})
			}
		case *pgproto3.Bind:
			portal, formats = statements[m.PreparedStatement], m.ResultFormatCodes
			b.Send(&pgproto3.BindComplete{})
		case *pgproto3.Execute:
			if isVersionQuery(portal) {
				v := []byte(f.version)
				if len(formats) > 0 && formats[0] == 1 {
					n, _ := strconv.Atoi(f.version)
					v = binary.BigEndian.AppendUint32(nil, uint32(n))
				}
				b.Send(&pgproto3.DataRow{Values: [][]byte{v}})
				b.Send(&pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")})
			} else {
				b.Send(&pgproto3.CommandComplete{CommandTag: []byte("SELECT 0")})
			}
		case *pgproto3.Sync:
			b.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
		case *pgproto3.Terminate:
			return
		}
		if b.Flush() != nil {
			return
		}
	}
}

func isVersionQuery(sql string) bool {
	return bytes.Contains([]byte(sql), []byte("server_version_num"))
}

func (f *impostor) record(sql string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, _ = io.WriteString(&f.statements, sql+"\n")
}

// received waits for the client's connections to end and returns the statements it sent.
func (f *impostor) received() string {
	f.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.statements.String()
}
