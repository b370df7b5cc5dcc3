package reconcile

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

func TestConnectionOf(t *testing.T) {
	inst := activeInstance()
	stored, spec := secret.New("stored"), secret.New("spec")
	tests := []struct {
		reason                    string
		observed                  secret.Value
		isStored                  bool
		desired                   secret.Value
		generated, adopted        bool
		wantPassword, wantProblem string
	}{
		{reason: "the stored password wins", observed: stored, isStored: true, desired: spec, wantPassword: "stored"},
		{reason: "without a stored one, the spec's", desired: spec, wantPassword: "spec"},
		{reason: "a generated password whose Secret is gone is unknown", generated: true, wantProblem: ReasonPasswordSecretMissing},
		{reason: "an adopted instance without a password", adopted: true, generated: true, wantProblem: ReasonPasswordUnknown},
	}
	for _, tc := range tests {
		t.Run(tc.reason, func(t *testing.T) {
			conn, problem := connectionOf("MySQL", inst, tc.observed, tc.isStored, tc.desired, tc.generated, tc.adopted)
			if tc.wantProblem != "" {
				assert.Nil(t, conn)
				assert.Equal(t, tc.wantProblem, problem.reason)
				assert.Equal(t, v1alpha1.ConditionSynced, problem.cond)
				return
			}
			assert.Nil(t, problem)
			assert.Equal(t, tc.wantPassword, conn.password.Reveal())
			assert.Equal(t, "192.168.0.10", conn.host)
			assert.Equal(t, 3306, conn.port)
		})
	}
}
