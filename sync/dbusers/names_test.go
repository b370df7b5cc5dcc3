package dbusers

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidateHost(t *testing.T) {
	cases := map[string]struct {
		reason string
		host   string
		want   string // empty: valid; else a substring of the error
	}{
		"any":                {reason: "the default", host: "%"},
		"localhost":          {reason: "a host name", host: "localhost"},
		"fqdn":               {reason: "a dotted host name", host: "app-1.example.com"},
		"ipv4":               {reason: "an address", host: "10.1.2.3"},
		"ipv6":               {reason: "a canonical IPv6 address", host: "::1"},
		"wildcard 1":         {reason: "one octet and %", host: "10.%"},
		"wildcard 3":         {reason: "three octets and %", host: "192.168.1.%"},
		"netmask":            {reason: "address/netmask", host: "192.168.1.0/255.255.255.0"},
		"netmask 8":          {reason: "a short netmask", host: "10.0.0.0/255.0.0.0"},
		"empty":              {reason: "empty is normalized to % before validation", host: "", want: "must not be empty"},
		"upper case":         {reason: "hosts are validated after lower-casing", host: "LocalHost", want: "must be %"},
		"quote":              {reason: "quotes end a string literal", host: "x'", want: "must be %"},
		"backtick":           {reason: "backticks end an identifier", host: "x`", want: "must be %"},
		"space":              {reason: "no spaces", host: "a b", want: "must be %"},
		"semicolon":          {reason: "no statement breaks", host: "a;drop", want: "must be %"},
		"bad ipv4":           {reason: "a numeric last label must be an address", host: "10.0.0.256", want: "not a valid IPv4 address"},
		"leading zero":       {reason: "non-canonical addresses would not match the stored account", host: "10.0.0.01", want: "not a valid IPv4 address"},
		"wildcard 4 octets":  {reason: "a full address plus % makes no sense", host: "10.0.0.1.%", want: "too many octets"},
		"wildcard bad octet": {reason: "octets stay in range", host: "300.%", want: "IPv4 wildcard"},
		"wildcard middle":    {reason: "only a trailing wildcard", host: "10.%.1.1", want: "not a valid IPv4 address"},
		"domain wildcard":    {reason: "host name patterns are not in the allow-list", host: "%.example.com", want: "must be %"},
		"underscore":         {reason: "MySQL's _ wildcard", host: "a_b", want: "must be %"},
		"cidr":               {reason: "prefix lengths are MySQL 8.0.23+ only", host: "10.0.0.0/8", want: "write the netmask in full"},
		"mask not contiguous": {
			reason: "a netmask has ones then zeros", host: "10.0.0.0/255.0.255.0", want: "not a contiguous netmask",
		},
		"bits outside mask": {reason: "MySQL requires the host bits to be zero", host: "10.0.0.1/255.255.255.0", want: "bits outside the netmask"},
		"ipv6 zone":         {reason: "zones are local to a machine", host: "fe80::1%eth0", want: "IPv6"},
		"ipv6 long form":    {reason: "only the canonical form", host: "0:0:0:0:0:0:0:1", want: "canonical form"},
		"too long":          {reason: "MySQL 5.7's host column", host: strings.Repeat("a", 61), want: "longer than 60"},
		"unicode":           {reason: "IDN must be punycode", host: "bücher.de", want: "must be %"},
		"label dash":        {reason: "labels do not start with -", host: "-a.b", want: "must be %"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := ValidateHost(tc.host)
			if tc.want == "" {
				assert.NoError(t, err, tc.reason)
				return
			}
			require.Error(t, err, tc.reason)
			assert.Contains(t, err.Error(), tc.want, tc.reason)
		})
	}
}

