package reconcile

import (
	"fmt"
	"log/slog"
	"maps"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// Engine parameters (issue #20, docs/parameters.md): spec.parameters names values; the step sets
// the differences on the instance in one change, sets back a value changed elsewhere, and leaves
// every parameter it does not name alone.
//
// Reads. What OTC reports of the instance's parameters (values, types, ranges, restart and
// read-only flags, which depend on the engine, its version and the flavor's memory) is read only
// when a decision needs it: when the spec's generation is one status has not checked, and once
// per Config.ParametersDriftCheck (the drift check, 15 minutes by default). Status remembers the
// check (status.parameters generation and checked), so a steady object reads nothing between two
// checks, and an object without spec.parameters never reads them.
//
// Restarts are the user's call. A value OTC says needs a restart is set and reported: the
// Parameters condition (ParametersPendingRestart) and status.parameters.pendingRestart name the
// parameters. With parametersrestart Manual (the default) only a restartrequest restarts the
// instance: the restart day2.go makes for a restartrequest handled after the values were set
// brings them into effect. With Immediate the step restarts the instance itself, once, as soon
// as it is ACTIVE with nothing in flight; with InMaintenanceWindow, likewise within the
// instance's maintenance window.
//
// NOTE: OTC reports no pending restart: the instance's parameters show the values set, in effect
// or not. A restart made in the console is therefore not seen; status keeps the parameters
// pending until a restart through the hooks (restartrequest, Immediate, InMaintenanceWindow).

// DefaultParametersDriftCheck is how often a steady object's parameters are read from OTC, to set
// back a value changed elsewhere (Config.ParametersDriftCheck).
const DefaultParametersDriftCheck = 15 * time.Minute

// OpParametersRestart is status.operation while the restart parametersrestart Immediate or
// InMaintenanceWindow asked for runs.
const OpParametersRestart = "ParametersRestart"

// Reasons of the Parameters condition.
const (
	ReasonParametersApplied        = "ParametersApplied"
	ReasonParametersPendingRestart = "ParametersPendingRestart"
	ReasonInvalidParameters        = "InvalidParameters"
	ReasonParametersIgnored        = "ParametersIgnored"
	// ReasonParameterTemplateChanged: the template made for the create does not hold exactly
	// spec.parameters (parameters_create.go).
	ReasonParameterTemplateChanged = "ParameterTemplateChanged"
	// ReasonParameterTemplateNameTaken: a template that is not the object's has the name of the
	// object's template (parameters_create.go).
	ReasonParameterTemplateNameTaken = "ParameterTemplateNameTaken"
)

// maxParameters is the most parameters a spec names (the CRD's maxProperties).
const maxParameters = 100

// parametersProblems are the spec's problems with spec.parameters and spec.parametersrestart that
// need no cloud call: names and values OTC could never take. The names and values OTC takes for
// the instance are checked against what it reports (checkParameters).
func parametersProblems(spec *v1alpha1.RdsSpec) []string {
	var p problems
	switch spec.Parametersrestart {
	case "", v1alpha1.ParametersRestartManual, v1alpha1.ParametersRestartImmediate, v1alpha1.ParametersRestartInMaintenanceWindow:
	default:
		p.addf("parametersrestart %q is not Manual, Immediate or InMaintenanceWindow.", spec.Parametersrestart)
	}
	if len(spec.Parameters) > maxParameters {
		p.addf("parameters names %d parameters, more than %d.", len(spec.Parameters), maxParameters)
	}
	for _, name := range slices.Sorted(maps.Keys(spec.Parameters)) {
		if !validParameterName(name) {
			p.addf("parameters name %q is not 1 to 64 letters, digits, spaces or _ . ( ) -.", name)
			continue
		}
		if v := spec.Parameters[name]; v == "" || len(v) > 512 || strings.ContainsFunc(v, unicode.IsControl) {
			// NOTE: OTC refuses an empty value ("If key is not empty, the value cannot be empty").
			p.addf("parameters %s: the value is empty, longer than 512 characters or holds control characters.", name)
		}
	}
	return p
}

// validParameterName: 1 to 64 of letters, digits, space and _ . ( ) - (SQL Server's names have
// spaces and parentheses: "max server memory (MB)").
func validParameterName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, r := range name {
		if !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("_.() -", r))) {
			return false
		}
	}
	return true
}

