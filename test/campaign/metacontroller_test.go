package campaign

import (
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/mcsps/rds-lambda-controller/sync/hook"
	standin "github.com/mcsps/rds-lambda-controller/test/metacontroller"
	"github.com/mcsps/rds-lambda-controller/test/testdata"
)

// metacontroller plays Metacontroller for one Rds object through the shared stand-in
// (test/metacontroller), which builds each request from what the cluster holds and applies each
// answer as Metacontroller does. The campaign keeps the requests it sent, to replay a stale
// observation and to leave an answer unapplied; the cluster's part is played too: a Job the
// campaign marks Complete is observed with that condition until it is deleted.
type metacontroller struct {
	w   *world
	obj *standin.Object
	// parent is obj.Parent, the stored object.
	parent map[string]any
	// sent are the last two requests, for replaying a stale observation.
	sent [2]*request
}

// request is one hook request as sent.
type request struct {
	path       string
	body       []byte
	generation int64
}

// hookResponse is the union of the sync and finalize answers, decoded strictly.
type hookResponse = standin.Answer

// newObject returns a Metacontroller for the sample Rds object, edited by edit.
func (w *world) newObject(edit func(spec map[string]any)) *metacontroller {
	var parent map[string]any
	require.NoError(w.t, json.Unmarshal([]byte(testdata.SampleRds), &parent))
	parent["metadata"] = map[string]any{
		"name": objectName, "namespace": objectNamespace, "uid": "6a3c7f0e-1d2b-4c5a-9e8f-0123456789ab",
		"generation": int64(1), "resourceVersion": "1",
		"finalizers": []any{standin.Finalizer},
	}
	edit(parent["spec"].(map[string]any))
	obj := standin.New(parent)
	return &metacontroller{w: w, obj: obj, parent: obj.Parent}
}

func (m *metacontroller) spec() map[string]any { return m.obj.Spec() }
func (m *metacontroller) generation() int64    { return m.obj.Generation() }
func (m *metacontroller) deleting() bool       { return m.obj.Deleting() }

// edit changes the spec as a user would: the generation moves on.
func (m *metacontroller) edit(change func(spec map[string]any)) { m.obj.Edit(change) }

// markDeleted sets the deletionTimestamp: from now on Metacontroller calls /finalize.
func (m *metacontroller) markDeleted(at time.Time) { m.obj.Delete(at) }

// request builds the next request from the current observation and remembers it.
func (m *metacontroller) request() *request {
	body, err := m.obj.Body()
	require.NoError(m.w.t, err)
	r := &request{path: m.obj.Path(), body: body, generation: m.generation()}
	m.sent[0], m.sent[1] = m.sent[1], r
	return r
}

// stale is the request before the last one, if it observed the same generation on the same hook:
// an informer cache that lags behind the last answer's status and children.
func (m *metacontroller) stale() *request {
	prev, last := m.sent[0], m.sent[1]
	if prev == nil || last == nil || prev.path != last.path || prev.generation != m.generation() {
		return nil
	}
	return prev
}

// decode reads a 200 answer strictly, as Metacontroller decodes hook answers.
func (m *metacontroller) decode(body []byte) *hookResponse {
	resp, err := standin.Decode(body)
	require.NoError(m.w.t, err, "seed=%d: %s", m.w.seed, body)
	return resp
}

// apply makes an answer the new observation, as Metacontroller does. The hooks never change a Job
// they returned before: Jobs are Recreate, so a changed Job would run again.
//
// NOTE: this campaign's own copy of Metacontroller used to replace a changed Job in place, keeping
// its completion; the stand-in recreates it, as the CompositeController declares, and this check
// makes the promise the old rule hid explicit.
func (m *metacontroller) apply(resp *hookResponse) {
	require.NoError(m.w.t, m.obj.Apply(resp), "seed=%d", m.w.seed)
	require.Empty(m.w.t, m.obj.Changes().Recreated, "seed=%d: the answer changed a Job it returned before", m.w.seed)
}

// finishJobs marks every observed Job Complete, as the cluster does once its Pod exits 0.
func (m *metacontroller) finishJobs() {
	for name, job := range m.obj.Jobs {
		if !slices.ContainsFunc(job.Status.Conditions, func(c batchv1.JobCondition) bool {
			return c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue
		}) {
			m.obj.FinishJob(name, batchv1.JobComplete)
		}
	}
}

// secretIn returns the Secret with this name among an answer's children, or nil.
func secretIn(resp *hookResponse, name string) *corev1.Secret { return resp.Secret(name) }

// retryable reports whether Metacontroller treats a hook's answer as an error to retry later,
// leaving status and children as they are.
func retryable(code int) bool {
	return code == http.StatusTooManyRequests || code == http.StatusInternalServerError
}

const secretGroup = hook.SecretGroup