func TestValidateNames(t *testing.T) {
	cases := map[string]struct {
		reason string
		check  func(string) error
		name   string
		want   string
	}{
		"db plain":          {reason: "letters, digits, _", check: ValidateDatabase, name: "app_1"},
		"db dash dollar":    {reason: "- and $ are allowed", check: ValidateDatabase, name: "a-b$c"},
		"db 64":             {reason: "MySQL's limit", check: ValidateDatabase, name: strings.Repeat("d", 64)},
		"db 65":             {reason: "over MySQL's limit", check: ValidateDatabase, name: strings.Repeat("d", 65), want: "1 to 64"},
		"db empty":          {reason: "no empty names", check: ValidateDatabase, name: "", want: "1 to 64"},
		"db dot":            {reason: "a dot would split db and table", check: ValidateDatabase, name: "a.b", want: "1 to 64"},
		"db backtick":       {reason: "injection", check: ValidateDatabase, name: "a`; DROP DATABASE b; --", want: "1 to 64"},
		"db slash":          {reason: "path characters", check: ValidateDatabase, name: "../x", want: "1 to 64"},
		"db percent":        {reason: "a wildcard", check: ValidateDatabase, name: "a%", want: "1 to 64"},
		"db mysql":          {reason: "system schema", check: ValidateDatabase, name: "mysql", want: "system schema"},
		"db sys upper":      {reason: "system schema, any case", check: ValidateDatabase, name: "SYS", want: "system schema"},
		"db info schema":    {reason: "system schema", check: ValidateDatabase, name: "information_schema", want: "system schema"},
		"db perf schema":    {reason: "system schema", check: ValidateDatabase, name: "performance_schema", want: "system schema"},
		"table ok":          {reason: "a table", check: ValidateTable, name: "orders"},
		"table quote":       {reason: "injection", check: ValidateTable, name: "t'", want: "1 to 64"},
		"user plain":        {reason: "a user", check: ValidateUser, name: "app"},
		"user dots dashes":  {reason: ". and - are allowed", check: ValidateUser, name: "app.read-only"},
		"user 32":           {reason: "MySQL 8's limit", check: ValidateUser, name: strings.Repeat("u", 32)},
		"user 33":           {reason: "over MySQL 8's limit", check: ValidateUser, name: strings.Repeat("u", 33), want: "1 to 32"},
		"user quote":        {reason: "injection", check: ValidateUser, name: "u'@'%", want: "1 to 32"},
		"user at":           {reason: "@ would split the account", check: ValidateUser, name: "u@h", want: "1 to 32"},
		"user root":         {reason: "never manage root", check: ValidateUser, name: "root", want: "reserved"},
		"user Root":         {reason: "reserved names in any case", check: ValidateUser, name: "Root", want: "reserved"},
		"user mysql.sys":    {reason: "server account", check: ValidateUser, name: "mysql.sys", want: "reserved"},
		"user mariadb.sys":  {reason: "server account", check: ValidateUser, name: "mariadb.sys", want: "reserved"},
		"user rdsAdmin":     {reason: "OTC's management account", check: ValidateUser, name: "rdsAdmin", want: "reserved"},
		"user unicode":      {reason: "homoglyphs", check: ValidateUser, name: "rооt", want: "1 to 32"},
		"user control char": {reason: "invisible", check: ValidateUser, name: "a\u200bb", want: `"a\u200bb"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := tc.check(tc.name)
			if tc.want == "" {
				assert.NoError(t, err, tc.reason)
				return
			}
			require.Error(t, err, tc.reason)
			assert.Contains(t, err.Error(), tc.want, tc.reason)
		})
	}
}

func TestQuoting(t *testing.T) {
	cases := map[string]struct {
		reason string
		got    string
		want   string
	}{
		"ident":             {reason: "backticks around", got: quoteIdent("shop"), want: "`shop`"},
		"ident backtick":    {reason: "a backtick is doubled", got: quoteIdent("a`b"), want: "`a``b`"},
		"ident injection":   {reason: "the text stays one identifier", got: quoteIdent("x`; DROP DATABASE y; -- "), want: "`x``; DROP DATABASE y; -- `"},
		"ident backslash":   {reason: "backslashes are literal inside backticks in every sql_mode", got: quoteIdent(`a\`), want: "`a\\`"},
		"account":           {reason: "user and host as identifiers", got: quoteAccount("app", "10.%"), want: "`app`@`10.%`"},
		"account injection": {reason: "both parts quoted", got: quoteAccount("a`@`b", "%"), want: "`a``@``b`@`%`"},
		"display":           {reason: "messages use MySQL's style", got: displayAccount("app", "%"), want: "'app'@'%'"},
		"pattern":           {reason: "_ is a wildcard in database-level grants", got: dbPattern("my_app_1"), want: `my\_app\_1`},
		"pattern plain":     {reason: "nothing to escape", got: dbPattern("shop"), want: "shop"},
		"scope db":          {reason: "the executed ON part", got: scopeSQL(scope{db: dbPattern("my_db")}), want: "`my\\_db`.*"},
		"scope table":       {reason: "table-level names are literal", got: scopeSQL(scope{db: "my_db", table: "t_1"}), want: "`my_db`.`t_1`"},
		"display exact":     {reason: "escaped patterns display as names", got: scopeDisplay(scope{db: `my\_db`}), want: "my_db.*"},
		"display pattern":   {reason: "unescaped wildcards are called patterns", got: scopeDisplay(scope{db: "my_db"}), want: "pattern my_db.*"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.got, tc.reason)
		})
	}
}

// TestQuoteIdentRoundTrip reads quoted identifiers back the way MySQL's lexer does and checks that
// any input comes back unchanged as one identifier.
func TestQuoteIdentRoundTrip(t *testing.T) {
	for _, in := range []string{"", "a", "`", "``", "a`b`c", "x`; DROP TABLE y; --", `\`, "'\"", "ü"} {
		q := quoteIdent(in)
		require.True(t, strings.HasPrefix(q, "`") && strings.HasSuffix(q, "`"))
		body := q[1 : len(q)-1]
		var out strings.Builder
		for i := 0; i < len(body); i++ {
			if body[i] == '`' {
				require.True(t, i+1 < len(body) && body[i+1] == '`', "a lone backtick would end the identifier in %q", q)
				i++
			}
			out.WriteByte(body[i])
		}
		assert.Equal(t, in, out.String())
	}
}

func TestDBFromPattern(t *testing.T) {
	for _, db := range []string{"shop", "my_db", "a$b-c", "__"} {
		got, exact := dbFromPattern(dbPattern(db))
		assert.Equal(t, db, got)
		assert.True(t, exact)
	}
	_, exact := dbFromPattern("my_db")
	assert.False(t, exact, "an unescaped _ is a wildcard")
}