// parametersInput is all the parameters step decides on.
type parametersInput struct {
	spec       *v1alpha1.RdsSpec
	st         statusSoFar // this call's status so far, a copy
	inst       *cloud.Instance
	generation int64
	now        metav1.Time
	deleting   bool
	// drift is how often the instance's parameters are read again (Config.ParametersDriftCheck).
	drift time.Duration
	// sentRestart says this process sent the restart parametersrestart Immediate asked for the
	// values set at status.parameters.changed (ledger.go).
	sentRestart bool
	// remembered is the last change of values this process made that waits for a restart
	// (parameters_memory.go); nil when it remembers none.
	remembered *pendingChange
	// read is what OTC reported of the instance's parameters; nil until the plan asked for it.
	read *parametersRead
	// answer is OTC's answer to the plan's action; nil until it was made.
	answer *parametersAnswer

	// me is the object, whose parameter templates (parameters_create.go) are deleted once the
	// instance is ACTIVE: templates is the project's template list, read while
	// status.parameters.template names one; deleted OTC's answer to a template's delete.
	me        owner
	templates *templatesRead
	deleted   *templateAnswer
}

// parametersRead is a read of the instance's parameters, or its error.
type parametersRead struct {
	list []cloud.Parameter
	err  error
}

// parametersAnswer is OTC's answer to the step's action.
type parametersAnswer struct {
	kind   actionKind
	change cloud.ParametersChange
	jobID  string
	err    error
}

// parametersPlan is the decision of the parameters step. A plan that asks for the read or makes
// an action is made again with what was read or answered.
type parametersPlan struct {
	// status is status.parameters as the step leaves it; nil removes it.
	status *v1alpha1.ParametersStatus
	// condition is the Parameters condition, if the step tells it; dropCondition removes it.
	condition     *outcome
	dropCondition bool
	// synced is the step's Synced outcome, if any.
	synced *outcome
	// needRead asks for the instance's parameters; needTemplates for the project's templates.
	needRead, needTemplates bool
	// action is the step's one change: the values to set, or the restart.
	action *action
	// operation is status.operation once the restart was sent; restartKey is what this process
	// remembers of it (ledger.go).
	operation  *v1alpha1.Operation
	restartKey string
	// failed is a cloud error of the read or of the answer, sorted by cloudError.
	failed error
	stop   bool
	logs   []logLine
}

// planParameters decides the parameters step: the values, then the restart, then the templates
// the create used. It calls nothing.
func planParameters(in parametersInput) parametersPlan {
	p := planParameterValues(in)
	// The first check of the values also looks for the object's templates: the answer that
	// named the create's in status.parameters.template may have been lost (found in review, #20).
	first := (in.st.Parameters == nil || in.st.Parameters.Generation == 0) && p.status != nil && p.status.Generation != 0 &&
		(p.condition == nil || p.condition.reason != ReasonInvalidParameters)
	if p.action != nil || p.needRead || p.failed != nil || p.stop || p.status == nil || p.status.Template == "" && !first ||
		in.deleting || in.st.Operation != nil || !usable(in.inst.Status) {
		return p
	}
	return planTemplateCleanup(in, p)
}

