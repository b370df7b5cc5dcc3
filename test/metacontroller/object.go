// Package metacontroller is the tests' stand-in for Metacontroller v4.17.2 and the cluster behind
// it, for one Rds parent. It builds each hook request from what the cluster holds and applies each
// answer the way Metacontroller does (see test/testdata/metacontroller for the requests a real one
// sent):
//
//   - status is replaced whole, plus observedGeneration, the parent's generation;
//   - a child not yet observed is created, with an ownerReference, a controller-uid label and the
//     last-applied annotation;
//   - an observed child that the answer changes is updated in place (Secrets, InPlace) or deleted
//     now and created again by a later answer (Jobs, Recreate), as manifests/compositecontroller.yaml
//     declares;
//   - an observed child the answer leaves out is deleted;
//   - an answer that is an error (any status but 200, a body that does not decode) changes nothing;
//   - finalized: true removes the finalizer: the object is gone.
//
// It serves in-process callers (Object.Sync and Object.Finalize call a Hooks, which
// *reconcile.Reconciler is) and callers over HTTP (Object.Post). Callers that play Metacontroller's
// faults (duplicate calls, stale observations, lost answers) use the parts: Body builds a request
// from the cluster, Decode reads an answer, Apply makes it the cluster's state.
//
// NOTE: this package must not import package sync: sync's own tests import it.
package metacontroller

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
)

const (
	// Finalizer is what Metacontroller adds before the first call when a finalize hook is set.
	Finalizer = "metacontroller.io/compositecontroller-rds-controller"
	// AnnotationLastApplied holds a child as the hook last returned it, for the three-way merge.
	AnnotationLastApplied = "metacontroller.k8s.io/last-applied-configuration"
	// LabelControllerUID is the label generateSelector puts on every child.
	LabelControllerUID = "controller-uid"
)

// Object is one Rds parent as the API server holds it, its children as the informers show them,
// and the related Secrets the customize hook asked for.
type Object struct {
	// Parent is the object as stored, status included; tests edit it as a user would, by JSON.
	Parent map[string]any
	// Secrets and Jobs are the observed children, by name. Tests change them as the cluster
	// would (a Job finishing) or as a lagging informer would (an older Secret).
	Secrets map[string]*corev1.Secret
	Jobs    map[string]*batchv1.Job
	// Related are the related Secrets by name, sent under "Secret.v1".
	Related map[string]*corev1.Secret
	// Version is the hook version, hook.V1 (children keyed by name, as the project's
	// CompositeController pins) or hook.V2 (keyed by namespace/name).
	Version string

	gone    bool
	changes Changes
	// sentGeneration is the parent's generation in the last request built (Body): Metacontroller
	// writes it as status.observedGeneration with the answer, whatever the object's generation
	// is by then. 0 before any request: the object's own.
	sentGeneration int64
}

// New returns the stored object for this parent, with no children. The parent must carry its
// metadata; a parent without finalizers gets Metacontroller's.
func New(parent map[string]any) *Object {
	o := &Object{Parent: parent, Secrets: map[string]*corev1.Secret{}, Jobs: map[string]*batchv1.Job{},
		Related: map[string]*corev1.Secret{}, Version: hook.V1}
	if _, ok := o.Meta()["finalizers"]; !ok {
		o.Meta()["finalizers"] = []any{Finalizer}
	}
	return o
}

// NewRds is New for a typed object. A zero status is left out, as on the first call.
func NewRds(rds v1alpha1.Rds) *Object {
	if rds.APIVersion == "" {
		rds.APIVersion, rds.Kind = v1alpha1.APIVersion, v1alpha1.Kind
	}
	parent := mustJSONMap(rds)
	if isZeroStatus(rds.Status) {
		delete(parent, "status")
	}
	return New(parent)
}

// Meta is the parent's metadata, to edit in place.
func (o *Object) Meta() map[string]any { return child(o.Parent, "metadata") }

// Spec is the parent's spec, to edit in place.
func (o *Object) Spec() map[string]any { return child(o.Parent, "spec") }

// Generation is the parent's metadata.generation.
func (o *Object) Generation() int64 { return toInt64(o.Meta()["generation"]) }

// Edit changes the spec as a user would: the generation moves on.
func (o *Object) Edit(change func(spec map[string]any)) {
	change(o.Spec())
	o.Meta()["generation"] = o.Generation() + 1
}

// EditRds is Edit on the typed spec.
func (o *Object) EditRds(change func(*v1alpha1.RdsSpec)) {
	rds := o.Rds()
	change(&rds.Spec)
	o.Parent["spec"] = mustJSONMap(rds.Spec)
	o.Meta()["generation"] = o.Generation() + 1
}

// Rds is the stored parent, typed.
func (o *Object) Rds() v1alpha1.Rds {
	var rds v1alpha1.Rds
	mustRoundTrip(o.Parent, &rds)
	return rds
}

