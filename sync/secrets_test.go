package reconcile

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
)

// TestConnectionStrings: a password of the spec or of a user's Secret may hold anything; the DSN
// and the URI carry it so that a client reads back exactly that password, for each engine.
func TestConnectionStrings(t *testing.T) {
	const hostile = `p'w \ " @/:?#%&= x`
	tests := []struct {
		reason, engine, database string
		wantDSN                  string
	}{
		{
			reason: "PostgreSQL: libpq's keyword=value, values quoted, quote and backslash escaped",
			engine: v1alpha1.EnginePostgreSQL, database: "shop",
			wantDSN: `host=10.0.0.5 port=5432 user='app' password='p\'w \\ " @/:?#%&= x' dbname='shop' sslmode=require`,
		},
		{
			reason:  "PostgreSQL without a database: postgres",
			engine:  v1alpha1.EnginePostgreSQL,
			wantDSN: `host=10.0.0.5 port=5432 user='app' password='p\'w \\ " @/:?#%&= x' dbname='postgres' sslmode=require`,
		},
		{
			reason: "MySQL: go-sql-driver splits at the first ':' and the last '@' and '/'",
			engine: v1alpha1.EngineMySQL, database: "shop",
			wantDSN: `app:p'w \ " @/:?#%&= x@tcp(10.0.0.5:5432)/shop`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			dsn, uri := connectionStrings(tt.engine, "10.0.0.5", 5432, "app", hostile, tt.database)
			assert.Equal(t, tt.wantDSN, dsn)
			u, err := url.Parse(uri)
			require.NoError(t, err)
			pw, _ := u.User.Password()
			assert.Equal(t, hostile, pw, "the URI carries the password as it is")
			assert.Equal(t, "app", u.User.Username())
			assert.Equal(t, "10.0.0.5:5432", u.Host)
		})
	}
}
