package reconcile

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// TestPlanTemplate is the decision of the parameter template a create names, as a table.
func TestPlanTemplate(t *testing.T) {
	me := owner{Cluster: "local", Namespace: "team-a", Name: "shop", UID: "uid-1"}
	other := owner{Cluster: "local", Namespace: "team-b", Name: "shop", UID: "uid-2"}
	values := map[string]string{"max_connections": "300", "innodb_buffer_pool_size": "3221225472"}
	name := TemplateName(me, values)
	def := cloud.ParameterTemplate{ID: "def-mysql-80", Name: "Default-MySQL-8.0", Engine: "mysql", Version: "8.0"}
	ours := cloud.ParameterTemplate{ID: "tpl-1", Name: name, Description: templateDescription(me), Engine: "mysql", Version: "8.0", UserDefined: true}
	// another object's template under our name (it cannot make one: the name hashes the uid),
	// and one without the description: neither is ours.
	forged := cloud.ParameterTemplate{ID: "tpl-2", Name: name, Description: templateDescription(other), UserDefined: true}
	catalog := []cloud.Parameter{
		{Name: "max_connections", Value: "2500", Type: "integer", ValueRange: "10-100000"},
		{Name: "innodb_buffer_pool_size", Value: "1073741824", Type: "integer", ValueRange: "5242880-18446744073709551615", RestartRequired: true},
	}
	opts := cloud.ParameterTemplateOpts{Name: name, Description: templateDescription(me), Engine: "MySQL", Version: "8.0", Values: values}
	oneValue := map[string]string{"innodb_buffer_pool_size": "3221225472"}
	oursOne := cloud.ParameterTemplate{ID: "tpl-9", Name: TemplateName(me, oneValue), Description: templateDescription(me), UserDefined: true}
	changedMsg := "The parameter template " + oursOne.Name + " in OTC does not hold exactly the spec's parameters: someone changed it. Delete it in OTC; the controller makes it again."
	creating := ptr.To(notReady(ReasonCreating, "Creating the parameter template the instance starts with.", inFlight))

	tests := []struct {
		reason    string
		spec      func(*v1alpha1.RdsSpec)
		templates *templatesRead
		catalog   *parametersRead
		held      *parametersRead
		answer    *templateAnswer
		want      templatePlan
	}{
		{reason: "no parameters: no template, the create goes on", spec: func(s *v1alpha1.RdsSpec) { s.Parameters = nil }, want: templatePlan{}},
		{
			reason: "a restore into a new instance takes no template: its parameters are set once it is ACTIVE",
			spec:   func(s *v1alpha1.RdsSpec) { s.Restorefrom = &v1alpha1.RestoreFrom{Instance: "src"} },
			want:   templatePlan{},
		},
		{reason: "the template list first", want: templatePlan{needTemplates: true}},
		{
			reason:    "the object's template exists (an earlier call made it): what it holds is read",
			templates: &templatesRead{list: []cloud.ParameterTemplate{def, ours}},
			catalog:   &parametersRead{list: catalog},
			want:      templatePlan{needHeld: "tpl-1"},
		},
		{
			reason:    "it holds exactly the spec's values, every other parameter the default's: the create names it",
			templates: &templatesRead{list: []cloud.ParameterTemplate{def, ours}},
			catalog:   &parametersRead{list: catalog},
			held:      &parametersRead{list: withValues(catalog, values)},
			want:      templatePlan{template: &ours},
		},
		{
			reason:    "someone changed it (another value, or a parameter the spec does not name): refused, never used",
			spec:      func(s *v1alpha1.RdsSpec) { s.Parameters = map[string]string{"innodb_buffer_pool_size": "3221225472"} },
			templates: &templatesRead{list: []cloud.ParameterTemplate{def, oursOne}},
			catalog:   &parametersRead{list: catalog},
			held:      &parametersRead{list: withValues(catalog, map[string]string{"innodb_buffer_pool_size": "3221225472", "max_connections": "10"})},
			want:      templatePlan{stop: true, tells: refusedAtCreate(ReasonParameterTemplateChanged, changedMsg)},
		},
		{
			reason:    "a template of the object's name that is not the object's: refused, neither used nor made again",
			templates: &templatesRead{list: []cloud.ParameterTemplate{def, forged}},
			catalog:   &parametersRead{list: catalog},
			want: templatePlan{stop: true, tells: refusedAtCreate(ReasonParameterTemplateNameTaken,
				"A parameter template named "+name+" that is not this object's exists in OTC: delete or rename it; the controller makes its own.")},
		},
		{
			reason:    "a template of our name another object describes is not ours: the default's catalog is read",
			templates: &templatesRead{list: []cloud.ParameterTemplate{def, forged}},
			want:      templatePlan{needCatalog: "def-mysql-80"},
		},
		{
			reason:    "values checked against the default template, then the template is made: the call's change",
			templates: &templatesRead{list: []cloud.ParameterTemplate{def}},
			catalog:   &parametersRead{list: catalog},
			want:      templatePlan{action: &action{kind: actCreateTemplate, template: &opts}, stop: true},
		},
		{
			reason:    "made: the next call creates the instance with it",
			templates: &templatesRead{list: []cloud.ParameterTemplate{def}},
			catalog:   &parametersRead{list: catalog},
			answer:    &templateAnswer{made: &ours},
			want: templatePlan{stop: true, made: name, tells: []*outcome{creating,
				ptr.To(syncedOK(ReasonReconcileSuccess, "The parameter template "+name+" holds the parameters the instance is created with.", inFlight).made())}},
		},
		{
			reason:    "the name was taken meanwhile (a lost answer): the next call finds it",
			templates: &templatesRead{list: []cloud.ParameterTemplate{def}},
			catalog:   &parametersRead{list: catalog},
			answer:    &templateAnswer{err: &cloud.Error{Kind: cloud.KindConflict, Op: "CreateParameterTemplate"}},
			want:      templatePlan{stop: true, made: name, tells: []*outcome{creating}},
		},
		{
			reason:    "an out-of-range value: nothing is made or created",
			spec:      func(s *v1alpha1.RdsSpec) { s.Parameters = map[string]string{"max_connections": "5"} },
			templates: &templatesRead{list: []cloud.ParameterTemplate{def}},
			catalog:   &parametersRead{list: catalog},
			want:      templatePlan{stop: true, tells: invalidAtCreate("parameters max_connections: 5 is outside its range 10-100000.")},
		},
		{
			reason:    "no default template for the engine version: nothing can be checked, nothing is created",
			templates: &templatesRead{list: []cloud.ParameterTemplate{ours}},
			spec:      func(s *v1alpha1.RdsSpec) { s.Parameters = map[string]string{"max_connections": "301"} },
			want: templatePlan{stop: true, tells: invalidAtCreate(
				"OTC offers no default parameter template for MySQL 8.0: the parameters cannot be checked, so the instance is not created.")},
		},
		{
			reason:    "a datastoreversion with its minor version finds the major version's default template",
			spec:      func(s *v1alpha1.RdsSpec) { s.Datastoreversion = "8.0.28" },
			templates: &templatesRead{list: []cloud.ParameterTemplate{{ID: "def-mysql-57", Engine: "mysql", Version: "5.7"}, def}},
			want:      templatePlan{needCatalog: "def-mysql-80"},
		},
		{
			reason:    "the list could not be read: the call stops on the error",
			templates: &templatesRead{err: &cloud.Error{Kind: cloud.KindUnavailable}},
			want:      templatePlan{failed: &cloud.Error{Kind: cloud.KindUnavailable}, stop: true},
		},
	}
	for _, tc := range tests {
		t.Run(tc.reason, func(t *testing.T) {
			spec := v1alpha1.RdsSpec{Datastoretype: "MySQL", Datastoreversion: "8.0", Parameters: values}
			if tc.spec != nil {
				tc.spec(&spec)
			}
			got := planTemplate(templateInput{spec: &spec, me: me, templates: tc.templates, catalog: tc.catalog, held: tc.held, answer: tc.answer})
			got.logs = nil
			assert.Equal(t, tc.want, got, tc.reason)
		})
	}
}

