package reconcile

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// ThrottledError tells the caller that OTC throttled us: answer 429 with Retry-After, and
// Metacontroller retries after exactly that long without touching status.
type ThrottledError struct{ RetryAfter time.Duration }

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("OTC throttled the controller; retry after %s", e.RetryAfter)
}

// withDeadline runs one cloud call under the per-call deadline.
func withDeadline(ctx context.Context, timeout time.Duration, fn func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return fn(ctx)
}

// cloudError sorts a cloud error: throttling goes back to Metacontroller as a 429; everything else
// is absorbed into a condition with a stable message and an earlier resync.
func (c *call) cloudError(err error) error {
	if errors.Is(err, errViewStale) {
		return err // nothing was sent: the call is made again on a fresh read (observe_view.go)
	}
	ce := asCloudError(err)
	// The details stay in the log; status gets only stable sentences
	// (cloud.Error.Refusal). Detail is OTC's text the
	// adapter kept out of Message (it may hold request ids): it is never put in status.
	c.log.Warn("cloud call failed", "op", ce.Op, "kind", ce.Kind.String(), "code", ce.Code, "message", ce.Message, "detail", ce.Detail)
	o, throttled := cloudOutcome(ce)
	if throttled != nil {
		return throttled
	}
	if c.attempted && o.class != retry {
		// OTC's answer to the call's one change. A retry (busy, no answer) says nothing about the
		// change: it ranks as what it is, a wait or a failure.
		o = o.made()
	}
	c.out.tell(o)
	return nil
}

// asCloudError sorts any error of a cloud call into the port's error kinds.
func asCloudError(err error) *cloud.Error {
	var ce *cloud.Error
	if errors.As(err, &ce) {
		return ce
	}
	ce = &cloud.Error{Kind: cloud.KindUnknown}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		ce.Kind = cloud.KindUnavailable
	}
	return ce
}

// cloudOutcome is what a failed cloud call says in Synced: throttling goes back to Metacontroller
// as a 429 (the status stays as it was); a busy instance or an unavailable OTC is tried again
// soon; a refusal or refused credentials wait for a change, since asking again does not help.
func cloudOutcome(ce *cloud.Error) (outcome, *ThrottledError) {
	switch ce.Kind {
	case cloud.KindThrottled:
		after := ce.RetryAfter
		if after <= 0 {
			after = 30 * time.Second
		}
		return outcome{}, &ThrottledError{RetryAfter: after}
	case cloud.KindBusy:
		return syncedOK(ReasonInstanceBusy, "The instance is busy with another operation; the change will be retried.", retry), nil
	case cloud.KindInvalid, cloud.KindConflict, cloud.KindNotFound:
		return notSynced(ReasonCloudRefused, ce.Refusal(), waitsForUser), nil
	case cloud.KindUnauthorized:
		// Asking IAM again soon does not fix a refused credential; the operator has to.
		return notSynced(ReasonCloudUnauthorized, "OTC refused the controller's credentials.", waitsForUser), nil
	}
	return notSynced(ReasonCloudUnavailable, "OTC did not answer as expected; the call will be retried.", retry), nil
}
