package reconcile

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
)

// TestPatternsAreTheirRegexps: each pattern (patterns.go) matches exactly what the regular
// expression it stands for matches: on strings made for the edges and on many random strings of
// the characters the patterns care about.
func TestPatternsAreTheirRegexps(t *testing.T) {
	window := regexp.MustCompile(`^([01][0-9]|2[0-3]):(00|15|30|45)-([01][0-9]|2[0-3]):(00|15|30|45)$`)
	cases := []struct {
		name string
		p    pattern
		re   *regexp.Regexp
	}{
		{"MySQL version", versionPattern[v1alpha1.EngineMySQL], regexp.MustCompile(`^(5\.7|8\.0)(\.\d+)?$`)},
		{"PostgreSQL version", versionPattern[v1alpha1.EnginePostgreSQL], regexp.MustCompile(`^(1[0-9])(\.\d+)?$`)},
		{"SQL Server version", versionPattern[v1alpha1.EngineSQLServer], regexp.MustCompile(`^20[0-9]{2}_[A-Z]{2,4}$`)},
		{"flavor", flavorPattern, regexp.MustCompile(`^rds\.[a-z0-9]+(\.[a-z0-9]+)+$`)},
		{"az", azPattern, regexp.MustCompile(`^[a-z]{2}-[a-z]{2,}-[0-9]{2}$`)},
		{"region", regionPattern, regexp.MustCompile(`^[a-z]{2}-[a-z]{2,}(-[0-9]+)?$`)},
		{"resource", resourcePattern, regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)},
		{"tag key", tagKeyPattern, regexp.MustCompile(`^[A-Za-z0-9_.-]{1,36}$`)},
		{"tag value", tagValuePattern, regexp.MustCompile(`^[A-Za-z0-9_.-]{0,43}$`)},
		{"quarter-hour window", func(s string) bool { w, ok := parseDailyWindow(s); return ok && w.onQuarterHours() }, window},
	}
	edges := []string{
		"", "5.7", "8.0", "5.7.", "5.7.44", "8.0.28x", "8.01", "5.8", "16", "16.4", "1", "19.0.1", "20.1", "2019_SE", "2019_EE",
		"2022_WEB", "2019_S", "2019_STDX", "2019_se", "201_SE", "rds.mysql.n1.large.2", "rds.", "rds.mysql", "rds.mysql.",
		"rds..a", "rds.a.b", "RDS.a.b", "rds.a.b.ha", "eu-de-01", "eu-de-1", "eu-de", "eu-d-01", "eu-de-01-", "e-de-01",
		"eu-nl", "eu-de-2", "eu-de-", "ap-southeast-3", "a", "-a", "_a", "a_", strings.Repeat("a", 64), strings.Repeat("a", 65),
		strings.Repeat("a", 36), strings.Repeat("a", 37), strings.Repeat("a", 43), strings.Repeat("a", 44), "vpc-1.x_y",
		"ünicode", "a\n", "a b", "00:00-01:00", "23:45-00:45", "24:00-01:00", "10:15-11:15", "9:00-10:00", "10:10-11:10",
		"10:00-11:00\n", "19:30-20:30",
	}
	const alphabet = "0123456789abcdersz.-_:ABSEWZ \n\xff"
	rnd := rand.New(rand.NewPCG(18, 18))
	random := make([]string, 20000)
	for i := range random {
		b := make([]byte, rnd.IntN(14))
		if rnd.IntN(8) == 0 {
			b = make([]byte, 30+rnd.IntN(40))
		}
		for j := range b {
			b[j] = alphabet[rnd.IntN(len(alphabet))]
		}
		random[i] = string(b)
	}
	// Strings near a match: a matching edge with one byte changed.
	var near []string
	for _, e := range edges {
		for i := range len(e) {
			near = append(near, e[:i]+string(alphabet[rnd.IntN(len(alphabet))])+e[i+1:], e[:i]+e[i+1:])
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			matched := 0
			for _, s := range append(append(append([]string{}, edges...), near...), random...) {
				want := tc.re.MatchString(s)
				if want {
					matched++
				}
				if !assert.Equal(t, want, tc.p.MatchString(s), "%q", s) {
					return
				}
			}
			assert.Positive(t, matched, "some strings match")
		})
	}
}

