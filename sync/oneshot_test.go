package reconcile

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// TestDecideRestart: the decision of one restartrequest, as pure data. Each case is what one call
// observes: the spec's value, what the observed status records, and the instance as OTC reports it
// (whichever replica answers; nothing is remembered in the process).
// uid is the object the marks belong to.
const uid = "uid-1"

func TestDecideRestart(t *testing.T) {
	const v, old = "2026-11-23", "2026-11-01"
	mark := func(value string) map[string]string {
		return map[string]string{TagRestartRequest: RequestMark(uid, value)}
	}
	sealed := func(value string) map[string]string {
		return map[string]string{TagRestartRequest: RestartSeal(uid, value)}
	}
	restartOf := func(value string) *v1alpha1.Operation {
		return &v1alpha1.Operation{Type: OpRestart, JobID: "job-1", Target: value}
	}
	cases := map[string]struct {
		reason        string
		want, handled string
		status        string
		tags          map[string]string
		observedOp    *v1alpha1.Operation
		sentHere      bool // this process sent it (ledger.go)
		step          oneShotStep
	}{
		"no request": {
			reason: "restartrequest unset: nothing, whatever the tags say",
			status: cloud.StatusActive, tags: mark(""), step: oneShotNothing,
		},
		"handled": {
			reason: "status records the value, the tag still says owed: seal it, never restart again",
			want:   v, handled: v, status: cloud.StatusActive, tags: mark(v), step: oneShotSeal,
		},
		"handled and sealed": {
			reason: "status records the value, the tag says done: nothing",
			want:   v, handled: v, status: cloud.StatusActive, tags: sealed(v), step: oneShotNothing,
		},
		"stale call after the reboot": {
			reason: "a status from before the restart, the reboot over: the sealed tag says done, record",
			want:   v, handled: old, status: cloud.StatusActive, tags: sealed(v), step: oneShotRecord,
		},
		"sealed for an older value": {
			reason: "the seal of the previous value is no evidence for this one: mark",
			want:   v, handled: old, status: cloud.StatusActive, tags: sealed(old), step: oneShotMark,
		},
		"handled, mark gone": {
			reason: "status records the value, someone removed the tag in OTC: still never again",
			want:   v, handled: v, status: cloud.StatusActive, step: oneShotNothing,
		},
		"new value": {
			reason: "the tag names the previous value: write the new mark first, nothing else",
			want:   v, handled: old, status: cloud.StatusActive, tags: mark(old), step: oneShotMark,
		},
		"first value, no tag": {
			reason: "an instance that never had a request: the mark first",
			want:   v, status: cloud.StatusActive, step: oneShotMark,
		},
		"marked": {
			reason: "the call after the mark: the tag names the value, the instance is ACTIVE, status silent: restart",
			want:   v, handled: old, status: cloud.StatusActive, tags: mark(v), step: oneShotIssue,
		},
		"stale call from before the tag": {
			reason: "its status never saw the mark, but the tag is in OTC and nothing rebooted: the restart is still owed, and made once",
			want:   v, status: cloud.StatusActive, tags: mark(v), step: oneShotIssue,
		},
		"duplicate after the restart": {
			reason: "another replica answered the same request with the restart: OTC shows REBOOTING, so record, no second restart",
			want:   v, handled: old, status: cloud.StatusRebooting, tags: mark(v), step: oneShotRecord,
		},
		"lost answer after the restart": {
			reason: "the restart's answer never reached the cluster: the retry finds REBOOTING and the mark, and records",
			want:   v, status: cloud.StatusRebooting, tags: mark(v), step: oneShotRecord,
		},
		"status follows the restart": {
			reason: "the observed status follows a restart job for the value (an answer from before status recorded it as handled): record",
			want:   v, handled: old, status: cloud.StatusActive, tags: mark(v), observedOp: restartOf(v), step: oneShotRecord,
		},
		"status follows an older restart": {
			reason: "a job of the previous value is no evidence for this one",
			want:   v, handled: old, status: cloud.StatusActive, tags: mark(v), observedOp: restartOf(old), step: oneShotIssue,
		},
		"lost answer, retried after the reboot, same process": {
			reason: "ACTIVE again, status silent: the process that sent the restart knows it (its ledger), with the mark: record",
			want:   v, handled: old, status: cloud.StatusActive, tags: mark(v), sentHere: true, step: oneShotRecord,
		},
		"ledger alone decides nothing": {
			reason: "this process sent a restart for the value, but OTC carries no mark for it (removed by someone): mark",
			want:   v, handled: old, status: cloud.StatusActive, sentHere: true, step: oneShotMark,
		},
		"someone else's reboot": {
			reason: "REBOOTING without the mark was not asked by this value: mark (the restart waits for ACTIVE)",
			want:   v, handled: old, status: cloud.StatusRebooting, tags: mark(old), step: oneShotMark,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tags := tc.tags
			if tags == nil {
				tags = map[string]string{}
			}
			got := decideOneShot(restartFacts(uid, tc.want, tc.handled, tc.status, tags, tc.observedOp, tc.sentHere))
			assert.Equal(t, tc.step, got, tc.reason)
		})
	}
}

