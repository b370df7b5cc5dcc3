package reconcile

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/cloudtest"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
	"github.com/mcsps/rds-lambda-controller/test/metacontroller"
)

// longName is an Rds name of n characters, a valid DNS subdomain as the API server requires.
func longName(t *testing.T, n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString("segment-" + strings.Repeat("x", 40))
	}
	s := b.String()[:n]
	s = strings.TrimRight(s, ".-")
	for len(s) < n {
		s += "z"
	}
	require.Empty(t, validation.IsDNS1123Subdomain(s))
	return s
}

// requireValidChild fails unless the API server would accept the child's metadata: its name (a
// Job's name becomes a label value of its pods, so it is a DNS label), its labels and annotations,
// and the labels of a Job's pods.
func requireValidChild(t *testing.T, child any) {
	t.Helper()
	var errs field.ErrorList
	switch ch := child.(type) {
	case *corev1.Secret:
		errs = apivalidation.ValidateObjectMeta(&ch.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	case *batchv1.Job:
		errs = apivalidation.ValidateObjectMeta(&ch.ObjectMeta, true, apivalidation.NameIsDNSLabel, field.NewPath("metadata"))
		errs = append(errs, metav1validation.ValidateLabels(ch.Spec.Template.Labels, field.NewPath("spec", "template", "metadata", "labels"))...)
	default:
		t.Fatalf("unexpected child %T", child)
	}
	require.Empty(t, errs.ToAggregate(), "child %T", child)
}

// TestLongNamesMakeValidChildren: an Rds name of 64 or 253 characters gives children the API
// server accepts: the connection Secret, the users' Secrets, the log Job and its Secret.
func TestLongNamesMakeValidChildren(t *testing.T) {
	for _, n := range []int{63, 64, 253} {
		name := longName(t, n)
		t.Run(fmt.Sprintf("%d characters", n), func(t *testing.T) {
			spec := usersSpec()
			spec.Logs = &v1alpha1.LogsRequest{Request: "r1"}
			f := &cloudtest.Fake{
				GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) { return activeInstance(), nil },
			}
			rec := &applyRecorder{}
			r := New(Config{Cloud: f, Now: func() time.Time { return t0 }, JobImage: testJobImage,
				PasswordKey: secret.New("a stable key for log capabilities"), Databases: DatabasesConfig{Apply: rec.apply}})

			conn := storedSecret("A12345678+")
			conn.Name = ConnectionSecretName(name)
			req := request(spec, v1alpha1.RdsStatus{ID: "inst-1"}, conn)
			req.Parent.ObjectMeta = metav1.ObjectMeta{Name: name, Namespace: "rds1", UID: "uid-1", Generation: 1}
			mc := metacontroller.NewRds(req.Parent)
			mc.Secrets = req.Secrets
			kinds := map[string]int{}
			for range 4 { // users, then the log credential, then the Job
				resp, err := mc.Sync(context.Background(), r)
				require.NoError(t, err)
				kinds = map[string]int{}
				for _, ch := range resp.Children {
					requireValidChild(t, ch)
					switch ch.(type) {
					case *corev1.Secret:
						kinds["Secret"]++
					case *batchv1.Job:
						kinds["Job"]++
					}
				}
			}
			assert.Equal(t, map[string]int{"Secret": 4, "Job": 1}, kinds, "connection, two users, log credential; the log Job")
			assert.LessOrEqual(t, len(labelValue(name)), 63)
			if n <= 63 {
				assert.Equal(t, name, labelValue(name), "a name that fits is its own label value")
			}
		})
	}
}

func TestLabelValue(t *testing.T) {
	a, b := longName(t, 253), longName(t, 253)[:252]+"q"
	assert.NotEqual(t, labelValue(a), labelValue(b), "long names that differ only at the end keep apart")
	assert.Equal(t, labelValue(a), labelValue(a), "a pure function of the name")
	for _, v := range []string{labelValue(a), labelValue(b), labelValue(longName(t, 64)), labelValue("my-rds")} {
		assert.Empty(t, validation.IsValidLabelValue(v), v)
	}
	assert.Equal(t, "my-rds-connection", ConnectionSecretName("my-rds"), "short names unchanged")
	assert.Empty(t, validation.IsDNS1123Subdomain(ConnectionSecretName(a)))
	assert.NotEqual(t, ConnectionSecretName(a), ConnectionSecretName(b))
}
