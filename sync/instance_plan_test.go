package reconcile

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// The decisions of instance.go as tables: plain inputs, the decision out, no cloud fake.
func TestDecideInstance(t *testing.T) {
	inst, other := &cloud.Instance{ID: "a"}, &cloud.Instance{ID: "b"}
	tests := []struct {
		reason               string
		statusID, instanceid string
		obs                  observation
		manages              bool
		want                 instanceVerdict
	}{
		{"a new object creates", "", "", observation{}, false, instanceCreate},
		{"an instance OTC no longer lists is not created again", "a", "", observation{}, false, instanceVanished},
		{"another object's instance under the name blocks the create", "", "", observation{taken: other}, false, instanceNameTaken},
		{"instanceid adopts", "", "0123", observation{}, false, instanceAdopt},
		{"a name taken wins over instanceid", "", "0123", observation{taken: other}, false, instanceNameTaken},
		{"the object's instance is managed", "a", "", observation{inst: inst}, true, instanceManage},
		{"an instance status.id names that is not the object's is left alone", "a", "", observation{inst: inst}, false, instanceNotOwned},
	}
	for _, tc := range tests {
		t.Run(tc.reason, func(t *testing.T) {
			assert.Equal(t, tc.want, decideInstance(tc.statusID, tc.instanceid, tc.obs, tc.manages))
		})
	}
}

func TestClaimChange(t *testing.T) {
	me := owner{Cluster: "local", Namespace: "rds1", Name: "my-rds-single", UID: "uid-1"}
	inst := &cloud.Instance{ID: "a"}
	assert.Nil(t, claimChange(inst, claim{Kind: Ours}, me), "tagged as ours: nothing to write")
	assert.Equal(t, &change{target: "removal of the earlier owner's release tag",
		act: action{kind: actDeleteTags, instance: "a", keys: []string{TagReleasedBy}}},
		claimChange(inst, claim{Kind: Ours, StaleRelease: true}, me))
	for _, kind := range []Ownership{OursUntagged, Unowned} {
		assert.Equal(t, &change{target: "write of the ownership tags", act: action{kind: actSetTags, instance: "a", tags: me.tags()}},
			claimChange(inst, claim{Kind: kind}, me), kind.String())
	}
}

func TestDuplicatesOutcome(t *testing.T) {
	assert.Nil(t, duplicatesOutcome("a", nil))
	o := duplicatesOutcome("a", []string{"b", "c"})
	assert.Equal(t, v1alpha1.ConditionInstanceDuplicates, o.cond)
	assert.Equal(t, ReasonDuplicateInstances, o.reason)
	assert.Contains(t, o.message, "OTC lists further instances of this object: b, c. The controller manages a, never deletes the others")
}
