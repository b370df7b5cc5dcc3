package reconcile

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// NOTE: OTC instance names are 4-64 characters, start with a letter and use [A-Za-z0-9_-]. The name
// is the only key that survives a lost create response, so it must be a pure function of the
// object's namespace and name: every call for the same object computes the same name and finds the
// instance an earlier call created. The hash of the full namespace/name keeps "a-b"/"c" and
// "a"/"b-c" apart even where the readable part is cut short.
//
// The name is a way to find candidates, never proof of ownership: OTC lets instances share a name,
// and anyone can compute it. Which instance is whose is read from its ownership tags (ownership.go).
// The cluster id in the hash keeps two clusters that share an OTC project from computing the same
// name for their objects of the same namespace/name.
const (
	instanceNamePrefix = "rds-"
	maxInstanceName    = 64
	hashLen            = 8
	nameHashLen        = 16
)

// InstanceName is the OTC instance name of the Rds object namespace/name in the cluster clusterID:
// "rds-<namespace>-<name, cut short>-<16 hex digits of sha256(clusterID/namespace/name)>".
func InstanceName(clusterID, namespace, name string) string {
	return instanceName(clusterID+"/"+namespace+"/"+name, namespace, name, nameHashLen)
}

// LegacyInstanceName is the name instances were created under before the cluster id was part of it
// (an unkeyed hash of namespace/name only). It is still looked up, so that an instance created then
// is found again (see observe).
func LegacyInstanceName(namespace, name string) string {
	return instanceName(namespace+"/"+name, namespace, name, hashLen)
}

func instanceName(hashed, namespace, name string, n int) string {
	sum := sha256.Sum256([]byte(hashed))
	room := maxInstanceName - len(instanceNamePrefix) - 1 - n
	// NOTE: every call computes the object's names: they are built in one buffer, one allocation.
	b := make([]byte, 0, maxInstanceName)
	b = append(b, instanceNamePrefix...)
	b = appendSanitized(b, namespace)
	b = append(b, '-')
	b = appendSanitized(b, name)
	if readable := b[len(instanceNamePrefix):]; len(readable) > room {
		b = b[:len(instanceNamePrefix)+len(strings.TrimRight(string(readable[:room]), "-"))]
	}
	b = append(b, '-')
	return string(appendHex(b, sum[:], n))
}

// sanitize maps a Kubernetes name (lowercase alphanumerics, '-' and '.') onto OTC's alphabet.
func sanitize(s string) string { return string(appendSanitized(make([]byte, 0, len(s)), s)) }

// appendSanitized appends s, sanitized, to b.
func appendSanitized(b []byte, s string) []byte {
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b = utf8.AppendRune(b, r)
		default:
			b = append(b, '-')
		}
	}
	return b
}

// hexPrefix is the first n hex digits of sum.
func hexPrefix(sum []byte, n int) string {
	var b [2 * sha256.Size]byte
	return string(appendHex(b[:0], sum, n))
}

// appendHex appends the first n hex digits of sum to b.
func appendHex(b, sum []byte, n int) []byte {
	return hex.AppendEncode(b, sum[:(n+1)/2])[:len(b)+n]
}

// ConnectionSecretName is the child Secret with the connection details of the Rds object name:
// "<name>-connection", with the name cut and hashed where that would exceed a Secret name's
// 253 characters (labels.go).
func ConnectionSecretName(name string) string {
	const suffix = "-connection"
	if len(name)+len(suffix) > maxSecretName {
		name = withHash(name, maxSecretName-len(suffix))
	}
	return name + suffix
}

// FinalBackupName is the manual backup taken before the instance instanceName with the OTC id
// instanceID is deleted: "<instance name, cut short>-final-<first 8 characters of the id>".
//
// NOTE: OTC backup names are unique across the project (a second create answers 409 DBS.201204),
// and the final backup outlives its instance. A name derived from the instance name alone is taken
// for ever once the object was deleted: an object created again under the same namespace/name gets
// the same instance name and could never take its final backup. The id makes the name unique per
// instance, also where cutting a long instance name to length drops its hash; being a pure function
// of the instance, it still finds the backup of a create whose response was lost.
func FinalBackupName(instanceName, instanceID string) string {
	suffix := "-final-" + sanitize(instanceID[:min(len(instanceID), hashLen)])
	if room := maxInstanceName - len(suffix); len(instanceName) > room {
		instanceName = strings.TrimRight(instanceName[:room], "-_")
	}
	return instanceName + suffix
}
