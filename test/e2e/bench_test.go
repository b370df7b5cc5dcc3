package e2e

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
)

// BenchmarkSyncSteady measures one steady-state sync call of a Ready instance end to end: the
// request over HTTP, decoding, the OTC look-up through the SDK against the simulator, and the
// answer. It is the cost every Rds object pays at each resync.
func BenchmarkSyncSteady(b *testing.B) {
	w := newWorld(b)
	mc := w.newObject(nil)
	mc.sync()
	mc.sync()
	w.clock.Advance(otcsim.DefaultDurations().Create)
	mc.sync()
	body := mc.envelope()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		code, _, _ := w.post("/sync", body)
		if code != http.StatusOK {
			b.Fatalf("sync answered %d", code)
		}
	}
	b.StopTimer()
	require.Zero(b, w.sim.Calls(otcsim.OpCreateInstance)-1)
}
