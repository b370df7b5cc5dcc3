package reconcile

import (
	"context"
	"fmt"
	"maps"
	mrand "math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/cloudtest"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
	"github.com/mcsps/rds-lambda-controller/test/metacontroller"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// sampleSpec is the original operator's example, which must keep working unchanged.
func sampleSpec() v1alpha1.RdsSpec {
	port := intstr.FromString("3306")
	return v1alpha1.RdsSpec{
		Availabilityzone: "eu-de-01",
		Backupkeepdays:   12,
		Backupstarttime:  "01:00-02:00",
		Datastoretype:    "MySQL",
		Datastoreversion: "8.0",
		Flavorref:        "rds.mysql.c2.medium",
		Password:         "A12345678+",
		Port:             &port,
		Region:           "eu-de",
		Securitygroup:    "golang",
		Subnet:           "frank-test",
		Volumesize:       40,
		Volumetype:       "COMMON",
		Vpc:              "frank-test",
	}
}

func request(spec v1alpha1.RdsSpec, status v1alpha1.RdsStatus, secrets ...*corev1.Secret) *hook.Request {
	req := &hook.Request{
		Parent: v1alpha1.Rds{
			TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.Kind},
			ObjectMeta: metav1.ObjectMeta{Name: "my-rds-single", Namespace: "rds1", UID: "uid-1", Generation: 1},
			Spec:       spec,
			Status:     status,
		},
		Secrets: map[string]*corev1.Secret{},
		Jobs:    map[string]*batchv1.Job{},
		Related: map[string]*corev1.Secret{},
		Version: hook.V1,
	}
	for _, s := range secrets {
		req.Secrets[s.Name] = s
	}
	return req
}

// fedBack is the request Metacontroller sends after applying resp (a sync or finalize answer) to
// the observation req (test/metacontroller): status replaced whole, children applied.
func fedBack(t *testing.T, req *hook.Request, resp any) *hook.Request {
	t.Helper()
	mc := metacontroller.NewRds(req.Parent)
	mc.Secrets, mc.Jobs, mc.Related = maps.Clone(req.Secrets), maps.Clone(req.Jobs), maps.Clone(req.Related)
	require.Equal(t, req.Finalizing, mc.Deleting(), "a finalize request is for an object with a deletionTimestamp")
	require.NoError(t, mc.ApplyResponse(resp))
	next, err := mc.Request()
	require.NoError(t, err)
	return next
}

func storedSecret(password string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "my-rds-single-connection", Namespace: "rds1"},
		Data:       map[string][]byte{KeyPassword: []byte(password)},
	}
}

func newReconciler(f *cloudtest.Fake) *Reconciler {
	return New(Config{Cloud: cloudtest.Listing{Fake: f}, Now: func() time.Time { return t0 }, Random: mrand.NewChaCha8([32]byte{7})})
}

// postgresInstance turns an observed instance into a PostgreSQL one of this version and flavor.
func postgresInstance(version, flavor string) func(*cloud.Instance) {
	return func(i *cloud.Instance) {
		i.Engine, i.Version, i.CompleteVersion, i.Flavor, i.Port = "PostgreSQL", version, version+".4", flavor, 5432
	}
}

func activeInstance() *cloud.Instance {
	return &cloud.Instance{
		ID: "inst-1", Name: InstanceName("local", "rds1", "my-rds-single"), Status: cloud.StatusActive, Type: "Single",
		Engine: "MySQL", Version: "8.0", CompleteVersion: "8.0.28", Flavor: "rds.mysql.c2.medium",
		Volume: cloud.Volume{Type: "COMMON", Size: 40}, PrivateIPs: []string{"192.168.0.10"}, Port: 3306,
		BackupStrategy: cloud.BackupStrategy{StartTime: "01:00-02:00", KeepDays: 12}, // as sampleSpec asks
		Nodes:          []cloud.Node{{ID: "n1", Name: "node0", Role: "master", Status: "ACTIVE", AvailabilityZone: "eu-de-01"}},
		Tags:           ownerTags("uid-1"),
	}
}

