package reconcile

import (
	"time"

	"github.com/mcsps/rds-lambda-controller/sync/logsapi"
)

// CheckCapability says whether a token is a capability this controller issued and that still
// reads, without reading anything: the logs port asks it before it reads a request's body, so a
// client without a capability costs no more than its headers.
func (r *Reconciler) CheckCapability(token string) error {
	_, err := r.openCapability(token, r.cfg.Now().UTC())
	return err
}

// openCapability opens a token and checks what ReadLogs relies on: sealed by this controller,
// with the credentials of the object's own namespace, not expired, and within what any request
// may ask for.
func (r *Reconciler) openCapability(token string, now time.Time) (logsCapability, error) {
	if r.caps == nil {
		return logsCapability{}, ErrLogsUnavailable
	}
	capa, err := r.caps.open(token)
	if err != nil {
		return logsCapability{}, err
	}
	if capa.Creds != nil && capa.Creds.Namespace != capa.Namespace {
		return logsCapability{}, errCapabilityInvalid // never another namespace's credentials
	}
	if !now.Before(capa.expires()) {
		return logsCapability{}, &CapabilityExpiredError{At: capa.expires()}
	}
	// NOTE: a capability is rendered from status.logs, which whoever may write the object's status
	// can forge: one wider than any request may ask for, or with more time left than a capability
	// is issued for (capabilitySkew allows for replicas' clocks), reads nothing.
	if since, err := time.ParseDuration(capa.Since); err != nil || since > logsapi.MaxSince || capa.Lines > logsapi.MaxLines ||
		capa.expires().After(now.Add(r.cfg.LogsCapabilityTTL+capabilitySkew)) {
		return logsCapability{}, errCapabilityInvalid
	}
	return capa, nil
}
