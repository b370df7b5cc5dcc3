package otcsim

import (
	"crypto/sha256"
	"encoding/hex"
)

// stableHex returns 32 hex digits derived from key, for ids that must not change between runs.
func stableHex(key string) string {
	sum := sha256.Sum256([]byte("otcsim/" + key))
	return hex.EncodeToString(sum[:16])
}

// stableUUID returns a UUID derived from key.
func stableUUID(key string) string {
	return uuidFromHex(stableHex(key))
}
