package otcsim

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Alarm states.
const (
	AlarmOK               = "ok"
	AlarmAlarm            = "alarm"
	AlarmInsufficientData = "insufficient_data"
)

var (
	alarmNameRe         = regexp.MustCompile(`^[\p{L}0-9_-]{1,128}$`)
	comparisonOperators = []string{">", ">=", "<", "<=", "="}
)

type dimension struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type alarmAction struct {
	Type             string   `json:"type"`
	NotificationList []string `json:"notificationList"`
}

type alarmCondition struct {
	ComparisonOperator string  `json:"comparison_operator"`
	Count              int     `json:"count"`
	Filter             string  `json:"filter"`
	Period             int     `json:"period"`
	Unit               string  `json:"unit,omitempty"`
	Value              float64 `json:"value"`
	SuppressDuration   int     `json:"suppress_duration"`
}

// alarm is a Cloud Eye alarm rule.
type alarm struct {
	seq                                int
	id, name, description, alarmType   string
	namespace, metricName, resourceGrp string
	dimensions                         []dimension
	condition                          alarmCondition
	enabled, actionEnabled             bool
	level                              int
	alarmActions, okActions            []alarmAction
	updated                            time.Time
	state                              string // set through the control API; "" = evaluate
}

// AlarmView is a read-only snapshot of an alarm.
type AlarmView struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	MetricName string `json:"metric_name"`
	Enabled    bool   `json:"enabled"`
	State      string `json:"state"`
}

// alarmState is the forced state, or the condition evaluated on the newest value of the metric of
// the instance the first dimension names.
func (s *Sim) alarmState(a *alarm, now time.Time) string {
	if a.state != "" {
		return a.state
	}
	if a.namespace != namespaceRDS || len(a.dimensions) == 0 {
		return AlarmInsufficientData
	}
	in := s.instanceForDimension(a.dimensions[0].Name, a.dimensions[0].Value)
	if in == nil {
		return AlarmInsufficientData
	}
	m := findMetric(a.metricName, in.engine)
	if m == nil {
		return AlarmInsufficientData
	}
	v, ok := s.latestValue(in, m, now)
	if !ok {
		return AlarmInsufficientData
	}
	th := a.condition.Value
	fire := map[string]bool{">": v > th, ">=": v >= th, "<": v < th, "<=": v <= th, "=": v == th}[a.condition.ComparisonOperator]
	if fire {
		return AlarmAlarm
	}
	return AlarmOK
}

func (s *Sim) alarmJSON(a *alarm, now time.Time) map[string]any {
	metric := map[string]any{"namespace": a.namespace, "metric_name": a.metricName, "dimensions": a.dimensions}
	if a.resourceGrp != "" {
		metric["resource_group_id"] = a.resourceGrp
	}
	return map[string]any{
		"alarm_id": a.id, "alarm_name": a.name, "alarm_description": a.description, "alarm_type": a.alarmType,
		"metric": metric, "condition": a.condition, "alarm_enabled": a.enabled, "alarm_level": a.level,
		"alarm_action_enabled": a.actionEnabled, "alarm_actions": a.alarmActions, "ok_actions": a.okActions,
		"update_time": a.updated.UnixMilli(), "alarm_state": s.alarmState(a, now),
	}
}

// handleCreateAlarm serves POST /ces/V1.0/{project}/alarms (201, {"alarm_id"}).
func (s *Sim) handleCreateAlarm(w http.ResponseWriter, r *http.Request) {
	var req struct {
		AlarmName        string `json:"alarm_name"`
		AlarmDescription string `json:"alarm_description"`
		Metric           *struct {
			Namespace       string      `json:"namespace"`
			MetricName      string      `json:"metric_name"`
			Dimensions      []dimension `json:"dimensions"`
			ResourceGroupID string      `json:"resource_group_id"`
		} `json:"metric"`
		Condition          *alarmCondition `json:"condition"`
		AlarmEnabled       *bool           `json:"alarm_enabled"`
		AlarmActionEnabled *bool           `json:"alarm_action_enabled"`
		AlarmLevel         int             `json:"alarm_level"`
		AlarmType          string          `json:"alarm_type"`
		AlarmActions       []alarmAction   `json:"alarm_actions"`
		OkActions          []alarmAction   `json:"ok_actions"`
	}
	if e := decodeBody(r, &req); e != nil {
		writeError(w, svcCES, errCESParam("%s", e.Message))
		return
	}
	c := req.Condition
	switch {
	case !alarmNameRe.MatchString(req.AlarmName):
		writeError(w, svcCES, errCESParam("alarm_name must be 1 to 128 letters, digits, _ or -"))
		return
	case req.Metric == nil || req.Metric.Namespace == "" || req.Metric.MetricName == "" || len(req.Metric.Dimensions) > 3:
		writeError(w, svcCES, errCESParam("metric needs namespace, metric_name and at most 3 dimensions"))
		return
	case c == nil || !slices.Contains(comparisonOperators, c.ComparisonOperator) || !slices.Contains(validFilters, c.Filter) ||
		!slices.Contains(validPeriods, c.Period) || c.Count < 1 || c.Count > 5:
		writeError(w, svcCES, errCESParam("condition needs comparison_operator, filter, period and count 1 to 5"))
		return
	case req.AlarmLevel < 0 || req.AlarmLevel > 4:
		writeError(w, svcCES, errCESParam("alarm_level must be between 1 and 4"))
		return
	}
	now := s.lockAt()
	defer s.mu.Unlock()
	a := &alarm{
		seq: s.nextSeq(), id: fmt.Sprintf("al%d%s", now.UnixMilli(), s.randAlnum(9)), name: req.AlarmName,
		description: req.AlarmDescription, alarmType: req.AlarmType, namespace: req.Metric.Namespace,
		metricName: req.Metric.MetricName, resourceGrp: req.Metric.ResourceGroupID,
		dimensions: nonNil(req.Metric.Dimensions), condition: *c, enabled: boolOr(req.AlarmEnabled, true),
		actionEnabled: boolOr(req.AlarmActionEnabled, true), level: req.AlarmLevel,
		alarmActions: nonNil(req.AlarmActions), okActions: nonNil(req.OkActions), updated: now,
	}
	if a.level == 0 {
		a.level = 2
	}
	s.alarms[a.id] = a
	writeJSON(w, http.StatusCreated, map[string]any{"alarm_id": a.id})
}

func boolOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

// randAlnum returns n random letters and digits from the seeded id source.
func (s *Sim) randAlnum(n int) string {
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var b strings.Builder
	for range n {
		b.WriteByte(chars[s.idRng.IntN(len(chars))])
	}
	return b.String()
}

func (s *Sim) sortedAlarms() []*alarm {
	all := make([]*alarm, 0, len(s.alarms))
	for _, a := range s.alarms {
		all = append(all, a)
	}
	slices.SortFunc(all, func(a, b *alarm) int { return a.seq - b.seq })
	return all
}

// handleListAlarms serves GET /ces/V1.0/{project}/alarms?start=&limit=&order=.
func (s *Sim) handleListAlarms(w http.ResponseWriter, r *http.Request) {
	limit, err := strconv.Atoi(r.URL.Query().Get("limit"))
	if r.URL.Query().Get("limit") == "" {
		limit, err = 100, nil
	}
	if err != nil || limit < 1 || limit > 100 {
		writeError(w, svcCES, errCESParam("limit must be between 1 and 100"))
		return
	}
	order := r.URL.Query().Get("order")
	if order != "" && order != "asc" && order != "desc" {
		writeError(w, svcCES, errCESParam("order must be asc or desc"))
		return
	}
	now := s.lockAt()
	defer s.mu.Unlock()
	all := s.sortedAlarms()
	if order != "asc" {
		slices.Reverse(all)
	}
	if start := r.URL.Query().Get("start"); start != "" {
		i := slices.IndexFunc(all, func(a *alarm) bool { return a.id == start })
		all = all[i+1:] // i == -1 keeps everything
	}
	total := len(s.alarms)
	if len(all) > limit {
		all = all[:limit]
	}
	out := []map[string]any{}
	marker := ""
	for _, a := range all {
		out = append(out, s.alarmJSON(a, now))
		marker = a.id
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"metric_alarms": out, "meta_data": map[string]any{"count": len(out), "marker": marker, "total": total},
	})
}

func (s *Sim) lookupAlarm(w http.ResponseWriter, id string) *alarm {
	a := s.alarms[id]
	if a == nil {
		writeError(w, svcCES, errorf(http.StatusNotFound, "ces.0015", "The alarm rule %s does not exist.", id))
	}
	return a
}

// handleShowAlarm serves GET /ces/V1.0/{project}/alarms/{id}: a one-element metric_alarms list.
func (s *Sim) handleShowAlarm(w http.ResponseWriter, r *http.Request) {
	now := s.lockAt()
	defer s.mu.Unlock()
	if a := s.lookupAlarm(w, r.PathValue("id")); a != nil {
		writeJSON(w, http.StatusOK, map[string]any{"metric_alarms": []any{s.alarmJSON(a, now)}})
	}
}

// handleUpdateAlarmAction serves PUT /ces/V1.0/{project}/alarms/{id}/action (204).
func (s *Sim) handleUpdateAlarmAction(w http.ResponseWriter, r *http.Request) {
	var req struct {
		AlarmEnabled *bool `json:"alarm_enabled"`
	}
	if e := decodeBody(r, &req); e != nil || req.AlarmEnabled == nil {
		writeError(w, svcCES, errCESParam("alarm_enabled is required"))
		return
	}
	now := s.lockAt()
	defer s.mu.Unlock()
	if a := s.lookupAlarm(w, r.PathValue("id")); a != nil {
		a.enabled, a.updated = *req.AlarmEnabled, now
		writeEmpty(w, http.StatusNoContent)
	}
}

// handleDeleteAlarm serves DELETE /ces/V1.0/{project}/alarms/{id} (204).
func (s *Sim) handleDeleteAlarm(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.lookupAlarm(w, r.PathValue("id")); a != nil {
		delete(s.alarms, a.id)
		writeEmpty(w, http.StatusNoContent)
	}
}

// Alarms returns a snapshot of all alarms, oldest first.
func (s *Sim) Alarms() []AlarmView {
	now := s.lockAt()
	defer s.mu.Unlock()
	out := []AlarmView{}
	for _, a := range s.sortedAlarms() {
		out = append(out, AlarmView{ID: a.id, Name: a.name, MetricName: a.metricName, Enabled: a.enabled, State: s.alarmState(a, now)})
	}
	return out
}

// SetAlarmState forces an alarm's state (ok, alarm or insufficient_data); "" returns to evaluating
// the condition on the metric.
func (s *Sim) SetAlarmState(id, state string) error {
	if state != "" && state != AlarmOK && state != AlarmAlarm && state != AlarmInsufficientData {
		return fmt.Errorf("unknown alarm state %q (want ok, alarm or insufficient_data)", state)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.alarms[id]
	if a == nil {
		return fmt.Errorf("alarm %s does not exist", id)
	}
	a.state, a.updated = state, s.now()
	return nil
}