// planTemplateCleanup deletes the object's parameter templates, one per call, once the instance
// is ACTIVE: the instance has its own copy of the values. A failed read of the list is logged and
// tried again on the next call; it is housekeeping, no finding about the object.
//
// NOTE: planTemplatesGone (parameters_create.go) deletes the same templates, one per call, found
// the same way (ownedTemplates, a NotFound answer counts as deleted), but decides differently, so
// the two are kept apart: here the object lives on, so a failed listing holds nothing (logged)
// where there it holds the object's deletion; here status.parameters.template names the next
// template at once after a deletion (the Synced sentence names the one deleted) where there the
// object waits for a listing that shows none; and here the step's own plan (the values, the
// restart) is extended, there a finalize call's last step decides alone.
func planTemplateCleanup(in parametersInput, p parametersPlan) parametersPlan {
	switch {
	case in.templates == nil:
		return parametersPlan{needTemplates: true}
	case in.templates.err != nil:
		p.logs = append(p.logs, logLine{slog.LevelWarn, "could not list parameter templates", []any{"error", in.templates.err}})
		return p
	}
	owned := ownedTemplates(in.templates.list, in.me)
	ps := p.status
	if len(owned) == 0 {
		ps.Template = ""
		return p
	}
	if in.deleted == nil {
		return parametersPlan{action: &action{kind: actDeleteTemplate, templateID: owned[0].ID}}
	}
	p.stop = true
	if err := in.deleted.err; err != nil && cloud.KindOf(err) != cloud.KindNotFound {
		p.failed = err
		return p
	}
	ps.Template = ""
	if len(owned) > 1 {
		ps.Template = owned[1].Name // the next call deletes it
	}
	p.logs = append(p.logs, logLine{slog.LevelInfo, "deleted parameter template", []any{"template", owned[0].Name, "instance", in.inst.ID}})
	p.synced = ptr.To(syncedOK(ReasonReconcileSuccess, fmt.Sprintf("The parameter template %s the instance was created with was deleted.", owned[0].Name), inFlight).made())
	return p
}

