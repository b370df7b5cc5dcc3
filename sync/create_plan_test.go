package reconcile

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

func TestPlanCreate(t *testing.T) {
	spec := sampleSpec()
	network := &cloud.Network{VpcID: "vpc", SubnetID: "subnet", SecurityGroupID: "sg"}
	pw := secret.New("A12345678+")
	from := &cloud.RestorePoint{InstanceID: "src", BackupID: "b1"}
	withRestore := sampleSpec()
	withRestore.Restorefrom = &v1alpha1.RestoreFrom{Instance: "src", Backupid: "b1"}
	storing := createPlan{
		ready:  ptr.To(notReady(ReasonCreating, "Storing the root password in the connection Secret before creating the instance.", storingSecret)),
		synced: ptr.To(syncedOK(ReasonReconcileSuccess, "Waiting for the connection Secret to be stored.", storingSecret)),
	}
	tests := []struct {
		reason string
		in     createInput
		want   func() createPlan
	}{
		{
			reason: "a password Secret that is not there waits for the user",
			in:     createInput{spec: &spec, problem: "The Secret \"x\" named in passwordsecretref was not found in namespace rds1."},
			want: func() createPlan {
				return createPlan{
					synced: ptr.To(notSynced(ReasonWaitingForPasswordSecret, "The Secret \"x\" named in passwordsecretref was not found in namespace rds1.", waitsForUser)),
					ready:  ptr.To(notReady(ReasonWaitingForPasswordSecret, "Waiting for the spec's prerequisites; see the Synced condition.", waitsForUser)),
				}
			},
		},
		{
			reason: "the spec's password is stored before the create",
			in:     createInput{spec: &spec, desired: pw},
			want:   func() createPlan { p := storing; p.password = pw; return p },
		},
		{
			reason: "a generated password is stored before the create",
			in:     createInput{spec: &spec, generated: true, fresh: secret.New("gen")},
			want:   func() createPlan { p := storing; p.password, p.generated = secret.New("gen"), true; return p },
		},
		{
			reason: "a stored generated password is the one created with, and the network is read first",
			in:     createInput{spec: &spec, generated: true, observed: secret.New("old"), stored: true, fresh: secret.New("new")},
			want: func() createPlan {
				return createPlan{password: secret.New("old"), generated: true, needNetwork: true}
			},
		},
		{
			reason: "a stored password creates the instance",
			in:     createInput{spec: &spec, generation: 3, name: "n", desired: pw, observed: pw, stored: true, network: network},
			want: func() createPlan {
				opts := createOpts(&spec, "n", *network, pw)
				return createPlan{password: pw, create: &action{kind: actCreate, create: &opts},
					op: &v1alpha1.Operation{Type: OpCreate, Generation: 3}}
			},
		},
		{
			reason: "restorefrom reads its restore point first",
			in:     createInput{spec: &withRestore, desired: pw, observed: pw, stored: true},
			want:   func() createPlan { return createPlan{password: pw, needRestorePoint: true} },
		},
		{
			reason: "restorefrom restores into a new instance",
			in:     createInput{spec: &withRestore, generation: 2, name: "n", desired: pw, observed: pw, stored: true, from: from, network: network},
			want: func() createPlan {
				opts := createOpts(&withRestore, "n", *network, pw)
				return createPlan{password: pw, create: &action{kind: actRestoreToNew, create: &opts, from: *from},
					op: &v1alpha1.Operation{Type: OpRestoreToNew, Generation: 2, Target: restorePointText(*from)}}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.reason, func(t *testing.T) {
			got, want := planCreate(tc.in), tc.want()
			// A secret.Value prints nothing: compare what it holds, then the rest.
			assert.Equal(t, want.password.Reveal(), got.password.Reveal())
			if want.create != nil && got.create != nil {
				assert.Equal(t, want.create.create.Password.Reveal(), got.create.create.Password.Reveal())
			}
			assert.Equal(t, want, got)
		})
	}
}
