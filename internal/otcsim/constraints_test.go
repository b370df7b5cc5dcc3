package otcsim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/test/otccases"
)

// The simulator is checked against the same list as the hook's validation and the CRD
// (test/otccases), so that what the hook lets through OTC takes, and the other way round.

func TestRootPasswordRulesMatchOTC(t *testing.T) {
	for _, tc := range otccases.RootPasswords {
		for _, name := range otccases.Engines {
			t.Run(tc.Name+"/"+name, func(t *testing.T) {
				e := findEngine(name)
				require.NotNil(t, e)
				assert.Equal(t, otccases.PasswordSpecials[name], passwordSpecials[e.short])
				assert.Equal(t, tc.ValidFor(name), validPassword(e, tc.Password), tc.Reason)
			})
		}
	}
}

func TestPortRulesMatchOTC(t *testing.T) {
	for _, tc := range otccases.Ports {
		t.Run(tc.Name, func(t *testing.T) {
			e := findEngine(tc.Engine)
			require.NotNil(t, e)
			assert.Equal(t, tc.Valid, validPort(e, tc.Port), tc.Reason)
		})
	}
}

func TestCreateTakesEveryEnginesPasswordCharacters(t *testing.T) {
	e := newEnv(t, Options{})
	opts := createOpts("comma-password")
	opts.Password = "Abcdef1,$"
	e.createActive(t, opts)
}
