package otc

import (
	"context"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/logs"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// logDateLayout is the format of the log APIs' start_date and end_date.
const logDateLayout = "2006-01-02T15:04:05-0700"

// logPageSize is the log APIs' largest page.
const logPageSize = 100

// maxLogEntries is how many entries of each log OTC keeps; no window holds more.
const maxLogEntries = 2000

// MaxLogFieldBytes cuts each text field of a log entry as it arrives. The tenant writes its own
// instance's logs (a slow statement may carry megabytes): a read keeps at most maxLogEntries
// entries of bounded size, in the memory of the hooks every tenant shares. The hooks' logs port
// cuts further, to logsapi.MaxEntryBytes with a mark.
const MaxLogFieldBytes = 8 << 10

// cutField returns s cut to MaxLogFieldBytes, on a rune boundary.
func cutField(s string) string {
	if len(s) <= MaxLogFieldBytes {
		return s
	}
	s = s[:MaxLogFieldBytes]
	for i := 0; i < utf8.UTFMax && len(s) > 0 && !utf8.ValidString(s); i++ {
		s = s[:len(s)-1]
	}
	return strings.Clone(s) // not a slice of the page's large string
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
			out = append(out, cloud.ErrorLogEntry{Time: cutField(e.Time), Level: cutField(e.Level), Content: cutField(e.Content)})
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
				StartTime: cutField(e.StartTime), Duration: cutField(e.Time), LockTime: cutField(e.LockTime),
				RowsSent: cutField(e.RowsSent), RowsExamined: cutField(e.RowsExamined), Count: cutField(e.Count),
				Type: cutField(e.Type), Database: cutField(e.Database), User: cutField(e.Users),
				ClientIP: cutField(e.ClientIp), Query: cutField(e.QuerySample),
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
