package reconcile

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// TestViewMaxAge: only an object the last call left steady may read the shared view; everything
// else reads its instance fresh.
func TestViewMaxAge(t *testing.T) {
	const steady = 5 * time.Minute
	cond := func(typ string, s metav1.ConditionStatus) v1alpha1.Condition {
		return v1alpha1.Condition{Type: typ, Status: s, Reason: "R", Message: "M."}
	}
	steadyRds := func() *v1alpha1.Rds {
		p := &v1alpha1.Rds{}
		p.Generation = 3
		p.Status = v1alpha1.RdsStatus{
			ID: "i1", Status: cloud.StatusActive, ObservedGeneration: 3,
			Conditions: []v1alpha1.Condition{cond(v1alpha1.ConditionReady, metav1.ConditionTrue), cond(v1alpha1.ConditionSynced, metav1.ConditionTrue)},
		}
		return p
	}
	for name, tc := range map[string]struct {
		reason string
		edit   func(p *v1alpha1.Rds)
		want   time.Duration
	}{
		"steady": {
			reason: "ACTIVE, nothing in flight, spec observed, Ready and Synced True: the view",
			edit:   func(*v1alpha1.Rds) {}, want: steady,
		},
		"operation in flight": {
			reason: "an operation's end is what the call waits for",
			edit:   func(p *v1alpha1.Rds) { p.Status.Operation = &v1alpha1.Operation{Type: OpResize, JobID: "j"} }, want: 0,
		},
		"transitional status": {
			reason: "a status that is about to change",
			edit:   func(p *v1alpha1.Rds) { p.Status.Status = cloud.StatusModifying }, want: 0,
		},
		"backing up": {
			reason: "Ready but transitional",
			edit:   func(p *v1alpha1.Rds) { p.Status.Status = cloud.StatusBackingUp }, want: 0,
		},
		"no status yet": {
			reason: "the first observation of an instance",
			edit:   func(p *v1alpha1.Rds) { p.Status.Status = "" }, want: 0,
		},
		"spec changed": {
			reason: "a pending spec change may lead to a mutation",
			edit:   func(p *v1alpha1.Rds) { p.Generation = 4 }, want: 0,
		},
		"being deleted": {
			reason: "finalize decides to delete",
			edit:   func(p *v1alpha1.Rds) { now := metav1.Now(); p.DeletionTimestamp = &now }, want: 0,
		},
		"not ready": {
			reason: "FAILED, FROZEN, ...: watch it closely",
			edit: func(p *v1alpha1.Rds) {
				p.Status.Status = cloud.StatusFrozen
				p.Status.Conditions[0] = cond(v1alpha1.ConditionReady, metav1.ConditionFalse)
			}, want: 0,
		},
		"not synced": {
			reason: "the last call met a problem (busy, refused, unavailable)",
			edit:   func(p *v1alpha1.Rds) { p.Status.Conditions[1] = cond(v1alpha1.ConditionSynced, metav1.ConditionFalse) }, want: 0,
		},
		"no conditions": {
			reason: "a status without conditions was not written by a steady call",
			edit:   func(p *v1alpha1.Rds) { p.Status.Conditions = nil }, want: 0,
		},
	} {
		t.Run(name, func(t *testing.T) {
			p := steadyRds()
			tc.edit(p)
			assert.Equal(t, tc.want, viewMaxAge(p, steady), tc.reason)
		})
	}
}

// TestReadOnlyRefusesEveryChange: a call that read the shared view may read through readOnly but
// change nothing. Every method of cloud.Cloud that is not a read must be readOnly's own (a promoted
// one would reach OTC); it is called here with zero arguments on a readOnly around no client, where a
// promoted method would panic and readOnly's own answers errViewStale.
func TestReadOnlyRefusesEveryChange(t *testing.T) {
	reads := map[string]bool{
		"Region": true, "GetInstance": true, "FindInstancesByName": true, "GetJob": true,
		"ResolveNetwork": true, "ListBackups": true, "ListFlavors": true, "ListRestoreTimes": true,
		"ListErrorLogs": true, "ListSlowLogs": true, "GetBackupPolicy": true, "InstanceParameters": true,
		"ListParameterTemplates": true, "TemplateParameters": true,
	}
	ro := reflect.ValueOf(readOnly{})
	iface := reflect.TypeFor[cloud.Cloud]()
	for i := range iface.NumMethod() {
		name := iface.Method(i).Name
		if reads[name] {
			continue
		}
		t.Run(name, func(t *testing.T) {
			m := ro.MethodByName(name)
			args := make([]reflect.Value, m.Type().NumIn())
			for j := range args {
				args[j] = reflect.Zero(m.Type().In(j))
			}
			var out []reflect.Value
			assert.NotPanics(t, func() { out = m.Call(args) }, "%s is not readOnly's own: it would reach OTC", name)
			if len(out) > 0 {
				err, _ := out[len(out)-1].Interface().(error)
				assert.ErrorIs(t, err, errViewStale)
			}
		})
	}
	assert.ErrorIs(t, readOnly{}.SetStorageAutoscaling(context.Background(), "", cloud.StorageAutoscaling{}), errViewStale, "autopilot's change too")
}
