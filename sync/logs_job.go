package sync

import (
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// The variables of the log Job's Secret, as rds-logs (through otc.ConfigFromEnv) reads them.
const (
	envAuthURL       = "OS_AUTH_URL"
	envProjectID     = "OS_PROJECT_ID"
	envRegion        = "OS_REGION_NAME"
	envAccessKey     = "OS_ACCESS_KEY"
	envSecretKey     = "OS_SECRET_KEY"
	envSecurityToken = "OS_SECURITY_TOKEN"
)

// AnnotationLogsRequest on the log Job names the request it answers.
const AnnotationLogsRequest = "otc.mcsps.de/logs-request"

// AnnotationCredentialExpires on the log Job's Secret says when its credential expires (RFC 3339),
// so that a Job is never started with one that would expire before the Job's deadline.
const AnnotationCredentialExpires = "otc.mcsps.de/credential-expires"

// logsUser is the distroless image's "nonroot" user.
const logsUser = 65532

// logsSecret holds the Job's temporary AK/SK and where to use it; nothing of the controller's own
// login.
func logsSecret(parent *v1alpha1.Rds, ls *v1alpha1.LogsStatus, cred *cloud.TemporaryCredential) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name: logsSecretName(ls.Job), Namespace: parent.Namespace, Labels: childLabels(parent),
			Annotations: map[string]string{AnnotationCredentialExpires: cred.ExpiresAt.UTC().Truncate(time.Second).Format(time.RFC3339)},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{
			envAuthURL:       []byte(cred.AuthURL),
			envProjectID:     []byte(cred.ProjectID),
			envRegion:        []byte(cred.Region),
			envAccessKey:     []byte(cred.AccessKey),
			envSecretKey:     []byte(cred.SecretKey.Reveal()),
			envSecurityToken: []byte(cred.SecurityToken.Reveal()),
		},
	}
}

// echoLogsSecret returns the observed log Secret as we would have rendered it, with the expiry of
// its credential.
func echoLogsSecret(parent *v1alpha1.Rds, observed *corev1.Secret) *corev1.Secret {
	out := echoSecret(parent, observed)
	if exp, ok := observed.Annotations[AnnotationCredentialExpires]; ok {
		out.Annotations = map[string]string{AnnotationCredentialExpires: exp}
	}
	return out
}

// logsJob renders the Job of a request. It is a pure function of status.logs, the instance id and
// the configuration.
//
// NOTE: Jobs are declared with updateStrategy Recreate (manifests/compositecontroller.yaml): any
// difference between two renderings of the same request would delete the Job and run it again. So
// nothing here may depend on the current spec or time, only on what status.logs recorded.
func (c *call) logsJob(ls *v1alpha1.LogsStatus) *batchv1.Job {
	labels := childLabels(c.parent)
	cfg := c.r.cfg
	return &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{
			Name: ls.Job, Namespace: c.parent.Namespace, Labels: labels,
			Annotations: map[string]string{AnnotationLogsRequest: ls.Request},
		},
		Spec: batchv1.JobSpec{
			BackoffLimit:          ptr.To(int32(1)),
			ActiveDeadlineSeconds: ptr.To(int64(cfg.LogsJobDeadline.Seconds())),
			// A backstop for when the controller is gone; normally the hooks stop returning the Job
			// after LogsRetention.
			TTLSecondsAfterFinished: ptr.To(int32((2 * cfg.LogsRetention).Seconds())),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy:                corev1.RestartPolicyNever,
					AutomountServiceAccountToken: ptr.To(false),
					EnableServiceLinks:           ptr.To(false),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						RunAsUser:      ptr.To(int64(logsUser)),
						RunAsGroup:     ptr.To(int64(logsUser)),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:    "rds-logs",
						Image:   cfg.JobImage,
						Command: []string{"/rds-logs"},
						Args: []string{
							"--instance=" + c.st.ID,
							"--since=" + ls.Since,
							"--lines=" + strconv.Itoa(ls.Lines),
							"--types=" + strings.Join(ls.Types, ","),
						},
						EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: logsSecretName(ls.Job)},
						}}},
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{
								corev1.ResourceCPU:    resource.MustParse("10m"),
								corev1.ResourceMemory: resource.MustParse("32Mi"),
							},
							Limits: corev1.ResourceList{
								corev1.ResourceCPU:              resource.MustParse("200m"),
								corev1.ResourceMemory:           resource.MustParse("64Mi"),
								corev1.ResourceEphemeralStorage: resource.MustParse("16Mi"),
							},
						},
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false),
							ReadOnlyRootFilesystem:   ptr.To(true),
							RunAsNonRoot:             ptr.To(true),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
					}},
				},
			},
		},
	}
}
