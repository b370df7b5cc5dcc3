package sync

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/mcsps/rds-lambda-controller/sync/dbusers"
)

// maxSecretName is the length limit of a Secret's name (a DNS subdomain).
const maxSecretName = 253

// UserSecretName is the child Secret holding the connection details of the database account
// name@host of the Rds object rds: "<rds>-user-<name>" when the name is a plain lower-case DNS
// label and the host is "%" (or empty), else "<rds>-user-<label>-<hash>", where label is the name
// made DNS-safe and hash the first 8 hex digits of SHA-256("name@host"). The hash keeps accounts
// apart whose names differ only in case or punctuation, or only in the host.
func UserSecretName(rds, name, host string) string {
	host = dbusers.NormalizeHost(host)
	label := dnsLabel(name)
	prefix := rds + "-user-"
	if label == name && host == dbusers.DefaultHost && len(prefix)+len(label) <= maxSecretName {
		return prefix + label
	}
	sum := sha256.Sum256([]byte(name + "@" + host))
	suffix := hex.EncodeToString(sum[:])[:hashLen]
	if label != "" {
		suffix = "-" + suffix
	}
	if room := maxSecretName - len(prefix) - len(suffix); len(label) > room {
		label = strings.TrimRight(label[:max(room, 0)], "-")
		if label == "" {
			suffix = strings.TrimPrefix(suffix, "-")
		}
	}
	return prefix + label + suffix
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
