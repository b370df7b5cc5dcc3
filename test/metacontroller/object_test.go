package metacontroller

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
)

var t0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

func newObject() *Object {
	return NewRds(v1alpha1.Rds{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "team-a", UID: "uid-db", Generation: 3},
		Spec:       v1alpha1.RdsSpec{Datastoretype: "MySQL", Volumesize: 40},
	})
}

func secret(name, password string) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Data:       map[string][]byte{"password": []byte(password)},
	}
}

func job(name string, args ...string) *batchv1.Job {
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "logs", Image: "img", Args: args}},
		}}},
	}
}

func answer(t *testing.T, status v1alpha1.RdsStatus, children ...any) *Answer {
	t.Helper()
	body, err := json.Marshal(hook.FinalizeResponse{Status: &status, Children: children})
	require.NoError(t, err)
	a, err := Decode(body)
	require.NoError(t, err)
	return a
}

func TestApplyChildren(t *testing.T) {
	cases := map[string]struct {
		reason string
		before []any // applied first
		answer []any
		// edit changes the observed children between the two answers, as the cluster would.
		edit    func(o *Object)
		secrets map[string]string // name -> password observed afterwards
		jobs    map[string]bool   // name -> observed afterwards with the Complete condition
		changes Changes
	}{
		"create": {
			reason:  "children not observed yet are created",
			answer:  []any{secret("conn", "a"), job("logs-1")},
			secrets: map[string]string{"conn": "a"},
			jobs:    map[string]bool{"logs-1": false},
			changes: Changes{Created: []string{"Job/logs-1", "Secret/conn"}},
		},
		"unchanged": {
			reason:  "an unchanged child keeps what the cluster added to it, a finished Job's status too",
			before:  []any{secret("conn", "a"), job("logs-1")},
			edit:    func(o *Object) { o.FinishJob("logs-1", batchv1.JobComplete) },
			answer:  []any{secret("conn", "a"), job("logs-1")},
			secrets: map[string]string{"conn": "a"},
			jobs:    map[string]bool{"logs-1": true},
		},
		"secret updated in place": {
			reason:  "Secrets are InPlace",
			before:  []any{secret("conn", "a")},
			answer:  []any{secret("conn", "b")},
			secrets: map[string]string{"conn": "b"},
			jobs:    map[string]bool{},
			changes: Changes{Updated: []string{"Secret/conn"}},
		},
		"secret changed behind our back is set back": {
			reason: "the answer's fields win over the cluster's",
			before: []any{secret("conn", "a")},
			edit: func(o *Object) {
				o.Secrets["conn"].Data["password"] = []byte("edited")
			},
			answer:  []any{secret("conn", "a")},
			secrets: map[string]string{"conn": "a"},
			jobs:    map[string]bool{},
			changes: Changes{Updated: []string{"Secret/conn"}},
		},
		"job recreated": {
			reason:  "Jobs are Recreate: a changed Job is deleted now and not observed until a later answer creates it",
			before:  []any{job("logs-1", "--since=1h")},
			edit:    func(o *Object) { o.FinishJob("logs-1", batchv1.JobComplete) },
			answer:  []any{job("logs-1", "--since=2h")},
			secrets: map[string]string{},
			jobs:    map[string]bool{},
			changes: Changes{Recreated: []string{"Job/logs-1"}},
		},
		"left out": {
			reason:  "children the answer leaves out are deleted",
			before:  []any{secret("conn", "a"), secret("logs-1-credentials", "x"), job("logs-1")},
			answer:  []any{secret("conn", "a")},
			secrets: map[string]string{"conn": "a"},
			jobs:    map[string]bool{},
			changes: Changes{Deleted: []string{"Job/logs-1", "Secret/logs-1-credentials"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := newObject()
			if tc.before != nil {
				require.NoError(t, o.Apply(answer(t, v1alpha1.RdsStatus{}, tc.before...)))
			}
			if tc.edit != nil {
				tc.edit(o)
			}
			require.NoError(t, o.Apply(answer(t, v1alpha1.RdsStatus{}, tc.answer...)), tc.reason)
			secrets := map[string]string{}
			for name, s := range o.Secrets {
				secrets[name] = string(s.Data["password"])
			}
			assert.Equal(t, tc.secrets, secrets, tc.reason)
			jobs := map[string]bool{}
			for name, j := range o.Jobs {
				jobs[name] = len(j.Status.Conditions) > 0
			}
			assert.Equal(t, tc.jobs, jobs, tc.reason)
			assert.Equal(t, tc.changes, o.Changes(), tc.reason)
		})
	}
}

func TestJobRecreatedByTheNextAnswer(t *testing.T) {
	o := newObject()
	require.NoError(t, o.Apply(answer(t, v1alpha1.RdsStatus{}, job("logs-1", "--since=1h"))))
	o.FinishJob("logs-1", batchv1.JobComplete)
	require.NoError(t, o.Apply(answer(t, v1alpha1.RdsStatus{}, job("logs-1", "--since=2h"))))
	require.NotContains(t, o.Jobs, "logs-1", "deleted for the update")
	require.NoError(t, o.Apply(answer(t, v1alpha1.RdsStatus{}, job("logs-1", "--since=2h"))))
	require.Contains(t, o.Jobs, "logs-1", "created again")
	assert.Equal(t, []string{"--since=2h"}, o.Jobs["logs-1"].Spec.Template.Spec.Containers[0].Args)
	assert.Empty(t, o.Jobs["logs-1"].Status.Conditions, "a new Job, not the finished one")
}

func TestCreatedChildCarriesWhatMetacontrollerAdds(t *testing.T) {
	o := newObject()
	require.NoError(t, o.Apply(answer(t, v1alpha1.RdsStatus{}, secret("conn", "a"))))
	s := o.Secrets["conn"]
	require.NotNil(t, s)
	assert.Equal(t, "team-a", s.Namespace)
	assert.Equal(t, "uid-db", s.Labels[LabelControllerUID])
	require.Len(t, s.OwnerReferences, 1)
	ref := s.OwnerReferences[0]
	assert.Equal(t, metav1.OwnerReference{APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.Kind, Name: "db", UID: "uid-db",
		Controller: ref.Controller, BlockOwnerDeletion: ref.BlockOwnerDeletion}, ref)
	assert.True(t, *ref.Controller)
	assert.True(t, *ref.BlockOwnerDeletion)
	assert.JSONEq(t, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"conn"},"data":{"password":"YQ=="}}`,
		s.Annotations[AnnotationLastApplied])
}

func TestApplyStatus(t *testing.T) {
	o := newObject()
	require.NoError(t, o.Apply(answer(t, v1alpha1.RdsStatus{ID: "inst-1", Status: "BUILD", Flavor: "f1"})))
	assert.Equal(t, map[string]any{"id": "inst-1", "status": "BUILD", "flavor": "f1", "observedGeneration": int64(3)}, o.Parent["status"],
		"the answer's status with observedGeneration, the parent's generation")

	o.Edit(func(spec map[string]any) { spec["volumesize"] = 50 })
	require.NoError(t, o.Apply(answer(t, v1alpha1.RdsStatus{ID: "inst-1", Status: "ACTIVE"})))
	assert.Equal(t, v1alpha1.RdsStatus{ID: "inst-1", Status: "ACTIVE", ObservedGeneration: 4}, o.Status(),
		"replaced whole: the flavor the answer no longer returns is gone")
}

// An edit while the hook works (or a stale answer applied after an edit) does not make the next
// request look as if the new spec had been seen: observedGeneration is the generation the hook was
// shown, as Metacontroller writes it.
func TestObservedGenerationIsTheRequests(t *testing.T) {
	o := newObject() // generation 3
	req, err := o.Request()
	require.NoError(t, err)
	o.Edit(func(spec map[string]any) { spec["volumesize"] = 50 }) // generation 4 while the hook works
	st := v1alpha1.RdsStatus{ID: "inst-1", ObservedGeneration: req.Parent.Generation}
	require.NoError(t, o.ApplyResponse(&hook.SyncResponse{Status: &st}))
	assert.EqualValues(t, 3, o.Status().ObservedGeneration)
}

func TestErrorsChangeNothing(t *testing.T) {
	cases := map[string]struct {
		reason string
		code   int
		body   string
	}{
		"500":             {reason: "a sync error", code: http.StatusInternalServerError, body: `{"error":"boom"}`},
		"429":             {reason: "throttled: retried after Retry-After", code: http.StatusTooManyRequests, body: `{}`},
		"unknown key":     {reason: "decoded strictly", code: http.StatusOK, body: `{"status":{},"children":[],"extra":1}`},
		"not JSON":        {reason: "a body that does not parse", code: http.StatusOK, body: `<html>`},
		"undeclared kind": {reason: "a child type the CompositeController does not declare", code: http.StatusOK, body: `{"status":{"id":"x"},"children":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}]}`},
		"other namespace": {reason: "a child outside the parent's namespace", code: http.StatusOK, body: `{"status":{"id":"x"},"children":[{"apiVersion":"v1","kind":"Secret","metadata":{"name":"c","namespace":"elsewhere"}}]}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.code)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer hooks.Close()
			o := newObject()
			require.NoError(t, o.Apply(answer(t, v1alpha1.RdsStatus{ID: "inst-1"}, secret("conn", "a"), job("logs-1"))))
			before, err := o.Body()
			require.NoError(t, err)

			x, err := o.Post(nil, hooks.URL)
			if tc.code == http.StatusOK {
				assert.ErrorIs(t, err, ErrHook, tc.reason)
			} else {
				require.NoError(t, err, tc.reason)
				assert.Equal(t, tc.code, x.Code)
				assert.Nil(t, x.Answer)
			}
			after, err := o.Body()
			require.NoError(t, err)
			assert.JSONEq(t, string(before), string(after), "%s: status and children as they were", tc.reason)
		})
	}
}

