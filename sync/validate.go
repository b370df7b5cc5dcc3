package reconcile

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
)

// The hook validates again what the CRD already checks: objects may predate a rule, the CRD may be
// applied without its validation, and curl users send whatever they like. Messages are stable
// sentences, sorted in field order, so the same bad spec always yields the same condition.
var (
	// The patterns the spec's strings are checked against are in patterns.go.
	volumeTypes      = map[string]bool{"COMMON": true, "ULTRAHIGH": true, "CLOUDSSD": true, "ESSD": true}
	replicationModes = map[string]map[string]bool{
		v1alpha1.EngineMySQL:      {"async": true, "semisync": true},
		v1alpha1.EnginePostgreSQL: {"async": true, "sync": true},
		v1alpha1.EngineSQLServer:  {"sync": true},
	}
	defaultPorts = map[string]int{
		v1alpha1.EngineMySQL: 3306, v1alpha1.EnginePostgreSQL: 5432, v1alpha1.EngineSQLServer: 1433,
	}
)

// Validate returns the problems of a spec, one sentence each, in field order; none for a valid spec.
func Validate(spec *v1alpha1.RdsSpec) []string {
	var p problems
	engine := spec.Datastoretype
	switch engine {
	case v1alpha1.EngineMySQL, v1alpha1.EnginePostgreSQL, v1alpha1.EngineSQLServer:
		if !versionPattern[engine].MatchString(spec.Datastoreversion) {
			p.addf("datastoreversion %q is not a %s version.", spec.Datastoreversion, engine)
		}
	default:
		p.addf("datastoretype %q is not one of MySQL, PostgreSQL, SQLServer.", engine)
	}

	ha := IsHA(spec)
	switch spec.Hamode {
	case "", "Single", "single", "Ha", "ha", "HA":
	default:
		p.addf("hamode %q is not Single or Ha.", spec.Hamode)
	}
	switch {
	case !flavorPattern.MatchString(spec.Flavorref):
		p.addf("flavorref %q is not an RDS spec code such as rds.mysql.n1.large.2.", spec.Flavorref)
	case ha && !strings.HasSuffix(spec.Flavorref, ".ha"):
		p.addf("flavorref %q is not an HA spec code: with hamode Ha it must end in .ha.", spec.Flavorref)
	case !ha && (strings.HasSuffix(spec.Flavorref, ".ha") || strings.HasSuffix(spec.Flavorref, ".rr")):
		p.addf("flavorref %q is for HA or replica instances: set hamode Ha or use a single-instance spec code.", spec.Flavorref)
	}
	if ha && spec.Hareplicationmode != "" && replicationModes[engine] != nil && !replicationModes[engine][spec.Hareplicationmode] {
		p.addf("hareplicationmode %q is not supported for %s.", spec.Hareplicationmode, engine)
	}

	if !volumeTypes[spec.Volumetype] {
		p.addf("volumetype %q is not one of COMMON, ULTRAHIGH, CLOUDSSD, ESSD.", spec.Volumetype)
	}
	if spec.Volumesize < 40 || spec.Volumesize > 4000 || spec.Volumesize%10 != 0 {
		p.addf("volumesize %d is not a multiple of 10 between 40 and 4000.", spec.Volumesize)
	}

	azs := AvailabilityZones(spec)
	switch {
	case len(azs) == 0:
		p.addf("availabilityzone is required.")
	case ha && len(azs) != 2:
		p.addf("availabilityzone %q must name two AZs (primary,standby) for an HA instance.", spec.Availabilityzone)
	case !ha && len(azs) != 1:
		p.addf("availabilityzone %q must name one AZ for a single instance.", spec.Availabilityzone)
	}
	for _, az := range azs {
		if !azPattern.MatchString(az) {
			p.addf("availabilityzone %q is not an AZ name such as eu-de-01.", az)
			break
		}
	}
	if !regionPattern.MatchString(spec.Region) {
		p.addf("region %q is not a region name such as eu-de.", spec.Region)
	}
	for _, f := range []struct{ name, value string }{{"vpc", spec.Vpc}, {"subnet", spec.Subnet}, {"securitygroup", spec.Securitygroup}} {
		if !resourcePattern.MatchString(f.value) {
			p.addf("%s %q is not a name or id.", f.name, f.value)
		}
	}

	if _, err := Port(spec); err != nil {
		p.addf("%s", err.Error())
	}
	p = append(p, securityProblems(spec)...) // day2_network.go: ssl and the create-only fields
	if spec.Backupstarttime != "" && !validBackupWindow(spec.Backupstarttime) {
		p.addf("backupstarttime %q is not a one-hour window hh:mm-HH:MM with minutes 00, 15, 30 or 45.", spec.Backupstarttime)
	}
	if spec.Backupkeepdays < 0 || spec.Backupkeepdays > 732 {
		p.addf("backupkeepdays %d is not between 0 and 732.", spec.Backupkeepdays)
	}
	validateSettings(spec, &p) // settings.go
	if spec.Backuprestoretime != "" {
		if _, err := time.Parse(time.RFC3339, spec.Backuprestoretime); err != nil {
			p.addf("backuprestoretime %q is not an RFC3339 time such as 2026-11-22T10:00:00Z.", spec.Backuprestoretime)
		}
	}
	if spec.Password != "" {
		if msg := passwordProblem(spec.Datastoretype, spec.Password); msg != "" {
			p.addf("password %s.", msg)
		}
		if spec.Passwordsecretref != nil {
			p.addf("password and passwordsecretref are both set: use one.")
		}
	}
	if ref := spec.Passwordsecretref; ref != nil && !resourcePattern.MatchString(ref.Name) {
		p.addf("passwordsecretref.name %q is not a Secret name.", ref.Name)
	}
	switch spec.Deletionpolicy {
	case "", v1alpha1.DeletionPolicyDelete, v1alpha1.DeletionPolicyRetain:
	default:
		p.addf("deletionpolicy %q is not Delete or Retain.", spec.Deletionpolicy)
	}
	// NOTE: spec.databases and spec.users are checked by the databases step (validate_users.go):
	// a bad GRANT added to a running object must not stop the instance from being reported.
	p = append(p, restoreProblems(spec)...)
	p = append(p, replicaProblems(spec)...) // validate_replicas.go
	if spec.Autopilot {
		_, ap := autopilotSettingsOf(spec) // autopilot_plan.go
		p = append(p, ap...)
	}
	p = append(p, parametersProblems(spec)...) // parameters.go
	for _, t := range spec.Tags {
		if reservedTag(t.Key) {
			p.addf("tags key %q is reserved for the controller's own tags (rds-owner-*, rds-released*, rds-restart-request, rds-upgrade-request, rds-replica).", t.Key)
		}
	}
	return p
}

