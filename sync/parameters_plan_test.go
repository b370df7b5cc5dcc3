package reconcile

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// TestPlanParameters is the parameters decision as a table: spec, status, the instance, what was
// read and OTC's answer in, the plan out. No cloud, fake or real, is involved.
func TestPlanParameters(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC))
	recent := metav1.NewTime(now.Add(-time.Minute))
	stale := metav1.NewTime(now.Add(-DefaultParametersDriftCheck))
	catalog := []cloud.Parameter{
		{Name: "max_connections", Value: "1500", Type: "integer", ValueRange: "10-100000"},
		{Name: "innodb_buffer_pool_size", Value: "1073741824", Type: "integer", ValueRange: "5242880-18446744073709551615", RestartRequired: true},
		{Name: "long_query_time", Value: "1", Type: "float", ValueRange: "0.03-3600"},
		{Name: "slow_query_log", Value: "ON", Type: "string", ValueRange: "ON,OFF"},
		{Name: "sql_mode", Value: "STRICT_TRANS_TABLES", Type: "list", ValueRange: "STRICT_TRANS_TABLES,ANSI_QUOTES"},
		{Name: "lower_case_table_names", Value: "1", Type: "integer", ValueRange: "0-1", ReadOnly: true},
	}
	three := map[string]string{"max_connections": "300", "innodb_buffer_pool_size": "2147483648", "long_query_time": "2"}
	applied := func(gen int64, checked metav1.Time, pending ...string) *v1alpha1.ParametersStatus {
		ps := &v1alpha1.ParametersStatus{Applied: three, Generation: gen, Checked: &checked, PendingRestart: pending}
		if len(pending) > 0 {
			ps.RestartRequest = "r0" // status.restartRequest when they were set
		}
		return ps
	}
	appliedCond := ptr.To(parametersCondition(metav1.ConditionTrue, ReasonParametersApplied, "The instance runs with the parameters the spec names."))
	pendingManual := ptr.To(parametersCondition(metav1.ConditionFalse, ReasonParametersPendingRestart,
		"The values of innodb_buffer_pool_size take effect at the next restart: set restartrequest to a new value to restart the instance."))
	me := owner{Cluster: "local", Namespace: "team-a", Name: "shop", UID: "uid-1"}
	tpl := cloud.ParameterTemplate{ID: "tpl-1", Name: TemplateName(me, three), Description: templateDescription(me), UserDefined: true}
	withTemplate := func(ps *v1alpha1.ParametersStatus) *v1alpha1.ParametersStatus { ps.Template = tpl.Name; return ps }
	unavailable := &cloud.Error{Kind: cloud.KindUnavailable, Op: "UpdateParameters", Message: "connection closed before the answer"}
	busy := &cloud.Error{Kind: cloud.KindBusy, Op: "UpdateParameters"}

	tests := []struct {
		reason     string
		spec       func(*v1alpha1.RdsSpec)
		status     func(*v1alpha1.RdsStatus)
		inst       func(*cloud.Instance)
		read       *parametersRead
		answer     *parametersAnswer
		sent       bool // this process sent the Immediate restart
		remembered *pendingChange
		deleting   bool
		templates  *templatesRead
		deleted    *templateAnswer
		want       parametersPlan
	}{
		{
			reason: "no parameters: the condition goes, status.parameters too",
			spec:   func(s *v1alpha1.RdsSpec) { s.Parameters = nil },
			status: func(st *v1alpha1.RdsStatus) { st.Parameters = applied(1, recent) },
			want:   parametersPlan{dropCondition: true},
		},
		{
			reason: "parameters removed while the create's template remains: status keeps its name, the template is deleted",
			spec:   func(s *v1alpha1.RdsSpec) { s.Parameters = nil },
			status: func(st *v1alpha1.RdsStatus) { st.Parameters = withTemplate(applied(1, recent)) },
			want:   parametersPlan{needTemplates: true},
		},
		{
			reason:    "parameters removed, the create's template deleted: status forgets it",
			spec:      func(s *v1alpha1.RdsSpec) { s.Parameters = nil },
			status:    func(st *v1alpha1.RdsStatus) { st.Parameters = withTemplate(applied(1, recent)) },
			templates: &templatesRead{list: []cloud.ParameterTemplate{tpl}},
			deleted:   &templateAnswer{},
			want: parametersPlan{status: &v1alpha1.ParametersStatus{}, dropCondition: true, stop: true,
				synced: ptr.To(syncedOK(ReasonReconcileSuccess, "The parameter template "+tpl.Name+" the instance was created with was deleted.", inFlight).made())},
		},
		{
			reason: "a spec generation not checked yet: read the instance's parameters first",
			want:   parametersPlan{needRead: true},
		},
		{
			reason: "the read failed: the call stops on the error, status keeps what it knew",
			read:   &parametersRead{err: busy},
			want:   parametersPlan{status: &v1alpha1.ParametersStatus{}, failed: busy, stop: true},
		},
		{
			reason: "three parameters differ, one needing a restart: one change sets all three",
			read:   &parametersRead{list: catalog},
			want:   parametersPlan{action: &action{kind: actUpdateParameters, instance: "inst-1", values: three}},
		},
		{
			reason: "OTC set them, the buffer pool waits for a restart: reported, nothing restarted (Manual)",
			read:   &parametersRead{list: catalog},
			answer: &parametersAnswer{kind: actUpdateParameters, change: cloud.ParametersChange{RestartRequired: true, JobID: "job-1"}},
			want: parametersPlan{
				status: &v1alpha1.ParametersStatus{Applied: three, PendingRestart: []string{"innodb_buffer_pool_size"},
					RestartRequest: "r0", Generation: 2, Checked: &now, Changed: &now},
				condition: pendingManual,
				synced:    ptr.To(syncedOK(ReasonReconcileSuccess, "The parameters innodb_buffer_pool_size, long_query_time, max_connections were set in OTC.", inFlight).made()),
				stop:      true,
			},
		},
		{
			reason: "no answer to the change: recorded as set, with the restart the catalog says it needs, and the error told; " +
				"not checked, so that the next call reads whether OTC set them",
			read:   &parametersRead{list: catalog},
			answer: &parametersAnswer{kind: actUpdateParameters, err: unavailable},
			want: parametersPlan{
				status: &v1alpha1.ParametersStatus{Applied: three, PendingRestart: []string{"innodb_buffer_pool_size"},
					RestartRequest: "r0", Generation: 2, Changed: &now},
				condition: pendingManual, failed: unavailable, stop: true,
			},
		},
		{
			reason: "a status from before this process's change (a lost answer): the values read are set, the restart still owed",
			status: func(st *v1alpha1.RdsStatus) {
				st.Parameters = &v1alpha1.ParametersStatus{Generation: 1, Checked: &stale}
			},
			read:       &parametersRead{list: withValues(catalog, three)},
			remembered: &pendingChange{names: []string{"innodb_buffer_pool_size"}, restartRequest: "r0", changed: recent.Time},
			want: parametersPlan{status: &v1alpha1.ParametersStatus{Applied: three, PendingRestart: []string{"innodb_buffer_pool_size"},
				RestartRequest: "r0", Generation: 2, Checked: &now, Changed: &recent}, condition: pendingManual},
		},
		{
			reason: "this process's change is older than the status's: nothing merged (its restart was made since)",
			status: func(st *v1alpha1.RdsStatus) {
				st.Parameters = applied(2, recent)
				st.Parameters.Changed = &recent
			},
			remembered: &pendingChange{names: []string{"innodb_buffer_pool_size"}, restartRequest: "r0", changed: stale.Time},
			want:       parametersPlan{status: &v1alpha1.ParametersStatus{Applied: three, Generation: 2, Checked: &recent, Changed: &recent}, condition: appliedCond},
		},
		{
			reason: "OTC refused the change (busy): nothing recorded, the next call reads and tries again",
			read:   &parametersRead{list: catalog},
			answer: &parametersAnswer{kind: actUpdateParameters, err: busy},
			want:   parametersPlan{status: &v1alpha1.ParametersStatus{}, failed: busy, stop: true},
		},
		{
			reason: "an unknown parameter and an out-of-range value: a condition names each, nothing is set",
			spec: func(s *v1alpha1.RdsSpec) {
				s.Parameters = map[string]string{"max_connections": "999999999", "no_such_parameter": "1", "long_query_time": "2"}
			},
			read: &parametersRead{list: catalog},
			want: parametersPlan{
				status: &v1alpha1.ParametersStatus{Generation: 2, Checked: &now},
				condition: ptr.To(parametersCondition(metav1.ConditionFalse, ReasonInvalidParameters,
					"parameters max_connections: 999999999 is outside its range 10-100000. parameters no_such_parameter: OTC knows no such parameter for MySQL 8.0.")),
				synced: wontAct(ReasonInvalidParameters,
					"parameters max_connections: 999999999 is outside its range 10-100000. parameters no_such_parameter: OTC knows no such parameter for MySQL 8.0."),
			},
		},
		{
			reason: "a read-only parameter, a value not of its type, a value not among the allowed ones",
			spec: func(s *v1alpha1.RdsSpec) {
				s.Parameters = map[string]string{"lower_case_table_names": "0", "long_query_time": "fast", "slow_query_log": "MAYBE", "sql_mode": "ANSI_QUOTES,NOPE"}
			},
			read: &parametersRead{list: catalog},
			want: parametersPlan{
				status: &v1alpha1.ParametersStatus{Generation: 2, Checked: &now},
				condition: ptr.To(parametersCondition(metav1.ConditionFalse, ReasonInvalidParameters,
					`parameters long_query_time: "fast" is not a number of type float. parameters lower_case_table_names: the parameter is read-only in OTC. parameters slow_query_log: "MAYBE" is not one of ON,OFF. parameters sql_mode: "NOPE" is not one of STRICT_TRANS_TABLES,ANSI_QUOTES.`)),
				synced: wontAct(ReasonInvalidParameters,
					`parameters long_query_time: "fast" is not a number of type float. parameters lower_case_table_names: the parameter is read-only in OTC. parameters slow_query_log: "MAYBE" is not one of ON,OFF. parameters sql_mode: "NOPE" is not one of STRICT_TRANS_TABLES,ANSI_QUOTES.`),
			},
		},
		{
			reason: "the same invalid spec on a later call: no read, the condition stands and Synced says it again",
			spec:   func(s *v1alpha1.RdsSpec) { s.Parameters = map[string]string{"no_such_parameter": "1"} },
			status: func(st *v1alpha1.RdsStatus) {
				st.Parameters = &v1alpha1.ParametersStatus{Generation: 2, Checked: &recent}
				st.Conditions = []v1alpha1.Condition{{Type: v1alpha1.ConditionParameters, Status: metav1.ConditionFalse, Reason: ReasonInvalidParameters, Message: "m."}}
			},
			want: parametersPlan{status: &v1alpha1.ParametersStatus{Generation: 2, Checked: &recent}, synced: wontAct(ReasonInvalidParameters, "m.")},
		},
		{
			reason: "OTC ignored a parameter after all: the condition names it",
			read:   &parametersRead{list: catalog},
			answer: &parametersAnswer{kind: actUpdateParameters, change: cloud.ParametersChange{Ignored: []string{"long_query_time"}}},
			want: parametersPlan{
				status: &v1alpha1.ParametersStatus{Applied: map[string]string{"max_connections": "300", "innodb_buffer_pool_size": "2147483648"},
					Generation: 2, Checked: &now, Changed: &now},
				condition: ptr.To(parametersCondition(metav1.ConditionFalse, ReasonParametersIgnored,
					"OTC ignored the parameters long_query_time: it does not know them or they are read-only for this instance.")),
				synced: ptr.To(syncedOK(ReasonReconcileSuccess, "The parameters innodb_buffer_pool_size, max_connections were set in OTC.", inFlight).made()),
				stop:   true,
			},
		},
		{
			reason: "review (#20): the drift check after OTC ignored a parameter of this generation does not send it again, each time in a change of its own",
			status: func(st *v1alpha1.RdsStatus) {
				st.Parameters = &v1alpha1.ParametersStatus{Applied: map[string]string{"max_connections": "300", "innodb_buffer_pool_size": "2147483648"},
					Generation: 2, Checked: &stale, Changed: &stale}
				st.Conditions = []v1alpha1.Condition{{Type: v1alpha1.ConditionParameters, Status: metav1.ConditionFalse, Reason: ReasonParametersIgnored, Message: "ignored."}}
			},
			read: &parametersRead{list: withValues(catalog, map[string]string{"max_connections": "300", "innodb_buffer_pool_size": "2147483648"})},
			want: parametersPlan{
				status: &v1alpha1.ParametersStatus{Applied: map[string]string{"max_connections": "300", "innodb_buffer_pool_size": "2147483648"},
					Generation: 2, Checked: &now, Changed: &stale},
				synced: wontAct(ReasonParametersIgnored, "ignored."),
			},
		},
		{
			reason: "review (#20): a change after OTC ignored a parameter of this generation leaves it out, and the condition still names it",
			status: func(st *v1alpha1.RdsStatus) {
				st.Parameters = &v1alpha1.ParametersStatus{Applied: map[string]string{"max_connections": "300", "innodb_buffer_pool_size": "2147483648"},
					Generation: 2, Checked: &stale, Changed: &stale}
				st.Conditions = []v1alpha1.Condition{{Type: v1alpha1.ConditionParameters, Status: metav1.ConditionFalse, Reason: ReasonParametersIgnored, Message: "ignored."}}
			},
			read: &parametersRead{list: withValues(catalog, map[string]string{"max_connections": "999", "innodb_buffer_pool_size": "2147483648"})},
			want: parametersPlan{action: &action{kind: actUpdateParameters, instance: "inst-1", values: map[string]string{"max_connections": "300"}}},
		},
		{
			reason: "review (#20): OTC's answer to that change: the condition still names the parameter ignored",
			status: func(st *v1alpha1.RdsStatus) {
				st.Parameters = &v1alpha1.ParametersStatus{Applied: map[string]string{"max_connections": "300", "innodb_buffer_pool_size": "2147483648"},
					Generation: 2, Checked: &stale, Changed: &stale}
				st.Conditions = []v1alpha1.Condition{{Type: v1alpha1.ConditionParameters, Status: metav1.ConditionFalse, Reason: ReasonParametersIgnored, Message: "ignored."}}
			},
			read:   &parametersRead{list: withValues(catalog, map[string]string{"max_connections": "999", "innodb_buffer_pool_size": "2147483648"})},
			answer: &parametersAnswer{kind: actUpdateParameters},
			want: parametersPlan{
				status: &v1alpha1.ParametersStatus{Applied: map[string]string{"max_connections": "300", "innodb_buffer_pool_size": "2147483648"},
					Generation: 2, Checked: &now, Changed: &now},
				condition: ptr.To(parametersCondition(metav1.ConditionFalse, ReasonParametersIgnored,
					"OTC ignored the parameters long_query_time: it does not know them or they are read-only for this instance.")),
				synced: ptr.To(syncedOK(ReasonReconcileSuccess, "The parameters max_connections were set in OTC.", inFlight).made()),
				stop:   true,
			},
		},
		{
			reason: "a steady object between two drift checks reads nothing",
			status: func(st *v1alpha1.RdsStatus) { st.Parameters = applied(2, recent) },
			want:   parametersPlan{status: applied(2, recent), condition: appliedCond},
		},
		{
			reason: "a value OTC shows already (a default that follows the flavor's memory) is sent with the change, so that a resize cannot move it; one needing a restart is not",
			spec: func(s *v1alpha1.RdsSpec) {
				s.Parameters = map[string]string{"max_connections": "1500", "innodb_buffer_pool_size": "1073741824", "long_query_time": "2"}
			},
			read: &parametersRead{list: catalog},
			want: parametersPlan{action: &action{kind: actUpdateParameters, instance: "inst-1", values: map[string]string{"max_connections": "1500", "long_query_time": "2"}}},
		},
		{
			reason: "the instance was resized since the check: the defaults OTC derives from the flavor's memory moved, read again",
			status: func(st *v1alpha1.RdsStatus) {
				st.Parameters = applied(2, recent)
				st.Parameters.Flavor = "rds.mysql.c2.medium"
			},
			inst: func(i *cloud.Instance) { i.Flavor = "rds.mysql.c2.large" },
			want: parametersPlan{needRead: true},
		},
		{
			reason: "the check records the flavor it was made on",
			status: func(st *v1alpha1.RdsStatus) { st.Parameters = applied(2, stale) },
			inst:   func(i *cloud.Instance) { i.Flavor = "rds.mysql.c2.large" },
			read: &parametersRead{list: withValues(catalog, map[string]string{
				"max_connections": "300", "innodb_buffer_pool_size": "2147483648", "long_query_time": "2"})},
			want: parametersPlan{status: func() *v1alpha1.ParametersStatus {
				ps := applied(2, now)
				ps.Flavor = "rds.mysql.c2.large"
				return ps
			}(), condition: appliedCond},
		},
		{
			reason: "the drift check is due: read again",
			status: func(st *v1alpha1.RdsStatus) { st.Parameters = applied(2, stale) },
			want:   parametersPlan{needRead: true},
		},
		{
			reason: "the drift check finds a value changed in the console: set it back",
			status: func(st *v1alpha1.RdsStatus) { st.Parameters = applied(2, stale) },
			read: &parametersRead{list: withValues(catalog, map[string]string{
				"max_connections": "800", "innodb_buffer_pool_size": "2147483648", "long_query_time": "2.0"})},
			want: parametersPlan{action: &action{kind: actUpdateParameters, instance: "inst-1", values: map[string]string{"max_connections": "300", "long_query_time": "2"}}},
		},
		{
			reason: "the drift check finds every value in place (2.0 is 2): checked, nothing to do",
			status: func(st *v1alpha1.RdsStatus) { st.Parameters = applied(2, stale) },
			read: &parametersRead{list: withValues(catalog, map[string]string{
				"max_connections": "300", "innodb_buffer_pool_size": "2147483648", "long_query_time": "2.0"})},
			want: parametersPlan{status: applied(2, now), condition: appliedCond},
		},
		{
			reason: "a new spec generation waits while an operation runs, and reads nothing",
			status: func(st *v1alpha1.RdsStatus) {
				st.Parameters = applied(1, recent)
				st.Operation = &v1alpha1.Operation{Type: OpResize}
			},
			want: parametersPlan{status: applied(1, recent), condition: appliedCond,
				synced: ptr.To(syncedOK(ReasonWaitingForInstance, "The parameters wait until the instance is ACTIVE with nothing in flight.", inFlight))},
		},
		{
			reason: "Manual: a pending restart is reported and nothing is restarted",
			status: func(st *v1alpha1.RdsStatus) {
				st.Parameters = applied(2, recent, "innodb_buffer_pool_size")
			},
			want: parametersPlan{status: &v1alpha1.ParametersStatus{Applied: three, Generation: 2, Checked: &recent,
				PendingRestart: []string{"innodb_buffer_pool_size"}, RestartRequest: "r0"}, condition: pendingManual},
		},
		{
			reason: "a restartrequest handled since the values were set brought them into effect",
			status: func(st *v1alpha1.RdsStatus) {
				st.Parameters = applied(2, recent, "innodb_buffer_pool_size")
				st.RestartRequest = "r1"
			},
			want: parametersPlan{status: applied(2, recent), condition: appliedCond},
		},
		{
			reason: "Immediate: the pending restart is made once the instance is ACTIVE with nothing in flight",
			spec:   func(s *v1alpha1.RdsSpec) { s.Parametersrestart = v1alpha1.ParametersRestartImmediate },
			status: func(st *v1alpha1.RdsStatus) { st.Parameters = applied(2, recent, "innodb_buffer_pool_size") },
			want:   parametersPlan{action: &action{kind: actRestart, instance: "inst-1"}},
		},
		{
			reason: "Immediate: the restart sent, status.operation follows it and nothing is pending",
			spec:   func(s *v1alpha1.RdsSpec) { s.Parametersrestart = v1alpha1.ParametersRestartImmediate },
			status: func(st *v1alpha1.RdsStatus) { st.Parameters = applied(2, recent, "innodb_buffer_pool_size") },
			answer: &parametersAnswer{kind: actRestart, jobID: "job-2"},
			want: parametersPlan{
				status:     applied(2, recent),
				condition:  appliedCond,
				operation:  &v1alpha1.Operation{Type: OpParametersRestart, JobID: "job-2", Generation: 2, Target: "innodb_buffer_pool_size"},
				restartKey: "innodb_buffer_pool_size",
				synced:     ptr.To(inProgress(&v1alpha1.Operation{Type: OpParametersRestart, JobID: "job-2", Generation: 2, Target: "innodb_buffer_pool_size"}).made()),
				stop:       true,
			},
		},
		{
			reason: "Immediate: the restart's answer was lost: recorded as sent, never sent twice",
			spec:   func(s *v1alpha1.RdsSpec) { s.Parametersrestart = v1alpha1.ParametersRestartImmediate },
			status: func(st *v1alpha1.RdsStatus) { st.Parameters = applied(2, recent, "innodb_buffer_pool_size") },
			answer: &parametersAnswer{kind: actRestart, err: unavailable},
			want: parametersPlan{
				status:     applied(2, recent),
				condition:  appliedCond,
				operation:  &v1alpha1.Operation{Type: OpParametersRestart, Generation: 2, Target: "innodb_buffer_pool_size"},
				restartKey: "innodb_buffer_pool_size",
				synced:     ptr.To(inProgress(&v1alpha1.Operation{Type: OpParametersRestart, Generation: 2, Target: "innodb_buffer_pool_size"}).made()),
				stop:       true,
			},
		},
		{
			reason: "Immediate: this process sent the restart, the answer that recorded it was lost: no second restart",
			spec:   func(s *v1alpha1.RdsSpec) { s.Parametersrestart = v1alpha1.ParametersRestartImmediate },
			status: func(st *v1alpha1.RdsStatus) { st.Parameters = applied(2, recent, "innodb_buffer_pool_size") },
			sent:   true,
			want:   parametersPlan{status: applied(2, recent), condition: appliedCond},
		},
		{
			reason: "InMaintenanceWindow: outside the window (08:00 is not in 02:00-06:00) the restart waits, and says when",
			spec:   func(s *v1alpha1.RdsSpec) { s.Parametersrestart = v1alpha1.ParametersRestartInMaintenanceWindow },
			status: func(st *v1alpha1.RdsStatus) { st.Parameters = applied(2, recent, "innodb_buffer_pool_size") },
			inst:   func(in *cloud.Instance) { in.MaintenanceWindow = "02:00-06:00" },
			want: parametersPlan{status: applied(2, recent, "innodb_buffer_pool_size"), condition: ptr.To(parametersCondition(metav1.ConditionFalse, ReasonParametersPendingRestart,
				"The values of innodb_buffer_pool_size take effect at the next restart: the instance is restarted in its maintenance window 02:00-06:00 (UTC)."))},
		},
		{
			reason: "InMaintenanceWindow: in the window (OTC's 06:00-10:00 holds 08:00) the restart is made",
			spec:   func(s *v1alpha1.RdsSpec) { s.Parametersrestart = v1alpha1.ParametersRestartInMaintenanceWindow },
			status: func(st *v1alpha1.RdsStatus) { st.Parameters = applied(2, recent, "innodb_buffer_pool_size") },
			inst:   func(in *cloud.Instance) { in.MaintenanceWindow = "06:00-10:00" },
			want:   parametersPlan{action: &action{kind: actRestart, instance: "inst-1"}},
		},
		{
			reason: "Immediate: no restart while the instance is not ACTIVE",
			spec:   func(s *v1alpha1.RdsSpec) { s.Parametersrestart = v1alpha1.ParametersRestartImmediate },
			status: func(st *v1alpha1.RdsStatus) { st.Parameters = applied(2, recent, "innodb_buffer_pool_size") },
			inst:   func(in *cloud.Instance) { in.Status = cloud.StatusBackingUp },
			want: parametersPlan{status: applied(2, recent, "innodb_buffer_pool_size"), condition: ptr.To(parametersCondition(metav1.ConditionFalse, ReasonParametersPendingRestart,
				"The values of innodb_buffer_pool_size take effect at the next restart: the instance is restarted as soon as it is ACTIVE with nothing in flight."))},
		},
		{
			reason: "the instance is ACTIVE with the values the create's template gave it: the templates are listed",
			status: func(st *v1alpha1.RdsStatus) { st.Parameters = withTemplate(applied(2, recent)) },
			want:   parametersPlan{needTemplates: true},
		},
		{
			reason:    "the object's template is deleted: the call's change",
			status:    func(st *v1alpha1.RdsStatus) { st.Parameters = withTemplate(applied(2, recent)) },
			templates: &templatesRead{list: []cloud.ParameterTemplate{{ID: "def", Name: "Default-MySQL-8.0"}, tpl}},
			want:      parametersPlan{action: &action{kind: actDeleteTemplate, templateID: "tpl-1"}},
		},
		{
			reason:    "deleted, the last one: status forgets it",
			status:    func(st *v1alpha1.RdsStatus) { st.Parameters = withTemplate(applied(2, recent)) },
			templates: &templatesRead{list: []cloud.ParameterTemplate{tpl}},
			deleted:   &templateAnswer{},
			want: parametersPlan{status: applied(2, recent), condition: appliedCond, stop: true,
				synced: ptr.To(syncedOK(ReasonReconcileSuccess, "The parameter template "+tpl.Name+" the instance was created with was deleted.", inFlight).made())},
		},
		{
			reason:    "none of the object's templates is left (another's is not touched): status forgets it, no call",
			status:    func(st *v1alpha1.RdsStatus) { st.Parameters = withTemplate(applied(2, recent)) },
			templates: &templatesRead{list: []cloud.ParameterTemplate{{ID: "x", Name: tpl.Name, Description: "someone else's", UserDefined: true}}},
			want:      parametersPlan{status: applied(2, recent), condition: appliedCond},
		},
		{
			reason: "the templates wait while the instance is not ACTIVE",
			status: func(st *v1alpha1.RdsStatus) { st.Parameters = withTemplate(applied(2, recent)) },
			inst:   func(in *cloud.Instance) { in.Status = cloud.StatusBuild },
			want:   parametersPlan{status: withTemplate(applied(2, recent)), condition: appliedCond},
		},
		{
			reason: "a new instance being created: nothing is read or told until it is ACTIVE",
			inst:   func(in *cloud.Instance) { in.Status = cloud.StatusBuild },
			status: func(st *v1alpha1.RdsStatus) { st.Operation = &v1alpha1.Operation{Type: OpCreate} },
			want:   parametersPlan{status: &v1alpha1.ParametersStatus{}},
		},
		{
			reason:   "a deletion: nothing is read or changed",
			status:   func(st *v1alpha1.RdsStatus) { st.Parameters = applied(1, stale) },
			deleting: true,
			want:     parametersPlan{status: applied(1, stale)},
		},
	}
	for _, tc := range tests {
		t.Run(tc.reason, func(t *testing.T) {
			spec := v1alpha1.RdsSpec{Datastoretype: "MySQL", Datastoreversion: "8.0", Parameters: three}
			if tc.spec != nil {
				tc.spec(&spec)
			}
			st := v1alpha1.RdsStatus{RestartRequest: "r0"}
			if tc.status != nil {
				tc.status(&st)
			}
			inst := &cloud.Instance{ID: "inst-1", Status: cloud.StatusActive, Engine: "MySQL", Version: "8.0"}
			if tc.inst != nil {
				tc.inst(inst)
			}
			in := parametersInput{spec: &spec, st: soFar(&st), inst: inst, generation: 2, now: now, drift: DefaultParametersDriftCheck,
				deleting: tc.deleting, sentRestart: tc.sent, read: tc.read, answer: tc.answer,
				me: me, templates: tc.templates, deleted: tc.deleted, remembered: tc.remembered}
			got := planParameters(in)
			got.logs = nil
			assert.Equal(t, tc.want, got, tc.reason)
		})
	}
}

