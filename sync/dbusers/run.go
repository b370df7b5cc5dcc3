package dbusers

import (
	"context"
	"errors"
	"strings"
)

// Step is one change of an Apply as every engine's plan hands it to RunSteps.
type Step struct {
	// Change is the change for humans, as a command ("grant SELECT on shop.* to 'u'@'%'"); never
	// a password. Empty for steps that only update the remembered state.
	Change string
	// Group groups the steps of one account (or database): if a step that Opens it (creates the
	// account) fails, the group's later steps are skipped (they would all fail the same way).
	Group string
	Opens bool
	// Exec makes the change; nil when the step only updates the remembered state.
	Exec func(context.Context) error
	// Effect updates the remembered state once the step succeeded.
	Effect func(*ManagedState)
}

// RunSteps runs an Apply's steps in order into res: each change made is reported in res.Changes
// (Done) and applied to res.Managed. A step the server refuses (ErrRefused) does not stop the
// others, except the later steps of its group when it opens the group; any other failure (the
// connection is gone, the time is up) stops the run. It returns the failures: nil, the only one, or all of them as Errors.
func RunSteps(ctx context.Context, steps []Step, res *Result) error {
	var errs []error
	failed := map[string]bool{}
	for _, st := range steps {
		if st.Group != "" && failed[st.Group] {
			continue
		}
		if st.Exec != nil {
			if err := st.Exec(ctx); err != nil {
				errs = append(errs, err)
				if !errors.Is(err, ErrRefused) {
					break // the connection is gone or the time is up
				}
				if st.Opens {
					failed[st.Group] = true
				}
				continue
			}
		}
		if st.Change != "" {
			res.Changes = append(res.Changes, Done(st.Change))
		}
		if st.Effect != nil {
			st.Effect(&res.Managed)
		}
	}
	res.Managed = NormalizeManaged(res.Managed)
	return join(errs)
}

// pastTense turns a step's change into the report of a done change: "grant ..." -> "granted ...".
var pastTense = map[string]string{
	"create": "created", "adopt": "adopted", "change": "changed", "allow": "allowed",
	"grant": "granted", "revoke": "revoked", "drop": "dropped",
}

// Done is the report of a change made: "grant ..." -> "granted ...".
func Done(change string) string {
	verb, rest, _ := strings.Cut(change, " ")
	if past, ok := pastTense[verb]; ok {
		verb = past
	}
	return verb + " " + rest
}