// TestDailyWindow: one reading of "hh:mm-HH:MM" (backupstarttime, maintenancewindow, the window a
// restart waits for, the start OTC's auto start waits for): what it parses, how long it lasts,
// which times it holds and when it next starts.
func TestDailyWindow(t *testing.T) {
	on := func(d, h, m int) time.Time { return time.Date(2026, 11, d, h, m, 0, 0, time.UTC) }
	for _, tc := range []struct {
		reason, s string
		ok        bool
		want      dailyWindow
	}{
		{reason: "a window in a day", s: "02:00-06:00", ok: true, want: dailyWindow{start: 120, end: 360}},
		{reason: "across midnight", s: "22:15-02:15", ok: true, want: dailyWindow{start: 1335, end: 135}},
		{reason: "the last minute of the day", s: "23:59-00:00", ok: true, want: dailyWindow{start: 1439, end: 0}},
		{reason: "any minutes parse; quarter hours are the callers' rule", s: "10:10-11:10", ok: true, want: dailyWindow{start: 610, end: 670}},
		{reason: "no such hour", s: "24:00-01:00"},
		{reason: "no such minute", s: "10:60-11:00"},
		{reason: "one-digit hour", s: "9:00-10:00"},
		{reason: "a sign is not a digit (strconv.Atoi would take it)", s: "+2:00-06:00"},
		{reason: "a minus is not a digit either", s: "02:-0-06:00"},
		{reason: "the start alone", s: "02:00"},
		{reason: "no dash", s: "02:00 06:00"},
		{reason: "no colon", s: "02.00-06:00"},
		{reason: "trailing byte", s: "02:00-06:00\n"},
		{reason: "empty", s: ""},
	} {
		got, ok := parseDailyWindow(tc.s)
		assert.Equal(t, tc.ok, ok, tc.reason)
		if tc.ok {
			assert.Equal(t, tc.want, got, tc.reason)
		}
	}

	for _, tc := range []struct {
		reason, s            string
		quarters, hour, four bool
	}{
		{reason: "a backup window", s: "01:00-02:00", quarters: true, hour: true},
		{reason: "a backup window across midnight", s: "23:45-00:45", quarters: true, hour: true},
		{reason: "a maintenance window", s: "02:00-06:00", quarters: true, four: true},
		{reason: "a maintenance window across midnight", s: "22:30-02:30", quarters: true, four: true},
		{reason: "an hour and a quarter", s: "01:00-02:15", quarters: true},
		{reason: "minutes off the quarter", s: "01:10-02:10", hour: true},
		{reason: "a whole day is not an hour", s: "01:00-01:00", quarters: true},
	} {
		w, ok := parseDailyWindow(tc.s)
		assert.True(t, ok, tc.reason)
		assert.Equal(t, tc.quarters, w.onQuarterHours(), "%s: on quarter hours", tc.reason)
		assert.Equal(t, tc.hour, w.lasts(time.Hour), "%s: an hour long", tc.reason)
		assert.Equal(t, tc.four, w.lasts(4*time.Hour), "%s: four hours long", tc.reason)
	}

	for _, tc := range []struct {
		reason, s string
		at        time.Time
		holds     bool
		next      time.Time
	}{
		{reason: "inside, the next start tomorrow", s: "02:00-06:00", at: on(27, 3, 15), holds: true, next: on(28, 2, 0)},
		{reason: "the start is in, and is the next start", s: "02:00-06:00", at: on(27, 2, 0), holds: true, next: on(27, 2, 0)},
		{reason: "the end is out", s: "02:00-06:00", at: on(27, 6, 0), next: on(28, 2, 0)},
		{reason: "before, starting later that day", s: "02:00-06:00", at: on(27, 1, 59), next: on(27, 2, 0)},
		{reason: "across midnight, before it", s: "22:00-02:00", at: on(27, 23, 30), holds: true, next: on(28, 22, 0)},
		{reason: "across midnight, after it", s: "22:00-02:00", at: on(27, 1, 0), holds: true, next: on(27, 22, 0)},
		{reason: "across midnight, outside", s: "22:00-02:00", at: on(27, 12, 0), next: on(27, 22, 0)},
		{reason: "a time in another zone is read in UTC", s: "02:00-06:00", at: on(27, 3, 0).In(time.FixedZone("CET", 3600)), holds: true,
			next: on(28, 2, 0)},
		{reason: "a window of no length holds nothing", s: "02:00-02:00", at: on(27, 2, 0), next: on(27, 2, 0)},
	} {
		w, ok := parseDailyWindow(tc.s)
		assert.True(t, ok, tc.reason)
		assert.Equal(t, tc.holds, w.holds(tc.at), "%s: holds", tc.reason)
		assert.Equal(t, tc.next, w.startFrom(tc.at), "%s: next start", tc.reason)
	}
}
