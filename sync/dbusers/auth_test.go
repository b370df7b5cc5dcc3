package dbusers

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1" //nolint:gosec // caching_sha2_password's RSA padding is OAEP with SHA-1
	"crypto/x509"
	"encoding/binary"
	"encoding/pem"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/testnet"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// TestAdminPasswordIsNeverSentToBeRead: without TLS (ssl off), a MySQL server that must check the
// root password in full (caching_sha2_password with a cold cache, sha256_password) asks for it
// encrypted with an RSA key, and sends that key itself when asked: whoever answers at the
// instance's address sends its own, and reads the password. MySQL's own client refuses that unless
// told otherwise (--get-server-public-key); so does the controller, as it refuses to send the
// password in clear text (mysql_clear_password) or as the pre-4.1 hash. The session ends before
// the password is sent, with ErrUnsafeLogin.
func TestAdminPasswordIsNeverSentToBeRead(t *testing.T) {
	const password = "the-admin-password-4711"
	for _, tc := range []struct {
		reason string
		plugin string                              // the handshake's
		then   func(s *fakeMySQL, c *mysqlPackets) // what the server does after the client's handshake response
	}{
		{"caching_sha2_password, full authentication: the server's key, asked for", "caching_sha2_password", func(s *fakeMySQL, c *mysqlPackets) {
			c.write([]byte{0x01, 0x04}) // perform full authentication
			if req, ok := c.read(); !ok || !bytes.Equal(req, []byte{0x02}) {
				return
			}
			c.write(append([]byte{0x01}, s.pem...))
			s.decrypt(c.read())
		}},
		{"sha256_password: the server's key, sent unasked", "sha256_password", func(s *fakeMySQL, c *mysqlPackets) {
			c.write(append([]byte{0x01}, s.pem...))
			s.decrypt(c.read())
		}},
		{"a switch to caching_sha2_password, then its key", "mysql_native_password", func(s *fakeMySQL, c *mysqlPackets) {
			c.write(append(append([]byte{0xfe}, "caching_sha2_password\x00"...), s.scramble...))
			if _, ok := c.read(); !ok {
				return
			}
			c.write([]byte{0x01, 0x04})
			if req, ok := c.read(); !ok || !bytes.Equal(req, []byte{0x02}) {
				return
			}
			c.write(append([]byte{0x01}, s.pem...))
			s.decrypt(c.read())
		}},
		{"mysql_clear_password", "mysql_native_password", func(s *fakeMySQL, c *mysqlPackets) {
			c.write(append([]byte{0xfe}, "mysql_clear_password\x00"...))
			c.read()
		}},
		{"mysql_old_password", "mysql_native_password", func(s *fakeMySQL, c *mysqlPackets) {
			c.write(append(append([]byte{0xfe}, "mysql_old_password\x00"...), s.scramble[:8]...))
			c.read()
		}},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			srv := newFakeMySQL(t, tc.plugin, tc.then)
			conn := Conn{Host: "127.0.0.1", Port: srv.Port, User: "root", Password: secret.New(password), Timeout: 5 * time.Second}
			_, err := Apply(t.Context(), conn, Desired{Databases: []string{"shop"}}, ManagedState{})
			require.ErrorIs(t, err, ErrUnsafeLogin)
			assert.NotContains(t, err.Error(), password)

			got, read := srv.received()
			assert.NotContains(t, string(got), password, "the password was sent in clear")
			assert.NotContains(t, read, password, "the server read the password")
			assert.NotContains(t, string(got), "shop", "a statement was sent")
		})
	}
}

// TestLoginGuardEndsWithTheLogin: once the server let the controller in, what it answers is no
// login: a text that looks like a key (a database's name may) is no reason to refuse it.
func TestLoginGuardEndsWithTheLogin(t *testing.T) {
	srv := newFakeMySQL(t, "mysql_native_password", func(s *fakeMySQL, c *mysqlPackets) {
		c.write([]byte{0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00}) // OK
		if _, ok := c.read(); !ok {                               // the first command
			return
		}
		c.write(append([]byte{0xff, 0x51, 0x04, '#', 'H', 'Y', '0', '0', '0'}, s.pem...)) // ERR 1105
	})
	conn := Conn{Host: "127.0.0.1", Port: srv.Port, User: "root", Password: secret.New("pw"), Timeout: 5 * time.Second}
	_, err := Apply(t.Context(), conn, Desired{Databases: []string{"shop"}}, ManagedState{})
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrUnsafeLogin)
	assert.ErrorIs(t, err, ErrUnreachable)
	assert.ErrorContains(t, err, "server error 1105")
}

// fakeMySQL is a MySQL server without TLS that sends a handshake naming plugin, reads the
// client's response and then does what then says; it records every byte the client sends after
// the handshake response, and what it could decrypt with its RSA key.
type fakeMySQL struct {
	*testnet.Listener
	key      *rsa.PrivateKey
	pem      []byte
	scramble []byte

	mu    sync.Mutex
	after bytes.Buffer
	read  []string

	// tls, when set, makes the handshake offer TLS and serves the connection once the client
	// asked for it (its SSL request read), instead of then.
	tls func(*fakeMySQL, net.Conn)
}

