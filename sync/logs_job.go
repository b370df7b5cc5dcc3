package reconcile

import (
	"errors"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/logsapi"
)

// AnnotationLogsRequest on the log Job names the request it answers.
const AnnotationLogsRequest = "otc.mcsps.de/logs-request"

// AnnotationCapabilityExpires on the log Job's Secret says when its capability expires (RFC 3339),
// so that a Job is never started with one that would expire before the Job's deadline.
const AnnotationCapabilityExpires = "otc.mcsps.de/capability-expires"

// logsUser is the distroless image's "nonroot" user.
const logsUser = 65532

// logsSecret holds the Job's capability and where to present it; no OTC credential, nothing of the
// controller's own login.
func (c *call) logsSecret(ls *v1alpha1.LogsStatus) (*corev1.Secret, error) {
	exp := ls.CredentialExpires.Time.UTC().Truncate(time.Second)
	// NOTE: status.logs comes back with the object, and a tenant allowed to patch its status could
	// forge it: nothing is sealed that a call could not have issued.
	if err := c.checkLogsStatus(ls); err != nil {
		return nil, err
	}
	token, err := c.r.caps.seal(logsCapability{
		Instance: c.logsInstance, Namespace: c.parent.Namespace, Name: c.parent.Name, UID: string(c.parent.UID),
		Request: ls.Request, Types: ls.Types, Since: ls.Since, Lines: ls.Lines, Expires: exp.Unix(), Creds: c.creds,
	})
	if err != nil {
		return nil, err
	}
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name: logsSecretName(ls.Job), Namespace: c.parent.Namespace, Labels: childLabels(c.parent),
			Annotations: map[string]string{AnnotationCapabilityExpires: exp.Format(time.RFC3339)},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{
			logsapi.EnvToken: []byte(token),
			logsapi.EnvURL:   []byte(c.r.cfg.LogsURL),
		},
	}, nil
}

// echoLogsSecret returns the observed log Secret as we would have rendered it, with the expiry of
// its capability.
func echoLogsSecret(parent *v1alpha1.Rds, observed *corev1.Secret) *corev1.Secret {
	out := echoSecret(parent, observed)
	if exp, ok := observed.Annotations[AnnotationCapabilityExpires]; ok {
		out.Annotations = map[string]string{AnnotationCapabilityExpires: exp}
	}
	return out
}

// logsJob renders the Job of a request. It is a pure function of status.logs, the instance id and
// the configuration.
//
// NOTE: Jobs are declared with updateStrategy Recreate (manifests/compositecontroller.yaml): any
// difference between two renderings of the same request would delete the Job and run it again. So
// nothing here may depend on the current spec or time, only on what status.logs recorded. For the
// same reason the Job reads its capability and the logs URL from its Secret (envFrom), as it read
// its AK/SK before: the Job spec did not change with the capability, and an upgrade reruns no Job.
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

// capabilitySkew is how far apart the clocks of two replicas (or of a replica and a Job) may be.
const capabilitySkew = time.Minute

// checkLogsStatus refuses a status.logs no call could have written: a capability that would read
// for longer than its lifetime from now, or options beyond the request's bounds.
func (c *call) checkLogsStatus(ls *v1alpha1.LogsStatus) error {
	if ls.CredentialExpires.After(c.now.Add(c.r.cfg.LogsCapabilityTTL + capabilitySkew)) {
		return errors.New("status.logs.credentialExpires lies beyond the capability's lifetime")
	}
	opts := &v1alpha1.LogsRequest{Request: ls.Request, Since: ls.Since, Lines: ls.Lines, Types: ls.Types}
	if ls.Since == "" || ls.Lines < 1 || len(ls.Types) == 0 || len(validateLogs(opts, "")) > 0 {
		return errors.New("status.logs holds options beyond the bounds of a log request")
	}
	return nil
}

// logChildren renders the log children planLogChildren decides: the Secret with a capability
// sealed anew, or the observed one if sealing fails or is not this call's; and the Job.
func (c *call) logChildren() []any {
	ls := c.st.Logs
	if ls == nil {
		return nil
	}
	p := planLogChildren(c.logsInput(), ls)
	var out []any
	var rendered *corev1.Secret
	if p.seal {
		var err error
		if rendered, err = c.logsSecret(ls); err != nil {
			c.log.Error("cannot seal the log Job's capability", "job", ls.Job, "error", err.Error())
		}
	}
	if rendered != nil {
		out = append(out, rendered)
	} else if p.echo != nil {
		out = append(out, echoLogsSecret(c.parent, p.echo))
	}
	if p.job {
		out = append(out, c.logsJob(ls))
	}
	return out
}
