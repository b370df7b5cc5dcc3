package reconcile_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
)

// TestNetworkChangesEndToEnd: each change to how the instance is reached goes through the real
// SDK to the simulator: one call issues it once, the next calls report it in flight, status then
// shows the new value, and no further change is made. With its answer lost, it is not sent again.
func TestNetworkChangesEndToEnd(t *testing.T) {
	cases := map[string]struct {
		reason string
		edit   func(w *day2World) func(*v1alpha1.RdsSpec)
		simOp  string
		op     string
		// busy is the status OTC reports while the change runs; "ACTIVE" for none.
		busy string
		// lostResends: with its answer lost there is no job to follow and the instance stays
		// ACTIVE, so the next call looks again and may ask again for the same group; OTC refuses
		// that while its job runs (409 DBS.200019), and it is the same value besides.
		lostResends bool
		check       func(t *testing.T, w *day2World, v otcsim.InstanceView, st *v1alpha1.RdsStatus)
	}{
		"security group by name": {
			reason: "a new securitygroup name is resolved as at create and set once",
			edit: func(w *day2World) func(*v1alpha1.RdsSpec) {
				w.sim.AddSecurityGroup("web")
				return func(s *v1alpha1.RdsSpec) { s.Securitygroup = "web" }
			},
			simOp: otcsim.OpSetSecurityGroup, op: reconcile.OpSecurityGroup, busy: "ACTIVE", lostResends: true,
			check: func(t *testing.T, w *day2World, v otcsim.InstanceView, st *v1alpha1.RdsStatus) {
				assert.NotEqual(t, otcsim.SeedSecurityGroupID, v.SecurityGroupID)
				assert.Equal(t, v.SecurityGroupID, st.SecurityGroupID)
				assert.Equal(t, "web", st.NetworkRefs.Securitygroup)
				assert.Equal(t, v.SecurityGroupID, st.NetworkRefs.SecurityGroupID)
			},
		},
		"port": {
			reason: "a new port moves the database once",
			edit: func(*day2World) func(*v1alpha1.RdsSpec) {
				return func(s *v1alpha1.RdsSpec) { s.Port = ptr.To(intstr.FromString("3307")) }
			},
			simOp: otcsim.OpUpdatePort, op: reconcile.OpPort, busy: otcsim.StatusModifyingPort,
			check: func(t *testing.T, _ *day2World, v otcsim.InstanceView, st *v1alpha1.RdsStatus) {
				assert.Equal(t, 3307, v.Port)
				assert.Equal(t, 3307, st.Port)
				assert.Contains(t, st.Endpoint, ":3307")
			},
		},
		"ssl": {
			reason: "ssl true switches SSL on once",
			edit: func(*day2World) func(*v1alpha1.RdsSpec) {
				return func(s *v1alpha1.RdsSpec) { s.Ssl = ptr.To(true) }
			},
			simOp: otcsim.OpSwitchSSL, op: reconcile.OpSSL, busy: otcsim.StatusRebooting,
			check: func(t *testing.T, _ *day2World, v otcsim.InstanceView, st *v1alpha1.RdsStatus) {
				assert.True(t, v.SSL)
				assert.Equal(t, ptr.To(true), st.SSL)
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := newDay2World(t, nil, nil)
			assert.Equal(t, ptr.To(false), w.status().SSL, "status reports SSL for every instance")
			w.edit(tc.edit(w))
			w.sync()
			assert.Equal(t, 1, w.sim.Calls(tc.simOp), "issued at once")
			op := w.status().Operation
			require.NotNil(t, op, "the operation shows while it runs")
			assert.Equal(t, tc.op, op.Type)
			assert.Equal(t, int64(2), op.Generation)
			assert.Equal(t, reconcile.ReasonChangeInProgress, w.condition(v1alpha1.ConditionSynced).Reason)
			w.sync()
			assert.Equal(t, tc.busy, w.status().Status, "OTC reports the change as it does")
			assert.Equal(t, metav1.ConditionTrue, w.condition(v1alpha1.ConditionSynced).Status)
			assert.Equal(t, reconcile.ReasonChangeInProgress, w.condition(v1alpha1.ConditionSynced).Reason, "in flight")
			require.NotNil(t, w.status().Operation, "still shown")
			assert.Equal(t, 1, w.sim.Calls(tc.simOp), "not sent again while it runs")
			w.settle(8)
			assert.Equal(t, 1, w.sim.Calls(tc.simOp), "%s: exactly once", tc.reason)
			tc.check(t, w, w.view(), w.statusRef())
			w.requireSettled(tc.reason)
		})
		t.Run(name+"/lost answer", func(t *testing.T) {
			w := newDay2World(t, nil, nil)
			w.sim.AddFault(otcsim.Fault{Op: tc.simOp, Kind: otcsim.FaultCommitThenDrop, Count: 1})
			w.edit(tc.edit(w))
			w.sync()
			assert.Equal(t, 1, w.sim.Calls(tc.simOp))
			assert.Equal(t, reconcile.ReasonCloudUnavailable, w.condition(v1alpha1.ConditionSynced).Reason, "the lost answer is reported")
			w.settle(8)
			if tc.lostResends {
				assert.LessOrEqual(t, w.sim.Calls(tc.simOp), 3, "%s: asked again only while OTC's job runs, and refused", tc.reason)
			} else {
				assert.Equal(t, 1, w.sim.Calls(tc.simOp), "%s: OTC acted on the lost request; it is not sent again", tc.reason)
			}
			tc.check(t, w, w.view(), w.statusRef())
			w.requireSettled(tc.reason)
		})
	}
}