// withOwner adds the ownership tags of rds1/my-rds-single (uid-1) to tags.
func withOwner(tags map[string]string) map[string]string {
	maps.Copy(tags, ownerTags("uid-1"))
	return tags
}

// ownerTags are the ownership tags of the object rds1/my-rds-single with this uid, cluster local.
func ownerTags(uid string) map[string]string {
	return owner{Cluster: "local", Namespace: "rds1", Name: "my-rds-single", UID: uid}.tags()
}

func condition(t *testing.T, st *v1alpha1.RdsStatus, typ string) v1alpha1.Condition {
	t.Helper()
	c := getCondition(st, typ)
	require.NotNil(t, c, "condition %s", typ)
	return *c
}

func secretChild(t *testing.T, children []any) *corev1.Secret {
	t.Helper()
	require.Len(t, children, 1)
	s, ok := children[0].(*corev1.Secret)
	require.True(t, ok)
	return s
}

func TestSyncCreatePath(t *testing.T) {
	notFound := func(context.Context, string) (*cloud.Instance, error) { return nil, cloud.ErrNotFound }
	network := func(context.Context, string, string, string) (cloud.Network, error) {
		return cloud.Network{VpcID: "vpc-1", SubnetID: "sub-1", SecurityGroupID: "sg-1"}, nil
	}
	cases := map[string]struct {
		reason    string
		spec      func(*v1alpha1.RdsSpec)
		status    v1alpha1.RdsStatus
		secrets   []*corev1.Secret
		fake      cloudtest.Fake
		wantCalls []string
		check     func(t *testing.T, resp *hook.SyncResponse, f *cloudtest.Fake)
	}{
		"first call stores the password before creating": {
			reason:    "the create must wait until the password is persisted in a child Secret",
			fake:      cloudtest.Fake{FindInstanceByNameFn: notFound},
			wantCalls: []string{"FindInstancesByName", "FindInstancesByName"},
			check: func(t *testing.T, resp *hook.SyncResponse, _ *cloudtest.Fake) {
				s := secretChild(t, resp.Children)
				assert.Equal(t, "A12345678+", string(s.Data[KeyPassword]))
				assert.Equal(t, 2.0, resp.ResyncAfterSeconds)
				assert.Equal(t, ReasonCreating, condition(t, resp.Status, v1alpha1.ConditionReady).Reason)
				assert.Empty(t, resp.Status.ID)
			},
		},
		"generated password is stored first": {
			reason:    "without spec.password a password is generated and returned in the Secret, no create yet",
			spec:      func(s *v1alpha1.RdsSpec) { s.Password = "" },
			fake:      cloudtest.Fake{FindInstanceByNameFn: notFound},
			wantCalls: []string{"FindInstancesByName", "FindInstancesByName"},
			check: func(t *testing.T, resp *hook.SyncResponse, _ *cloudtest.Fake) {
				s := secretChild(t, resp.Children)
				pw := string(s.Data[KeyPassword])
				assert.Len(t, pw, genLength)
				assert.Empty(t, passwordProblem(v1alpha1.EngineMySQL, pw))
				assert.True(t, resp.Status.PasswordGenerated)
			},
		},
		"stored generated password is used for the create": {
			reason:  "the observed Secret is the source of truth for a generated password",
			spec:    func(s *v1alpha1.RdsSpec) { s.Password = "" },
			secrets: []*corev1.Secret{storedSecret("Stored-Pass-123")},
			fake: cloudtest.Fake{
				FindInstanceByNameFn: notFound,
				ResolveNetworkFn:     network,
				CreateInstanceFn: func(_ context.Context, o cloud.CreateInstanceOpts) (string, string, error) {
					if o.Password.Reveal() != "Stored-Pass-123" {
						return "", "", cloud.ErrInvalid
					}
					return "inst-1", "job-1", nil
				},
			},
			wantCalls: []string{"FindInstancesByName", "FindInstancesByName", "ResolveNetwork", "CreateInstance"},
			check: func(t *testing.T, resp *hook.SyncResponse, _ *cloudtest.Fake) {
				assert.Equal(t, "inst-1", resp.Status.ID)
				assert.Equal(t, "Stored-Pass-123", string(secretChild(t, resp.Children).Data[KeyPassword]))
			},
		},
		"create once the Secret is observed": {
			reason:  "all inputs known: exactly one create with resolved ids and the deterministic name",
			secrets: []*corev1.Secret{storedSecret("A12345678+")},
			fake: cloudtest.Fake{
				FindInstanceByNameFn: notFound,
				ResolveNetworkFn:     network,
				CreateInstanceFn: func(_ context.Context, o cloud.CreateInstanceOpts) (string, string, error) {
					return "inst-1", "job-1", nil
				},
			},
			wantCalls: []string{"FindInstancesByName", "FindInstancesByName", "ResolveNetwork", "CreateInstance"},
			check: func(t *testing.T, resp *hook.SyncResponse, _ *cloudtest.Fake) {
				st := resp.Status
				assert.Equal(t, "inst-1", st.ID)
				assert.Equal(t, cloud.StatusBuild, st.Status)
				require.NotNil(t, st.Operation)
				assert.Equal(t, OpCreate, st.Operation.Type)
				assert.Equal(t, "job-1", st.Operation.JobID)
				assert.Equal(t, 10.0, resp.ResyncAfterSeconds)
			},
		},
		"lost create response: the instance is found by name and adopted": {
			reason:  "a create whose answer was lost must not create a second instance",
			secrets: []*corev1.Secret{storedSecret("A12345678+")},
			fake: cloudtest.Fake{FindInstanceByNameFn: func(context.Context, string) (*cloud.Instance, error) {
				i := activeInstance()
				i.Status = cloud.StatusBuild
				return i, nil
			}},
			wantCalls: []string{"FindInstancesByName", "FindInstancesByName"},
			check: func(t *testing.T, resp *hook.SyncResponse, _ *cloudtest.Fake) {
				assert.Equal(t, "inst-1", resp.Status.ID)
				assert.Equal(t, ReasonCreating, condition(t, resp.Status, v1alpha1.ConditionReady).Reason)
			},
		},
		"name conflict on create waits for the next observation": {
			reason:  "DBS.200022 means an earlier create went through; no error storm, look again soon",
			secrets: []*corev1.Secret{storedSecret("A12345678+")},
			fake: cloudtest.Fake{
				FindInstanceByNameFn: notFound,
				ResolveNetworkFn:     network,
				CreateInstanceFn: func(context.Context, cloud.CreateInstanceOpts) (string, string, error) {
					return "", "", &cloud.Error{Kind: cloud.KindConflict, Code: "DBS.200022"}
				},
			},
			wantCalls: []string{"FindInstancesByName", "FindInstancesByName", "ResolveNetwork", "CreateInstance"},
			check: func(t *testing.T, resp *hook.SyncResponse, _ *cloudtest.Fake) {
				assert.Equal(t, metav1.ConditionTrue, condition(t, resp.Status, v1alpha1.ConditionSynced).Status)
				assert.Equal(t, 10.0, resp.ResyncAfterSeconds)
			},
		},
		"unknown VPC is a stable condition": {
			reason:  "a network name that does not resolve is for the user to fix",
			secrets: []*corev1.Secret{storedSecret("A12345678+")},
			fake: cloudtest.Fake{
				FindInstanceByNameFn: notFound,
				ResolveNetworkFn: func(context.Context, string, string, string) (cloud.Network, error) {
					return cloud.Network{}, &cloud.Error{Kind: cloud.KindInvalid, Op: "ResolveNetwork", Message: `VPC "frank-test" not found`}
				},
			},
			wantCalls: []string{"FindInstancesByName", "FindInstancesByName", "ResolveNetwork"},
			check: func(t *testing.T, resp *hook.SyncResponse, _ *cloudtest.Fake) {
				c := condition(t, resp.Status, v1alpha1.ConditionSynced)
				assert.Equal(t, ReasonCloudRefused, c.Reason)
				assert.Equal(t, `OTC refused the request: VPC "frank-test" not found.`, c.Message)
			},
		},
		"wrong region is refused before any cloud call or child": {
			reason:    "the controller serves one region; that needs no cloud call, so none is made and no password Secret is written",
			spec:      func(s *v1alpha1.RdsSpec) { s.Region = "eu-nl" },
			fake:      cloudtest.Fake{},
			wantCalls: nil,
			check: func(t *testing.T, resp *hook.SyncResponse, _ *cloudtest.Fake) {
				assert.Equal(t, ReasonInvalidSpec, condition(t, resp.Status, v1alpha1.ConditionSynced).Reason)
				assert.Equal(t, `region "eu-nl" is not served by this controller, which manages eu-de.`,
					condition(t, resp.Status, v1alpha1.ConditionSynced).Message)
				assert.Empty(t, resp.Children, "no new child")
			},
		},
		"wrong region with a stored Secret keeps it and calls nothing": {
			reason:    "the observed connection Secret is echoed, never dropped",
			spec:      func(s *v1alpha1.RdsSpec) { s.Region = "eu-nl" },
			secrets:   []*corev1.Secret{storedSecret("A12345678+")},
			fake:      cloudtest.Fake{},
			wantCalls: nil,
			check: func(t *testing.T, resp *hook.SyncResponse, _ *cloudtest.Fake) {
				assert.Equal(t, ReasonInvalidSpec, condition(t, resp.Status, v1alpha1.ConditionSynced).Reason)
				assert.Equal(t, "A12345678+", string(secretChild(t, resp.Children).Data[KeyPassword]))
			},
		},
		"invalid spec makes no cloud call": {
			reason:    "bad input gets a condition and nothing else",
			spec:      func(s *v1alpha1.RdsSpec) { s.Volumesize = 45; s.Datastoretype = "Oracle" },
			fake:      cloudtest.Fake{},
			wantCalls: nil,
			check: func(t *testing.T, resp *hook.SyncResponse, _ *cloudtest.Fake) {
				c := condition(t, resp.Status, v1alpha1.ConditionSynced)
				assert.Equal(t, ReasonInvalidSpec, c.Reason)
				assert.Contains(t, c.Message, `datastoretype "Oracle"`)
				assert.Contains(t, c.Message, "volumesize 45")
				assert.Empty(t, resp.Children)
			},
		},
		"invalid spec keeps the connection Secret": {
			reason:    "a child left out is deleted: the stored password must survive a bad edit",
			spec:      func(s *v1alpha1.RdsSpec) { s.Volumesize = 45 },
			status:    v1alpha1.RdsStatus{ID: "inst-1"},
			secrets:   []*corev1.Secret{storedSecret("A12345678+")},
			fake:      cloudtest.Fake{},
			wantCalls: nil,
			check: func(t *testing.T, resp *hook.SyncResponse, _ *cloudtest.Fake) {
				assert.Equal(t, "A12345678+", string(secretChild(t, resp.Children).Data[KeyPassword]))
				assert.Equal(t, "inst-1", resp.Status.ID)
			},
		},
		"active instance is Ready with a full connection Secret": {
			reason:  "steady state: report everything, resync slowly",
			status:  v1alpha1.RdsStatus{ID: "inst-1", Operation: &v1alpha1.Operation{Type: OpCreate, JobID: "job-1"}},
			secrets: []*corev1.Secret{storedSecret("A12345678+")},
			fake: cloudtest.Fake{GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) {
				return activeInstance(), nil
			}},
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, resp *hook.SyncResponse, _ *cloudtest.Fake) {
				st := resp.Status
				assert.Equal(t, metav1.ConditionTrue, condition(t, st, v1alpha1.ConditionReady).Status)
				assert.Equal(t, "192.168.0.10:3306", st.Endpoint)
				assert.Equal(t, "8.0.28", st.Version)
				assert.Nil(t, st.Operation)
				assert.Equal(t, []v1alpha1.Node{{Name: "node0", Role: "master", Status: "ACTIVE", Availabilityzone: "eu-de-01"}}, st.Nodes)
				s := secretChild(t, resp.Children)
				assert.Equal(t, "192.168.0.10", string(s.Data[KeyHost]))
				assert.Equal(t, "3306", string(s.Data[KeyPort]))
				// crossplane-contrib/provider-sql's keys: endpoint, port, username, password.
				assert.Equal(t, "192.168.0.10", string(s.Data[KeyEndpoint]))
				assert.Equal(t, "root", string(s.Data[KeyUsername]))
				assert.Equal(t, "root:A12345678+@tcp(192.168.0.10:3306)/", string(s.Data[KeyDSN]))
				assert.Equal(t, "mysql://root:A12345678+@192.168.0.10:3306/", string(s.Data[KeyURI]))
				assert.Equal(t, 300.0, resp.ResyncAfterSeconds)
			},
		},
		"vanished instance is not recreated": {
			reason:    "recreating would hand the user an empty database",
			status:    v1alpha1.RdsStatus{ID: "inst-1"},
			secrets:   []*corev1.Secret{storedSecret("A12345678+")},
			fake:      cloudtest.Fake{GetInstanceFn: notFound},
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, resp *hook.SyncResponse, _ *cloudtest.Fake) {
				assert.Equal(t, ReasonInstanceNotFound, condition(t, resp.Status, v1alpha1.ConditionReady).Reason)
				assert.Len(t, resp.Children, 1)
			},
		},
		"lost generated password is reported, not regenerated": {
			reason:    "a new password would not match the instance",
			spec:      func(s *v1alpha1.RdsSpec) { s.Password = "" },
			status:    v1alpha1.RdsStatus{ID: "inst-1", PasswordGenerated: true},
			fake:      cloudtest.Fake{GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) { return activeInstance(), nil }},
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, resp *hook.SyncResponse, _ *cloudtest.Fake) {
				assert.Equal(t, ReasonPasswordSecretMissing, condition(t, resp.Status, v1alpha1.ConditionSynced).Reason)
				assert.Empty(t, resp.Children)
			},
		},
		"cloud unavailable keeps what was remembered": {
			reason:  "an outage must not erase the instance id or the Secret",
			status:  v1alpha1.RdsStatus{ID: "inst-1", Status: "ACTIVE", Endpoint: "192.168.0.10:3306"},
			secrets: []*corev1.Secret{storedSecret("A12345678+")},
			fake: cloudtest.Fake{GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) {
				return nil, &cloud.Error{Kind: cloud.KindUnavailable, Op: "GetInstance"}
			}},
			wantCalls: []string{"GetInstance"},
			check: func(t *testing.T, resp *hook.SyncResponse, _ *cloudtest.Fake) {
				assert.Equal(t, "inst-1", resp.Status.ID)
				assert.Equal(t, "192.168.0.10:3306", resp.Status.Endpoint)
				assert.Equal(t, ReasonCloudUnavailable, condition(t, resp.Status, v1alpha1.ConditionSynced).Reason)
				assert.Len(t, resp.Children, 1)
				assert.Equal(t, 10.0, resp.ResyncAfterSeconds)
			},
		},
		"password from a referenced Secret": {
			reason: "passwordsecretref reads the related Secret that the customize hook asked for",
			spec: func(s *v1alpha1.RdsSpec) {
				s.Password = ""
				s.Passwordsecretref = &v1alpha1.SecretKeyRef{Name: "root-pw"}
			},
			fake:      cloudtest.Fake{FindInstanceByNameFn: notFound},
			wantCalls: []string{"FindInstancesByName", "FindInstancesByName"},
			check: func(t *testing.T, resp *hook.SyncResponse, _ *cloudtest.Fake) {
				assert.Equal(t, ReasonWaitingForPasswordSecret, condition(t, resp.Status, v1alpha1.ConditionSynced).Reason)
				assert.Contains(t, condition(t, resp.Status, v1alpha1.ConditionSynced).Message, `"root-pw"`)
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := sampleSpec()
			if tc.spec != nil {
				tc.spec(&spec)
			}
			f := tc.fake
			resp, err := newReconciler(&f).Sync(context.Background(), request(spec, tc.status, tc.secrets...))
			require.NoError(t, err, tc.reason)
			assert.Equal(t, tc.wantCalls, f.Calls(), tc.reason)
			if resp.Status.ID == "" {
				assert.Regexp(t, `^rds-rds1-my-rds-single-[0-9a-f]{16}$`, resp.Status.Name)
			}
			assert.Equal(t, int64(1), resp.Status.ObservedGeneration)
			tc.check(t, resp, &f)
		})
	}
}