// hooksFunc answers in process.
type hooksFunc struct {
	sync     func(*hook.Request) (*hook.SyncResponse, error)
	finalize func(*hook.Request) (*hook.FinalizeResponse, error)
}

func (h hooksFunc) Sync(_ context.Context, req *hook.Request) (*hook.SyncResponse, error) {
	return h.sync(req)
}

func (h hooksFunc) Finalize(_ context.Context, req *hook.Request) (*hook.FinalizeResponse, error) {
	return h.finalize(req)
}

func TestInProcessErrorChangesNothing(t *testing.T) {
	o := newObject()
	require.NoError(t, o.Apply(answer(t, v1alpha1.RdsStatus{ID: "inst-1"}, secret("conn", "a"))))
	boom := errors.New("boom")
	_, err := o.Sync(context.Background(), hooksFunc{sync: func(*hook.Request) (*hook.SyncResponse, error) { return nil, boom }})
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, "inst-1", o.Status().ID)
	assert.Contains(t, o.Secrets, "conn")
}

func TestSyncFeedsTheAnswerBack(t *testing.T) {
	o := newObject()
	var seen []*hook.Request
	h := hooksFunc{sync: func(req *hook.Request) (*hook.SyncResponse, error) {
		seen = append(seen, req)
		return &hook.SyncResponse{Status: &v1alpha1.RdsStatus{ID: "inst-1"}, Children: []any{secret("conn", "a")}}, nil
	}}
	_, err := o.Sync(context.Background(), h)
	require.NoError(t, err)
	_, err = o.Sync(context.Background(), h)
	require.NoError(t, err)
	require.Len(t, seen, 2)
	assert.Empty(t, seen[0].Secrets, "the first call observes no children")
	assert.Equal(t, "", seen[0].Parent.Status.ID, "and no status")
	assert.Equal(t, "inst-1", seen[1].Parent.Status.ID)
	assert.EqualValues(t, 3, seen[1].Parent.Status.ObservedGeneration)
	require.Contains(t, seen[1].Secrets, "conn")
	assert.Equal(t, "a", string(seen[1].Secrets["conn"].Data["password"]))
	assert.False(t, seen[1].Finalizing)
	assert.Equal(t, hook.V1, seen[1].Version)

	_, err = o.Finalize(context.Background(), h)
	assert.Error(t, err, "not deleted: Metacontroller calls sync")
}

