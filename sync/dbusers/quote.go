package dbusers

import "strings"

// This file is the only place where names become SQL text. Values (passwords) never do: they are
// passed as arguments and escaped by the driver (see apply.go).
//
// Names are quoted as identifiers with backticks, also the user and host of an account:
// MySQL and MariaDB accept `user`@`host` (and print accounts that way in SHOW GRANTS). Inside
// backticks the only special character is the backtick itself, which is doubled; backslashes are
// literal whatever the sql_mode (NO_BACKSLASH_ESCAPES does not matter) and ANSI_QUOTES does not
// change the meaning of backticks. Names reaching these helpers have passed the allow-lists in
// names.go or come from the server's own grant tables; the doubling is defence in depth.

// quoteIdent quotes a database, table, user or host name as an identifier.
func quoteIdent(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// quoteAccount quotes an account, e.g. `app`@`10.%`.
func quoteAccount(user, host string) string {
	return quoteIdent(user) + "@" + quoteIdent(host)
}

// displayAccount renders an account for humans, the way MySQL prints it in messages: 'app'@'10.%'.
// Only for validated names; never SQL.
func displayAccount(user, host string) string {
	return "'" + user + "'@'" + host + "'"
}

// grantee is an account as information_schema's GRANTEE columns spell it. Used as a bound value.
func grantee(user, host string) string {
	return displayAccount(user, host)
}

// dbPattern turns a database name into the pattern a database-level grant stores.
//
// NOTE: in GRANT ... ON db.*, '_' and '%' in the database name are wildcards: GRANT ALL ON app_1.*
// also grants on app11, appX1, ... Escaping them (app\_1) makes the grant apply to that one
// database. MySQL and MariaDB store and report the escaped form (mysql.db, SHOW GRANTS,
// information_schema.SCHEMA_PRIVILEGES). Table-level grants take names literally.
func dbPattern(db string) string {
	r := strings.NewReplacer(`\`, `\\`, `_`, `\_`, `%`, `\%`)
	return r.Replace(db)
}

// dbFromPattern reverses dbPattern. exact is false if the pattern has an unescaped wildcard,
// i.e. it matches more than one database (typically granted by someone else or by the original
// operator without escaping).
func dbFromPattern(pattern string) (db string, exact bool) {
	var b strings.Builder
	exact = true
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '\\' && i+1 < len(pattern):
			i++
			b.WriteByte(pattern[i])
		case c == '_' || c == '%':
			exact = false
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), exact
}

// scopeSQL renders the ON part of a grant from a stored scope.
func scopeSQL(s scope) string {
	if s.table == "" {
		return quoteIdent(s.db) + ".*"
	}
	return quoteIdent(s.db) + "." + quoteIdent(s.table)
}

// scopeDisplay renders a stored scope for humans: shop.*, shop.orders, or "pattern app_1.*" for a
// database-level grant whose name holds a wildcard.
func scopeDisplay(s scope) string {
	if s.table != "" {
		return s.db + "." + s.table
	}
	db, exact := dbFromPattern(s.db)
	if !exact {
		return "pattern " + s.db + ".*"
	}
	return db + ".*"
}