// planParameterValues decides the values and the restart.
func planParameterValues(in parametersInput) parametersPlan {
	if len(in.spec.Parameters) == 0 {
		p := parametersPlan{dropCondition: true}
		if ps := in.st.Parameters; ps != nil && ps.Template != "" {
			// parameters removed while the create's template remains: status keeps its name until
			// it is deleted (planTemplateCleanup).
			p.status = &v1alpha1.ParametersStatus{Template: ps.Template}
		}
		return p
	}
	ps := parametersStatusOf(in.st.Parameters)
	p := parametersPlan{status: ps}
	if in.deleting {
		return p
	}
	if r := in.remembered; r != nil && (ps.Changed == nil || r.changed.After(ps.Changed.Time)) {
		// A change of values this process made, which the status predates (a lost answer, a
		// duplicate call): the restart it waits for is still owed.
		changed := metav1.NewTime(r.changed)
		ps.PendingRestart = slices.Compact(slices.Sorted(slices.Values(append(ps.PendingRestart, r.names...))))
		ps.RestartRequest, ps.Changed = r.restartRequest, &changed
	}
	if len(ps.PendingRestart) > 0 && in.st.RestartRequest != ps.RestartRequest {
		// A restartrequest was handled since the values were set: its restart brought them in.
		ps.PendingRestart, ps.RestartRequest = nil, ""
	}
	if len(ps.PendingRestart) > 0 && in.inst.Status == cloud.StatusShutdown {
		// The instance was stopped since the values were set: its start boots the database with
		// them, and no restart is owed (found in review, #20: Immediate and InMaintenanceWindow
		// restarted an instance just started, Manual asked for it).
		ps.PendingRestart, ps.RestartRequest = nil, ""
	}
	inst, op := in.inst, in.st.Operation
	idle := op == nil && usable(inst.Status)
	// NOTE: a resize moves the defaults OTC derives from the flavor's memory (max_connections,
	// the buffer pool): a value the spec names that only equalled one is checked again at once.
	// A check recorded later than now (a replica's clock ahead, a status written by hand) is no
	// check: it would put the drift check off until then (found in review, #20).
	due := ps.Generation != in.generation || ps.Checked == nil || ps.Checked.After(in.now.Time) || in.now.Sub(ps.Checked.Time) >= in.drift ||
		ps.Flavor != "" && ps.Flavor != inst.Flavor
	if !due || !idle {
		creating := inst.Status == cloud.StatusBuild || op != nil && op.Type == OpCreate
		if due && ps.Generation != in.generation && !creating { // a create says what it does itself
			p.synced = ptr.To(syncedOK(ReasonWaitingForInstance, "The parameters wait until the instance is ACTIVE with nothing in flight.", inFlight))
		}
		return planPendingRestart(in, p)
	}
	if in.read == nil {
		return parametersPlan{needRead: true}
	}
	if in.read.err != nil {
		p.failed, p.stop = in.read.err, true
		return p
	}
	catalog := catalogOf(in.read.list)
	if problems := checkParameters(in.spec.Parameters, catalog, inst); len(problems) > 0 {
		// Nothing is set while one value is wrong; the spec's next generation is checked again.
		msg := joinSentences(problems)
		ps.Generation, ps.Checked, ps.Flavor = in.generation, ptr.To(in.now), inst.Flavor
		p.condition = ptr.To(parametersCondition(metav1.ConditionFalse, ReasonInvalidParameters, msg))
		p.synced = wontAct(ReasonInvalidParameters, msg)
		return p
	}
	// The parameters OTC ignored for this generation are not sent again: it would ignore them
	// again at every drift check, each time in a change of its own (found in review, #20).
	ignored := ignoredBefore(in.st, ps, in.spec.Parameters, in.generation)
	changes := map[string]string{}
	for name, want := range in.spec.Parameters {
		if c := catalog[name]; !slices.Contains(ignored, name) && !sameValue(c.Type, want, c.Value) {
			changes[name] = want
		}
	}
	if len(changes) == 0 {
		ps.Applied = maps.Clone(in.spec.Parameters)
		for _, name := range ignored {
			delete(ps.Applied, name)
		}
		ps.Generation, ps.Checked, ps.Flavor = in.generation, ptr.To(in.now), inst.Flavor
		return planPendingRestart(in, p)
	}
	if in.answer == nil {
		values := pinned(in.spec.Parameters, catalog, changes)
		for _, name := range ignored {
			delete(values, name)
		}
		return parametersPlan{action: &action{kind: actUpdateParameters, instance: inst.ID, values: values}}
	}
	if len(ignored) > 0 {
		// still ignored: the answer's condition names them with what OTC ignored this time
		answer := *in.answer
		answer.change.Ignored = slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(answer.change.Ignored), ignored...))))
		in.answer = &answer
	}
	p.stop = true
	switch err := in.answer.err; {
	case err != nil && outcomeUnknown(err):
		// No answer: OTC may have set them. They are recorded as set, with the restart the
		// catalog says they need, so that a later read that finds them set does not forget the
		// restart; the next call's read that does not sends them again (the same values change
		// nothing).
		restart := false
		for name := range changes {
			restart = restart || catalog[name].RestartRequired
		}
		unknown := *in.answer
		unknown.change = cloud.ParametersChange{RestartRequired: restart, Ignored: in.answer.change.Ignored}
		in.answer = &unknown
		p = planParametersSet(in, p, catalog, changes)
		// The next call reads them again, whatever the drift check's time: that read tells
		// whether OTC set them, and sends them again if it did not; the restart Immediate makes
		// follows values read set, never values OTC did not take (found in review, #20 too: a
		// 503 left them unset, restarted the instance, and the drift check set them and
		// restarted it again).
		p.status.Checked = nil
		p.synced, p.failed = nil, err
		return p
	case err != nil:
		p.failed = err // refused: nothing was set
		if cloud.KindOf(err) == cloud.KindInvalid {
			// OTC refused values the check passed (a rule of its own): told like values the check
			// refuses, and tried again at the spec's next generation or the drift check, not with
			// a read and a refused call at every steady sync (found in review, #20).
			msg := asCloudError(err).Refusal()
			ps.Generation, ps.Checked, ps.Flavor = in.generation, ptr.To(in.now), inst.Flavor
			p.condition = ptr.To(parametersCondition(metav1.ConditionFalse, ReasonInvalidParameters, msg))
		}
		return p
	}
	return planParametersSet(in, p, catalog, changes)
}

// ignoredBefore are the parameters of spec OTC ignored for this generation: the Parameters
// condition says ParametersIgnored, and status.parameters.applied leaves them out.
func ignoredBefore(st statusSoFar, ps *v1alpha1.ParametersStatus, spec map[string]string, generation int64) []string {
	cond := getConditionIn(st.Conditions, v1alpha1.ConditionParameters)
	if cond == nil || cond.Reason != ReasonParametersIgnored || ps.Generation != generation {
		return nil
	}
	var names []string
	for _, name := range slices.Sorted(maps.Keys(spec)) {
		if _, ok := ps.Applied[name]; !ok {
			names = append(names, name)
		}
	}
	return names
}

