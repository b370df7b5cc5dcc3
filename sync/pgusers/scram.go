package pgusers

import (
	"crypto/hmac"
	"crypto/md5" //nolint:gosec // PostgreSQL's MD5 verifier, before 10 the only stored form
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
)

// scramIterations is PostgreSQL's default scram_iterations.
const scramIterations = 4096

// passwordSQL renders the value of CREATE ROLE / ALTER ROLE ... PASSWORD for role on a server of
// the given server_version_num, so that the password never reaches the server, nor its statement
// log, pg_stat_statements or an error message: on PostgreSQL 10 and later a SCRAM-SHA-256 verifier
// of the password (the server stores it as it is, as for psql's \password), before 10 the MD5
// verifier such a server stores, "md5" and md5(password || role), which it takes as it is too.
// The SCRAM verifier needs the password as SASLprep leaves it: printable ASCII is left as it is,
// anything else would need SASLprep's mapping and normalization, so such a password is sent as a
// literal (PostgreSQL hashes it itself).
//
// NOTE: the version is the server's word, and MD5 (which the session accepts) proves nothing of
// the server: whoever answers at the instance's address may claim 9.6. Before 10 the password
// was therefore sent as a literal to anyone who asked (TestUserPasswordsNeverReachAnImpostorInClear).
func passwordSQL(password, role string, version int) (string, error) {
	if version < 100000 {
		sum := md5.Sum([]byte(password + role))
		return quoteLiteral("md5" + hex.EncodeToString(sum[:])), nil
	}
	if !printableASCII(password) {
		return quoteLiteral(password), nil
	}
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	v, err := scramVerifier(password, salt, scramIterations)
	if err != nil {
		return "", err
	}
	return quoteLiteral(v), nil
}

// scramVerifier is the SCRAM-SHA-256 verifier PostgreSQL stores in pg_authid.rolpassword (RFC
// 5802, RFC 7677): SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>, base64.
func scramVerifier(password string, salt []byte, iterations int) (string, error) {
	salted, err := pbkdf2.Key(sha256.New, password, salt, iterations, sha256.Size)
	if err != nil {
		return "", err
	}
	clientKey := hmacSHA256(salted, "Client Key")
	storedKey := sha256.Sum256(clientKey)
	serverKey := hmacSHA256(salted, "Server Key")
	b64 := base64.StdEncoding.EncodeToString
	return "SCRAM-SHA-256$" + strconv.Itoa(iterations) + ":" + b64(salt) + "$" + b64(storedKey[:]) + ":" + b64(serverKey), nil
}

func hmacSHA256(key []byte, msg string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