// withValues is the catalog with these values.
func withValues(catalog []cloud.Parameter, values map[string]string) []cloud.Parameter {
	out := make([]cloud.Parameter, len(catalog))
	for i, p := range catalog {
		if v, ok := values[p.Name]; ok {
			p.Value = v
		}
		out[i] = p
	}
	return out
}

// TestParametersProblems: what Validate says of spec.parameters and spec.parametersrestart without
// asking OTC.
func TestParametersProblems(t *testing.T) {
	for _, tc := range []struct {
		reason string
		spec   v1alpha1.RdsSpec
		want   []string
	}{
		{reason: "none named", want: nil},
		{reason: "SQL Server's names have spaces and parentheses", spec: v1alpha1.RdsSpec{Parameters: map[string]string{"max server memory (MB)": "4096"}}},
		{reason: "Immediate", spec: v1alpha1.RdsSpec{Parametersrestart: "Immediate"}},
		{reason: "InMaintenanceWindow", spec: v1alpha1.RdsSpec{Parametersrestart: "InMaintenanceWindow"}},
		{reason: "an unknown restart policy", spec: v1alpha1.RdsSpec{Parametersrestart: "Sometimes"},
			want: []string{`parametersrestart "Sometimes" is not Manual, Immediate or InMaintenanceWindow.`}},
		{reason: "a name OTC could never have", spec: v1alpha1.RdsSpec{Parameters: map[string]string{"max_connections;drop": "1"}},
			want: []string{`parameters name "max_connections;drop" is not 1 to 64 letters, digits, spaces or _ . ( ) -.`}},
		{reason: "an empty value", spec: v1alpha1.RdsSpec{Parameters: map[string]string{"time_zone": ""}},
			want: []string{"parameters time_zone: the value is empty, longer than 512 characters or holds control characters."}},
		{reason: "a control character", spec: v1alpha1.RdsSpec{Parameters: map[string]string{"time_zone": "UTC\n"}},
			want: []string{"parameters time_zone: the value is empty, longer than 512 characters or holds control characters."}},
	} {
		assert.Equal(t, tc.want, parametersProblems(&tc.spec), tc.reason)
	}
}

