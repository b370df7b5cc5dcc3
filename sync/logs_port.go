package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/logsapi"
)

// Errors of ReadLogs; the logs port maps each to an HTTP status. Their texts are sentences for the
// Job's log and hold nothing of the token or of a credential.
var (
	// ErrLogsUnavailable: this controller cannot open capabilities (it has no stable key).
	ErrLogsUnavailable = errors.New("the controller cannot serve log Jobs: it has no stable key (--password-key)")
	// ErrCapabilityInvalid: the token is missing, was not sealed by this controller or was changed.
	ErrCapabilityInvalid = errCapabilityInvalid
)

// CapabilityExpiredError: the token was valid until At.
type CapabilityExpiredError struct{ At time.Time }

func (e *CapabilityExpiredError) Error() string {
	return fmt.Sprintf("the capability expired at %s; set a new logs.request to read the logs again", e.At.Format(time.RFC3339))
}

// LogsRefusedError: the read asks for more than the capability allows.
type LogsRefusedError struct{ Reason string }

func (e *LogsRefusedError) Error() string { return e.Reason }

// LogsCloudError: OTC did not serve the read.
type LogsCloudError struct {
	Kind       cloud.Kind
	RetryAfter time.Duration
	sentence   string
}

func (e *LogsCloudError) Error() string {
	if e.sentence == "" {
		return "OTC did not serve the read"
	}
	return e.sentence
}

// ReadLogs serves one read of a log Job: it opens the capability, checks that it has not expired
// and that the read stays within it, and reads one log of the capability's instance with the
// credentials the issuing call used, with the same window, paging and bounds as rds-logs always
// had. It makes no change to the cloud and reads nothing else.
func (r *Reconciler) ReadLogs(ctx context.Context, token string, req logsapi.Request) (*logsapi.Response, error) {
	now := r.cfg.Now().UTC()
	capa, err := r.openCapability(token, now)
	if err != nil {
		return nil, err
	}
	q, err := capa.query(req, now, r.cfg.LogsCapabilityTTL)
	if err != nil {
		return nil, err
	}
	done, err := r.reads.begin(&capa, now)
	if err != nil {
		return nil, err
	}
	defer done()
	log := LoggerFrom(ctx).With("rds", capa.Namespace+"/"+capa.Name, "uid", capa.UID, "instance", capa.Instance, "type", req.Type)
	if capa.Creds != nil {
		log = log.With("credentials", *capa.Creds)
	}
	cl, err := r.cloudFor(ctx, capa.Creds)
	if err != nil {
		log.Warn("log read: no cloud client", "error", err.Error())
		return nil, logsCloudError(err)
	}
	ctx, cancel := context.WithTimeout(ctx, r.cfg.LogsReadTimeout)
	defer cancel()
	// NOTE: the token names the instance the issuing call observed for the object; a status.id
	// forged by the object's namespace could have made that another object's instance. The
	// ownership tags decide, read fresh: only the object's own instance's logs are served.
	inst, err := cl.GetInstance(ctx, capa.Instance)
	if err != nil {
		log.Warn("log read: instance not read", "error", err.Error())
		return nil, logsCloudError(err)
	}
	me := owner{Cluster: r.cfg.ClusterID, Namespace: capa.Namespace, Name: capa.Name, UID: capa.UID}
	if k := classify(inst, me, InstanceName(me.Cluster, me.Namespace, me.Name), LegacyInstanceName(me.Namespace, me.Name)).Kind; k != Ours && k != OursUntagged {
		log.Warn("log read refused: the instance is not the object's", "ownership", k.String())
		return nil, &LogsRefusedError{Reason: "the instance is not this object's"}
	}
	resp := &logsapi.Response{Instance: capa.Instance, Type: req.Type, Start: q.Start, End: q.End}
	switch req.Type {
	case logsapi.TypeError:
		resp.Errors, resp.Total, err = cl.ListErrorLogs(ctx, capa.Instance, q)
		logsapi.CleanErrorLog(resp.Errors)
	case logsapi.TypeSlow:
		resp.Slow, resp.Total, err = cl.ListSlowLogs(ctx, capa.Instance, q)
		logsapi.CleanSlowLog(resp.Slow)
	}
	if err != nil {
		var ce *cloud.Error
		if errors.As(err, &ce) {
			log.Warn("log read failed", "op", ce.Op, "kind", ce.Kind.String(), "code", ce.Code, "message", ce.Message, "detail", ce.Detail)
		} else {
			log.Warn("log read failed", "error", err.Error())
		}
		return nil, logsCloudError(err)
	}
	log.Info("log read", "entries", len(resp.Errors)+len(resp.Slow), "total", resp.Total)
	return resp, nil
}

// query is the window a read asks for, once checked against the capability, which was issued
// ttl before it expires.
func (c *logsCapability) query(req logsapi.Request, now time.Time, ttl time.Duration) (cloud.LogQuery, error) {
	if req.Instance != c.Instance {
		return cloud.LogQuery{}, &LogsRefusedError{Reason: "the capability is for another instance"}
	}
	if !slices.Contains(c.Types, req.Type) {
		return cloud.LogQuery{}, &LogsRefusedError{Reason: fmt.Sprintf("the capability does not cover the %q log", req.Type)}
	}
	lines := req.Lines
	if lines == 0 {
		lines = c.Lines
	}
	if lines < 1 || lines > c.Lines {
		return cloud.LogQuery{}, &LogsRefusedError{Reason: fmt.Sprintf("lines must be between 1 and %d", c.Lines)}
	}
	allowed, err := time.ParseDuration(c.Since)
	if err != nil {
		return cloud.LogQuery{}, errCapabilityInvalid
	}
	since := allowed
	if req.Since != "" {
		if since, err = time.ParseDuration(req.Since); err != nil || since <= 0 || since > allowed {
			return cloud.LogQuery{}, &LogsRefusedError{Reason: fmt.Sprintf("since must be a duration up to %s", c.Since)}
		}
	}
	// NOTE: the Job's clock may run ahead of the hooks'; a window ending in the future ends now.
	end := req.Until
	if end.IsZero() || end.After(now) {
		end = now
	}
	// The window may end earlier than now (the Job's clock), but not before the capability was
	// issued: a capability for the last hour reads no hour of last month.
	if issued := c.expires().Add(-ttl - capabilitySkew); end.Before(issued) {
		return cloud.LogQuery{}, &LogsRefusedError{Reason: "until must not lie before the log request was accepted"}
	}
	return cloud.LogQuery{Start: end.Add(-since).UTC().Truncate(time.Second), End: end.UTC().Truncate(time.Second), Max: lines}, nil
}

// logsCloudError is a cloud error as one sentence for a person reading the Job's log: what the
// kind means, completed with the adapter's words for the error (cloud.Error.Explain). OTC's own
// message stays in the hooks' log.
func logsCloudError(err error) *LogsCloudError {
	var ce *cloud.Error
	if !errors.As(err, &ce) {
		ce = &cloud.Error{Kind: cloud.KindUnknown}
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			ce.Kind = cloud.KindUnavailable
		}
	}
	var lead string
	switch ce.Kind {
	case cloud.KindUnauthorized:
		lead = "OTC refused the credentials the controller reads the logs with"
	case cloud.KindNotFound:
		lead = "OTC does not know the instance"
	case cloud.KindThrottled:
		lead = "OTC is throttling requests; try again later"
	case cloud.KindUnavailable:
		lead = "OTC did not answer"
	default:
		lead = "OTC refused the request"
	}
	return &LogsCloudError{Kind: ce.Kind, RetryAfter: ce.RetryAfter, sentence: ce.Explain(lead)}
}
