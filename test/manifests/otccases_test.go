package manifests

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/test/otccases"
)

// TestPasswordRuleMatchesOTC checks the CRD's password rule against the list the hook's validation
// and the simulator are checked against (test/otccases), engine by engine.
func TestPasswordRuleMatchesOTC(t *testing.T) {
	engines := map[string]func(map[string]any){
		otccases.MySQL:      func(map[string]any) {},
		otccases.PostgreSQL: postgres,
		otccases.SQLServer:  sqlserver,
	}
	v := newCRDValidator(t, loadCRD(t), v1alpha1.Version)
	for _, tc := range otccases.RootPasswords {
		for _, engine := range otccases.Engines {
			t.Run(tc.Name+"/"+engine, func(t *testing.T) {
				obj := rds(t, both(engines[engine], set("password", tc.Password)))
				got := errorText(v.create(obj))
				if tc.ValidFor(engine) {
					assert.Empty(t, got, tc.Reason)
					return
				}
				assert.NotEmpty(t, got, tc.Reason)
				assert.NotContains(t, got, tc.Password, "errors must not echo the password")
			})
		}
	}
}
