package reconcile

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// Parameters at create (issue #20): a new instance starts with spec.parameters in effect, so that it
// never becomes ACTIVE with values it then needs a restart to lose. OTC takes them at create only
// through a parameter template (CreateInstanceOpts.ConfigurationID), so the controller makes one for
// the object, before the create:
//
//  1. The project's templates are listed; the engine version's default template says what OTC
//     takes (names, types, ranges, read-only), and spec.parameters is checked against it before
//     anything is made. A bad value gets the InvalidParameters condition and nothing is created.
//  2. The object's template is made (the call's one change) under a deterministic name: the
//     object's hash (cluster, namespace, name, uid) and a hash of the values, so a lost answer
//     finds it again and a spec edited before the create makes another. Its description names the
//     object's uid: a template is the object's only if both say so.
//  3. The create names it, once a read of the template shows it holds exactly spec.parameters
//     (every other parameter at the default template's value): a template someone changed, or
//     made under the object's name, is refused (ParameterTemplateChanged), never used. OTC gives
//     the instance its own copy of the values.
//  4. Once the instance is ACTIVE, the parameters step deletes the object's templates (one per
//     call); status.parameters.template remembers that some may remain.
//
// NOTE: templates carry no tags in OTC, hence the name and the description. A namespace's login
// lists only its own project's templates; the uid in both keeps one object from using or deleting
// another's, in any namespace. A restore into a new instance (restorefrom) takes no template: its
// parameters are set once it is ACTIVE.

// defaultTemplate is the engine version's default template, or nil: "8.0" for a datastoreversion
// 8.0 or 8.0.28. NOTE: OTC names the datastore in lowercase (mysql, postgresql, sqlserver).
func defaultTemplate(list []cloud.ParameterTemplate, engine, version string) *cloud.ParameterTemplate {
	for i, t := range list {
		if !t.UserDefined && strings.EqualFold(t.Engine, engine) && (t.Version == version || strings.HasPrefix(version, t.Version+".")) {
			return &list[i]
		}
	}
	return nil
}

// templateInput is all the template step decides on.
type templateInput struct {
	spec *v1alpha1.RdsSpec
	me   owner
	// templates is the project's template list; catalog the default template's parameters; nil
	// until the plan asked for them.
	templates *templatesRead
	catalog   *parametersRead
	// held is the object's template's parameters, once the plan asked for them.
	held *parametersRead
	// answer is OTC's answer to the template's create.
	answer *templateAnswer
}

// templatesRead is a read of the template list, or its error.
type templatesRead struct {
	list []cloud.ParameterTemplate
	err  error
}

// templateAnswer is OTC's answer to a template's create or delete.
type templateAnswer struct {
	made *cloud.ParameterTemplate
	err  error
}

// templatePlan is the decision of the template step.
type templatePlan struct {
	needTemplates bool
	needCatalog   string // the default template's id
	needHeld      string // the object's template's id
	action        *action
	// template is the object's template the create names; nil: none.
	template *cloud.ParameterTemplate
	// made is the name of the template the plan's action creates, recorded whatever the answer:
	// an object deleted before its create goes only once it is gone (templatesGoneStep).
	made   string
	tells  []*outcome
	failed error
	stop   bool
	logs   []logLine
}

