package pgusers

import (
	"encoding/base64"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestQuoteIdent(t *testing.T) {
	assert.Equal(t, `"app"`, quoteIdent("app"))
	assert.Equal(t, `"App"`, quoteIdent("App"), "case is kept: a quoted name is case-sensitive")
	assert.Equal(t, `"x""; DROP ROLE root; --"`, quoteIdent(`x"; DROP ROLE root; --`))
	assert.Equal(t, `"a\b"`, quoteIdent(`a\b`), "a backslash means nothing inside double quotes")
	assert.Equal(t, `"ab"`, quoteIdent("ab\x00; DROP"), "a NUL cuts the name")
}

func TestQuoteLiteral(t *testing.T) {
	assert.Equal(t, `E'pw'`, quoteLiteral("pw"))
	assert.Equal(t, `E'p''w'`, quoteLiteral("p'w"))
	assert.Equal(t, `E'p\\'';--'`, quoteLiteral(`p\';--`), "backslash and quote doubled: the quote cannot be escaped away")
}

// unquoteIdent reads back a quoted identifier the way PostgreSQL's scanner does, and reports
// whether the whole text is one identifier.
func unquoteIdent(s string) (string, bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return "", false
	}
	body := s[1 : len(s)-1]
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		if body[i] == '"' {
			if i+1 >= len(body) || body[i+1] != '"' {
				return "", false // the identifier would end here
			}
			i++
		}
		b.WriteByte(body[i])
	}
	return b.String(), true
}

// unquoteLiteral reads back an E'...' constant the way PostgreSQL's scanner does for the escapes
// quoteLiteral writes, and reports whether the whole text is one constant.
func unquoteLiteral(s string) (string, bool) {
	if len(s) < 3 || !strings.HasPrefix(s, "E'") || s[len(s)-1] != '\'' {
		return "", false
	}
	body := s[2 : len(s)-1]
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '\\':
			if i+1 >= len(body) {
				return "", false
			}
			i++
			b.WriteByte(body[i]) // \\ and \' (quoteLiteral writes only \\)
		case '\'':
			if i+1 >= len(body) || body[i+1] != '\'' {
				return "", false // the constant would end here
			}
			i++
			b.WriteByte('\'')
		default:
			b.WriteByte(body[i])
		}
	}
	return b.String(), true
}

// FuzzQuote: whatever the input, the quoted text is exactly one identifier (one constant) whose
// value is the input up to its first NUL.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"app", `x"y`, `"; DROP ROLE root; --`, `\`, `'`, `\'`, "a\x00b", "ü'\\\"", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _, _ := strings.Cut(s, "\x00")
		got, ok := unquoteIdent(quoteIdent(s))
		if !ok || got != want {
			t.Fatalf("quoteIdent(%q) = %s: reads back %q, %v", s, quoteIdent(s), got, ok)
		}
		if !utf8.ValidString(s) {
			return
		}
		got, ok = unquoteLiteral(quoteLiteral(s))
		if !ok || got != want {
			t.Fatalf("quoteLiteral(%q) = %s: reads back %q, %v", s, quoteLiteral(s), got, ok)
		}
	})
}

// TestPasswordSQL: PostgreSQL 10 and later get a SCRAM-SHA-256 verifier of a printable ASCII
// password, older servers the MD5 verifier they store, never the password; only a password that is
// not printable ASCII, on 10 and later, is a quoted literal.
func TestPasswordSQL(t *testing.T) {
	v, err := passwordSQL("p'w", "app", 150004)
	require.NoError(t, err)
	assert.Regexp(t, `^E'SCRAM-SHA-256\$4096:[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{44}:[A-Za-z0-9+/=]{44}'$`, v)
	assert.NotContains(t, v, "p'w")
	other, err := passwordSQL("p'w", "app", 150004)
	require.NoError(t, err)
	assert.NotEqual(t, v, other, "a new salt each time")

	// 9.6 knows no SCRAM verifier (it would store it as the password), and takes its own MD5
	// verifier as it is: md5 of the password followed by the role's name (echo -n "p'wapp" | md5sum).
	v, err = passwordSQL("p'w", "app", 90624)
	require.NoError(t, err)
	assert.Equal(t, `E'md537e00450dc62be78a39f2321bf9e8178'`, v)
	assert.NotContains(t, v, "p'w")
	v, err = passwordSQL("pässwort", "app", 150004)
	require.NoError(t, err)
	assert.Equal(t, `E'pässwort'`, v, "a non-ASCII password would need SASLprep: the server hashes it")
}

// TestSCRAMVerifier checks scramVerifier against RFC 7677's test vector (user "user", password
// "pencil", salt W22ZaJ0SNY7soEsUEjb6gQ==, 4096 iterations): its ServerSignature is
// HMAC(ServerKey, AuthMessage), so the ServerKey the verifier holds must reproduce it.
func TestSCRAMVerifier(t *testing.T) {
	salt, err := base64.StdEncoding.DecodeString("W22ZaJ0SNY7soEsUEjb6gQ==")
	require.NoError(t, err)
	v, err := scramVerifier("pencil", salt, 4096)
	require.NoError(t, err)
	parts := strings.Split(strings.TrimPrefix(v, "SCRAM-SHA-256$"), "$")
	require.Len(t, parts, 2)
	assert.Equal(t, "4096:W22ZaJ0SNY7soEsUEjb6gQ==", parts[0])
	keys := strings.Split(parts[1], ":")
	require.Len(t, keys, 2)
	serverKey, err := base64.StdEncoding.DecodeString(keys[1])
	require.NoError(t, err)
	authMessage := "n=user,r=rOprNGfwEbeRWgbNEkqO,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
	assert.Equal(t, "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=", base64.StdEncoding.EncodeToString(hmacSHA256(serverKey, authMessage)))
}