func TestSyncThrottledIsReturned(t *testing.T) {
	f := &cloudtest.Fake{GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) {
		return nil, &cloud.Error{Kind: cloud.KindThrottled, RetryAfter: 7 * time.Second}
	}}
	_, err := newReconciler(f).Sync(context.Background(), request(sampleSpec(), v1alpha1.RdsStatus{ID: "inst-1"}))
	var te *ThrottledError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, 7*time.Second, te.RetryAfter)
}

func TestConditionKeepsTransitionTime(t *testing.T) {
	st := &v1alpha1.RdsStatus{}
	first := metav1.NewTime(t0)
	setCondition(st, first, v1alpha1.ConditionReady, metav1.ConditionFalse, ReasonCreating, "a")
	setCondition(st, metav1.NewTime(t0.Add(time.Minute)), v1alpha1.ConditionReady, metav1.ConditionFalse, ReasonCreating, "b")
	assert.Equal(t, first, st.Conditions[0].LastTransitionTime, "status held: time kept")
	later := metav1.NewTime(t0.Add(2 * time.Minute))
	setCondition(st, later, v1alpha1.ConditionReady, metav1.ConditionTrue, ReasonAvailable, "c")
	assert.Equal(t, later, st.Conditions[0].LastTransitionTime, "status changed: time moves")
}

