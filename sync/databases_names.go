package reconcile

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/mcsps/rds-lambda-controller/sync/dbusers"
)

// maxSecretName is the length limit of a Secret's name (a DNS subdomain).
const maxSecretName = 253

// UserSecretName is the child Secret holding the connection details of the database account
// name@host of the Rds object rds: "<rds>-user-<label>-<hash>", where label is the name made
// DNS-safe and hash the first 8 hex digits of SHA-256("rds/name@host").
//
// NOTE: the hash is never left out. Without it, the Secret of user "b-connection" of Rds "a"
// would be the connection Secret of Rds "a-user-b", and user "c" of Rds "a-user-b" would own
// the Secret of user "b-user-c" of Rds "a": names from different objects in one namespace
// must not meet. The hash also keeps accounts apart whose names differ only in case or
// punctuation, or only in the host.
func UserSecretName(rds, name, host string) string {
	host = dbusers.NormalizeHost(host)
	sum := sha256.Sum256([]byte(rds + "/" + name + "@" + host))
	hash := hex.EncodeToString(sum[:])[:hashLen]
	label := dnsLabel(name)
	// Cut the label first, then the object's name, to stay within a Secret name's length: the
	// hash keeps the result unique.
	if over := len(rds) + len("-user-") + len(label) + 1 + len(hash) - maxSecretName; over > 0 {
		label = strings.Trim(label[:max(len(label)-over, 0)], "-")
	}
	if over := len(rds) + len("-user-") + len(label) + 1 + len(hash) - maxSecretName; over > 0 {
		rds = strings.TrimRight(rds[:len(rds)-over], "-.")
	}
	if label == "" {
		return rds + "-user-" + hash
	}
	return rds + "-user-" + label + "-" + hash
}

// dnsLabel lower-cases s, maps everything but [a-z0-9] to '-' and trims '-' at both ends.
func dnsLabel(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}
