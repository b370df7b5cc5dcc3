package reconcile

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// A log Job holds no OTC credential: OTC cannot narrow a temporary AK/SK (its policy restricts only
// OBS), and one that can read logs can also delete instances. The Job holds a capability instead:
// a token only the hooks can open, that names one instance of one object, the request, what it may
// read, until when, and with which credentials the hooks read it. The hooks' logs port (server.NewLogs,
// ReadLogs) opens it and reads that instance's logs for the Job, and nothing else.
//
// The token is sealed (AES-256-GCM), not only signed: it carries the credential set of the call
// that issued it (an object's namespace credentials), which the Job must not read, and any replica
// can open it without shared state. The key derives from the same stable secret as generated
// passwords (Config.PasswordKey), with a label of its own.

// logsCapability is what a token says.
type logsCapability struct {
	Instance  string `json:"i"`
	Namespace string `json:"ns"`
	Name      string `json:"n"`
	UID       string `json:"u"`
	Request   string `json:"r"`
	// Types, Since and Lines are the request's options: a read may only narrow them.
	Types []string `json:"t"`
	Since string   `json:"s"`
	Lines int      `json:"l"`
	// Expires is when the token stops reading, in Unix seconds.
	Expires int64 `json:"e"`
	// Creds are the credentials the issuing call used; nil is the controller's own login.
	Creds *cloud.Credentials `json:"c,omitempty"`
}

func (c *logsCapability) expires() time.Time { return time.Unix(c.Expires, 0).UTC() }

// tokenPrefix marks the format, so that a later one can be told apart.
const tokenPrefix = "rdslogs.v1."

// capabilityLabel is the HKDF label of the keys and the additional data of every token.
const capabilityLabel = "rds-lambda-controller/logs-capability/v1"

// maxTokenLen bounds what the hooks try to open.
const maxTokenLen = 16 << 10

// errCapabilityInvalid: the token was not sealed by this controller's key, or was changed.
var errCapabilityInvalid = errors.New("the capability is not valid")

// capabilitySealer seals and opens tokens. It is safe for concurrent use.
type capabilitySealer struct {
	aead     cipher.AEAD
	nonceKey []byte
}

// newCapabilitySealer derives the keys from the controller's stable secret.
func newCapabilitySealer(root secret.Value) (*capabilitySealer, error) {
	if root.Empty() {
		return nil, errors.New("no stable secret")
	}
	key, err := hkdf.Key(sha256.New, []byte(root.Reveal()), nil, capabilityLabel+"\x00aead", 32)
	if err != nil {
		return nil, fmt.Errorf("derive capability key: %w", err)
	}
	nonceKey, err := hkdf.Key(sha256.New, []byte(root.Reveal()), nil, capabilityLabel+"\x00nonce", 32)
	if err != nil {
		return nil, fmt.Errorf("derive capability nonce key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &capabilitySealer{aead: aead, nonceKey: nonceKey}, nil
}

// seal returns the token of a capability. The same capability always gives the same token.
//
// NOTE: the nonce is an HMAC of the plaintext (as in SIV): two calls answering the same request
// render the same Secret, so a repeated or lost answer never changes it, and two different
// capabilities never share a nonce (but with the negligible chance of a 96-bit collision).
func (s *capabilitySealer) seal(c logsCapability) (string, error) {
	plain, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("encode capability: %w", err)
	}
	mac := hmac.New(sha256.New, s.nonceKey)
	mac.Write(plain)
	nonce := mac.Sum(nil)[:s.aead.NonceSize()]
	sealed := s.aead.Seal(nonce, nonce, plain, []byte(capabilityLabel))
	return tokenPrefix + base64.RawURLEncoding.EncodeToString(sealed), nil
}

// open returns what a token says, or errCapabilityInvalid. It does not check the expiry.
func (s *capabilitySealer) open(token string) (logsCapability, error) {
	var c logsCapability
	body, ok := strings.CutPrefix(token, tokenPrefix)
	if !ok || len(token) > maxTokenLen {
		return c, errCapabilityInvalid
	}
	sealed, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil || len(sealed) < s.aead.NonceSize()+s.aead.Overhead() {
		return c, errCapabilityInvalid
	}
	n := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, sealed[:n], sealed[n:], []byte(capabilityLabel))
	if err != nil {
		return c, errCapabilityInvalid
	}
	if err := json.Unmarshal(plain, &c); err != nil || c.Instance == "" || c.Expires == 0 {
		return logsCapability{}, errCapabilityInvalid
	}
	return c, nil
}