// TestInWindow: a daily window in UTC, wrapping midnight or not, its end excluded.
func TestInWindow(t *testing.T) {
	at := func(hhmm string) time.Time {
		tm, err := time.Parse("15:04", hhmm)
		if err != nil {
			panic(err)
		}
		return time.Date(2026, 11, 27, tm.Hour(), tm.Minute(), 0, 0, time.UTC)
	}
	for _, tc := range []struct {
		reason, window, now string
		want                bool
	}{
		{reason: "inside", window: "02:00-06:00", now: "03:15", want: true},
		{reason: "the start is in", window: "02:00-06:00", now: "02:00", want: true},
		{reason: "the end is out", window: "02:00-06:00", now: "06:00", want: false},
		{reason: "before", window: "02:00-06:00", now: "01:59", want: false},
		{reason: "wrapping midnight, before it", window: "22:00-02:00", now: "23:30", want: true},
		{reason: "wrapping midnight, after it", window: "22:00-02:00", now: "01:00", want: true},
		{reason: "wrapping midnight, outside", window: "22:00-02:00", now: "12:00", want: false},
		{reason: "a window that does not parse holds no time", window: "soon", now: "12:00", want: false},
	} {
		assert.Equal(t, tc.want, inWindow(tc.window, at(tc.now)), tc.reason)
	}
}
