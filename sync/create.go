package reconcile

import (
	"errors"
	"log/slog"

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
	// configurationID is the parameter template the instance starts with (parameters_create.go).
	configurationID string
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
	opts.ConfigurationID = in.configurationID
	p.create = &action{kind: actCreate, create: &opts}
	p.op = &v1alpha1.Operation{Type: OpCreate, Generation: in.generation}
	if in.from != nil {
		p.create.kind, p.create.from = actRestoreToNew, *in.from
		p.op.Type, p.op.Target = OpRestoreToNew, restorePointText(*in.from)
	}
	return p
}

// createStep is the step of a call that finds no instance, as the loop runs it (loop.go): it
// plans; checks spec.restorefrom (planRestorePoint) and resolves the network with the reads the
// plans ask for, planning again on each; sends the create the plan names and plans on OTC's
// answer. Its render writes the password the plan holds into the connection Secret and status
// whatever the reads found: the same password in every plan of the call.
type createStep struct {
	in createInput
	// point is the check of spec.restorefrom; sourcesRead says its sources were read.
	point       restorePointInput
	sourcesRead bool
	// networkErr is the network read's error.
	networkErr error
	answer     *sent
	p          createPlan
}

// newCreateStep is the create step of this call. A generated root password is made here, once,
// when the connection Secret holds none yet: the plan takes it as an input.
func newCreateStep(c *call) (*createStep, error) {
	in := createInput{spec: c.spec, generation: c.parent.Generation, name: c.st.Name}
	in.desired, in.generated, in.problem = desiredPassword(c.spec, c.req.Related, c.parent.Namespace)
	in.observed, in.stored = observedPassword(c.req.Secrets[c.st.ConnectionSecret])
	if in.generated && !in.stored {
		gen, err := generatePassword(c.r.cfg, c.parent.UID, "root")
		if err != nil {
			return nil, err
		}
		in.fresh = secret.New(gen)
	}
	return &createStep{in: in, point: restorePointInput{spec: c.spec, me: c.me, ownProject: c.ownProject}}, nil
}

func (s *createStep) plan() head {
	in := s.in
	p := planCreate(in)
	s.p = p
	if p.needRestorePoint {
		if !s.sourcesRead {
			return head{needs: []need{sourcesNeed(in.spec.Restorefrom.Instance)}}
		}
		switch pp := planRestorePoint(s.point); {
		case pp.needBackups != "":
			return head{needs: []need{{kind: readBackups, id: pp.needBackups}}}
		case pp.needRanges != "":
			return head{needs: []need{{kind: readRestoreTimes, id: pp.needRanges}}}
		case pp.cloudErr != nil:
			return head{err: pp.cloudErr, stop: true}
		case pp.point == nil:
			return head{tells: pp.blocked.findings(), stop: true} // status.id is empty
		default:
			in.from = pp.point
		}
		p = planCreate(in)
		s.p = p
	}
	if p.needNetwork {
		switch {
		case s.networkErr != nil:
			return head{err: s.networkErr, then: createFailed(s.networkErr), stop: true}
		case in.network == nil:
			return head{needs: []need{{kind: readNetwork, vpc: in.spec.Vpc, subnet: in.spec.Subnet, securityGroup: in.spec.Securitygroup}}}
		}
	}
	h := head{stop: true}
	if p.synced != nil && p.synced.reason == ReasonWaitingForPasswordSecret {
		h.tells = waitingForUser(p.synced.reason, p.synced.message) // Ready keeps what it said
	} else {
		h.tells = told(p.ready, p.synced)
	}
	switch a := s.answer; {
	case p.create == nil:
		return h
	case a == nil:
		h.act = p.create
		return h
	case errors.Is(a.err, cloud.ErrConflict):
		// The name exists: an earlier create went through after all. The next call finds it.
		h.tells = append(h.tells, pending(ReasonCreating, "The instance is being created.")...)
		return h
	case a.err != nil:
		h.err, h.then = a.err, createFailed(a.err)
		return h
	}
	h.logs = []logLine{{slog.LevelInfo, "created instance", []any{"instance", s.answer.res.instanceID, "job", s.answer.res.jobID, "operation", p.op.Type}}}
	h.tells = append(h.tells, pending(ReasonCreating, "The instance is being created.")...)
	return h
}

func (s *createStep) saw(n need, r seen) {
	switch n.kind {
	case readInstanceByID, readInstancesName:
		s.sourcesRead = true
		s.point.sources, s.point.sourcesErr = r.instances, r.err
		if r.inst != nil {
			s.point.sources = []*cloud.Instance{r.inst}
		}
	case readBackups:
		s.point.backups = &backupsRead{backups: r.backups, err: r.err}
	case readRestoreTimes:
		s.point.ranges = &rangesRead{ranges: r.ranges, err: r.err}
	case readNetwork:
		if s.networkErr = r.err; r.err == nil {
			s.in.network = &r.network
		}
	}
}

func (s *createStep) answered(res acted, err error) { s.answer = &sent{res: res, err: err} }

// render writes the password the plan holds into the connection Secret and status, and, once OTC
// took the create, the instance it creates.
func (s *createStep) render(a *answer) {
	a.st.Status = ""
	p := s.p
	if p.ready == nil || p.ready.reason != ReasonWaitingForPasswordSecret { // else no password yet: the observed Secret, if any, is echoed
		a.st.PasswordGenerated = p.generated
		a.conn = &connection{engine: s.in.spec.Datastoretype, password: p.password}
	}
	if p.create == nil || s.answer == nil || s.answer.err != nil {
		return
	}
	op := *p.op
	op.JobID = s.answer.res.jobID
	a.st.ID = s.answer.res.instanceID
	a.st.Status = cloud.StatusBuild
	a.st.Operation = &op
	a.st.Restore = restoreBaseline(s.in.spec)
	recordCreated(&a.st, *p.create.create, s.in.spec)
}

// createFailed is what a failed create says besides the failure (cloudError): when OTC refused it
// (an unknown flavor, a VPC that does not exist), Ready says so as well. Status remembers it: later
// calls for the same spec try again and, refused again, say the same (see forgetCreateFailed).
func createFailed(err error) []finding {
	switch cloud.KindOf(err) {
	case cloud.KindInvalid, cloud.KindConflict, cloud.KindNotFound: // Synced: CloudRefused (cloudOutcome)
		return told(ptr.To(notReady(ReasonCreateFailed, "OTC refused to create the instance; see the Synced condition.", settled)))
	}
	return nil
}

// forgetCreateFailed drops a refused create from Ready once the spec changed: the new spec has not
// been refused yet. Transient errors in between keep it (status is echoed), so that it stays until
// the spec changes or the create succeeds.
func forgetCreateFailed(out *findings, st *v1alpha1.RdsStatus, parent *v1alpha1.Rds) {
	ready, ok := out.current(v1alpha1.ConditionReady)
	if !ok || ready.Reason != ReasonCreateFailed || st.ID != "" || parent.Status.ObservedGeneration == parent.Generation {
		return
	}
	out.tell(notReady(ReasonCreating, "The instance is not created yet; see the Synced condition.", settled).fallback())
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
	opts.TimeZone, opts.DiskEncryptionID = spec.Timezone, spec.Diskencryptionid
	if n := spec.Lowercasetablenames; n != nil {
		opts.LowerCaseTableNames = ptr.To(*n)
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
