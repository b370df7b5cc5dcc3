package dbusers

import (
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
)

// Allow-lists for names. They are deliberately narrower than what MySQL accepts: every name we
// accept can be quoted without any escaping, shown in messages as it is, and is portable between
// MySQL 5.7, 8.0 and MariaDB.
var (
	// Databases and tables: MySQL allows 64 characters. No '.', '/', '\\', quotes or spaces.
	identRE = regexp.MustCompile(`^[A-Za-z0-9_$-]{1,64}$`)
	// Users: MySQL 5.7.8+ and 8.0 allow 32 characters (MariaDB 80); we take the smaller.
	userRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,32}$`)
	// A DNS label, lower case (hosts are normalized to lower case).
	labelRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
	// An IPv4 octet without leading zeros.
	octetRE = regexp.MustCompile(`^(0|[1-9][0-9]{0,2})$`)
)

// maxHostLen is the host column's width in MySQL 5.7 and MariaDB before 10.x; MySQL 8.0.17+
// allows 255. We keep the smallest so that an account works everywhere.
const maxHostLen = 60

// systemSchemas are never created, granted on or dropped.
var systemSchemas = map[string]bool{
	"mysql":              true,
	"information_schema": true,
	"performance_schema": true,
	"sys":                true,
}

// reservedUsers are accounts of the server or of OTC RDS itself (lower case). The controller never
// creates, changes or drops them, whatever the spec or a remembered state says.
var reservedUsers = map[string]bool{
	"root":             true,
	"mysql.sys":        true,
	"mysql.session":    true,
	"mysql.infoschema": true,
	"mariadb.sys":      true,
	"public":           true, // MariaDB 10.11+: the PUBLIC role
	// NOTE: OTC RDS for MySQL keeps its own management accounts next to root.
	"rdsadmin":  true,
	"rdsbackup": true,
	"rdsmetric": true,
	"rdsrepl":   true,
	"rdsproxy":  true,
}

// DefaultHost is the host of a user whose host is empty: any host, as in the original operator.
const DefaultHost = "%"

// NormalizeHost returns the host as the controller stores and compares it: empty means
// DefaultHost; host names are lower case (MySQL 8 lower-cases them itself).
func NormalizeHost(host string) string {
	if host == "" {
		return DefaultHost
	}
	return strings.ToLower(host)
}

// ValidateDatabase checks a database name against the allow-list and refuses system schemas.
func ValidateDatabase(name string) error {
	if !identRE.MatchString(name) {
		return fmt.Errorf("database name %s must be 1 to 64 characters of A-Z, a-z, 0-9, _, $ and -", QuoteForMessage(name))
	}
	if systemSchemas[strings.ToLower(name)] {
		return fmt.Errorf("database %s is a system schema and cannot be managed", QuoteForMessage(name))
	}
	return nil
}

// ValidateTable checks a table name against the allow-list.
func ValidateTable(name string) error {
	if !identRE.MatchString(name) {
		return fmt.Errorf("table name %s must be 1 to 64 characters of A-Z, a-z, 0-9, _, $ and -", QuoteForMessage(name))
	}
	return nil
}

// ValidateUser checks a user name against the allow-list and refuses reserved accounts.
func ValidateUser(name string) error {
	if !userRE.MatchString(name) {
		return fmt.Errorf("user name %s must be 1 to 32 characters of A-Z, a-z, 0-9, _, . and -", QuoteForMessage(name))
	}
	if reservedUsers[strings.ToLower(name)] {
		return fmt.Errorf("user %s is reserved for the server or the cloud provider", QuoteForMessage(name))
	}
	return nil
}

// ValidateHost checks the host part of an account (after NormalizeHost). Accepted: "%", a host
// name, an IPv4 or IPv6 address in canonical form, an IPv4 prefix wildcard such as "10.%" or
// "192.168.1.%", and an IPv4 address with a netmask such as "192.168.1.0/255.255.255.0".
func ValidateHost(host string) error {
	switch {
	case host == DefaultHost:
		return nil
	case host == "":
		return fmt.Errorf("host must not be empty")
	case len(host) > maxHostLen:
		return fmt.Errorf("host %s is longer than %d characters", QuoteForMessage(host), maxHostLen)
	case strings.Contains(host, "/"):
		return validateNetmaskHost(host)
	case strings.HasSuffix(host, ".%"):
		return validateWildcardHost(host)
	case strings.Contains(host, ":"):
		addr, err := netip.ParseAddr(host)
		if err != nil || !addr.Is6() || addr.Zone() != "" || addr.String() != host {
			return fmt.Errorf("host %s is not an IPv6 address in canonical form", QuoteForMessage(host))
		}
		return nil
	}
	labels := strings.Split(host, ".")
	if _, err := strconv.Atoi(labels[len(labels)-1]); err == nil {
		// All-numeric last label: it must be an IPv4 address, never a "host name" like 10.0.0.256.
		addr, err := netip.ParseAddr(host)
		if err != nil || !addr.Is4() || addr.String() != host {
			return fmt.Errorf("host %s is not a valid IPv4 address", QuoteForMessage(host))
		}
		return nil
	}
	for _, l := range labels {
		if !labelRE.MatchString(l) {
			return fmt.Errorf("host %s must be %%, a host name, an IP address, an IPv4 wildcard like 10.%% or an address/netmask", QuoteForMessage(host))
		}
	}
	return nil
}

func validateWildcardHost(host string) error {
	octets := strings.Split(strings.TrimSuffix(host, ".%"), ".")
	if len(octets) > 3 {
		return fmt.Errorf("host %s has too many octets before the wildcard", QuoteForMessage(host))
	}
	for _, o := range octets {
		if !octetRE.MatchString(o) {
			return fmt.Errorf("host %s is not an IPv4 wildcard like 10.%% or 192.168.1.%%", QuoteForMessage(host))
		}
		if n, _ := strconv.Atoi(o); n > 255 {
			return fmt.Errorf("host %s is not an IPv4 wildcard like 10.%% or 192.168.1.%%", QuoteForMessage(host))
		}
	}
	return nil
}

// validateNetmaskHost accepts address/netmask with a contiguous netmask and no address bits
// outside the mask. NOTE: MySQL 8.0.23+ also accepts CIDR prefixes (10.0.0.0/8); MySQL 5.7 and
// MariaDB do not, so we refuse them with a hint.
func validateNetmaskHost(host string) error {
	addrText, maskText, _ := strings.Cut(host, "/")
	addr, err := netip.ParseAddr(addrText)
	if err != nil || !addr.Is4() || addr.String() != addrText {
		return fmt.Errorf("host %s: %s is not an IPv4 address", QuoteForMessage(host), QuoteForMessage(addrText))
	}
	if _, err := strconv.Atoi(maskText); err == nil {
		return fmt.Errorf("host %s: write the netmask in full (e.g. 10.0.0.0/255.0.0.0), not as a prefix length", QuoteForMessage(host))
	}
	mask, err := netip.ParseAddr(maskText)
	if err != nil || !mask.Is4() || mask.String() != maskText {
		return fmt.Errorf("host %s: %s is not an IPv4 netmask", QuoteForMessage(host), QuoteForMessage(maskText))
	}
	a, m := addr.As4(), mask.As4()
	av := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	mv := uint32(m[0])<<24 | uint32(m[1])<<16 | uint32(m[2])<<8 | uint32(m[3])
	if hostBits := ^mv; hostBits&(hostBits+1) != 0 || mv == 0 { // ones from the top, then zeros; not 0.0.0.0
		return fmt.Errorf("host %s: %s is not a contiguous netmask", QuoteForMessage(host), QuoteForMessage(maskText))
	}
	if av&^mv != 0 {
		return fmt.Errorf("host %s: the address has bits outside the netmask", QuoteForMessage(host))
	}
	return nil
}

// QuoteForMessage renders user input for an error message: Go-quoted, so control and unicode
// characters are visible, and cut to a bounded length.
func QuoteForMessage(s string) string {
	const maxLen = 48
	if len(s) > maxLen {
		return strconv.QuoteToASCII(s[:maxLen]) + "..."
	}
	return strconv.QuoteToASCII(s)
}
