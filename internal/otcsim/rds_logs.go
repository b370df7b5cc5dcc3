package otcsim

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// maxLogEntries is how many entries of each log OTC keeps.
const maxLogEntries = 2000

// logDateLayout is the format of start_date and end_date.
const logDateLayout = "2006-01-02T15:04:05-0700"

// Error log levels and slow log statement types the filters accept.
var (
	errorLogLevels = []string{"ALL", "INFO", "LOG", "WARNING", "ERROR", "FATAL", "PANIC", "NOTE"}
	slowLogTypes   = []string{"ALL", "INSERT", "UPDATE", "SELECT", "DELETE", "CREATE"}
)

type errorLogEntry struct {
	at      time.Time
	level   string
	content string
}

// SlowLogEntry is one slow query, for AddSlowLog.
type SlowLogEntry struct {
	Time     time.Time     // when the statement started
	Duration time.Duration // how long it ran
	Type     string        // INSERT, UPDATE, SELECT, DELETE or CREATE
	Database string
	User     string
	Query    string
	ClientIP string
}

// logError appends to an instance's error log, keeping the newest maxLogEntries.
func (in *instance) logError(at time.Time, level, content string) {
	in.errorLogs = append(in.errorLogs, errorLogEntry{at: at, level: level, content: content})
	if n := len(in.errorLogs); n > maxLogEntries {
		in.errorLogs = slices.Delete(in.errorLogs, 0, n-maxLogEntries)
	}
}

func (in *instance) logSlow(e SlowLogEntry) {
	in.slowLogs = append(in.slowLogs, e)
	if n := len(in.slowLogs); n > maxLogEntries {
		in.slowLogs = slices.Delete(in.slowLogs, 0, n-maxLogEntries)
	}
}

// logStartup writes what an engine logs when it comes up, and seeds a few slow queries.
func (in *instance) logStartup(at time.Time) {
	switch in.engine.short {
	case "mysql":
		in.logError(at, "NOTE", fmt.Sprintf("[Server] /usr/sbin/mysqld: ready for connections. Version: '%s'  socket: '/rdsdbdata/tmp/mysql.sock'  port: %d", in.completeVersion, in.port))
		in.logError(at.Add(2*time.Minute), "WARNING", "[Server] Aborted connection 12 to db: 'unconnected' user: 'root' host: '192.168.0.12' (Got an error reading communication packets).")
	case "pg":
		in.logError(at, "LOG", "database system is ready to accept connections")
		in.logError(at.Add(2*time.Minute), "ERROR", `relation "missing_table" does not exist at character 15`)
	default:
		in.logError(at, "INFO", "SQL Server is now ready for client connections.")
	}
	if in.engine.short == "mssql" {
		return
	}
	for i, q := range []struct{ typ, sql string }{
		{"SELECT", "SELECT * FROM orders WHERE customer_id = 42"},
		{"UPDATE", "UPDATE stock SET qty = qty - 1 WHERE sku = 'A-1'"},
		{"INSERT", "INSERT INTO audit SELECT * FROM events"},
	} {
		in.logSlow(SlowLogEntry{
			Time: at.Add(time.Duration(i+3) * time.Minute), Duration: time.Duration(1200+i*700) * time.Millisecond,
			Type: q.typ, Database: "appdb", User: "root", Query: q.sql, ClientIP: "192.168.0.12",
		})
	}
}

// AddErrorLog appends an entry to an instance's error log.
func (s *Sim) AddErrorLog(instanceID string, at time.Time, level, content string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.instances[instanceID]
	if in == nil {
		return fmt.Errorf("instance %s does not exist", instanceID)
	}
	in.logError(at, strings.ToUpper(level), content)
	return nil
}

// AddSlowLog appends an entry to an instance's slow query log.
func (s *Sim) AddSlowLog(instanceID string, e SlowLogEntry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.instances[instanceID]
	if in == nil {
		return fmt.Errorf("instance %s does not exist", instanceID)
	}
	e.Type = strings.ToUpper(e.Type)
	in.logSlow(e)
	return nil
}

// logQuery is the common query of both logs.
type logQuery struct {
	start, end  time.Time
	page, limit int
	filter      string // level or statement type; "" or ALL = any
}

