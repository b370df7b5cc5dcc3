package reconcile

import (
	crand "crypto/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/cloudtest"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
	"github.com/mcsps/rds-lambda-controller/test/otccases"
)

func TestValidate(t *testing.T) {
	intPort := intstr.FromInt32(3306)
	badPort := intstr.FromString("abc")
	lowPort := intstr.FromInt32(80)
	cases := map[string]struct {
		mutate func(*v1alpha1.RdsSpec)
		want   []string // substrings, one per expected problem
	}{
		"the original example is valid":   {mutate: func(*v1alpha1.RdsSpec) {}},
		"port as a number is valid":       {mutate: func(s *v1alpha1.RdsSpec) { s.Port = &intPort }},
		"no port means the default":       {mutate: func(s *v1alpha1.RdsSpec) { s.Port = nil }},
		"unknown engine":                  {mutate: func(s *v1alpha1.RdsSpec) { s.Datastoretype = "Oracle" }, want: []string{`datastoretype "Oracle"`}},
		"version of another engine":       {mutate: func(s *v1alpha1.RdsSpec) { s.Datastoreversion = "15" }, want: []string{`datastoreversion "15" is not a MySQL version`}},
		"volume not a multiple of 10":     {mutate: func(s *v1alpha1.RdsSpec) { s.Volumesize = 45 }, want: []string{"volumesize 45"}},
		"volume too large":                {mutate: func(s *v1alpha1.RdsSpec) { s.Volumesize = 4010 }, want: []string{"volumesize 4010"}},
		"port not a number":               {mutate: func(s *v1alpha1.RdsSpec) { s.Port = &badPort }, want: []string{`port "abc" is not a number`}},
		"port out of the engine's range":  {mutate: func(s *v1alpha1.RdsSpec) { s.Port = &lowPort }, want: []string{"port 80 is not allowed for MySQL"}},
		"backup window not one hour":      {mutate: func(s *v1alpha1.RdsSpec) { s.Backupstarttime = "01:00-03:00" }, want: []string{"backupstarttime"}},
		"backup window on odd minutes":    {mutate: func(s *v1alpha1.RdsSpec) { s.Backupstarttime = "01:10-02:10" }, want: []string{"backupstarttime"}},
		"backup window over midnight":     {mutate: func(s *v1alpha1.RdsSpec) { s.Backupstarttime = "23:00-00:00" }},
		"weak password":                   {mutate: func(s *v1alpha1.RdsSpec) { s.Password = "aaaaaaaa" }, want: []string{"password must mix"}},
		"password with a quote":           {mutate: func(s *v1alpha1.RdsSpec) { s.Password = "Abc'12345" }, want: []string{"password may only contain"}},
		"HA needs two AZs and .ha flavor": {mutate: func(s *v1alpha1.RdsSpec) { s.Hamode = "Ha" }, want: []string{"not an HA spec code", "must name two AZs"}},
		"valid HA": {mutate: func(s *v1alpha1.RdsSpec) {
			s.Hamode, s.Flavorref, s.Availabilityzone, s.Hareplicationmode = "Ha", "rds.mysql.n1.large.2.ha", "eu-de-01,eu-de-02", "semisync"
		}},
		"replication mode of another engine": {mutate: func(s *v1alpha1.RdsSpec) {
			s.Hamode, s.Flavorref, s.Availabilityzone, s.Hareplicationmode = "Ha", "rds.mysql.n1.large.2.ha", "eu-de-01,eu-de-02", "sync"
		}, want: []string{`hareplicationmode "sync"`}},
		"single with an HA flavor":    {mutate: func(s *v1alpha1.RdsSpec) { s.Flavorref = "rds.mysql.n1.large.2.ha" }, want: []string{"set hamode Ha"}},
		"bad restore time":            {mutate: func(s *v1alpha1.RdsSpec) { s.Backuprestoretime = "yesterday" }, want: []string{"backuprestoretime"}},
		"unknown deletion policy":     {mutate: func(s *v1alpha1.RdsSpec) { s.Deletionpolicy = "Orphan" }, want: []string{"deletionpolicy"}},
		"password and reference both": {mutate: func(s *v1alpha1.RdsSpec) { s.Passwordsecretref = &v1alpha1.SecretKeyRef{Name: "x"} }, want: []string{"both set"}},
		"names with injection":        {mutate: func(s *v1alpha1.RdsSpec) { s.Vpc = "a b;drop" }, want: []string{`vpc "a b;drop"`}},
		"missing everything": {mutate: func(s *v1alpha1.RdsSpec) { *s = v1alpha1.RdsSpec{} }, want: []string{
			"datastoretype", "flavorref", "volumetype", "volumesize", "availabilityzone is required", "region", "vpc", "subnet", "securitygroup",
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := sampleSpec()
			tc.mutate(&spec)
			got := Validate(&spec)
			assert.Len(t, got, len(tc.want), "problems: %s", strings.Join(got, " | "))
			for i, w := range tc.want {
				if i < len(got) {
					assert.Contains(t, got[i], w)
				}
			}
			assert.Equal(t, got, Validate(&spec), "the same spec gives the same messages")
		})
	}
}

