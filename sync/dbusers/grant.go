package dbusers

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Grant is a set of privileges of one user on one database (Table empty: all its tables, db.*)
// or on one table of it.
type Grant struct {
	Database string `json:"database"`
	// Schema is PostgreSQL's: a schema of the database, or the schema of Table. MySQL has none
	// (its databases are its schemas) and refuses a grant that names one.
	Schema string `json:"schema,omitempty"`
	// Table is empty for a grant on the whole database.
	Table string `json:"table,omitempty"`
	// Privileges in upper case, e.g. SELECT, CREATE TEMPORARY TABLES, or PrivilegeAll alone.
	Privileges []string `json:"privileges"`
}

// PrivilegeAll is ALL [PRIVILEGES]: every privilege of the grant's level.
const PrivilegeAll = "ALL"

// privilegeOrder lists the privileges we grant, in the order MySQL prints them.
var privilegeOrder = []string{
	"SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "REFERENCES", "INDEX", "ALTER",
	"CREATE TEMPORARY TABLES", "LOCK TABLES", "EXECUTE", "CREATE VIEW", "SHOW VIEW",
	"CREATE ROUTINE", "ALTER ROUTINE", "EVENT", "TRIGGER",
}

// databasePrivileges are the privileges grantable ON db.*: what ALL stands for at that level in
// MySQL. NOTE: MariaDB's ALL adds DELETE HISTORY (10.3.4+) and SHOW CREATE ROUTINE (11.3+); we never
// grant those by name, and accept them as part of an ALL grant.
var databasePrivileges = setOf(privilegeOrder...)

// tablePrivileges are the privileges grantable ON db.table.
var tablePrivileges = setOf(
	"SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "REFERENCES", "INDEX", "ALTER",
	"CREATE VIEW", "SHOW VIEW", "TRIGGER",
)

// adminPrivileges are refused with a message naming them as such (anything else unknown is refused
// as unknown).
var adminPrivileges = setOf(
	"SUPER", "FILE", "PROCESS", "RELOAD", "SHUTDOWN", "GRANT OPTION", "CREATE USER", "PROXY",
	"REPLICATION SLAVE", "REPLICATION CLIENT", "REPLICATION SLAVE ADMIN", "REPLICATION MASTER ADMIN",
	"SHOW DATABASES", "CREATE TABLESPACE", "CREATE ROLE", "DROP ROLE", "USAGE", "BINLOG ADMIN",
	"BINLOG MONITOR", "BINLOG REPLAY", "CONNECTION ADMIN", "FEDERATED ADMIN", "READ_ONLY ADMIN",
	"READ ONLY ADMIN", "SET USER", "SLAVE MONITOR", "SYSTEM_USER", "SYSTEM_VARIABLES_ADMIN",
	"SESSION_VARIABLES_ADMIN", "ROLE_ADMIN", "CONNECTION_ADMIN", "BACKUP_ADMIN", "DELETE HISTORY",
	"SHOW CREATE ROUTINE",
)

type stringSet map[string]bool

func setOf(items ...string) stringSet {
	s := make(stringSet, len(items))
	for _, i := range items {
		s[i] = true
	}
	return s
}

// comparePrivileges orders ALL first, then privileges as MySQL prints them, then unknown ones (only
// ever read from a server) by name, then GRANT OPTION.
func comparePrivileges(a, b string) int {
	ra, rb := slices.Index(privilegeOrder, a), slices.Index(privilegeOrder, b)
	if a == PrivilegeAll {
		ra = -2
	}
	if b == PrivilegeAll {
		rb = -2
	}
	if a == "GRANT OPTION" {
		ra = len(privilegeOrder) + 1
	}
	if b == "GRANT OPTION" {
		rb = len(privilegeOrder) + 1
	}
	if ra == -1 {
		ra = len(privilegeOrder)
	}
	if rb == -1 {
		rb = len(privilegeOrder)
	}
	if ra != rb {
		return ra - rb
	}
	return strings.Compare(a, b)
}

// normalizePrivilege upper-cases a privilege, collapses its spaces and spells ALL PRIVILEGES as ALL.
func normalizePrivilege(p string) string {
	p = strings.Join(strings.Fields(strings.ToUpper(p)), " ")
	if p == "ALL PRIVILEGES" {
		return PrivilegeAll
	}
	return p
}

