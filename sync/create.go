package sync

import (
	"context"
	"errors"

	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// createInput is all that the create decision reads.
type createInput struct {
	spec       *v1alpha1.RdsSpec
	generation int64
	name       string // the instance name (status.name)
	// desired, generated and problem are the root password the spec asks for (desiredPassword);
	// observed and stored the one the connection Secret holds.
	desired   secret.Value
	generated bool
	problem   string
	observed  secret.Value
	stored    bool
	// fresh is a newly generated password, used when generated and none is stored yet.
	fresh secret.Value
	// from is the restore point of restorefrom, once read; network the resolved network, once read.
	from    *cloud.RestorePoint
	network *cloud.Network
}

// createPlan is the decision of a call that finds no instance.
type createPlan struct {
	ready, synced *outcome
	// password is the root password the connection Secret holds; generated says it was generated.
	password  secret.Value
	generated bool
	// needRestorePoint and needNetwork ask for the reads the create needs next.
	needRestorePoint, needNetwork bool
	// create is the action, and op the operation status records once it is sent.
	create *action
	op     *v1alpha1.Operation
}

// planCreate takes the steps towards a new instance, one per call: persist the password, then
// create, or restore into a new instance when spec.restorefrom names a source.
func planCreate(in createInput) createPlan {
	if in.problem != "" {
		return createPlan{
			synced: ptr.To(notSynced(ReasonWaitingForPasswordSecret, in.problem, waitsForUser)),
			ready:  ptr.To(notReady(ReasonWaitingForPasswordSecret, "Waiting for the spec's prerequisites; see the Synced condition.", waitsForUser)),
		}
	}
	p := createPlan{password: in.desired, generated: in.generated}
	switch {
	case in.generated && in.stored:
		p.password = in.observed
	case in.generated:
		p.password = in.fresh
	}
	// NOTE: the create is issued only once the Secret holding the password is observed: a password
	// that lives only in this process's memory would be lost with a lost response.
	if !in.stored || in.observed.Reveal() != p.password.Reveal() {
		p.ready = ptr.To(notReady(ReasonCreating, "Storing the root password in the connection Secret before creating the instance.", storingSecret))
		p.synced = ptr.To(syncedOK(ReasonReconcileSuccess, "Waiting for the connection Secret to be stored.", storingSecret))
		return p
	}
	if in.spec.Restorefrom != nil && in.from == nil {
		p.needRestorePoint = true
		return p
	}
	if in.network == nil {
		p.needNetwork = true
		return p
	}
	opts := createOpts(in.spec, in.name, *in.network, p.password)
	p.create = &action{kind: actCreate, create: &opts}
	p.op = &v1alpha1.Operation{Type: OpCreate, Generation: in.generation}
	if in.from != nil {
		p.create.kind, p.create.from = actRestoreToNew, *in.from
		p.op.Type, p.op.Target = OpRestoreToNew, restorePointText(*in.from)
	}
	return p
}

// create is the step of a call that finds no instance: it plans, makes the reads the plan asks
// for, plans again, and sends the create the plan names.
func (c *call) create(ctx context.Context) error {
	c.st.Status = ""
	in := createInput{spec: c.spec, generation: c.parent.Generation, name: c.st.Name}
	in.desired, in.generated, in.problem = c.desiredPassword()
	in.observed, in.stored = observedPassword(c.req.Secrets[c.st.ConnectionSecret])
	if in.generated && !in.stored {
		gen, err := generatePassword(c.r.cfg, c.parent.UID, "root")
		if err != nil {
			return err
		}
		in.fresh = secret.New(gen)
	}
	p := planCreate(in)
	c.passwordPlan(p) // the same password whatever the reads below find
	if p.needRestorePoint {
		from, err := c.restorePoint(ctx)
		if from == nil || err != nil {
			return err
		}
		in.from = from
		p = planCreate(in)
	}
	if p.needNetwork {
		s := c.observe(ctx, need{kind: readNetwork, vpc: c.spec.Vpc, subnet: c.spec.Subnet, securityGroup: c.spec.Securitygroup})
		if s.err != nil {
			return c.createFailed(s.err)
		}
		in.network = &s.network
		p = planCreate(in)
	}
	if p.synced != nil && p.synced.reason == ReasonWaitingForPasswordSecret {
		c.out.waitForUser(p.synced.reason, p.synced.message) // Ready keeps what it said
	} else {
		c.out.tellAll(p.ready, p.synced)
	}
	if p.create == nil {
		return nil
	}
	res, err := c.act(ctx, *p.create)
	if errors.Is(err, cloud.ErrConflict) {
		// The name exists: an earlier create went through after all. The next call finds it.
		c.out.pending(ReasonCreating, "The instance is being created.")
		return nil
	}
	if err != nil {
		return c.createFailed(err)
	}
	p.op.JobID = res.jobID
	c.log.Info("created instance", "instance", res.instanceID, "job", res.jobID, "operation", p.op.Type)
	c.st.ID = res.instanceID
	c.st.Status = cloud.StatusBuild
	c.st.Operation = p.op
	c.st.Restore = restoreBaseline(c.spec)
	c.out.pending(ReasonCreating, "The instance is being created.")
	return nil
}

// passwordPlan renders the password a create plan holds into the connection Secret and status.
func (c *call) passwordPlan(p createPlan) {
	if p.ready != nil && p.ready.reason == ReasonWaitingForPasswordSecret {
		return // no password yet: the observed Secret, if any, is echoed
	}
	c.st.PasswordGenerated = p.generated
	c.conn = &connection{engine: c.spec.Datastoretype, password: p.password}
}

// createFailed sorts an error of the create like any cloud error and, when OTC refused the create
// (an unknown flavor, a VPC that does not exist), says so in Ready as well. Status remembers it:
// later calls for the same spec try again and, refused again, say the same (see forgetCreateFailed).
func (c *call) createFailed(err error) error {
	if err := c.cloudError(err); err != nil {
		return err
	}
	if synced := c.out.condition(v1alpha1.ConditionSynced); synced != nil && synced.Reason == ReasonCloudRefused {
		c.out.tell(notReady(ReasonCreateFailed, "OTC refused to create the instance; see the Synced condition.", settled))
	}
	return nil
}

// forgetCreateFailed drops a refused create from Ready once the spec changed: the new spec has not
// been refused yet. Transient errors in between keep it (status is echoed), so that it stays until
// the spec changes or the create succeeds.
func (c *call) forgetCreateFailed() {
	ready := c.out.condition(v1alpha1.ConditionReady)
	if ready == nil || ready.Reason != ReasonCreateFailed || c.st.ID != "" || c.parent.Status.ObservedGeneration == c.parent.Generation {
		return
	}
	c.out.tell(notReady(ReasonCreating, "The instance is not created yet; see the Synced condition.", settled).fallback())
}

func createOpts(spec *v1alpha1.RdsSpec, name string, network cloud.Network, pw secret.Value) cloud.CreateInstanceOpts {
	port, _ := Port(spec) // validated
	opts := cloud.CreateInstanceOpts{
		Name:              name,
		Engine:            spec.Datastoretype,
		Version:           spec.Datastoreversion,
		Flavor:            spec.Flavorref,
		VolumeType:        spec.Volumetype,
		VolumeSize:        spec.Volumesize,
		Region:            spec.Region,
		AvailabilityZones: AvailabilityZones(spec),
		VpcID:             network.VpcID,
		SubnetID:          network.SubnetID,
		SecurityGroupID:   network.SecurityGroupID,
		Port:              port,
		Password:          pw,
	}
	if spec.Backupkeepdays > 0 || spec.Backupstarttime != "" {
		opts.BackupStrategy = &cloud.BackupStrategy{StartTime: spec.Backupstarttime, KeepDays: spec.Backupkeepdays}
	}
	if IsHA(spec) {
		opts.HAMode = "ha"
		opts.ReplicationMode = spec.Hareplicationmode
		if opts.ReplicationMode == "" {
			opts.ReplicationMode = defaultReplicationMode(spec.Datastoretype)
		}
	}
	return opts
}

func defaultReplicationMode(engine string) string {
	if engine == v1alpha1.EngineSQLServer {
		return "sync"
	}
	return "async"
}
