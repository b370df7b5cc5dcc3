package reconcile

import (
	"bytes"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"
	"math/big"

	"k8s.io/apimachinery/pkg/types"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
)

// passwordSpecials are the special characters OTC allows in a root password; each engine has its
// own set (DOC:rds/api_v3_recommended/db_instance_management/creating_a_db_instance). The CRD's
// password rule and the simulator hold the same lists; test/otccases checks all three.
var passwordSpecials = map[string]string{
	v1alpha1.EngineMySQL:      "~!@#$%^*-_=+?,()&",
	v1alpha1.EnginePostgreSQL: "~!@#$%^*-_=+?,",
	v1alpha1.EngineSQLServer:  "~!@#$%^*-_+?,",
}

// NOTE: a generated password must work in a DSN and a URI without surprises, so it draws its
// special characters from the subset of every engine's set that needs no escaping in either.
const (
	genLower   = "abcdefghijkmnopqrstuvwxyz"
	genUpper   = "ABCDEFGHJKLMNPQRSTUVWXYZ"
	genDigits  = "23456789"
	genSpecial = "-_~"
	genLength  = 24
)

// GeneratePassword returns a random root password that meets OTC's rules: one character of each
// class, the rest from all of them, shuffled.
func GeneratePassword(random io.Reader) (string, error) {
	all := genLower + genUpper + genDigits + genSpecial
	out := make([]byte, 0, genLength)
	for _, set := range []string{genLower, genUpper, genDigits, genSpecial} {
		c, err := pick(random, set)
		if err != nil {
			return "", err
		}
		out = append(out, c)
	}
	for len(out) < genLength {
		c, err := pick(random, all)
		if err != nil {
			return "", err
		}
		out = append(out, c)
	}
	for i := len(out) - 1; i > 0; i-- {
		j, err := rand.Int(random, big.NewInt(int64(i+1)))
		if err != nil {
			return "", fmt.Errorf("generate password: %w", err)
		}
		out[i], out[j.Int64()] = out[j.Int64()], out[i]
	}
	return string(out), nil
}

func pick(random io.Reader, set string) (byte, error) {
	n, err := rand.Int(random, big.NewInt(int64(len(set))))
	if err != nil {
		return 0, fmt.Errorf("generate password: %w", err)
	}
	return set[n.Int64()], nil
}

// passwordSource is where a password the hooks generate draws its randomness from.
//
// NOTE: Metacontroller may send two calls for one object with the same observation (a retry after
// a timeout while the first call still runs, a stale cache). With random passwords both would
// return the Secret holding "the" password, each a different one, and the Secret could end up
// holding the one the instance was not created with. With Config.PasswordKey set, a generated
// password is a function of that key, the object's uid and what it is for: every call for the
// same object answers the same password, and nobody without the key can compute it.
func passwordSource(cfg Config, uid types.UID, purpose string) (io.Reader, error) {
	if cfg.PasswordKey.Empty() {
		return cfg.Random, nil
	}
	stream, err := hkdf.Key(sha256.New, []byte(cfg.PasswordKey.Reveal()), []byte(uid),
		"rds-lambda-controller/password/v1\x00"+purpose, 1024)
	if err != nil {
		return nil, fmt.Errorf("derive password: %w", err)
	}
	return bytes.NewReader(stream), nil
}

// generatePassword returns a new password for purpose (see passwordSource).
func generatePassword(cfg Config, uid types.UID, purpose string) (string, error) {
	src, err := passwordSource(cfg, uid, purpose)
	if err != nil {
		return "", err
	}
	return GeneratePassword(src)
}