// TestImmutableFieldsRefusedEndToEnd: a spec that changes what OTC cannot change (past the CRD,
// e.g. an object older than its rules) is refused with InvalidSpec, and nothing is changed in OTC.
func TestImmutableFieldsRefusedEndToEnd(t *testing.T) {
	cases := map[string]struct {
		edit func(w *day2World) func(*v1alpha1.RdsSpec)
		want string
	}{
		"vpc": {
			edit: func(w *day2World) func(*v1alpha1.RdsSpec) {
				// A move to another VPC names a subnet there too.
				vpc := w.sim.AddVPC("other", "10.1.0.0/16")
				_, err := w.sim.AddSubnet(vpc, "other-net", "10.1.1.0/24")
				require.NoError(t, err)
				return func(s *v1alpha1.RdsSpec) { s.Vpc, s.Subnet = "other", "other-net" }
			},
			want: `vpc "other" is not the instance's VPC ` + otcsim.SeedVPCID,
		},
		"subnet": {
			edit: func(w *day2World) func(*v1alpha1.RdsSpec) {
				_, err := w.sim.AddSubnet(otcsim.SeedVPCID, "second", "192.168.7.0/24")
				require.NoError(t, err)
				return func(s *v1alpha1.RdsSpec) { s.Subnet = "second" }
			},
			want: `subnet "second" is not the instance's subnet ` + otcsim.SeedSubnetID,
		},
		"timezone": {
			edit: func(*day2World) func(*v1alpha1.RdsSpec) {
				return func(s *v1alpha1.RdsSpec) { s.Timezone = "UTC+08:00" }
			},
			want: `timezone "UTC+08:00" is not the instance's time zone`,
		},
		"diskencryptionid": {
			edit: func(*day2World) func(*v1alpha1.RdsSpec) {
				return func(s *v1alpha1.RdsSpec) { s.Diskencryptionid = "2b5a4c3e-8f0a-4d7e-9c1b-0e6f5a4b3c2d" }
			},
			want: `the instance's disk is not encrypted`,
		},
		"lowercasetablenames": {
			edit: func(*day2World) func(*v1alpha1.RdsSpec) {
				return func(s *v1alpha1.RdsSpec) { s.Lowercasetablenames = ptr.To(0) }
			},
			want: `lowercasetablenames 0 is not the instance's 1`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := newDay2World(t, nil, nil)
			w.edit(tc.edit(w))
			w.settle(3)
			synced := w.condition(v1alpha1.ConditionSynced)
			assert.Equal(t, metav1.ConditionFalse, synced.Status)
			assert.Equal(t, reconcile.ReasonInvalidSpec, synced.Reason)
			assert.Contains(t, synced.Message, tc.want)
			assert.Equal(t, metav1.ConditionTrue, w.condition(v1alpha1.ConditionReady).Status, "the instance is fine")
			assert.Zero(t, w.sim.MutatingCalls(), "no change in OTC")
		})
	}
}

// TestCreateOnlyFieldsEndToEnd: timezone, lowercasetablenames and diskencryptionid reach OTC's
// create, and status reports them as OTC does; the same spec afterwards changes nothing.
func TestCreateOnlyFieldsEndToEnd(t *testing.T) {
	const key = "2b5a4c3e-8f0a-4d7e-9c1b-0e6f5a4b3c2d"
	w := newDay2World(t, func(s *v1alpha1.RdsSpec) {
		s.Timezone, s.Lowercasetablenames, s.Diskencryptionid = "UTC+08:00", ptr.To(0), key
	}, nil)
	v := w.view()
	assert.Equal(t, "UTC+08:00", v.TimeZone)
	assert.Equal(t, key, v.DiskEncryptionID)
	st := w.status()
	assert.Equal(t, "UTC+08:00", st.TimeZone)
	assert.True(t, st.Encrypted)
	assert.Equal(t, key, st.DiskEncryptionID)
	assert.Equal(t, ptr.To(0), st.LowerCaseTableNames)
	w.settle(1)
	w.requireSettled("the create-only fields as created are no difference")
}