// normalizePrivileges returns the privileges normalized, de-duplicated and ordered; ALL absorbs
// the others.
func normalizePrivileges(ps []string) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		p = normalizePrivilege(p)
		if p == PrivilegeAll {
			return []string{PrivilegeAll}
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, comparePrivileges)
	return out
}

// normalized returns a copy with normalized privileges.
func (g Grant) normalized() Grant {
	g.Privileges = normalizePrivileges(g.Privileges)
	return g
}

// On renders what the grant is on, for humans: shop.* or shop.orders.
func (g Grant) On() string {
	if g.Table == "" {
		return g.Database + ".*"
	}
	return g.Database + "." + g.Table
}

// Statement renders the grant as a canonical GRANT statement for the account, in the form
// SHOW GRANTS prints (ParseGrant accepts it and returns the same Grant). It is for display and
// comparison; the statement Apply executes differs (database-level grants escape wildcards).
func (g Grant) Statement(user, host string) string {
	g = g.normalized()
	privs := slices.Clone(g.Privileges)
	for i, p := range privs {
		if p == PrivilegeAll {
			privs[i] = "ALL PRIVILEGES"
		}
	}
	on := quoteIdent(g.Database) + ".*"
	if g.Table != "" {
		on = quoteIdent(g.Database) + "." + quoteIdent(g.Table)
	}
	return "GRANT " + strings.Join(privs, ", ") + " ON " + on + " TO " + quoteAccount(user, NormalizeHost(host))
}

// validate checks a normalized grant.
func (g Grant) validate() error {
	if err := ValidateDatabase(g.Database); err != nil {
		return err
	}
	if g.Schema != "" {
		return fmt.Errorf("schema %s: MySQL has no schemas within a database (a database is a schema): name the database and a table", QuoteForMessage(g.Schema))
	}
	level, levelName := databasePrivileges, "database"
	if g.Table != "" {
		if err := ValidateTable(g.Table); err != nil {
			return err
		}
		level, levelName = tablePrivileges, "table"
	}
	if len(g.Privileges) == 0 {
		return errors.New("no privileges given")
	}
	for _, p := range g.Privileges {
		switch {
		case p == PrivilegeAll:
			if len(g.Privileges) > 1 {
				return errors.New("ALL cannot be combined with other privileges")
			}
		case adminPrivileges[p]:
			return fmt.Errorf("privilege %s is a global or administrative privilege and is not allowed", QuoteForMessage(p))
		case !databasePrivileges[p]:
			return fmt.Errorf("unknown privilege %s", QuoteForMessage(p))
		case !level[p]:
			return fmt.Errorf("privilege %s cannot be granted on a %s", p, levelName)
		}
	}
	return nil
}

// maxStatementLen bounds the GRANT statements we parse; real ones are far shorter.
const maxStatementLen = 4096

// ParseGrant parses a GRANT statement in the original operator's format, e.g.
//
//	GRANT ALL ON db1.* TO 'user1'@'%';
//	GRANT SELECT, INSERT ON `shop`.`orders` TO user1@'10.%'
//
// for the account user@host (host as in the spec; empty means "%"). Keywords are case-insensitive,
// names may be quoted with ', " or `, a trailing semicolon is optional, and a missing @host means
// "%". Only the privileges of a database or table (see Grant) ON db.* or db.table TO exactly that
// account are accepted: no *.*, no global or administrative privileges, no column privileges, no
// WITH GRANT OPTION, no IDENTIFIED BY, no other account, no second statement, no comments.
// Every refusal is a *GrantError (errors.Is(err, ErrInvalid)) whose message depends only on the
// input. The Grant returned is normalized.
func ParseGrant(stmt, user, host string) (Grant, error) {
	if err := ValidateUser(user); err != nil {
		return Grant{}, &GrantError{Detail: err.Error()}
	}
	host = NormalizeHost(host)
	if err := ValidateHost(host); err != nil {
		return Grant{}, &GrantError{Detail: err.Error()}
	}
	if len(stmt) > maxStatementLen {
		return Grant{}, grantErrorf("statement is longer than %d characters", maxStatementLen)
	}
	toks, err := lex(stmt)
	if err != nil {
		return Grant{}, err
	}
	p := &parser{toks: toks}
	g, toUser, toHost, err := p.parse()
	if err != nil {
		return Grant{}, err
	}
	if toUser != user || NormalizeHost(toHost) != host {
		return Grant{}, grantErrorf("the grant is for the account %s@%s, not for %s",
			QuoteForMessage(toUser), QuoteForMessage(toHost), displayAccount(user, host))
	}
	if len(g.Privileges) > 1 && slices.Contains(g.Privileges, PrivilegeAll) {
		return Grant{}, grantErrorf("ALL cannot be combined with other privileges")
	}
	g = g.normalized()
	if err := g.validate(); err != nil {
		return Grant{}, &GrantError{Detail: err.Error()}
	}
	return g, nil
}

