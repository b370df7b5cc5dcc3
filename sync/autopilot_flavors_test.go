package reconcile

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/cloudtest"
)

// TestAutopilotFlavorsPerClient: the flavor list autopilot keeps is the list of the call's own
// client: a credential set of another region (or project) sells other flavors in other AZs.
func TestAutopilotFlavorsPerClient(t *testing.T) {
	list := func(az string) func(context.Context, string, string) ([]cloud.Flavor, error) {
		return func(context.Context, string, string) ([]cloud.Flavor, error) {
			return []cloud.Flavor{{SpecCode: "rds.mysql.n1.large.2", VCPUs: "2", RAMGB: 4, Mode: "single", AZStatus: map[string]string{az: "normal"}}}, nil
		}
	}
	de := &cloudtest.Fake{RegionName: "eu-de", ListFlavorsFn: list("eu-de-01")}
	nl := &cloudtest.Fake{RegionName: "eu-nl", ListFlavorsFn: list("eu-nl-01")}
	r := New(Config{Cloud: de, Now: time.Now, CallTimeout: time.Second})
	inst := &cloud.Instance{ID: "i", Engine: "MySQL", Version: "8.0"}
	for _, tc := range []struct {
		cl cloud.Cloud
		az string
	}{{de, "eu-de-01"}, {nl, "eu-nl-01"}, {de, "eu-de-01"}} {
		got, err := autopilotFlavors(r, tc.cl, inst)
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Equal(t, "normal", got[0].AZStatus[tc.az], "%s: the list of its own region", tc.cl.Region())
	}
	assert.Len(t, de.Calls(), 1, "kept per client: eu-de listed once")
}

type projectFake struct {
	*cloudtest.Fake
	project string
}

func (p projectFake) Project() string { return p.project }

// TestAutopilotFlavorsPerProject: two credential sets of one region, other projects: each its own
// list, also when the call decided on the shared view (its client read-only).
func TestAutopilotFlavorsPerProject(t *testing.T) {
	list := func(az string) func(context.Context, string, string) ([]cloud.Flavor, error) {
		return func(context.Context, string, string) ([]cloud.Flavor, error) {
			return []cloud.Flavor{{SpecCode: "rds.mysql.n1.large.2", VCPUs: "2", RAMGB: 4, Mode: "single", AZStatus: map[string]string{az: "normal"}}}, nil
		}
	}
	a := projectFake{&cloudtest.Fake{RegionName: "eu-de", ListFlavorsFn: list("eu-de-01")}, "project-a"}
	b := projectFake{&cloudtest.Fake{RegionName: "eu-de", ListFlavorsFn: list("eu-de-02")}, "project-b"}
	r := New(Config{Cloud: a, Now: time.Now, CallTimeout: time.Second})
	inst := &cloud.Instance{ID: "i", Engine: "MySQL", Version: "8.0"}
	for _, tc := range []struct {
		cl cloud.Cloud
		az string
	}{{readOnly{a}, "eu-de-01"}, {readOnly{b}, "eu-de-02"}} {
		got, err := autopilotFlavors(r, tc.cl, inst)
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Equal(t, "normal", got[0].AZStatus[tc.az], "the list of its own project")
	}
}

// autopilotFlavors is the flavor list the autopilot step plans with for a call with this client:
// the kept one, else one it reads (observe) and keeps (render).
func autopilotFlavors(r *Reconciler, client cloud.Cloud, inst *cloud.Instance) ([]cloud.Flavor, error) {
	c := &call{r: r, cloud: client}
	s := &autopilotStep{flavorsKey: flavorsKey(client.Region(), cloud.ProjectOf(client), inst)}
	if s.kept = r.autopilot.flavors(s.flavorsKey); s.kept != nil {
		return s.kept, nil
	}
	n := need{kind: readFlavors, engine: inst.Engine, version: inst.Version}
	s.saw(n, c.observe(context.Background(), n))
	s.render(&c.answer)
	r.remember(c.keep)
	return s.in.flavors.list, s.in.flavors.err
}