func TestFinalizeRelease(t *testing.T) {
	o := newObject()
	finalized := false
	var seen *hook.Request
	h := hooksFunc{finalize: func(req *hook.Request) (*hook.FinalizeResponse, error) {
		seen = req
		return &hook.FinalizeResponse{Status: &v1alpha1.RdsStatus{ID: "inst-1"}, Finalized: finalized, ResyncAfterSeconds: 5}, nil
	}}
	o.Delete(t0)
	o.Delete(t0.Add(time.Hour))
	assert.Equal(t, "/finalize", o.Path())
	_, err := o.Sync(context.Background(), hooksFunc{})
	assert.Error(t, err, "deleted: Metacontroller calls finalize")

	resp, err := o.Finalize(context.Background(), h)
	require.NoError(t, err)
	assert.False(t, resp.Finalized)
	require.NotNil(t, seen)
	assert.True(t, seen.Finalizing)
	require.NotNil(t, seen.Parent.DeletionTimestamp)
	assert.True(t, seen.Parent.DeletionTimestamp.Time.Equal(t0), "the first deletion's time stays")
	assert.False(t, o.Gone(), "held")
	assert.Equal(t, "inst-1", o.Status().ID, "status is written while held")
	assert.Equal(t, []any{Finalizer}, o.Meta()["finalizers"])

	finalized = true
	_, err = o.Finalize(context.Background(), h)
	require.NoError(t, err)
	assert.True(t, o.Gone(), "released")
	assert.Empty(t, o.Meta()["finalizers"])
}