func TestSyncIsStableForTheSameObservation(t *testing.T) {
	f := &cloudtest.Fake{GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) { return activeInstance(), nil }}
	r := newReconciler(f)
	req := request(sampleSpec(), v1alpha1.RdsStatus{ID: "inst-1"}, storedSecret("A12345678+"))
	first, err := r.Sync(context.Background(), req)
	require.NoError(t, err)
	// Feed the answer back as Metacontroller would, one minute later.
	r.cfg.Now = func() time.Time { return t0.Add(time.Minute) }
	second, err := r.Sync(context.Background(), fedBack(t, req, first))
	require.NoError(t, err)
	assert.Equal(t, first, second, "the same observation must give the same answer")
}

// TestSyncWritesNothingOfTheRequest: a call reads the request and writes only its answer. The
// answer's status starts from the request's, sharing its conditions (begin): a call whose
// conditions change (the instance now MODIFYING) leaves the request's as they were, and its
// answer's are its own.
func TestSyncWritesNothingOfTheRequest(t *testing.T) {
	inst := activeInstance()
	f := &cloudtest.Fake{GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) { return inst, nil }}
	r := newReconciler(f)
	req := request(sampleSpec(), v1alpha1.RdsStatus{ID: "inst-1"}, storedSecret("A12345678+"))
	first, err := r.Sync(context.Background(), req)
	require.NoError(t, err)
	next := fedBack(t, req, first)
	require.NotEmpty(t, next.Parent.Status.Conditions)
	before := next.Parent.Status.DeepCopy()

	inst = activeInstance()
	inst.Status = cloud.StatusModifying
	r.cfg.Now = func() time.Time { return t0.Add(time.Minute) }
	second, err := r.Sync(context.Background(), next)
	require.NoError(t, err)
	assert.NotEqual(t, first.Status.Conditions, second.Status.Conditions, "the conditions changed")
	assert.Equal(t, before, &next.Parent.Status, "the request's status is as it came")
	assert.NotSame(t, &next.Parent.Status.Conditions[0], &second.Status.Conditions[0], "the answer's conditions are its own")
}