type tokenKind int

const (
	tokWord   tokenKind = iota // an unquoted word: [A-Za-z0-9_$]+
	tokQuoted                  // a name in ', " or `
	tokPunct                   // one of , . * @ ; ( )
	tokEOF
)

type token struct {
	kind tokenKind
	text string
	pos  int // byte offset of the token's start
	end  int // byte offset after the token
}

func (t token) describe() string {
	switch t.kind {
	case tokEOF:
		return "the end of the statement"
	case tokQuoted:
		return "the quoted name " + QuoteForMessage(t.text)
	default:
		return QuoteForMessage(t.text)
	}
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$'
}

// lex splits a statement into tokens. It knows only the characters a valid grant needs; anything
// else (comments, operators, non-ASCII look-alikes, control characters) is refused here.
func lex(s string) ([]token, error) {
	var toks []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case isWordByte(c):
			j := i
			for j < len(s) && isWordByte(s[j]) {
				j++
			}
			toks = append(toks, token{kind: tokWord, text: s[i:j], pos: i, end: j})
			i = j
		case c == '\'' || c == '"' || c == '`':
			n := strings.IndexByte(s[i+1:], c)
			if n < 0 {
				return nil, grantErrorf("unterminated quoted name at offset %d", i)
			}
			j := i + 1 + n
			if j+1 < len(s) && s[j+1] == c {
				return nil, grantErrorf("quote characters are not allowed inside names (offset %d)", i)
			}
			text := s[i+1 : j]
			for k := 0; k < len(text); k++ {
				switch b := text[k]; {
				case b == '\\':
					return nil, grantErrorf("backslashes are not allowed inside names (offset %d)", i+1+k)
				case b < 0x20 || b > 0x7e:
					r, _ := utf8.DecodeRuneInString(text[k:])
					return nil, grantErrorf("unexpected character %U inside a name (offset %d)", r, i+1+k)
				}
			}
			toks = append(toks, token{kind: tokQuoted, text: text, pos: i, end: j + 1})
			i = j + 1
		case strings.ContainsRune(",.*@;()", rune(c)):
			toks = append(toks, token{kind: tokPunct, text: s[i : i+1], pos: i, end: i + 1})
			i++
		case c == '#' || strings.HasPrefix(s[i:], "--") || strings.HasPrefix(s[i:], "/*"):
			return nil, grantErrorf("comments are not allowed (offset %d)", i)
		default:
			r, _ := utf8.DecodeRuneInString(s[i:])
			return nil, grantErrorf("unexpected character %U at offset %d", r, i)
		}
	}
	return append(toks, token{kind: tokEOF, pos: len(s), end: len(s)}), nil
}