func TestFinalizedIgnoredOnSync(t *testing.T) {
	o := newObject()
	require.NoError(t, o.Apply(&Answer{Finalized: true}))
	assert.False(t, o.Gone(), "finalized means something only on a finalize call")
}

func TestBodyHookVersions(t *testing.T) {
	o := newObject()
	o.Secrets["conn"] = secret("conn", "a")
	o.Related["otc-credentials"] = secret("otc-credentials", "x")
	for version, key := range map[string]string{hook.V1: "conn", hook.V2: "team-a/conn"} {
		o.Version = version
		body, err := o.Body()
		require.NoError(t, err)
		var req struct {
			Children map[string]map[string]json.RawMessage `json:"children"`
			Related  map[string]map[string]json.RawMessage `json:"related"`
		}
		require.NoError(t, json.Unmarshal(body, &req))
		assert.Contains(t, req.Children[hook.SecretGroup], key)
		assert.Contains(t, req.Children, hook.JobGroup, "every declared type, even empty")
		assert.Len(t, req.Related[hook.SecretGroup], 1)
		decoded, err := o.Request()
		require.NoError(t, err)
		assert.Equal(t, version, decoded.Version, "the captured envelope of the version")
		assert.Contains(t, decoded.Secrets, "conn")
		assert.Contains(t, decoded.Related, "otc-credentials")
	}
}

func TestEditMovesTheGeneration(t *testing.T) {
	o := newObject()
	o.EditRds(func(s *v1alpha1.RdsSpec) { s.Volumesize = 60 })
	assert.EqualValues(t, 4, o.Generation())
	assert.Equal(t, 60, o.Rds().Spec.Volumesize)
	o.Edit(func(spec map[string]any) { spec["volumesize"] = 70 })
	assert.EqualValues(t, 5, o.Generation())
	assert.Equal(t, 70, o.Rds().Spec.Volumesize)
	_, hasStatus := o.Parent["status"]
	assert.False(t, hasStatus, "no status key before the first answer, as on the first call")
}

func TestInProcessTimesAreUTC(t *testing.T) {
	o := newObject()
	at := metav1.NewTime(t0)
	st := v1alpha1.RdsStatus{Conditions: []v1alpha1.Condition{{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, LastTransitionTime: at}}}
	require.NoError(t, o.Apply(answer(t, st)))
	req, err := o.Request()
	require.NoError(t, err)
	assert.Equal(t, at, req.Parent.Status.Conditions[0].LastTransitionTime, "a kept time equals a fresh one from a UTC clock")
	assert.Equal(t, at, o.Status().Conditions[0].LastTransitionTime)
}
