package dbusers

import (
	"bytes"
	"context"
	"errors"
	"net"
	"sync/atomic"
)

// pemBegin starts the PEM block in which a MySQL server sends the RSA public key the password is
// to be encrypted with (encoding/pem finds it anywhere in the packet).
var pemBegin = []byte("-----BEGIN")

// errKeyRefused is what the driver reads instead of a server's public key; it reports every
// failed read as its own error, so the session tells it by loginGuards.refused.
var errKeyRefused = errors.New("the server sent a public key to encrypt the password with")

// loginGuards is the dial of a session without TLS: each connection refuses, until its login is
// over, the RSA public key a server sends to have the root password encrypted with.
//
// NOTE: without TLS, caching_sha2_password's full authentication (MySQL 8's default plugin, when
// the server's cache does not hold the account) and sha256_password ask for the password
// encrypted with the server's RSA key, and go-sql-driver/mysql asks the server for that key when
// none is configured: whoever answers at the instance's address sends its own and reads the
// password. MySQL's own client does not ask unless told to (--get-server-public-key: "enabling
// it could enable a man-in-the-middle attack"). OTC hands out no server key, so the controller
// does not ask either: such a login needs SSL on (VerifyCA), and is refused with ErrUnsafeLogin.
// The driver offers no option for it; its only way to a server's key is a packet holding a PEM
// block, which the guard never lets through while logging in.
type loginGuards struct {
	refused atomic.Bool
}

// dial is a mysql.Config.DialFunc.
func (g *loginGuards) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &loginGuard{Conn: c, refused: &g.refused}, nil
}

// loginGuard is one connection of loginGuards.
type loginGuard struct {
	net.Conn
	refused *atomic.Bool
	// in is the end of what the server sent last, for a PEM block that two reads cut.
	in []byte
	// out follows the client's packets: the login is over with the first command (sequence 0;
	// the login's packets answer the server's handshake, sequence 0, from 1 on).
	out      packetHeads
	loggedIn atomic.Bool
}

func (g *loginGuard) Read(p []byte) (int, error) {
	n, err := g.Conn.Read(p)
	if n > 0 && !g.loggedIn.Load() {
		seen := append(g.in, p[:n]...)
		if bytes.Contains(seen, pemBegin) {
			g.refused.Store(true)
			_ = g.Conn.Close()
			return 0, errKeyRefused
		}
		g.in = bytes.Clone(seen[max(0, len(seen)-len(pemBegin)+1):])
	}
	return n, err
}

func (g *loginGuard) Write(p []byte) (int, error) {
	if !g.loggedIn.Load() {
		g.out.feed(p, func(seq byte) {
			if seq == 0 {
				g.loggedIn.Store(true)
			}
		})
	}
	return g.Conn.Write(p)
}

// packetHeads follows a stream of MySQL packets (3 bytes of length, 1 of sequence, the payload).
type packetHeads struct {
	head [4]byte
	n    int // bytes of head read
	left int // bytes of the payload still to come
}

// feed reads b, calling f with the sequence number of each packet whose header it completes.
func (h *packetHeads) feed(b []byte, f func(seq byte)) {
	for len(b) > 0 {
		if h.left > 0 {
			k := min(h.left, len(b))
			h.left, b = h.left-k, b[k:]
			continue
		}
		k := copy(h.head[h.n:], b)
		h.n, b = h.n+k, b[k:]
		if h.n == len(h.head) {
			h.n, h.left = 0, int(h.head[0])|int(h.head[1])<<8|int(h.head[2])<<16
			f(h.head[3])
		}
	}
}