// TestTemplateNames: a template's name is OTC's (at most 64 of letters, digits, - _ .), the
// object's prefix, and changes with the values; its description is OTC's too.
func TestTemplateNames(t *testing.T) {
	long := owner{Cluster: "local", Namespace: strings.Repeat("n", 63), Name: strings.Repeat("x", 253), UID: "0f9c7c0e-4a0e-4cf0-9d43-6d1b0b3b2d51"}
	a := TemplateName(long, map[string]string{"max_connections": "300"})
	b := TemplateName(long, map[string]string{"max_connections": "301"})
	assert.LessOrEqual(t, len(a), 64)
	assert.Regexp(t, `^[A-Za-z0-9_.-]+$`, a)
	assert.True(t, strings.HasPrefix(a, TemplatePrefix(long)))
	assert.NotEqual(t, a, b, "other values, another template")
	assert.NotEqual(t, TemplatePrefix(long), TemplatePrefix(owner{Cluster: "local", Namespace: long.Namespace, Name: long.Name, UID: "another"}),
		"an object made again (a new uid) never takes the old one's templates")
	d := templateDescription(long)
	assert.LessOrEqual(t, len(d), 256)
	assert.NotContains(t, d, "!")
	for _, c := range `<>='&"` {
		assert.NotContains(t, d, string(c))
	}
	assert.True(t, templateOwned(cloud.ParameterTemplate{Name: a, Description: d, UserDefined: true}, long))
	assert.False(t, templateOwned(cloud.ParameterTemplate{Name: a, Description: d}, long), "a default template is nobody's")
}