// IsHA reports whether the spec asks for a primary/standby instance.
func IsHA(spec *v1alpha1.RdsSpec) bool { return strings.EqualFold(spec.Hamode, "ha") }

// AvailabilityZones splits the comma-separated AZ list.
func AvailabilityZones(spec *v1alpha1.RdsSpec) []string {
	var azs []string
	for az := range strings.SplitSeq(spec.Availabilityzone, ",") {
		if az = strings.TrimSpace(az); az != "" {
			azs = append(azs, az)
		}
	}
	return azs
}

// Port returns the spec's port, the engine's default when unset, or why it is invalid.
func Port(spec *v1alpha1.RdsSpec) (int, error) {
	if spec.Port == nil || (spec.Port.Type == intstr.String && spec.Port.StrVal == "") {
		return defaultPorts[spec.Datastoretype], nil
	}
	port := spec.Port.IntValue()
	if spec.Port.Type == intstr.String {
		n, err := strconv.Atoi(spec.Port.StrVal)
		if err != nil {
			return 0, fmt.Errorf("port %q is not a number", spec.Port.StrVal)
		}
		port = n
	}
	ok := false
	switch spec.Datastoretype {
	case v1alpha1.EngineMySQL:
		ok = port >= 1024 && port <= 65535 && port != 12017 && port != 33071
	case v1alpha1.EnginePostgreSQL:
		ok = port >= 2100 && port <= 9500
	case v1alpha1.EngineSQLServer:
		// NOTE: OTC keeps 5355 and 5985 for itself on SQL Server instances.
		ok = port == 1433 || (port >= 2100 && port <= 9500 && port != 5355 && port != 5985)
	default:
		ok = port >= 1 && port <= 65535
	}
	if !ok {
		return 0, fmt.Errorf("port %d is not allowed for %s", port, spec.Datastoretype)
	}
	return port, nil
}

// validBackupWindow: hh:mm-HH:MM in UTC, one hour long, on a quarter hour.
func validBackupWindow(s string) bool {
	w, ok := parseDailyWindow(s)
	return ok && w.onQuarterHours() && w.lasts(time.Hour)
}

// passwordProblem checks OTC's root password rules for the engine: 8 to 32 characters from at
// least three of upper case, lower case, digits and the engine's special characters.
func passwordProblem(engine, pw string) string {
	specials, ok := passwordSpecials[engine]
	if !ok {
		return "" // an unknown engine is reported on its own; OTC has the last word
	}
	if len(pw) < 8 || len(pw) > 32 {
		return "must be 8 to 32 characters long"
	}
	var upper, lower, digit, special bool
	for _, r := range pw {
		switch {
		case r >= 'A' && r <= 'Z':
			upper = true
		case r >= 'a' && r <= 'z':
			lower = true
		case r >= '0' && r <= '9':
			digit = true
		case strings.ContainsRune(specials, r):
			special = true
		default:
			return "may only contain letters, digits and " + specials + " for " + engine
		}
	}
	classes := 0
	for _, b := range []bool{upper, lower, digit, special} {
		if b {
			classes++
		}
	}
	if classes < 3 {
		return "must mix at least three of upper case, lower case, digits and special characters"
	}
	return ""
}