func TestInstanceName(t *testing.T) {
	valid := func(t *testing.T, n string) {
		t.Helper()
		assert.GreaterOrEqual(t, len(n), 4)
		assert.LessOrEqual(t, len(n), 64)
		assert.Regexp(t, `^[A-Za-z][A-Za-z0-9_-]*$`, n)
	}
	n := LegacyInstanceName("rds1", "my-rds-single")
	valid(t, n)
	assert.Equal(t, n, LegacyInstanceName("rds1", "my-rds-single"), "deterministic")
	assert.True(t, strings.HasPrefix(n, "rds-rds1-my-rds-single-"))

	long := LegacyInstanceName(strings.Repeat("n", 63), strings.Repeat("a.b", 80))
	valid(t, long)
	assert.NotEqual(t, LegacyInstanceName("a-b", "c"), LegacyInstanceName("a", "b-c"), "collision-safe")
	assert.NotEqual(t, long, LegacyInstanceName(strings.Repeat("n", 63), strings.Repeat("a.b", 79)), "cut names still differ")
	valid(t, LegacyInstanceName("1ns", "0"))
	valid(t, FinalBackupName(long, "0123456789abcdef0123456789abcdefin01"))
}

func TestGeneratePasswordMeetsOTCRules(t *testing.T) {
	for range 200 {
		pw, err := GeneratePassword(cryptoReader{})
		assert.NoError(t, err)
		for engine := range passwordSpecials {
			assert.Empty(t, passwordProblem(engine, pw), "%s for %s", pw, engine)
		}
		assert.Len(t, pw, genLength)
	}
}

type cryptoReader struct{}

func (cryptoReader) Read(p []byte) (int, error) { return crand.Read(p) }

func TestGeneratedPasswordsWithAKeyAreStablePerObject(t *testing.T) {
	key := secret.New("a key only the hooks hold")
	gen := func(key secret.Value, uid types.UID, purpose string) string {
		r := New(Config{Cloud: &cloudtest.Fake{}, PasswordKey: key})
		c := &call{r: r, parent: &v1alpha1.Rds{ObjectMeta: metav1.ObjectMeta{UID: uid}}}
		pw, err := generatePassword(c.r.cfg, c.parent.UID, purpose)
		require.NoError(t, err)
		for _, engine := range otccases.Engines {
			assert.Empty(t, passwordProblem(engine, pw), "meets OTC's rules for %s: %q", engine, pw)
		}
		return pw
	}
	a := gen(key, "uid-1", "root")
	assert.Equal(t, a, gen(key, "uid-1", "root"), "two calls for the same object answer the same password")
	assert.NotEqual(t, a, gen(key, "uid-2", "root"), "another object, another password")
	assert.NotEqual(t, a, gen(key, "uid-1", "user\x00app\x00%"), "another purpose, another password")
	assert.NotEqual(t, a, gen(secret.New("another key"), "uid-1", "root"), "nobody without the key can compute it")
	assert.NotEqual(t, gen(secret.Value{}, "uid-1", "root"), gen(secret.Value{}, "uid-1", "root"), "without a key: random")
}

// TestRootPasswordRulesMatchOTC checks the hook against the list the CRD and the simulator are
// checked against (test/otccases).
func TestRootPasswordRulesMatchOTC(t *testing.T) {
	assert.Equal(t, otccases.PasswordSpecials, passwordSpecials)
	for _, tc := range otccases.RootPasswords {
		for _, engine := range otccases.Engines {
			t.Run(tc.Name+"/"+engine, func(t *testing.T) {
				problem := passwordProblem(engine, tc.Password)
				if tc.ValidFor(engine) {
					assert.Empty(t, problem, tc.Reason)
				} else {
					assert.NotEmpty(t, problem, tc.Reason)
				}
			})
		}
	}
}

func TestPortRulesMatchOTC(t *testing.T) {
	for _, tc := range otccases.Ports {
		t.Run(tc.Name, func(t *testing.T) {
			for _, port := range []intstr.IntOrString{intstr.FromInt32(int32(tc.Port)), intstr.FromString(strconv.Itoa(tc.Port))} {
				spec := &v1alpha1.RdsSpec{Datastoretype: tc.Engine, Port: &port}
				got, err := Port(spec)
				if tc.Valid {
					require.NoError(t, err, tc.Reason)
					assert.Equal(t, tc.Port, got, tc.Reason)
				} else {
					assert.Error(t, err, tc.Reason)
				}
			}
		})
	}
}