func newFakeMySQL(t *testing.T, plugin string, then func(*fakeMySQL, *mysqlPackets)) *fakeMySQL {
	t.Helper()
	return newFakeMySQLWith(t, plugin, then, nil)
}

// newFakeMySQLWith is newFakeMySQL offering TLS when tlsServe is set: it serves each connection
// after the client's TLS request.
func newFakeMySQLWith(t *testing.T, plugin string, then func(*fakeMySQL, *mysqlPackets), tlsServe func(*fakeMySQL, net.Conn)) *fakeMySQL {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	require.NoError(t, err)
	s := &fakeMySQL{
		key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}),
		scramble: []byte("0123456789abcdefghij"), tls: tlsServe,
	}
	s.Listener = testnet.Serve(t, func(c net.Conn) {
		p := &mysqlPackets{c: c, s: s}
		hs := s.handshake(plugin)
		if s.tls != nil {
			hs[22] |= 0x08 // CLIENT_SSL, in the capabilities' lower half
		}
		p.write(hs)
		if _, ok := p.read(); !ok {
			return
		}
		if s.tls != nil {
			s.tls(s, c)
			return
		}
		p.recording = true
		then(s, p)
	})
	return s
}

// handshake is a protocol 10 handshake without TLS, naming plugin.
func (s *fakeMySQL) handshake(plugin string) []byte {
	const caps = 1 | 4 | 1<<9 | 1<<13 | 1<<15 | 1<<19 // long password, long flag, 4.1, transactions, secure connection, plugin auth
	b := []byte{10}
	b = append(b, "8.0.28\x00"...)
	b = binary.LittleEndian.AppendUint32(b, 7)
	b = append(b, s.scramble[:8]...)
	b = append(b, 0)
	b = binary.LittleEndian.AppendUint16(b, caps&0xffff)
	b = append(b, 45)
	b = binary.LittleEndian.AppendUint16(b, 2)
	b = binary.LittleEndian.AppendUint16(b, caps>>16)
	b = append(b, 21)
	b = append(b, make([]byte, 10)...)
	b = append(b, s.scramble[8:]...)
	b = append(b, 0)
	return append(b, plugin+"\x00"...)
}

// decrypt records what the server reads of an RSA-encrypted password (password XOR scramble).
func (s *fakeMySQL) decrypt(enc []byte, ok bool) {
	if !ok {
		return
	}
	plain, err := rsa.DecryptOAEP(sha1.New(), nil, s.key, enc, nil)
	if err != nil {
		return
	}
	for i := range plain {
		plain[i] ^= s.scramble[i%len(s.scramble)]
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.read = append(s.read, string(bytes.TrimRight(plain, "\x00")))
}

// received waits for the client's connections to end and returns what it sent after its
// handshake response, and what the server read of encrypted passwords.
func (s *fakeMySQL) received() ([]byte, []string) {
	s.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.after.Bytes()), append([]string(nil), s.read...)
}

// mysqlPackets reads and writes MySQL packets, numbering the server's.
type mysqlPackets struct {
	c         net.Conn
	s         *fakeMySQL
	seq       byte
	recording bool
}

func (p *mysqlPackets) write(payload []byte) {
	h := []byte{byte(len(payload)), byte(len(payload) >> 8), byte(len(payload) >> 16), p.seq}
	p.seq++
	_, _ = p.c.Write(append(h, payload...))
}

func (p *mysqlPackets) read() ([]byte, bool) {
	var h [4]byte
	if _, err := io.ReadFull(p.c, h[:]); err != nil {
		return nil, false
	}
	payload := make([]byte, int(h[0])|int(h[1])<<8|int(h[2])<<16)
	if _, err := io.ReadFull(p.c, payload); err != nil {
		return nil, false
	}
	p.seq = h[3] + 1
	if p.recording {
		p.s.mu.Lock()
		p.s.after.Write(payload)
		p.s.mu.Unlock()
	}
	return payload, true
}

// TestLoginGuardCutStreams: the guard sees a server's key however the stream is cut into reads,
// and the client's packets however its writes cut them.
func TestLoginGuardCutStreams(t *testing.T) {
	packet := append([]byte{0x01}, "x\n-----BEGIN PUBLIC KEY-----\n"...)
	for cut := 1; cut < len(packet); cut++ {
		server, client := net.Pipe()
		var guards loginGuards
		g := &loginGuard{Conn: client, refused: &guards.refused}
		go func() {
			_, _ = server.Write(packet[:cut])
			_, _ = server.Write(packet[cut:])
			_ = server.Close()
		}()
		_, err := io.ReadAll(g)
		assert.ErrorIs(t, err, errKeyRefused, "cut at %d", cut)
		assert.True(t, guards.refused.Load())
		_ = client.Close()
	}

	// A handshake response (sequence 1) and a command (sequence 0), written in every cut.
	stream := []byte{3, 0, 0, 1, 'a', 'b', 'c', 1, 0, 0, 0, 0x0e}
	for cut := range len(stream) + 1 {
		var h packetHeads
		var seqs []byte
		h.feed(stream[:cut], func(seq byte) { seqs = append(seqs, seq) })
		h.feed(stream[cut:], func(seq byte) { seqs = append(seqs, seq) })
		assert.Equal(t, []byte{1, 0}, seqs, "cut at %d", cut)
	}
}
