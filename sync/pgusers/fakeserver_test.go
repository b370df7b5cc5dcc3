package pgusers

import (
	"net"

	"github.com/jackc/pgx/v5/pgproto3"
)

// startupRefusingTLS reads a client's startup message, answering "N" to each SSLRequest before
// it; false when the client went away.
func startupRefusingTLS(b *pgproto3.Backend, c net.Conn) bool {
	for {
		msg, err := b.ReceiveStartupMessage()
		if err != nil {
			return false
		}
		if _, ok := msg.(*pgproto3.SSLRequest); !ok {
			return true
		}
		if _, err := c.Write([]byte("N")); err != nil {
			return false
		}
	}
}
