package otc

import (
	"context"
	"strconv"
	"time"

	golangsdk "github.com/opentelekomcloud/gophertelekomcloud"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/identity/v3/credentials"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/logs"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// logDateLayout is the format of the log APIs' start_date and end_date.
const logDateLayout = "2006-01-02T15:04:05-0700"

// logPageSize is the log APIs' largest page.
const logPageSize = 100

// maxLogEntries is how many entries of each log OTC keeps; no window holds more.
const maxLogEntries = 2000

// Bounds of a temporary credential's lifetime (DOC:iam obtaining a temporary AK/SK).
const (
	minCredentialTTL = 15 * time.Minute
	maxCredentialTTL = 24 * time.Hour
)

// CreateTemporaryCredential exchanges the client's token for a temporary AK/SK.
//
// NOTE: the credential carries the permissions of the controller's own user; OTC offers no way to
// narrow it in v0.9.8's API, so its short life is what limits it. It cannot be revoked.
func (c *Client) CreateTemporaryCredential(ctx context.Context, ttl time.Duration) (*cloud.TemporaryCredential, error) {
	const op = "CreateTemporaryCredential"
	if c.auth.aksk() {
		// NOTE: IAM exchanges a token for a temporary AK/SK; an AK/SK login has none.
		return nil, cloud.Errorf(cloud.KindUnauthorized, op, "", "temporary credentials need a password or token login")
	}
	secs := int(min(max(ttl, minCredentialTTL), maxCredentialTTL) / time.Second)
	return call(ctx, c, op, func(s services) (*cloud.TemporaryCredential, error) {
		id, err := openstack.NewIdentityV3(s.rds.ProviderClient, golangsdk.EndpointOpts{})
		if err != nil {
			return nil, err
		}
		id.MoreHeaders = s.rds.MoreHeaders // the call's tag, for its deadline
		// NOTE: the SDK posts to <identity>/v3.0/OS-CREDENTIAL/securitytokens; X-Auth-Token (our token)
		// wins over the empty token id of the body.
		cred, err := credentials.CreateTemporary(id, credentials.CreateTemporaryOpts{Methods: []string{"token"}, Duration: secs}).Extract()
		if err != nil {
			return nil, err
		}
		if cred == nil || cred.AccessKey == "" || cred.SecretKey == "" || cred.SecurityToken == "" {
			return nil, cloud.Errorf(cloud.KindUnknown, op, "", "IAM returned an incomplete credential")
		}
		return &cloud.TemporaryCredential{
			AccessKey:     cred.AccessKey,
			SecretKey:     secret.New(cred.SecretKey),
			SecurityToken: secret.New(cred.SecurityToken),
			ExpiresAt:     parseTime(cred.ExpiresAt),
			AuthURL:       c.auth.opts.GetIdentityEndpoint(),
			ProjectID:     s.rds.ProviderClient.ProjectID,
			Region:        c.region,
		}, nil
	})
}

// ListErrorLogs returns the error log entries of the window, newest first, up to q.Max.
func (c *Client) ListErrorLogs(ctx context.Context, instanceID string, q cloud.LogQuery) ([]cloud.ErrorLogEntry, int, error) {
	const op = "ListErrorLogs"
	if err := checkFilter(op, "instance id", instanceID); err != nil {
		return nil, 0, err
	}
	return pagedLogs(ctx, c, op, q, func(s services, page, limit string) ([]cloud.ErrorLogEntry, int, error) {
		res, err := logs.ListErrorLog(s.rds, logs.DbErrorlogOpts{
			InstanceId: instanceID, StartDate: logDate(q.Start), EndDate: logDate(q.End), Offset: page, Limit: limit,
		})
		if err != nil {
			return nil, 0, err
		}
		out := make([]cloud.ErrorLogEntry, 0, len(res.ErrorLogList))
		for _, e := range res.ErrorLogList {
			out = append(out, cloud.ErrorLogEntry{Time: e.Time, Level: e.Level, Content: e.Content})
		}
		return out, res.TotalRecord, nil
	})
}

// ListSlowLogs returns the slow query log entries of the window, newest first, up to q.Max.
func (c *Client) ListSlowLogs(ctx context.Context, instanceID string, q cloud.LogQuery) ([]cloud.SlowLogEntry, int, error) {
	const op = "ListSlowLogs"
	if err := checkFilter(op, "instance id", instanceID); err != nil {
		return nil, 0, err
	}
	return pagedLogs(ctx, c, op, q, func(s services, page, limit string) ([]cloud.SlowLogEntry, int, error) {
		res, err := logs.ListSlowLog(s.rds, logs.DbSlowLogOpts{
			InstanceId: instanceID, StartDate: logDate(q.Start), EndDate: logDate(q.End), Offset: page, Limit: limit,
		})
		if err != nil {
			return nil, 0, err
		}
		out := make([]cloud.SlowLogEntry, 0, len(res.Slowloglist))
		for _, e := range res.Slowloglist {
			out = append(out, cloud.SlowLogEntry{
				StartTime: e.StartTime, Duration: e.Time, LockTime: e.LockTime, RowsSent: e.RowsSent,
				RowsExamined: e.RowsExamined, Count: e.Count, Type: e.Type, Database: e.Database,
				User: e.Users, ClientIP: e.ClientIp, Query: e.QuerySample,
			})
		}
		return out, res.TotalRecord, nil
	})
}

// pagedLogs follows the pages of a log listing until it has q.Max entries, the total, or a short
// page.
//
// NOTE: the log APIs' offset is a 1-based PAGE number, not an item offset, and the SDK types offset
// and limit as strings.
func pagedLogs[T any](ctx context.Context, c *Client, op string, q cloud.LogQuery,
	list func(s services, page, limit string) ([]T, int, error)) ([]T, int, error) {
	if q.Start.IsZero() || q.End.Before(q.Start) {
		return nil, 0, cloud.Errorf(cloud.KindInvalid, op, "", "invalid log window")
	}
	want := q.Max
	if want <= 0 || want > maxLogEntries {
		want = maxLogEntries
	}
	type result struct {
		entries []T
		total   int
	}
	r, err := call(ctx, c, op, func(s services) (result, error) {
		var r result
		for page := 1; len(r.entries) < want && page <= maxLogEntries/logPageSize; page++ {
			entries, total, err := list(s, strconv.Itoa(page), strconv.Itoa(logPageSize))
			if err != nil {
				return result{}, err
			}
			r.total = total
			r.entries = append(r.entries, entries...)
			if len(entries) < logPageSize || len(r.entries) >= total {
				break
			}
		}
		if len(r.entries) > want {
			r.entries = r.entries[:want]
		}
		return r, nil
	})
	return r.entries, r.total, err
}

func logDate(t time.Time) string { return t.UTC().Format(logDateLayout) }