// planTemplate decides the template a create names. It calls nothing.
func planTemplate(in templateInput) templatePlan {
	spec := in.spec
	if len(spec.Parameters) == 0 || spec.Restorefrom != nil {
		return templatePlan{}
	}
	switch {
	case in.templates == nil:
		return templatePlan{needTemplates: true}
	case in.templates.err != nil:
		return templatePlan{failed: in.templates.err, stop: true}
	}
	name := TemplateName(in.me, spec.Parameters)
	def := defaultTemplate(in.templates.list, spec.Datastoretype, spec.Datastoreversion)
	if def == nil {
		msg := fmt.Sprintf("OTC offers no default parameter template for %s %s: the parameters cannot be checked, so the instance is not created.", spec.Datastoretype, spec.Datastoreversion)
		return templatePlan{tells: invalidAtCreate(msg), stop: true}
	}
	switch {
	case in.catalog == nil:
		return templatePlan{needCatalog: def.ID}
	case in.catalog.err != nil:
		return templatePlan{failed: in.catalog.err, stop: true}
	}
	catalog := catalogOf(in.catalog.list)
	if problems := checkParameters(spec.Parameters, catalog, &cloud.Instance{Engine: spec.Datastoretype, Version: spec.Datastoreversion}); len(problems) > 0 {
		return templatePlan{tells: invalidAtCreate(joinSentences(problems)), stop: true}
	}
	if i := slices.IndexFunc(in.templates.list, func(t cloud.ParameterTemplate) bool { return t.Name == name && templateOwned(t, in.me) }); i >= 0 {
		ours := &in.templates.list[i] // made by an earlier call for these values
		switch {
		case in.held == nil:
			return templatePlan{needHeld: ours.ID}
		case in.held.err != nil:
			return templatePlan{failed: in.held.err, stop: true}
		case !holdsExactly(in.held.list, catalog, spec.Parameters):
			return templatePlan{tells: refusedAtCreate(ReasonParameterTemplateChanged, fmt.Sprintf(
				"The parameter template %s in OTC does not hold exactly the spec's parameters: someone changed it. Delete it in OTC; the controller makes it again.", name)), stop: true}
		}
		return templatePlan{template: ours}
	}
	if slices.ContainsFunc(in.templates.list, func(t cloud.ParameterTemplate) bool { return t.Name == name }) {
		return templatePlan{tells: refusedAtCreate(ReasonParameterTemplateNameTaken, fmt.Sprintf(
			"A parameter template named %s that is not this object's exists in OTC: delete or rename it; the controller makes its own.", name)), stop: true}
	}
	opts := cloud.ParameterTemplateOpts{Name: name, Description: templateDescription(in.me), Engine: spec.Datastoretype,
		Version: def.Version, Values: maps.Clone(spec.Parameters)}
	if in.answer == nil {
		return templatePlan{action: &action{kind: actCreateTemplate, template: &opts}, stop: true}
	}
	p := templatePlan{stop: true, made: name}
	switch err := in.answer.err; {
	case cloud.KindOf(err) == cloud.KindConflict:
		// The name exists: an earlier create went through after all. The next call finds it.
		p.tells = []*outcome{ptr.To(notReady(ReasonCreating, "Creating the parameter template the instance starts with.", inFlight))}
	case err != nil:
		p.failed = err
	default:
		p.logs = []logLine{{slog.LevelInfo, "created parameter template", []any{"template", name, "id", in.answer.made.ID}}}
		p.tells = []*outcome{
			ptr.To(notReady(ReasonCreating, "Creating the parameter template the instance starts with.", inFlight)),
			ptr.To(syncedOK(ReasonReconcileSuccess, fmt.Sprintf("The parameter template %s holds the parameters the instance is created with.", name), inFlight).made()),
		}
	}
	return p
}

// holdsExactly reports whether a template's parameters are the spec's values and, for every
// parameter the spec does not name, the default template's (catalog).
func holdsExactly(held []cloud.Parameter, catalog map[string]cloud.Parameter, want map[string]string) bool {
	seen := 0
	for _, p := range held {
		if v, named := want[p.Name]; named {
			seen++
			if !sameValue(p.Type, v, p.Value) {
				return false
			}
		} else if def, ok := catalog[p.Name]; ok && !sameValue(p.Type, def.Value, p.Value) {
			return false
		}
	}
	return seen == len(want)
}

// invalidAtCreate is what a spec whose parameters OTC would not take says before the create.
func invalidAtCreate(msg string) []*outcome { return refusedAtCreate(ReasonInvalidParameters, msg) }

// refusedAtCreate is what a create the parameters hold back says: the Parameters condition and
// Synced say why, Ready that nothing is created.
func refusedAtCreate(reason, msg string) []*outcome {
	return []*outcome{
		ptr.To(parametersCondition(metav1.ConditionFalse, reason, msg)),
		wontAct(reason, msg),
		ptr.To(notReady(ReasonCreating, "The instance is not created yet; see the Synced condition.", waitsForUser)),
	}
}

// templateStep is the template step as the loop runs it: it runs before the create step, in a call
// that finds no instance.
type templateStep struct {
	in templateInput
	p  templatePlan
}

func newTemplateStep(c *call) *templateStep {
	return &templateStep{in: templateInput{spec: c.spec, me: c.me}}
}

func (s *templateStep) plan() head {
	s.p = planTemplate(s.in)
	h := head{tells: told(s.p.tells...), logs: s.p.logs, stop: s.p.stop, err: s.p.failed}
	switch {
	case s.p.needTemplates:
		h.needs = []need{{kind: readTemplates}}
	case s.p.needCatalog != "":
		h.needs = []need{{kind: readTemplateParameters, id: s.p.needCatalog}}
	case s.p.needHeld != "":
		h.needs = []need{{kind: readTemplateParameters, id: s.p.needHeld}}
	case s.p.action != nil:
		h.act = s.p.action
	}
	return h
}