// TestPlanTemplatesGone: a deleted object's parameter templates go before it does, one per call,
// another object's never.
func TestPlanTemplatesGone(t *testing.T) {
	me := owner{Cluster: "local", Namespace: "team-a", Name: "shop", UID: "uid-1"}
	other := owner{Cluster: "local", Namespace: "team-a", Name: "shop", UID: "uid-old"}
	mine := cloud.ParameterTemplate{ID: "t1", Name: TemplateName(me, map[string]string{"a": "1"}), Description: templateDescription(me), UserDefined: true}
	mine2 := cloud.ParameterTemplate{ID: "t2", Name: TemplateName(me, map[string]string{"a": "2"}), Description: templateDescription(me), UserDefined: true}
	theirs := cloud.ParameterTemplate{ID: "t3", Name: TemplateName(other, map[string]string{"a": "1"}), Description: templateDescription(other), UserDefined: true}
	first := ownedTemplates([]cloud.ParameterTemplate{mine, mine2}, me)[0]
	for _, tc := range []struct {
		reason    string
		templates *templatesRead
		deleted   *templateAnswer
		want      templatesGonePlan
	}{
		{reason: "the list first", want: templatesGonePlan{needTemplates: true}},
		{reason: "none of the object's: it may go (an earlier object of the same name's is not touched)",
			templates: &templatesRead{list: []cloud.ParameterTemplate{theirs}}, want: templatesGonePlan{gone: true}},
		{reason: "one of the object's: deleted, the call's change",
			templates: &templatesRead{list: []cloud.ParameterTemplate{theirs, mine2, mine}},
			want:      templatesGonePlan{action: &action{kind: actDeleteTemplate, templateID: first.ID}}},
		{reason: "deleted: the object goes once a later listing shows none",
			templates: &templatesRead{list: []cloud.ParameterTemplate{mine}}, deleted: &templateAnswer{},
			want: templatesGonePlan{tells: []*outcome{ptr.To(syncedOK(ReasonReconcileSuccess, "Deleting the parameter templates made for the create.", inFlight).made())}}},
		{reason: "already gone (NotFound) counts as deleted",
			templates: &templatesRead{list: []cloud.ParameterTemplate{mine}}, deleted: &templateAnswer{err: &cloud.Error{Kind: cloud.KindNotFound}},
			want: templatesGonePlan{tells: []*outcome{ptr.To(syncedOK(ReasonReconcileSuccess, "Deleting the parameter templates made for the create.", inFlight).made())}}},
		{reason: "refused: the object waits, the error is told",
			templates: &templatesRead{list: []cloud.ParameterTemplate{mine}}, deleted: &templateAnswer{err: &cloud.Error{Kind: cloud.KindBusy}},
			want: templatesGonePlan{failed: &cloud.Error{Kind: cloud.KindBusy}}},
	} {
		got := planTemplatesGone(tc.templates, tc.deleted, me, true)
		got.logs = nil
		assert.Equal(t, tc.want, got, tc.reason)
	}

	// Review (#20): status names no template, the spec names parameters: the listing only makes
	// sure. A login OTC does not let list templates made none: the object goes; any other
	// failure is waited out.
	unauthorized := &cloud.Error{Kind: cloud.KindUnauthorized}
	got := planTemplatesGone(&templatesRead{err: unauthorized}, nil, me, false)
	assert.True(t, got.gone, "not held for ever by a listing it may not make")
	got = planTemplatesGone(&templatesRead{err: unauthorized}, nil, me, true)
	assert.Equal(t, templatesGonePlan{failed: unauthorized}, got, "a template status names is waited for")
	unavailable := &cloud.Error{Kind: cloud.KindUnavailable}
	got = planTemplatesGone(&templatesRead{err: unavailable}, nil, me, false)
	assert.Equal(t, templatesGonePlan{failed: unavailable}, got)
	got = planTemplatesGone(&templatesRead{list: []cloud.ParameterTemplate{mine}}, nil, me, false)
	assert.Equal(t, &action{kind: actDeleteTemplate, templateID: mine.ID}, got.action, "found: deleted all the same")
}
