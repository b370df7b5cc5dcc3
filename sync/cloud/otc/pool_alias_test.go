package otc_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcsps/rds-lambda-controller/sync/cloud/otc"
	"github.com/mcsps/rds-lambda-controller/test/testutil"
)

// simID is otcsim's stable id of key (internal/otcsim/ids.go stableHex), for naming team A's domain
// and user by id as a Secret may.
func simID(key string) string {
	sum := sha256.Sum256([]byte("otcsim/" + key))
	return hex.EncodeToString(sum[:16])
}

// TestRefusedLoginCapHoldsForEverySpelling: namespaces that name team A's user once by domain
// name, once by domain id and once by user id share one cap of refused logins: IAM sees no more
// wrong passwords for the one user it would lock than the cap. (Found in review: the cap was keyed
// by the Secret's spelling, which gave each spelling a budget of its own.)
func TestRefusedLoginCapHoldsForEverySpelling(t *testing.T) {
	e := newPoolEnv(t, nil)
	aliases := []func(m map[string]string){
		func(map[string]string) {}, // user name + domain name, as the Secret normally has it
		func(m map[string]string) { // user name + domain id
			m["OS_DOMAIN_ID"] = simID("domain/" + m["OS_DOMAIN_NAME"])
			delete(m, "OS_DOMAIN_NAME")
		},
		func(m map[string]string) { // user id
			m["OS_USER_ID"] = simID("user/" + m["OS_USERNAME"])
			delete(m, "OS_USERNAME")
		},
	}
	before := e.logins(testutil.ProjectTeamA)
	n := 0
	for a, alias := range aliases {
		for i := range 4 {
			ns := fmt.Sprintf("evil-%d-%d", a, i)
			creds := e.creds(ns, testutil.ProjectTeamA)
			alias(creds.Env)
			creds.Env["OS_PASSWORD"] = fmt.Sprintf("Guess-%d", n)
			n++
			_, _ = e.pool.For(ctxT(t), creds)
		}
	}
	got := e.logins(testutil.ProjectTeamA) - before
	assert.LessOrEqual(t, got, otc.MaxRefusedLoginsPerUser,
		"wrong-password logins of team A's one IAM user that reached IAM within the backoff")
}
