package reconcile

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

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
		{"backup window", func(s string) bool { _, _, _, _, ok := backupWindow(s); return ok }, window},
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