var (
	// instanceIDPattern is OTC's RDS instance id: 32 hex digits and a type suffix such as in01.
	instanceIDPattern = regexp.MustCompile(`^[0-9a-f]{32}in[0-9]{2}$`)
	// otcNamePattern is an OTC instance name or id; never empty, never a "*" wildcard.
	otcNamePattern  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{3,63}$`)
	backupIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)
)

// restoreProblems validates restorefrom and instanceid, in field order.
func restoreProblems(spec *v1alpha1.RdsSpec) []string {
	var p problems
	if rf := spec.Restorefrom; rf != nil {
		if !otcNamePattern.MatchString(rf.Instance) {
			p.addf("restorefrom.instance %q is not an OTC instance id or name.", rf.Instance)
		}
		switch {
		case (rf.Backupid == "") == (rf.Restoretime == ""):
			p.addf("restorefrom needs exactly one of backupid and restoretime.")
		case rf.Backupid != "" && !backupIDPattern.MatchString(rf.Backupid):
			p.addf("restorefrom.backupid %q is not a backup id.", rf.Backupid)
		case rf.Restoretime != "":
			if _, err := time.Parse(time.RFC3339, rf.Restoretime); err != nil {
				p.addf("restorefrom.restoretime %q is not an RFC3339 time such as 2026-11-22T10:00:00Z.", rf.Restoretime)
			}
		}
	}
	if spec.Instanceid != "" {
		if !instanceIDPattern.MatchString(spec.Instanceid) {
			p.addf("instanceid %q is not an OTC instance id (32 hex digits and a suffix such as in01).", spec.Instanceid)
		}
		if spec.Restorefrom != nil {
			p.addf("restorefrom and instanceid are both set: a new instance is restored or an existing one adopted, not both.")
		}
	}
	return p
}

var (
	// timeZonePattern is OTC's time_zone for MySQL and PostgreSQL: UTC, or UTC with an offset of
	// whole or half hours (quarter hours for +05:45, +08:45, +12:45), from UTC-12:00 to UTC+14:00.
	timeZonePattern = regexp.MustCompile(`^UTC([+-](0[0-9]|1[0-4]):(00|30|45))?$`)
	// kmsKeyPattern is a KMS key id: a UUID.
	kmsKeyPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

// securityProblems are the problems of ssl and of the create-only fields timezone,
// lowercasetablenames and diskencryptionid, one sentence each, in field order.
func securityProblems(spec *v1alpha1.RdsSpec) []string {
	var p problems
	mysql := spec.Datastoretype == v1alpha1.EngineMySQL
	if spec.Ssl != nil && !mysql {
		p.addf("ssl is for MySQL only: OTC switches SSL for MySQL instances alone; remove ssl.")
	}
	if tz := spec.Timezone; tz != "" {
		switch {
		case spec.Datastoretype == v1alpha1.EngineSQLServer:
			p.addf("timezone %q: SQL Server takes Windows time zone names, which this controller does not set yet; remove timezone.", tz)
		case !validTimeZone(tz):
			p.addf("timezone %q is not a UTC offset such as UTC+08:00 (UTC-12:00 to UTC+14:00).", tz)
		case spec.Restorefrom != nil:
			p.addf("timezone %q cannot be set with restorefrom: OTC's restore into a new instance takes no time zone, the new instance has the source's; remove timezone.", tz)
		}
	}
	if n := spec.Lowercasetablenames; n != nil {
		switch {
		case !mysql:
			p.addf("lowercasetablenames is for MySQL only; remove it.")
		case *n != 0 && *n != 1:
			p.addf("lowercasetablenames %d is not 0 or 1.", *n)
		}
	}
	if id := spec.Diskencryptionid; id != "" && !kmsKeyPattern.MatchString(id) {
		p.addf("diskencryptionid %q is not a KMS key id (a UUID such as 2b5a4c3e-8f0a-4d7e-9c1b-0e6f5a4b3c2d).", id)
	}
	return p
}

// validTimeZone: timeZonePattern, with an offset from UTC-12:00 to UTC+14:00.
func validTimeZone(tz string) bool {
	if !timeZonePattern.MatchString(tz) {
		return false
	}
	off := offsetMinutes(tz)
	return off >= -12*60 && off <= 14*60
}

// offsetMinutes is the offset of a time zone UTC±hh:mm in minutes; 0 for UTC.
func offsetMinutes(tz string) int {
	if len(tz) != len("UTC+00:00") {
		return 0
	}
	h, _ := strconv.Atoi(tz[4:6])
	m, _ := strconv.Atoi(tz[7:9])
	if tz[3] == '-' {
		return -(h*60 + m)
	}
	return h*60 + m
}