type parser struct {
	toks []token
	i    int
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

func (p *parser) isKeyword(kw string) bool {
	t := p.peek()
	return t.kind == tokWord && strings.EqualFold(t.text, kw)
}

func (p *parser) isPunct(c string) bool {
	t := p.peek()
	return t.kind == tokPunct && t.text == c
}

func (p *parser) expectKeyword(kw, context string) error {
	if !p.isKeyword(kw) {
		return grantErrorf("expected %s %s, found %s", kw, context, p.peek().describe())
	}
	p.next()
	return nil
}

// parse reads GRANT privileges ON object TO account [;].
func (p *parser) parse() (g Grant, user, host string, err error) {
	if !p.isKeyword("GRANT") {
		return g, "", "", grantErrorf("the statement must start with GRANT, found %s", p.peek().describe())
	}
	p.next()
	if g.Privileges, err = p.parsePrivileges(); err != nil {
		return g, "", "", err
	}
	if err = p.expectKeyword("ON", "after the privileges"); err != nil {
		return g, "", "", err
	}
	if g.Database, g.Table, err = p.parseObject(); err != nil {
		return g, "", "", err
	}
	if err = p.expectKeyword("TO", "after the database"); err != nil {
		return g, "", "", err
	}
	if user, host, err = p.parseAccount(); err != nil {
		return g, "", "", err
	}
	return g, user, host, p.parseEnd()
}

func (p *parser) parsePrivileges() ([]string, error) {
	var privs []string
	for {
		var words []string
		for p.peek().kind == tokWord && !p.isKeyword("ON") {
			words = append(words, strings.ToUpper(p.next().text))
		}
		if p.isPunct("(") {
			return nil, grantErrorf("column-level privileges are not supported")
		}
		if len(words) == 0 {
			return nil, grantErrorf("expected a privilege, found %s", p.peek().describe())
		}
		privs = append(privs, normalizePrivilege(strings.Join(words, " ")))
		if !p.isPunct(",") {
			return privs, nil
		}
		p.next()
	}
}

// parseName reads a name: one unquoted word or one quoted name.
func (p *parser) parseName() (string, bool) {
	t := p.peek()
	if t.kind == tokWord || t.kind == tokQuoted {
		p.next()
		return t.text, true
	}
	return "", false
}

func (p *parser) parseObject() (db, table string, err error) {
	if p.isPunct("*") {
		p.next()
		if p.isPunct(".") {
			p.next()
			if p.isPunct("*") {
				return "", "", grantErrorf("global grants (*.*) are not allowed")
			}
		}
		return "", "", grantErrorf("name the database: grants on the current database (*) are not allowed")
	}
	if p.isKeyword("TABLE") || p.isKeyword("FUNCTION") || p.isKeyword("PROCEDURE") || p.isKeyword("PACKAGE") {
		if t := p.toks[p.i+1]; t.kind != tokPunct || t.text != "." {
			return "", "", grantErrorf("object types (%s) are not supported", strings.ToUpper(p.peek().text))
		}
	}
	db, ok := p.parseName()
	if !ok {
		return "", "", grantErrorf("expected a database name after ON, found %s", p.peek().describe())
	}
	if !p.isPunct(".") {
		return "", "", grantErrorf("name the database and the table as db.* or db.table")
	}
	p.next()
	if p.isPunct("*") {
		p.next()
		return db, "", nil
	}
	table, ok = p.parseName()
	if !ok {
		return "", "", grantErrorf("expected a table name or * after %s., found %s", QuoteForMessage(db), p.peek().describe())
	}
	if p.isPunct(".") {
		return "", "", grantErrorf("column names are not supported after %s.%s", QuoteForMessage(db), QuoteForMessage(table))
	}
	return db, table, nil
}

// parseAccount reads user[@host]. An unquoted host may consist of several adjacent words and
// dots (localhost, 10.0.0.1, db.example.com), as MySQL reads it.
func (p *parser) parseAccount() (user, host string, err error) {
	user, ok := p.parseName()
	if !ok {
		return "", "", grantErrorf("expected an account after TO, found %s", p.peek().describe())
	}
	if !p.isPunct("@") {
		return user, DefaultHost, nil
	}
	at := p.next()
	t := p.peek()
	if t.kind == tokQuoted {
		p.next()
		return user, t.text, nil
	}
	var b strings.Builder
	end := at.end
	for {
		t := p.peek()
		if t.pos != end || !(t.kind == tokWord || t.kind == tokPunct && t.text == ".") {
			break
		}
		b.WriteString(t.text)
		end = t.end
		p.next()
	}
	if b.Len() == 0 {
		return "", "", grantErrorf("expected a host after @, found %s", p.peek().describe())
	}
	return user, b.String(), nil
}

func (p *parser) parseEnd() error {
	switch {
	case p.isPunct(","):
		return grantErrorf("a grant must name exactly one account")
	case p.isKeyword("WITH"):
		return grantErrorf("WITH clauses (WITH GRANT OPTION, resource limits) are not allowed")
	case p.isKeyword("IDENTIFIED"):
		return grantErrorf("IDENTIFIED BY is not allowed in a grant: set the user's password instead")
	case p.isKeyword("REQUIRE"):
		return grantErrorf("REQUIRE clauses are not allowed")
	case p.isPunct(";"):
		p.next()
		if p.peek().kind != tokEOF {
			return grantErrorf("only one statement is allowed")
		}
		return nil
	case p.peek().kind == tokEOF:
		return nil
	default:
		return grantErrorf("unexpected %s after the account", p.peek().describe())
	}
}
