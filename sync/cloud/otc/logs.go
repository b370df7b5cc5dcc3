package otc

import (
	"context"
	"strconv"
	"time"

	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/logs"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// logDateLayout is the format of the log APIs' start_date and end_date.
const logDateLayout = "2006-01-02T15:04:05-0700"

// logPageSize is the log APIs' largest page.
const logPageSize = 100

// maxLogEntries is how many entries of each log OTC keeps; no window holds more.
const maxLogEntries = 2000

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
