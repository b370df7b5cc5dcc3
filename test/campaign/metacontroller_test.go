package campaign

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"time"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/test/testdata"
)

const (
	secretGroup = "Secret.v1"
	jobGroup    = "Job.batch/v1"
)

// metacontroller plays Metacontroller for one Rds object: it sends the request envelope as the
// captured requests show it, replaces the parent's status with each applied answer, and keeps
// exactly the children the last applied answer returned. The cluster's part is played too: a Job
// the campaign marks Complete is observed with that condition from then on.
type metacontroller struct {
	w        *world
	parent   map[string]any
	children map[string]map[string]json.RawMessage
	complete map[string]bool // Jobs the cluster finished
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
type hookResponse struct {
	Status             v1alpha1.RdsStatus `json:"status"`
	Children           []json.RawMessage  `json:"children"`
	ResyncAfterSeconds float64            `json:"resyncAfterSeconds"`
	Finalized          bool               `json:"finalized"`
}

// newObject returns a Metacontroller for the sample Rds object, edited by edit.
func (w *world) newObject(edit func(spec map[string]any)) *metacontroller {
	var parent map[string]any
	require.NoError(w.t, json.Unmarshal([]byte(testdata.SampleRds), &parent))
	parent["metadata"] = map[string]any{
		"name": objectName, "namespace": objectNamespace, "uid": "6a3c7f0e-1d2b-4c5a-9e8f-0123456789ab",
		"generation": int64(1), "resourceVersion": "1",
		"finalizers": []any{"metacontroller.io/compositecontroller-rds-controller"},
	}
	edit(parent["spec"].(map[string]any))
	return &metacontroller{
		w: w, parent: parent, complete: map[string]bool{},
		children: map[string]map[string]json.RawMessage{secretGroup: {}, jobGroup: {}},
	}
}

func (m *metacontroller) spec() map[string]any { return m.parent["spec"].(map[string]any) }
func (m *metacontroller) meta() map[string]any { return m.parent["metadata"].(map[string]any) }
func (m *metacontroller) generation() int64    { return m.meta()["generation"].(int64) }
func (m *metacontroller) deleting() bool       { return m.meta()["deletionTimestamp"] != nil }

// edit changes the spec as a user would: the generation moves on.
func (m *metacontroller) edit(change func(spec map[string]any)) {
	change(m.spec())
	m.meta()["generation"] = m.generation() + 1
}

// markDeleted sets the deletionTimestamp: from now on Metacontroller calls /finalize.
func (m *metacontroller) markDeleted(at time.Time) {
	m.meta()["deletionTimestamp"] = at.Format(time.RFC3339)
}

// request builds the next request from the current observation and remembers it.
func (m *metacontroller) request() *request {
	ctrl, err := captured()
	require.NoError(m.w.t, err)
	finalizing := m.deleting()
	req := maps.Clone(ctrl[finalizing])
	req["parent"], req["children"], req["related"], req["finalizing"] = m.parent, m.children, map[string]any{}, finalizing
	body, err := json.Marshal(req)
	require.NoError(m.w.t, err)
	path := "/sync"
	if finalizing {
		path = "/finalize"
	}
	r := &request{path: path, body: body, generation: m.generation()}
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
	var resp hookResponse
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	require.NoError(m.w.t, dec.Decode(&resp), "seed=%d: %s", m.w.seed, body)
	return &resp
}

// apply makes an answer the new observation: status replaced whole, exactly its children kept.
func (m *metacontroller) apply(resp *hookResponse) {
	raw, err := json.Marshal(resp.Status)
	require.NoError(m.w.t, err)
	var status map[string]any
	require.NoError(m.w.t, json.Unmarshal(raw, &status))
	m.parent["status"] = status
	next := map[string]map[string]json.RawMessage{secretGroup: {}, jobGroup: {}}
	for _, child := range resp.Children {
		group, name := childKey(m, child)
		require.Contains(m.w.t, next, group, "seed=%d: a child of a type the CompositeController does not declare", m.w.seed)
		if group == jobGroup && m.complete[name] {
			child = completed(m, child)
		}
		next[group][name] = child
	}
	m.children = next
}

// finishJobs marks every observed Job Complete, as the cluster does once its Pod exits 0.
func (m *metacontroller) finishJobs() {
	for name, raw := range m.children[jobGroup] {
		if !m.complete[name] {
			m.complete[name] = true
			m.children[jobGroup][name] = completed(m, raw)
		}
	}
}

// completed returns the Job with a Complete condition.
func completed(m *metacontroller, raw json.RawMessage) json.RawMessage {
	var job batchv1.Job
	require.NoError(m.w.t, json.Unmarshal(raw, &job))
	job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	out, err := json.Marshal(&job)
	require.NoError(m.w.t, err)
	return out
}

func childKey(m *metacontroller, raw json.RawMessage) (group, name string) {
	var obj struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	require.NoError(m.w.t, json.Unmarshal(raw, &obj))
	return obj.Kind + "." + obj.APIVersion, obj.Metadata.Name
}

// secretIn returns the Secret with this name among an answer's children, or nil.
func secretIn(m *metacontroller, children []json.RawMessage, name string) *corev1.Secret {
	for _, raw := range children {
		if group, n := childKey(m, raw); group == secretGroup && n == name {
			var s corev1.Secret
			require.NoError(m.w.t, json.Unmarshal(raw, &s))
			return &s
		}
	}
	return nil
}

// retryable reports whether Metacontroller treats a hook's answer as an error to retry later,
// leaving status and children as they are.
func retryable(code int) bool {
	return code == http.StatusTooManyRequests || code == http.StatusInternalServerError
}
