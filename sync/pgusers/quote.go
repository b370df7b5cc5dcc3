package pgusers

import "strings"

// This file is the only place where names and the rare password literal become SQL text. Every
// other value is a bind parameter.

// quoteIdent quotes a database, schema, table or role name as an identifier: in double quotes,
// with each double quote doubled. Inside a quoted identifier nothing else is special in
// PostgreSQL (not the backslash, whatever standard_conforming_strings says). A NUL cannot be
// quoted: names reaching here have passed the allow-lists in names.go (no NUL, no quote) or come
// from the server's catalogs (which hold no NUL); quoteIdent cuts at a NUL as defence in depth,
// which at worst names another object, never ends the identifier.
//
// NOTE: a quoted identifier is case-sensitive: "App" is not app. Names are used as the spec
// spells them.
func quoteIdent(name string) string {
	if i := strings.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// quoteLiteral quotes a string constant for the statements that take no parameters (CREATE ROLE
// and ALTER ROLE ... PASSWORD). It writes an escape string constant, E'...', with each backslash
// and each single quote doubled: its meaning does not depend on standard_conforming_strings, and
// the connection's encoding is UTF8 (the driver insists on it), so no multi-byte sequence can
// hide a quote. The value must be valid UTF-8 without NUL (dbusers.ValidatePassword); a NUL cuts
// it, as in quoteIdent.
func quoteLiteral(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `'`, `''`)
	return `E'` + s + `'`
}