func (s *templateStep) saw(n need, r seen) {
	switch n.kind {
	case readTemplates:
		s.in.templates = &templatesRead{list: r.templates, err: r.err}
	case readTemplateParameters:
		read := &parametersRead{list: r.parameters, err: r.err}
		if n.id == s.p.needHeld {
			s.in.held = read
		} else {
			s.in.catalog = read
		}
	}
}

func (s *templateStep) answered(res acted, err error) {
	s.in.answer = &templateAnswer{made: res.template, err: err}
}

// render records the template the create names: the parameters step deletes it once the
// instance is ACTIVE.
func (s *templateStep) render(a *answer) {
	name := s.p.made
	if s.p.template != nil {
		name = s.p.template.Name
	}
	if name == "" {
		return
	}
	ps := parametersStatusOf(a.st.Parameters)
	ps.Template = name
	a.st.Parameters = ps
}

// configurationID is the template the create names, or "".
func (s *templateStep) configurationID() string {
	if s.p.template == nil {
		return ""
	}
	return s.p.template.ID
}

// templatesGonePlan is the decision of the finalize call's last step: the object's parameter
// templates are deleted before the object goes.
type templatesGonePlan struct {
	needTemplates bool
	action        *action
	// gone says a listing shows none of the object's templates: the object may go.
	gone   bool
	tells  []*outcome
	failed error
	logs   []logLine
}

// planTemplatesGone deletes the object's parameter templates, one per call, when it is deleted
// while status.parameters.template says one may remain (its instance never became ACTIVE, or was
// deleted before the parameters step deleted them). It calls nothing.
//
// named says status.parameters.template names one. Without it the listing only makes sure (the
// name may have been lost): a login OTC does not let list templates made none, and the object
// goes.
//
// NOTE: planTemplateCleanup (parameters.go) deletes the same templates while the object lives,
// found the same way, but decides differently, so the two are kept apart: here a failed listing
// holds the object (but for the unauthorized one above), there it is only logged; here the object
// goes only once a later listing shows none of its templates, there status.parameters.template
// names the next one at once; and here the plan is the finalize call's last step alone, there it
// extends the parameters step's plan of the values and the restart.
func planTemplatesGone(templates *templatesRead, deleted *templateAnswer, me owner, named bool) templatesGonePlan {
	switch {
	case templates == nil:
		return templatesGonePlan{needTemplates: true}
	case templates.err != nil && !named && cloud.KindOf(templates.err) == cloud.KindUnauthorized:
		return templatesGonePlan{gone: true, logs: []logLine{{slog.LevelWarn, "could not list parameter templates", []any{"error", templates.err}}}}
	case templates.err != nil:
		return templatesGonePlan{failed: templates.err}
	}
	owned := ownedTemplates(templates.list, me)
	if len(owned) == 0 {
		return templatesGonePlan{gone: true}
	}
	if deleted == nil {
		return templatesGonePlan{action: &action{kind: actDeleteTemplate, templateID: owned[0].ID}}
	}
	if err := deleted.err; err != nil && cloud.KindOf(err) != cloud.KindNotFound {
		return templatesGonePlan{failed: err}
	}
	// Deleted: the object goes once a later listing shows none left.
	return templatesGonePlan{
		logs:  []logLine{{slog.LevelInfo, "deleted parameter template", []any{"template", owned[0].Name}}},
		tells: []*outcome{ptr.To(syncedOK(ReasonReconcileSuccess, "Deleting the parameter templates made for the create.", inFlight).made())},
	}
}

// templatesGoneStep is planTemplatesGone as the loop runs it, the last step of a finalize call
// (finalize.go).
type templatesGoneStep struct {
	me        owner
	named     bool
	templates *templatesRead
	deleted   *templateAnswer
	p         templatesGonePlan
}

func (s *templatesGoneStep) plan() head {
	s.p = planTemplatesGone(s.templates, s.deleted, s.me, s.named)
	h := head{tells: told(s.p.tells...), logs: s.p.logs, err: s.p.failed, stop: true}
	switch {
	case s.p.needTemplates:
		h.needs = []need{{kind: readTemplates}}
	case s.p.action != nil:
		h.act = s.p.action
	}
	return h
}

func (s *templatesGoneStep) saw(_ need, r seen) {
	s.templates = &templatesRead{list: r.templates, err: r.err}
}

func (s *templatesGoneStep) answered(_ acted, err error) { s.deleted = &templateAnswer{err: err} }

func (s *templatesGoneStep) render(a *answer) {
	if s.p.gone && a.st.Parameters != nil {
		ps := a.st.Parameters.DeepCopy()
		ps.Template = ""
		a.st.Parameters = ps
	}
}
