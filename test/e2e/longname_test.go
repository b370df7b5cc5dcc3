package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
)

// TestLongNames: Rds objects named with 64 and 253 characters are created like any other, and the
// connection Secret the API server is asked to create is valid (name and labels).
func TestLongNames(t *testing.T) {
	for _, n := range []int{64, 253} {
		t.Run(fmt.Sprintf("%d characters", n), func(t *testing.T) {
			name := strings.Repeat("a", n)
			require.Empty(t, validation.IsDNS1123Subdomain(name))
			w := newWorld(t)
			mc := w.newObject(nil)
			mc.parent["metadata"].(map[string]any)["name"] = name

			first := mc.sync()
			assert.Equal(t, reconcile.ConnectionSecretName(name), first.Status.ConnectionSecret)
			conn := mc.secret(first.Status.ConnectionSecret)
			require.NotNil(t, conn, "the password Secret")
			errs := apivalidation.ValidateObjectMeta(&conn.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
			require.Empty(t, errs.ToAggregate())

			mc.sync()
			require.Len(t, w.sim.Instances(), 1)
			w.clock.Advance(otcsim.DefaultDurations().Create)
			resp := mc.sync()
			assert.Equal(t, "ACTIVE", resp.Status.Status)
			assert.LessOrEqual(t, len(resp.Status.Name), 64, "an OTC instance name")
			assert.Equal(t, 1, w.sim.Calls(otcsim.OpCreateInstance))
		})
	}
}
