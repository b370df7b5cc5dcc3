package reconcile

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// OTC's tag rules: keys of 1 to 36 and values of up to 43 letters, digits, '-', '_' or '.'; at most
// 20 tags on an instance, of which the controller's own take up to 7: the ownership tags, up to 5
// (ownership.go), and the marks of one-shot requests, 2 (oneshot.go). The key's and the value's
// patterns are tagKeyPattern and tagValuePattern (patterns.go).
const maxTags = 20 - 7

// trackTags is status.managedTags: the keys in spec.tags, and the keys this object managed before
// (managed) that OTC still has (they are removed next). Tags others set are never listed, so never
// touched.
func trackTags(spec *v1alpha1.RdsSpec, managed []string, inst *cloud.Instance) []string {
	keys := map[string]bool{}
	for _, t := range spec.Tags {
		keys[t.Key] = true
	}
	for _, k := range managed {
		if _, ok := inst.Tags[k]; ok && !reservedTag(k) { // never the ownership tags
			keys[k] = true
		}
	}
	if len(keys) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(keys))
}

// tagChanges sets the tags spec.tags names, then removes the managed ones it no longer names.
func tagChanges(in day2Input, p *day2Plan) ([]change, *outcome) {
	if msg := tagProblem(in.spec.Tags); msg != "" {
		return nil, wontAct(ReasonInvalidSpec, msg)
	}
	inst := in.inst
	// NOTE: a key is set only once the observed status lists it in managedTags (write-ahead, like
	// a generated password waits for its Secret). Were the answer that sets a tag lost, status
	// would not know the key was ours, and removing it from spec.tags later would leave it in OTC.
	recorded := map[string]bool{}
	for _, k := range in.prior.ManagedTags {
		recorded[k] = true
	}
	set := map[string]string{}
	want := map[string]bool{}
	unrecorded := false
	for _, t := range in.spec.Tags {
		want[t.Key] = true
		if v, ok := inst.Tags[t.Key]; !ok || v != t.Value {
			set[t.Key] = t.Value
			unrecorded = unrecorded || !recorded[t.Key]
		}
	}
	if unrecorded {
		// This answer records the keys (trackTags); the next call sets them all in one call.
		set = nil
		p.pending = true
	}
	var del []string
	for _, k := range p.managedTags {
		if _, ok := inst.Tags[k]; ok && !want[k] && !reservedTag(k) {
			del = append(del, k)
		}
	}
	var changes []change
	if len(set) > 0 {
		changes = append(changes, change{
			target: "tags " + strings.Join(slices.Sorted(maps.Keys(set)), ","),
			act:    action{kind: actSetTags, instance: inst.ID, tags: set},
		})
	}
	if len(del) > 0 {
		changes = append(changes, change{
			target: "removal of tags " + strings.Join(del, ","),
			act:    action{kind: actDeleteTags, instance: inst.ID, keys: del},
		})
	}
	return changes, nil
}

// tagProblem says what is wrong with spec.tags, "" if nothing.
func tagProblem(tags []v1alpha1.Tag) string {
	if len(tags) > maxTags {
		return fmt.Sprintf("tags has %d entries; OTC allows 20 on an instance, %d of them besides the controller's own.", len(tags), maxTags)
	}
	seen := map[string]bool{}
	for _, t := range tags {
		switch {
		case !tagKeyPattern.MatchString(t.Key):
			return fmt.Sprintf("tags key %q is not 1 to 36 letters, digits, '-', '_' or '.'.", t.Key)
		case !tagValuePattern.MatchString(t.Value):
			return fmt.Sprintf("tags value %q of key %q is not up to 43 letters, digits, '-', '_' or '.'.", t.Value, t.Key)
		case reservedTag(t.Key):
			return fmt.Sprintf("tags key %q is reserved for the controller's own tags (rds-owner-*, rds-released*, rds-restart-request, rds-upgrade-request, rds-replica).", t.Key)
		case seen[t.Key]:
			return fmt.Sprintf("tags key %q appears twice.", t.Key)
		}
		seen[t.Key] = true
	}
	return ""
}
