package testutil

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/otc"
)

// Login returns the real OTC adapter logged in to the simulator srv, the way rds-hooks logs in
// from the OS_* variables. edit, if not nil, changes the config first (a transport, an observer).
func Login(t testing.TB, srv *otcsim.Server, edit func(*otc.Config)) *otc.Client {
	t.Helper()
	env := srv.Env()
	cfg, err := otc.ConfigFromEnv(func(k string) string { return env[k] })
	require.NoError(t, err)
	cfg.RequestTimeout = 5 * time.Second
	if edit != nil {
		edit(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, err := otc.New(ctx, cfg)
	require.NoError(t, err)
	return client
}