// pinned are the values a change sends: those that differ, and with them every other value the
// spec names that takes effect without a restart, though OTC shows it already.
//
// NOTE: OTC derives some defaults from the flavor's memory (max_connections, the buffer pool): a
// value the spec names that equals such a default today would follow the next resize if it were
// never set. Sent with the change, it is the instance's own and stays. A value that needs a
// restart is sent only when it differs, so that no restart is asked for a value in effect.
func pinned(spec map[string]string, catalog map[string]cloud.Parameter, changes map[string]string) map[string]string {
	out := maps.Clone(changes)
	for name, want := range spec {
		if c, ok := catalog[name]; ok && !c.RestartRequired && !c.ReadOnly {
			out[name] = want
		}
	}
	return out
}

// planParametersSet records the values OTC set, and what waits for a restart.
func planParametersSet(in parametersInput, p parametersPlan, catalog map[string]cloud.Parameter, changes map[string]string) parametersPlan {
	ps, answer := p.status, in.answer.change
	ps.Applied = maps.Clone(in.spec.Parameters)
	for _, name := range answer.Ignored {
		delete(ps.Applied, name)
	}
	set := slices.DeleteFunc(slices.Sorted(maps.Keys(changes)), func(n string) bool { return slices.Contains(answer.Ignored, n) })
	if answer.RestartRequired {
		var restart []string
		for _, name := range set {
			if catalog[name].RestartRequired {
				restart = append(restart, name)
			}
		}
		if len(restart) == 0 {
			restart = set // OTC said a restart is needed without saying for which
		}
		ps.PendingRestart = slices.Compact(slices.Sorted(slices.Values(append(ps.PendingRestart, restart...))))
		ps.RestartRequest = in.st.RestartRequest
	}
	now := ptr.To(in.now) // NOTE: not &in.now, which would move the whole input to the heap at every plan
	ps.Generation, ps.Checked, ps.Changed, ps.Flavor = in.generation, now, now, in.inst.Flavor
	p.logs = []logLine{{slog.LevelInfo, "set engine parameters", []any{"instance", in.inst.ID, "parameters", strings.Join(set, ","), "restartRequired", answer.RestartRequired, "job", answer.JobID}}}
	p.synced = ptr.To(syncedOK(ReasonReconcileSuccess, fmt.Sprintf("The parameters %s were set in OTC.", strings.Join(set, ", ")), inFlight).made())
	if len(set) == 0 {
		p.synced = ptr.To(syncedOK(ReasonReconcileSuccess, "OTC set none of the parameters.", inFlight).made())
	}
	if len(answer.Ignored) > 0 {
		msg := fmt.Sprintf("OTC ignored the parameters %s: it does not know them or they are read-only for this instance.", strings.Join(answer.Ignored, ", "))
		p.condition = ptr.To(parametersCondition(metav1.ConditionFalse, ReasonParametersIgnored, msg))
		return p
	}
	p.condition = pendingCondition(in.spec, ps, in.inst)
	return p
}