// parseLogQuery reads start_date, end_date (required, at most a month apart), offset (a 1-based
// PAGE number, not an item offset), limit (1–100, default 10) and the level/type filter.
// NOTE: the SDK sends the statement type of the slow log as "level"; the docs call it "type".
func parseLogQuery(r *http.Request, allowed []string, filterKeys ...string) (logQuery, *apiError) {
	q := r.URL.Query()
	var lq logQuery
	var err1, err2 error
	lq.start, err1 = time.Parse(logDateLayout, q.Get("start_date"))
	lq.end, err2 = time.Parse(logDateLayout, q.Get("end_date"))
	if err1 != nil || err2 != nil {
		return lq, errParam("start_date and end_date are required, formatted like 2006-01-02T15:04:05+0000")
	}
	if lq.end.Before(lq.start) || lq.end.Sub(lq.start) > 31*24*time.Hour {
		return lq, errParam("end_date must follow start_date by at most one month")
	}
	var e *apiError
	if lq.page, e = queryInt(r, "offset", 1); e != nil {
		return lq, e
	}
	if lq.limit, e = queryInt(r, "limit", 10); e != nil {
		return lq, e
	}
	if lq.page < 1 || lq.limit < 1 || lq.limit > 100 {
		return lq, errParam("offset is a page number from 1; limit must be between 1 and 100")
	}
	for _, k := range filterKeys {
		if v := strings.ToUpper(q.Get(k)); v != "" {
			if !slices.Contains(allowed, v) {
				return lq, errParam("%s must be one of %s", k, strings.Join(allowed, ", "))
			}
			lq.filter = v
		}
	}
	if lq.filter == "ALL" {
		lq.filter = ""
	}
	return lq, nil
}

func (lq logQuery) window(n int) (int, int) {
	return page(n, (lq.page-1)*lq.limit, lq.limit)
}

// handleListErrorLogs serves GET /instances/{id}/errorlog.
func (s *Sim) handleListErrorLogs(w http.ResponseWriter, r *http.Request) {
	lq, err := parseLogQuery(r, errorLogLevels, "level")
	if err != nil {
		writeError(w, svcRDS, err)
		return
	}
	in, now := s.lockInstance(w, r, nil)
	if in == nil {
		return
	}
	defer s.mu.Unlock()
	var matched []map[string]any
	for _, e := range slices.Backward(in.errorLogs) { // newest first
		if e.at.After(now) || e.at.Before(lq.start) || e.at.After(lq.end) || (lq.filter != "" && e.level != lq.filter) {
			continue
		}
		matched = append(matched, map[string]any{
			"time": e.at.UTC().Format(logTimeLayout), "level": e.level, "content": e.content,
		})
	}
	from, to := lq.window(len(matched))
	writeJSON(w, http.StatusOK, map[string]any{"error_log_list": nonNil(matched[from:to]), "total_record": len(matched)})
}

// handleListSlowLogs serves GET /instances/{id}/slowlog. All fields of an entry are strings;
// PostgreSQL omits lock_time, rows_sent and rows_examined. SQL Server has no slow log.
func (s *Sim) handleListSlowLogs(w http.ResponseWriter, r *http.Request) {
	lq, err := parseLogQuery(r, slowLogTypes, "level", "type")
	if err != nil {
		writeError(w, svcRDS, err)
		return
	}
	in, now := s.lockInstance(w, r, nil)
	if in == nil {
		return
	}
	defer s.mu.Unlock()
	if in.engine.short == "mssql" {
		writeError(w, svcRDS, errorf(http.StatusBadRequest, "DBS.200086", "Slow query logs are not supported for Microsoft SQL Server."))
		return
	}
	var matched []map[string]any
	for _, e := range slices.Backward(in.slowLogs) {
		if e.Time.After(now) || e.Time.Before(lq.start) || e.Time.After(lq.end) || (lq.filter != "" && e.Type != lq.filter) {
			continue
		}
		entry := map[string]any{
			"count": "1", "time": strconv.FormatFloat(e.Duration.Seconds(), 'f', 5, 64) + " s",
			"database": e.Database, "users": e.User, "query_sample": e.Query, "type": e.Type,
			"start_time": e.Time.UTC().Format(logTimeLayout), "client_ip": maskIP(e.ClientIP),
		}
		if in.engine.short == "mysql" {
			entry["lock_time"], entry["rows_sent"], entry["rows_examined"] = "0.00003 s", "0", "0"
		}
		matched = append(matched, entry)
	}
	from, to := lq.window(len(matched))
	writeJSON(w, http.StatusOK, map[string]any{"slow_log_list": nonNil(matched[from:to]), "total_record": len(matched)})
}

// maskIP hides the middle of an address as OTC does: 192.168.0.12 → 192.*.*.12.
func maskIP(ip string) string {
	parts := strings.Split(ip, ".")
	if len(parts) != 4 {
		return ip
	}
	return parts[0] + ".*.*." + parts[3]
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
