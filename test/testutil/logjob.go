package testutil

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
)

// LogJobInput is everything a log Job is given: the data of its Secret (which it reads with
// envFrom), its container's arguments, and the Job itself.
type LogJobInput struct {
	Env    map[string]string
	Args   []string
	Job    *batchv1.Job
	Secret *corev1.Secret
	Status v1alpha1.RdsStatus
}

// AdoptingRds is an Rds object namespace/name that adopts the simulator's instance id (a MySQL
// 8.0 instance that otcsim.Sim.AddInstance added) and asks for logs with req.
func AdoptingRds(namespace, name, id string, req v1alpha1.LogsRequest) v1alpha1.Rds {
	port := intstr.FromInt32(3306)
	return v1alpha1.Rds{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.Kind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: types.UID("uid-" + namespace + "-" + name), Generation: 1},
		Spec: v1alpha1.RdsSpec{
			Datastoretype: "MySQL", Datastoreversion: "8.0", Flavorref: "rds.mysql.n1.large.2", Volumetype: "CLOUDSSD",
			Volumesize: 40, Availabilityzone: "eu-de-01", Region: "eu-de", Vpc: "frank-test", Subnet: "frank-test",
			Securitygroup: "golang", Port: &port, Password: "Sim-Added-Instance-1", Instanceid: id, Logs: &req,
		},
	}
}

// LogJob plays Metacontroller for parent, feeding each answer back, until the hooks return its
// log Job; it returns the Job's whole input.
func LogJob(t testing.TB, r *reconcile.Reconciler, parent v1alpha1.Rds) LogJobInput {
	t.Helper()
	req := &hook.Request{Parent: parent, Secrets: map[string]*corev1.Secret{}, Jobs: map[string]*batchv1.Job{},
		Related: map[string]*corev1.Secret{}, Version: hook.V1}
	for range 10 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		resp, err := r.Sync(ctx, req)
		cancel()
		require.NoError(t, err)
		req.Parent.Status = *resp.Status.DeepCopy()
		req.Secrets, req.Jobs = map[string]*corev1.Secret{}, map[string]*batchv1.Job{}
		for _, c := range resp.Children {
			switch c := c.(type) {
			case *corev1.Secret:
				req.Secrets[c.Name] = c.DeepCopy()
			case *batchv1.Job:
				req.Jobs[c.Name] = c.DeepCopy()
			}
		}
		ls := req.Parent.Status.Logs
		if ls == nil || req.Jobs[ls.Job] == nil {
			continue
		}
		job := req.Jobs[ls.Job]
		ctr := job.Spec.Template.Spec.Containers[0]
		require.Len(t, ctr.EnvFrom, 1, "the Job reads its Secret and nothing else")
		require.Empty(t, ctr.Env)
		s := req.Secrets[ctr.EnvFrom[0].SecretRef.Name]
		require.NotNil(t, s, "the Job is returned with its Secret")
		env := map[string]string{}
		for k, v := range s.Data {
			env[k] = string(v)
		}
		return LogJobInput{Env: env, Args: ctr.Args, Job: job, Secret: s, Status: req.Parent.Status}
	}
	t.Fatalf("no log Job after 10 calls; status %+v", req.Parent.Status)
	return LogJobInput{}
}