// planPendingRestart tells the Parameters condition from status, and with parametersrestart
// Immediate (or InMaintenanceWindow, within the window) restarts the instance for the values that
// wait for it.
func planPendingRestart(in parametersInput, p parametersPlan) parametersPlan {
	ps := p.status
	if ps.Generation == 0 {
		return p // never checked yet: the condition says nothing until the values were read
	}
	if cond := getConditionIn(in.st.Conditions, v1alpha1.ConditionParameters); ps.Generation == in.generation && cond != nil &&
		(cond.Reason == ReasonInvalidParameters || cond.Reason == ReasonParametersIgnored) {
		// The same spec, still wrong until its next generation (or the drift check) reads
		// again: the condition stands, and Synced says so again.
		p.synced = wontAct(cond.Reason, cond.Message)
		return p
	}
	p.condition = pendingCondition(in.spec, ps, in.inst)
	policy := in.spec.Parametersrestart
	if len(ps.PendingRestart) == 0 || policy != v1alpha1.ParametersRestartImmediate && policy != v1alpha1.ParametersRestartInMaintenanceWindow {
		return p
	}
	key := parametersRestartKey(ps)
	switch {
	case in.sentRestart:
		// This process sent it: the answer that recorded it was lost.
		ps.PendingRestart, ps.RestartRequest = nil, ""
		p.condition = pendingCondition(in.spec, ps, in.inst)
		return p
	case policy == v1alpha1.ParametersRestartInMaintenanceWindow && !inWindow(maintenanceWindowOf(in.spec, in.inst), in.now.Time):
		return p
	case in.st.Operation != nil || !usable(in.inst.Status) || in.deleting:
		return p
	case in.spec.Restartrequest != "" && in.spec.Restartrequest != in.st.RestartRequest:
		// A restartrequest not yet handled: its restart (day2.go) brings the values in; a restart
		// of its own would be a second one (found in review, #20).
		return p
	case in.answer == nil:
		return parametersPlan{action: &action{kind: actRestart, instance: in.inst.ID}}
	}
	p.stop = true
	if err := in.answer.err; err != nil && !outcomeUnknown(err) {
		p.failed = err
		return p
	}
	// Sent, or no answer (OTC may have restarted it): recorded as sent, never sent twice.
	target := strings.Join(ps.PendingRestart, ", ")
	ps.PendingRestart, ps.RestartRequest = nil, ""
	p.restartKey = key
	p.operation = &v1alpha1.Operation{Type: OpParametersRestart, JobID: in.answer.jobID, Generation: in.generation, Target: target}
	p.condition = pendingCondition(in.spec, ps, in.inst)
	p.synced = ptr.To(inProgress(p.operation).made())
	p.logs = []logLine{{slog.LevelInfo, "restarting for engine parameters", []any{"instance", in.inst.ID, "parameters", target, "job", in.answer.jobID}}}
	return p
}

// parametersRestartKey names the Immediate restart for the values set at ps.Changed, for this
// process's ledger.
func parametersRestartKey(ps *v1alpha1.ParametersStatus) string {
	if ps.Changed == nil {
		return strings.Join(ps.PendingRestart, ",")
	}
	return ps.Changed.UTC().Format(time.RFC3339) + " " + strings.Join(ps.PendingRestart, ",")
}

// pendingCondition is the Parameters condition for status: True once every value set is in
// effect, False while some wait for a restart.
func pendingCondition(spec *v1alpha1.RdsSpec, ps *v1alpha1.ParametersStatus, inst *cloud.Instance) *outcome {
	if len(ps.PendingRestart) == 0 {
		return ptr.To(parametersCondition(metav1.ConditionTrue, ReasonParametersApplied, "The instance runs with the parameters the spec names."))
	}
	how := "set restartrequest to a new value to restart the instance."
	switch spec.Parametersrestart {
	case v1alpha1.ParametersRestartImmediate:
		how = "the instance is restarted as soon as it is ACTIVE with nothing in flight."
	case v1alpha1.ParametersRestartInMaintenanceWindow:
		how = fmt.Sprintf("the instance is restarted in its maintenance window %s (UTC).", maintenanceWindowOf(spec, inst))
	}
	return ptr.To(parametersCondition(metav1.ConditionFalse, ReasonParametersPendingRestart, fmt.Sprintf(
		"The values of %s take effect at the next restart: %s", strings.Join(ps.PendingRestart, ", "), how)))
}

// maintenanceWindowOf is the instance's maintenance window as OTC reports it, else as the spec
// sets it, else OTC's default.
func maintenanceWindowOf(spec *v1alpha1.RdsSpec, inst *cloud.Instance) string {
	switch {
	case inst != nil && inst.MaintenanceWindow != "":
		return inst.MaintenanceWindow
	case spec.Maintenancewindow != "":
		return spec.Maintenancewindow
	}
	return defaultMaintenanceWindow
}

// inWindow reports whether t lies in the daily window "hh:mm-HH:MM" (UTC; it may wrap midnight).
// A window that does not parse holds no time.
func inWindow(window string, t time.Time) bool {
	w, ok := parseDailyWindow(window)
	return ok && w.holds(t)
}

