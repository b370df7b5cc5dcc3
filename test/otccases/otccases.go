// Package otccases lists OTC's documented value constraints as test cases, so that the hook's
// validation (sync), the CRD's rules (test/manifests) and the simulator (internal/otcsim) are each
// tested against the same list and cannot drift apart.
//
// Source: DOC:rds/api_v3_recommended/db_instance_management/creating_a_db_instance (port and
// password) and /work/shared/otc-api.md §2.
package otccases

// Engines as OTC spells them.
const (
	MySQL      = "MySQL"
	PostgreSQL = "PostgreSQL"
	SQLServer  = "SQLServer"
)

// Engines is every engine the controller runs.
var Engines = []string{MySQL, PostgreSQL, SQLServer}

// PasswordSpecials are the special characters OTC allows in a root password, per engine.
var PasswordSpecials = map[string]string{
	MySQL:      "~!@#$%^*-_=+?,()&",
	PostgreSQL: "~!@#$%^*-_=+?,",
	SQLServer:  "~!@#$%^*-_+?,",
}

// Password is one root password and whether OTC takes it for each engine it names.
type Password struct {
	Name     string
	Reason   string
	Password string
	// Valid lists the engines that take the password; the others refuse it.
	Valid []string
}

// RootPasswords: 8 to 32 characters, at least three of upper case, lower case, digits and the
// engine's special characters, nothing else.
var RootPasswords = []Password{
	{Name: "Sample", Reason: "the original operator's example", Password: "A12345678+", Valid: Engines},
	{Name: "Comma", Reason: "every engine allows ','", Password: "Abcdef1,", Valid: Engines},
	{Name: "Dollar", Reason: "every engine allows '$'", Password: "Abcdef1$", Valid: Engines},
	{Name: "Equals", Reason: "SQL Server does not allow '='", Password: "Abcdef1=", Valid: []string{MySQL, PostgreSQL}},
	{Name: "Parenthesis", Reason: "only MySQL allows '(' and ')'", Password: "Abcde1()", Valid: []string{MySQL}},
	{Name: "Ampersand", Reason: "only MySQL allows '&'", Password: "Abcdef1&", Valid: []string{MySQL}},
	{Name: "Generated", Reason: "the alphabet of generated passwords", Password: "abc-DEF_2~x", Valid: Engines},
	{Name: "ThreeClassesNoUpper", Reason: "lower case, digits and a special character are three classes", Password: "abcdef1+", Valid: Engines},
	{Name: "ThreeClassesNoSpecial", Reason: "upper case, lower case and digits are three classes", Password: "Abcdefg1", Valid: Engines},
	{Name: "TwoClasses", Reason: "at least three classes", Password: "abcdefg12", Valid: nil},
	{Name: "Space", Reason: "a space is no allowed special character", Password: "Abcdef1 x", Valid: nil},
	{Name: "Slash", Reason: "'/' is no allowed special character", Password: "Abcdef1/x", Valid: nil},
	{Name: "Quote", Reason: "quotes are no allowed special characters", Password: "Abcdef1'x", Valid: nil},
	{Name: "Short", Reason: "at least 8 characters", Password: "Abcd1+x", Valid: nil},
	{Name: "Longest", Reason: "at most 32 characters", Password: "Ab1+Ab1+Ab1+Ab1+Ab1+Ab1+Ab1+Ab1+", Valid: Engines},
	{Name: "TooLong", Reason: "at most 32 characters", Password: "Ab1+Ab1+Ab1+Ab1+Ab1+Ab1+Ab1+Ab1+x", Valid: nil},
}

// Port is one port for one engine.
type Port struct {
	Name   string
	Reason string
	Engine string
	Port   int
	Valid  bool
}

// Ports: MySQL 1024-65535 except 12017 and 33071; PostgreSQL 2100-9500; SQL Server 1433 or
// 2100-9500 except 5355 and 5985.
var Ports = []Port{
	{Name: "MySQLDefault", Reason: "the default", Engine: MySQL, Port: 3306, Valid: true},
	{Name: "MySQLLowest", Reason: "lower bound", Engine: MySQL, Port: 1024, Valid: true},
	{Name: "MySQLBelow", Reason: "below the range", Engine: MySQL, Port: 1023},
	{Name: "MySQLHighest", Reason: "upper bound", Engine: MySQL, Port: 65535, Valid: true},
	{Name: "MySQL12017", Reason: "used by RDS itself", Engine: MySQL, Port: 12017},
	{Name: "MySQL33071", Reason: "used by RDS itself", Engine: MySQL, Port: 33071},
	{Name: "PostgreSQLDefault", Reason: "the default", Engine: PostgreSQL, Port: 5432, Valid: true},
	{Name: "PostgreSQLLowest", Reason: "lower bound", Engine: PostgreSQL, Port: 2100, Valid: true},
	{Name: "PostgreSQLBelow", Reason: "below the range", Engine: PostgreSQL, Port: 2099},
	{Name: "PostgreSQLHighest", Reason: "upper bound", Engine: PostgreSQL, Port: 9500, Valid: true},
	{Name: "PostgreSQLAbove", Reason: "above the range", Engine: PostgreSQL, Port: 9501},
	{Name: "SQLServerDefault", Reason: "the default", Engine: SQLServer, Port: 1433, Valid: true},
	{Name: "SQLServer1434", Reason: "only 1433 below the range", Engine: SQLServer, Port: 1434},
	{Name: "SQLServerLowest", Reason: "lower bound", Engine: SQLServer, Port: 2100, Valid: true},
	{Name: "SQLServer5355", Reason: "excluded by OTC", Engine: SQLServer, Port: 5355},
	{Name: "SQLServer5985", Reason: "excluded by OTC", Engine: SQLServer, Port: 5985},
	{Name: "SQLServerHighest", Reason: "upper bound", Engine: SQLServer, Port: 9500, Valid: true},
	{Name: "SQLServerAbove", Reason: "above the range", Engine: SQLServer, Port: 9501},
}

// ValidFor reports whether the password is valid for the engine.
func (p Password) ValidFor(engine string) bool {
	for _, e := range p.Valid {
		if e == engine {
			return true
		}
	}
	return false
}