// TestDecideMinorUpgrade: the decision of one minor upgrade. The mark holds the version the
// instance ran when it was written, so the upgrade leaves a trace even when OTC's newest minor
// version is below the asked one.
func TestDecideMinorUpgrade(t *testing.T) {
	const asked = "8.0.32"
	mark := map[string]string{TagUpgradeRequest: upgradeMark(uid, asked, "8.0.28")}
	cases := map[string]struct {
		reason           string
		handled, running string
		tags             map[string]string
		observedOp       *v1alpha1.Operation
		step             oneShotStep
	}{
		"new request":   {reason: "no mark: write it first", running: "8.0.28", step: oneShotMark},
		"other request": {reason: "the mark names another asked version: write this one", running: "8.0.28", tags: map[string]string{TagUpgradeRequest: upgradeMark(uid, "8.0.30", "8.0.28")}, step: oneShotMark},
		"marked":        {reason: "marked while 8.0.28 runs, 8.0.28 runs: upgrade", running: "8.0.28", tags: mark, step: oneShotIssue},
		"upgraded, answer lost": {
			reason:  "marked at 8.0.28, 8.0.30 runs (OTC's newest): the upgrade was made, record, never asked again",
			running: "8.0.30", tags: mark, step: oneShotRecord,
		},
		"status follows the upgrade": {
			reason: "the observed status follows its job: record", running: "8.0.28", tags: mark,
			observedOp: &v1alpha1.Operation{Type: OpMinorUpgrade, JobID: "job-u", Target: asked}, step: oneShotRecord,
		},
		"handled": {reason: "status records it", handled: asked, running: "8.0.30", tags: mark, step: oneShotNothing},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tags := tc.tags
			if tags == nil {
				tags = map[string]string{}
			}
			assert.Equal(t, tc.step, decideOneShot(upgradeFacts(uid, asked, tc.handled, tc.running, tags, tc.observedOp)), tc.reason)
		})
	}
}

// TestDecideOneShot is the whole truth table of the decision.
func TestDecideOneShot(t *testing.T) {
	bools := []bool{false, true}
	for _, asked := range bools {
		for _, handled := range bools {
			for _, marked := range bools {
				for _, sealed := range bools {
					for _, evident := range bools {
						for _, sealable := range bools {
							f := oneShotFacts{Asked: asked, Handled: handled, Marked: marked, Sealed: sealed && marked, Evident: evident, Sealable: sealable}
							want := oneShotIssue
							switch {
							case !asked:
								want = oneShotNothing
							case handled && sealable && marked && !f.Sealed:
								want = oneShotSeal
							case handled:
								want = oneShotNothing
							case !marked:
								want = oneShotMark
							case f.Sealed || evident:
								want = oneShotRecord
							}
							assert.Equal(t, want, decideOneShot(f), "%+v", f)
						}
					}
				}
			}
		}
	}
}

func TestRequestMarks(t *testing.T) {
	assert.Regexp(t, `^[0-9a-f]{8}$`, RequestMark(uid, "any text: with spaces / and more"))
	assert.NotEqual(t, RequestMark(uid, "a"), RequestMark(uid, "b"))
	assert.NotEqual(t, RequestMark(uid, "a"), RequestMark("uid-2", "a"), "another object's mark is not this one's")
	assert.True(t, tagValuePattern.MatchString(upgradeMark(uid, "16.6", "16.4")))
	assert.True(t, upgradeMarked(upgradeMark(uid, "16.6", "16.4"), uid, "16.6"))
	assert.False(t, upgradeMarked(upgradeMark(uid, "16.6", "16.4"), uid, "16.5"))
	for _, k := range []string{TagRestartRequest, TagUpgradeRequest, "RDS-Restart-Request"} {
		assert.True(t, reservedTag(k), k)
	}
}