// parametersCondition is a Parameters condition outcome; the step's own resync is the steady one.
func parametersCondition(status metav1.ConditionStatus, reason, message string) outcome {
	return outcome{cond: v1alpha1.ConditionParameters, status: status, reason: reason, message: message, class: settled}
}

// parametersStatusOf is status.parameters (ps), a copy, made if there is none yet.
func parametersStatusOf(ps *v1alpha1.ParametersStatus) *v1alpha1.ParametersStatus {
	if ps == nil {
		return &v1alpha1.ParametersStatus{}
	}
	return ps.DeepCopy()
}

// catalogOf is a parameter list by name.
func catalogOf(list []cloud.Parameter) map[string]cloud.Parameter {
	catalog := make(map[string]cloud.Parameter, len(list))
	for _, c := range list {
		catalog[c.Name] = c
	}
	return catalog
}

// checkParameters says why OTC could not take a value, one sentence per parameter, in name order:
// a name it does not report for the instance, a read-only one, a value not of the parameter's type
// or outside its range.
func checkParameters(want map[string]string, catalog map[string]cloud.Parameter, inst *cloud.Instance) []string {
	var p problems
	for _, name := range slices.Sorted(maps.Keys(want)) {
		c, ok := catalog[name]
		switch {
		case !ok:
			p.addf("parameters %s: OTC knows no such parameter for %s %s.", name, inst.Engine, inst.Version)
		case c.ReadOnly:
			p.addf("parameters %s: the parameter is read-only in OTC.", name)
		default:
			if why := valueProblem(c, want[name]); why != "" {
				p.addf("parameters %s: %s", name, why)
			}
		}
	}
	return p
}

// valueProblem says why value is not one parameter c takes, or "".
//
// NOTE: OTC reports ranges as "lo-hi" for integer and float parameters (lo may be negative:
// "-1-2147483647"), as "true|false" or "on|off" for booleans, and as the allowed values,
// comma-separated, for the others; a list parameter
// (MySQL's sql_mode) takes several of them, comma-separated. A range of another shape is not
// checked here: OTC checks it.
func valueProblem(c cloud.Parameter, value string) string {
	switch c.Type {
	case "integer", "float":
		x, ok := new(big.Float).SetString(value)
		if !ok || c.Type == "integer" && !decimalInteger.MatchString(value) || c.Type == "float" && !decimalFloat.MatchString(value) {
			return fmt.Sprintf("%q is not a number of type %s.", value, c.Type)
		}
		lo, hi, ok := numericRange(c.ValueRange)
		if ok && (x.Cmp(lo) < 0 || x.Cmp(hi) > 0) {
			return fmt.Sprintf("%s is outside its range %s.", value, c.ValueRange)
		}
	case "list":
		allowed := rangeValues(c.ValueRange)
		for _, v := range strings.Split(value, ",") {
			if allowed != nil && !slices.Contains(allowed, v) {
				return fmt.Sprintf("%q is not one of %s.", v, c.ValueRange)
			}
		}
	default:
		if allowed := rangeValues(c.ValueRange); allowed != nil && !slices.Contains(allowed, value) {
			return fmt.Sprintf("%q is not one of %s.", value, c.ValueRange)
		}
	}
	return ""
}

// decimalInteger and decimalFloat are numbers as OTC and the engines take them: in decimal (Go's
// parser alone also takes 0x10, 0b101, 1_000, +5 and Inf).
var (
	decimalInteger = regexp.MustCompile(`^-?[0-9]+$`)
	decimalFloat   = regexp.MustCompile(`^-?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?$`)
)

// numericRange parses "lo-hi" (lo may be negative).
func numericRange(r string) (lo, hi *big.Float, ok bool) {
	i := strings.LastIndex(r, "-")
	if i <= 0 {
		return nil, nil, false
	}
	lo, ok1 := new(big.Float).SetString(r[:i])
	hi, ok2 := new(big.Float).SetString(r[i+1:])
	return lo, hi, ok1 && ok2
}