// TestConcurrentSyncsWriteNothingShared: steady calls of sixteen objects run at once, as the
// server runs them, and their requests share one status (its conditions and pointers), as two
// calls never do but a call that wrote into its request would show: under -race (make test) such
// a write, or one into a package-level value (the conditions a steady step drops), is a data race;
// without it, the shared status is checked unchanged. Each answer is the one a call alone gets.
func TestConcurrentSyncsWriteNothingShared(t *testing.T) {
	const objects = 16
	name := func(i int) string { return fmt.Sprintf("rds-%02d", i) }
	instanceOf := func(id string) *cloud.Instance {
		i, _ := strconv.Atoi(strings.TrimPrefix(id, "inst-"))
		inst := activeInstance()
		inst.ID, inst.Name = id, InstanceName("local", "rds1", name(i))
		inst.Tags = owner{Cluster: "local", Namespace: "rds1", Name: name(i), UID: fmt.Sprintf("uid-%02d", i)}.tags()
		return inst
	}
	f := &cloudtest.Fake{GetInstanceFn: func(_ context.Context, id string) (*cloud.Instance, error) { return instanceOf(id), nil }}
	r := newReconciler(f)
	requestOf := func(i int, st v1alpha1.RdsStatus) *hook.Request {
		req := request(sampleSpec(), st, storedSecret("A12345678+"))
		req.Parent.Name, req.Parent.UID = name(i), types.UID(fmt.Sprintf("uid-%02d", i))
		req.Secrets = map[string]*corev1.Secret{}
		s := storedSecret("A12345678+")
		s.Name = name(i) + "-connection"
		req.Secrets[s.Name] = s
		return req
	}
	// One object taken to its steady answer; the others' requests share that status.
	first, err := r.Sync(context.Background(), requestOf(0, v1alpha1.RdsStatus{ID: "inst-00"}))
	require.NoError(t, err)
	steady := fedBack(t, requestOf(0, v1alpha1.RdsStatus{ID: "inst-00"}), first)
	alone, err := r.Sync(context.Background(), steady)
	require.NoError(t, err)
	require.NotEmpty(t, steady.Parent.Status.Conditions)
	before := steady.Parent.Status.DeepCopy()

	answers := make([]*hook.SyncResponse, objects)
	var wg sync.WaitGroup
	for i := range objects {
		req := requestOf(0, steady.Parent.Status) // the status shared, shallow: its slices and pointers
		req.Secrets = steady.Secrets
		if i > 0 {
			req = requestOf(i, steady.Parent.Status)
			req.Parent.Status.ID = fmt.Sprintf("inst-%02d", i)
		}
		wg.Go(func() {
			for range 5 {
				resp, err := r.Sync(context.Background(), req)
				assert.NoError(t, err)
				answers[i] = resp
			}
		})
	}
	wg.Wait()
	assert.Equal(t, before, &steady.Parent.Status, "the shared status is as it came")
	assert.Equal(t, alone.Status.Conditions, answers[0].Status.Conditions, "a call among others answers as it does alone")
	for i, a := range answers {
		require.NotNil(t, a, "object %d", i)
		assert.Equal(t, alone.ResyncAfterSeconds, a.ResyncAfterSeconds, "object %d is steady", i)
	}
}
