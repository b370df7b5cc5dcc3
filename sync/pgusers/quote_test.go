package pgusers

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
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