// Status is the stored status, typed (zero before the first applied answer).
func (o *Object) Status() v1alpha1.RdsStatus {
	var st v1alpha1.RdsStatus
	if raw, ok := o.Parent["status"]; ok {
		mustRoundTrip(raw, &st)
	}
	return st
}

// SetStatus stores a status as if an earlier answer had returned it.
func (o *Object) SetStatus(st v1alpha1.RdsStatus) { o.Parent["status"] = mustJSONMap(st) }

// Delete sets the deletionTimestamp, as kubectl delete does: from now on Metacontroller calls
// finalize.
func (o *Object) Delete(at time.Time) {
	if o.Meta()["deletionTimestamp"] == nil {
		o.Meta()["deletionTimestamp"] = at.UTC().Format(time.RFC3339)
	}
}

// Deleting reports whether the parent has a deletionTimestamp.
func (o *Object) Deleting() bool { return o.Meta()["deletionTimestamp"] != nil }

// Gone reports whether an applied finalize answer released the object.
func (o *Object) Gone() bool { return o.gone }

// Path is the hook Metacontroller calls next: /finalize once the object is being deleted.
func (o *Object) Path() string {
	if o.Deleting() {
		return "/finalize"
	}
	return "/sync"
}

// FinishJob marks an observed Job finished with this condition, as the cluster does once its Pod
// exits. It reports whether the Job is observed.
func (o *Object) FinishJob(name string, typ batchv1.JobConditionType) bool {
	job := o.Jobs[name]
	if job == nil {
		return false
	}
	job.Status.Conditions = append(job.Status.Conditions, batchv1.JobCondition{Type: typ, Status: corev1.ConditionTrue})
	return true
}

// Answer is a sync or finalize answer as Metacontroller reads it.
type Answer struct {
	Status             v1alpha1.RdsStatus `json:"status"`
	Children           []json.RawMessage  `json:"children"`
	ResyncAfterSeconds float64            `json:"resyncAfterSeconds"`
	Finalized          bool               `json:"finalized"`
}

// Secret is the answer's child Secret with this name, or nil.
func (a *Answer) Secret(name string) *corev1.Secret {
	return answerChild[corev1.Secret](a, hook.SecretGroup, name)
}

// Job is the answer's child Job with this name, or nil.
func (a *Answer) Job(name string) *batchv1.Job {
	return answerChild[batchv1.Job](a, hook.JobGroup, name)
}

// answerChild is the answer's child of this type and name, decoded, or nil.
func answerChild[T any](a *Answer, group, name string) *T {
	for _, raw := range a.Children {
		var c childRef
		if json.Unmarshal(raw, &c) == nil && c.group() == group && c.Metadata.Name == name {
			out := new(T)
			mustUnmarshal(raw, out)
			return out
		}
	}
	return nil
}

// childRef is what identifies a child.
type childRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

func (c childRef) group() string { return c.Kind + "." + c.APIVersion }

// ErrHook marks an answer Metacontroller treats as a sync error: it changes nothing.
var ErrHook = errors.New("hook error")

func child(m map[string]any, key string) map[string]any {
	c, ok := m[key].(map[string]any)
	if !ok {
		c = map[string]any{}
		m[key] = c
	}
	return c
}

func toInt64(v any) int64 {
	switch n := v.(type) {
	case int:
		return int64(n)
	case int64:
		return n
	case int32:
		return int64(n)
	case float64:
		return int64(n)
	case json.Number:
		i, _ := n.Int64()
		return i
	}
	return 0
}

func isZeroStatus(st v1alpha1.RdsStatus) bool {
	b, _ := json.Marshal(st)
	return string(b) == "{}"
}

// mustJSONMap turns a typed value into the JSON object the API server would store.
func mustJSONMap(v any) map[string]any {
	var m map[string]any
	mustRoundTrip(v, &m)
	return m
}

// mustRoundTrip copies in into out through JSON, times in UTC.
func mustRoundTrip(in, out any) {
	b, err := json.Marshal(in)
	if err != nil {
		panic(fmt.Sprintf("metacontroller: %v", err))
	}
	mustUnmarshal(b, out)
	inUTC(out)
}

func mustUnmarshal(b []byte, out any) {
	if err := json.Unmarshal(b, out); err != nil {
		panic(fmt.Sprintf("metacontroller: %v", err))
	}
}

// clone copies a JSON object deeply.
func clone(m map[string]any) map[string]any {
	out := maps.Clone(m)
	for k, v := range out {
		out[k] = cloneValue(v)
	}
	return out
}

func cloneValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return clone(v)
	case []any:
		out := make([]any, len(v))
		for i := range v {
			out[i] = cloneValue(v[i])
		}
		return out
	}
	return v
}
