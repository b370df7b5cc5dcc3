package otc_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/otc"
)

// TestSimAKSKCalls: a client that signs with AK/SK (the log Job's temporary keys, a namespace's
// own keys) has its calls served: the simulator verifies the signature as API Gateway does, and the
// signature covers every header the request had when the SDK signed it, the call's own header too.
func TestSimAKSKCalls(t *testing.T) {
	srv := otcsim.NewServer(otcsim.Options{AccessKey: "PERMANENTAK", SecretKey: "permanent-sk"})
	t.Cleanup(srv.Close)
	env := map[string]string{"OS_AUTH_URL": srv.AuthURL(), "OS_PROJECT_ID": otcsim.DefaultProjectID,
		"OS_REGION_NAME": otcsim.Region, "OS_ACCESS_KEY": "PERMANENTAK", "OS_SECRET_KEY": "permanent-sk"}
	cfg, err := otc.ConfigFromEnv(func(k string) string { return env[k] })
	require.NoError(t, err)
	cfg.RequestTimeout = 5 * time.Second
	c, err := otc.New(ctxT(t), cfg)
	require.NoError(t, err)

	_, _, err = c.CreateInstance(ctxT(t), mysqlOpts("rds-aksk-01"))
	require.NoError(t, err, "a change, signed")
	found, err := c.FindInstancesByName(ctxT(t), "rds-aksk-01")
	require.NoError(t, err, "a read, signed")
	require.Len(t, found, 1)
}
