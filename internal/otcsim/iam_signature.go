package otcsim

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// akskAlgorithm names the SDK's AK/SK signature, the first word of its Authorization header.
const akskAlgorithm = "SDK-HMAC-SHA256"

// akskSigned says r carries an AK/SK signature.
func akskSigned(r *http.Request) bool {
	return strings.HasPrefix(r.Header.Get("Authorization"), akskAlgorithm+" ")
}

// akskSignature is the Authorization header of an AK/SK-signed request:
//
//	SDK-HMAC-SHA256 Credential=<AK>/<yyyymmdd>/<region>/<service>/sdk_request, SignedHeaders=<h1;h2>, Signature=<hex>
type akskSignature struct {
	access, scope string
	signedHeaders []string
	signature     []byte
}

func parseAKSK(authz string) (akskSignature, error) {
	var sig akskSignature
	rest, ok := strings.CutPrefix(authz, akskAlgorithm+" ")
	if !ok {
		return sig, errors.New("the signature's algorithm is not " + akskAlgorithm)
	}
	for part := range strings.SplitSeq(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Credential":
			sig.access, sig.scope, _ = strings.Cut(v, "/")
		case "SignedHeaders":
			sig.signedHeaders = strings.Split(v, ";")
		case "Signature":
			sig.signature, _ = hex.DecodeString(v)
		}
	}
	if sig.access == "" {
		return sig, errors.New("the AK/SK signature carries no access key")
	}
	return sig, nil
}

// verifyAKSK checks the signature of r with the secret key of its access key, as API Gateway
// does, with the SDK's algorithm (gophertelekomcloud signer_helper.go): the canonical request of
// the method, the path, the query, the signed headers as they arrived and the body's hash,
// signed with a key derived from the secret key and the signature's scope.
//
// NOTE: unlike API Gateway, it does not refuse an old X-Sdk-Date: the SDK signs with the wall
// clock, the simulator runs on its own.
func verifyAKSK(r *http.Request, sig akskSignature, secret string) error {
	sdkDate := r.Header.Get("X-Sdk-Date")
	if sdkDate == "" || !slices.Contains(sig.signedHeaders, "x-sdk-date") {
		return errors.New("X-Sdk-Date is missing or not signed")
	}
	signed, ok := r.Body.(*signedBody)
	if !ok {
		return errors.New("the body was not read before the signature was checked") // a programming error
	}
	body := signed.data

	var headers strings.Builder
	for _, name := range sig.signedHeaders {
		value := r.Header.Get(name)
		if name == "host" {
			value = r.Host
		}
		if _, sent := r.Header[http.CanonicalHeaderKey(name)]; !sent && name != "host" {
			return fmt.Errorf("the signed header %s is missing", name)
		}
		headers.WriteString(name + ":" + strings.Join(strings.Fields(value), " ") + "\n")
	}
	// A POST the SDK sends without a body signs its query as the payload (usePayloadForQueryParameters).
	query, payload := encodeSignedQuery(r.URL.Query()), body
	candidates := [][2]string{{query, hashHex(payload)}}
	if r.Method == http.MethodPost && len(body) == 0 {
		candidates = append(candidates, [2]string{"", hashHex([]byte(r.URL.Query().Encode()))})
	}
	if v := r.Header.Get("X-Sdk-Content-Sha256"); v != "" {
		candidates = [][2]string{{query, v}}
	}
	key := []byte("SDK" + secret)
	for _, part := range strings.Split(sig.scope, "/") {
		key = hmacSHA256(key, part)
	}
	for _, c := range candidates {
		canonical := strings.Join([]string{r.Method, signedPath(r.URL.Path), c[0], headers.String(),
			strings.Join(sig.signedHeaders, ";"), c[1]}, "\n")
		toSign := strings.Join([]string{akskAlgorithm, sdkDate, sig.scope, hashHex([]byte(canonical))}, "\n")
		if hmac.Equal(hmacSHA256(key, toSign), sig.signature) {
			return nil
		}
	}
	return errors.New("verify aksk signature fail")
}

// bufferSignedBody reads the body of an AK/SK-signed request into memory, at most maxBodyBytes,
// so that verifyAKSK can hash it under the simulator's lock and the handler still read it.
func bufferSignedBody(r *http.Request) error {
	if !akskSigned(r) {
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return fmt.Errorf("reading the body: %w", err)
	}
	r.Body = &signedBody{Reader: bytes.NewReader(body), data: body}
	return nil
}

// signedBody is the body of an AK/SK-signed request, read (bufferSignedBody): what the handler
// reads, and its bytes for the signature.
type signedBody struct {
	*bytes.Reader
	data []byte
}

func (*signedBody) Close() error { return nil }

func hmacSHA256(key []byte, data string) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(data))
	return mac.Sum(nil)
}

func hashHex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// signedPath is the path as signed: between slashes, every byte but unreserved ones and '/'
// percent-encoded.
func signedPath(p string) string {
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	if !strings.HasSuffix(p, "/") {
		p += "/"
	}
	return signEscape(p, true)
}

// encodeSignedQuery is the query as signed: keys sorted, keys and values percent-encoded, the
// first value of each key.
func encodeSignedQuery(q url.Values) string {
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		return strings.Compare(strings.ToLower(signEscape(a, false)), strings.ToLower(signEscape(b, false)))
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = signEscape(k, false) + "=" + signEscape(q.Get(k), false)
	}
	return strings.Join(parts, "&")
}

func signEscape(s string, path bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		unreserved := 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
			c == '.' || c == '-' || c == '_' || c == '~'
		if unreserved || path && c == '/' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