// rangeValues are the allowed values of a range "a,b,c", or of a boolean's "true|false" (OTC
// reports booleans so); nil when it names none.
func rangeValues(r string) []string {
	switch {
	case strings.Contains(r, ","):
		return strings.Split(r, ",")
	case strings.Contains(r, "|"):
		return strings.Split(r, "|")
	}
	return nil
}

// sameValue reports whether OTC's value have is the value want: numbers by value ("1.0" is
// "1"), the rest as written.
func sameValue(typ, want, have string) bool {
	if want == have {
		return true
	}
	if typ == "integer" || typ == "float" {
		a, ok1 := new(big.Float).SetString(want)
		b, ok2 := new(big.Float).SetString(have)
		return ok1 && ok2 && a.Cmp(b) == 0
	}
	return false
}

// parametersStep is the parameters step as the loop runs it (loop.go): it plans, reads the
// instance's parameters when the plan asks, plans again, makes the plan's change (the values, or
// the Immediate restart) and plans with OTC's answer.
type parametersStep struct {
	in  parametersInput
	uid types.UID
	p   parametersPlan
}

func newParametersStep(c *call, inst *cloud.Instance) *parametersStep {
	s := &parametersStep{uid: c.parent.UID, in: parametersInput{
		spec: c.spec, st: soFar(&c.st), inst: inst, generation: c.parent.Generation, now: c.now,
		deleting: c.parent.DeletionTimestamp != nil, me: c.me, drift: c.r.cfg.ParametersDriftCheck,
		remembered: c.r.parameters.remembered(inst.ID),
	}}
	if ps := c.st.Parameters; ps != nil && len(ps.PendingRestart) > 0 {
		s.in.sentRestart = c.r.sent.seen(oneShotKey(c.parent.UID, OpParametersRestart, parametersRestartKey(ps)))
	}
	return s
}

func (s *parametersStep) plan() head {
	s.p = planParameters(s.in)
	h := head{tells: told(s.p.condition, s.p.synced), logs: s.p.logs, stop: s.p.stop, err: s.p.failed}
	if s.p.dropCondition {
		h.tells = thenDrop(h.tells, dropParameters)
	}
	switch {
	case s.p.needRead:
		h.needs = []need{{kind: readParameters, id: s.in.inst.ID}}
	case s.p.needTemplates:
		h.needs = []need{{kind: readTemplates}}
	case s.p.action != nil:
		h.act, h.stop = s.p.action, true
	}
	return h
}

func (s *parametersStep) saw(n need, r seen) {
	if n.kind == readTemplates {
		s.in.templates = &templatesRead{list: r.templates, err: r.err}
		return
	}
	s.in.read = &parametersRead{list: r.parameters, err: r.err}
}

func (s *parametersStep) answered(res acted, err error) {
	if s.p.action.kind == actDeleteTemplate {
		s.in.deleted = &templateAnswer{err: err}
		return
	}
	a := &parametersAnswer{kind: s.p.action.kind, jobID: res.jobID, err: err}
	if res.parameters != nil {
		a.change = *res.parameters
	}
	s.in.answer = a
}

// render writes status.parameters (none while it would say nothing), and what status and the
// process remember of a restart sent.
func (s *parametersStep) render(a *answer) {
	a.st.Parameters = s.p.status
	if ps := s.p.status; ps != nil && ps.Changed != nil && len(ps.PendingRestart) > 0 && s.in.answer != nil && s.in.answer.kind == actUpdateParameters &&
		(s.in.answer.err == nil || outcomeUnknown(s.in.answer.err)) {
		if a.keep.pending == nil {
			a.keep.pending = map[string]pendingChange{}
		}
		a.keep.pending[s.in.inst.ID] = pendingChange{names: ps.PendingRestart, restartRequest: ps.RestartRequest, changed: ps.Changed.Time}
	}
	if ps := s.p.status; ps != nil && ps.Generation == 0 && ps.Template == "" && len(ps.Applied) == 0 && len(ps.PendingRestart) == 0 {
		a.st.Parameters = nil
	}
	if s.p.operation != nil {
		a.st.Operation = s.p.operation
		a.keep.restarts = append(a.keep.restarts, oneShotKey(s.uid, OpParametersRestart, s.p.restartKey))
	}
}
