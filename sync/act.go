package reconcile

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/dbusers"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// actionKind names one mutating call of the cloud port.
type actionKind string

const (
	actResize             actionKind = "ResizeFlavor"
	actEnlargeVolume      actionKind = "EnlargeVolume"
	actUpgradeMinor       actionKind = "UpgradeMinorVersion"
	actRestart            actionKind = "RestartInstance"
	actSingleToHA         actionKind = "SingleToHA"
	actBackupPolicy       actionKind = "UpdateBackupPolicy"
	actSetTags            actionKind = "SetTags"
	actDeleteTags         actionKind = "DeleteTags"
	actSecurityGroup      actionKind = "SetSecurityGroup"
	actUpdatePort         actionKind = "UpdatePort"
	actSwitchSSL          actionKind = "SwitchSSL"
	actRestoreInPlace     actionKind = "RestoreInPlace"
	actStorageAutoscaling actionKind = "SetStorageAutoscaling"
	actCreate             actionKind = "CreateInstance"
	actRestoreToNew       actionKind = "RestoreToNew"
	actCreateBackup       actionKind = "CreateBackup"
	actDeleteInstance     actionKind = "DeleteInstance"
	actCreateReplica      actionKind = "CreateReplica"
	// settings.go
	actStorageType       actionKind = "ChangeStorageType"
	actReplicationMode   actionKind = "ChangeReplicationMode"
	actMaintenanceWindow actionKind = "ChangeMaintenanceWindow"
	actStop              actionKind = "StopInstance"
	actStart             actionKind = "StartInstance"
	// parameters.go, parameters_create.go
	actUpdateParameters actionKind = "UpdateParameters"
	actCreateTemplate   actionKind = "CreateParameterTemplate"
	actDeleteTemplate   actionKind = "DeleteParameterTemplate"
)

// action is the one change a decision asks of the cloud, as data: which call, on which instance,
// with which arguments. A decision returns it; act makes it. Nothing else of a decision's
// outcome depends on how the call is made, so a decision is tested by comparing actions.
type action struct {
	kind     actionKind
	instance string

	flavor  string                    // actResize
	size    int                       // actEnlargeVolume
	standby string                    // actSingleToHA: the standby's AZ
	policy  cloud.BackupStrategy      // actBackupPolicy
	tags    map[string]string         // actSetTags
	keys    []string                  // actDeleteTags
	group   string                    // actSecurityGroup: the security group's id
	port    int                       // actUpdatePort
	ssl     bool                      // actSwitchSSL
	at      time.Time                 // actRestoreInPlace
	scaling cloud.StorageAutoscaling  // actStorageAutoscaling
	create  *cloud.CreateInstanceOpts // actCreate, actRestoreToNew (its Password is a secret.Value)
	from    cloud.RestorePoint        // actRestoreToNew
	backup  string                    // actCreateBackup: the backup's name
	about   string                    // actCreateBackup: the backup's description
	replica *cloud.CreateReplicaOpts  // actCreateReplica
	storage cloud.Storage             // actStorageType
	mode    string                    // actReplicationMode
	window  string                    // actMaintenanceWindow
	values  map[string]string         // actUpdateParameters
	// template is the parameter template to create (actCreateTemplate); templateID the one to
	// delete (actDeleteTemplate).
	template   *cloud.ParameterTemplateOpts
	templateID string

	// password is the root password SingleToHA needs for SQL Server. It is never compared or
	// printed (secret.Value), and never part of what a decision is tested on.
	password secret.Value
}

// acted is what OTC answered to an action: the job that carries it out, if any, the id of an
// instance it creates, and the backup it starts.
type acted struct {
	jobID, instanceID string
	backup            *cloud.Backup
	// passwords and applied answer an action outside the cloud (actSQL).
	passwords map[int]secret.Value
	applied   *applyAnswer
	// parameters answers actUpdateParameters; template actCreateTemplate.
	parameters *cloud.ParametersChange
	template   *cloud.ParameterTemplate
}

// actAnswer is OTC's answer to an action, as a plan that is made again on it reads it.
type actAnswer struct {
	jobID  string
	backup *cloud.Backup
	err    error
}

// answerOf is OTC's answer to an action (act), for the plan made again on it.
func answerOf(res acted, err error) *actAnswer {
	return &actAnswer{jobID: res.jobID, backup: res.backup, err: err}
}

// act makes the action, the one change of a call, under the per-call deadline.
//
// NOTE: a call that decided on the shared view holds a client that refuses every change with
// errViewStale (observe_view.go): the call is then made again on a fresh read of the instance by
// id, and decided anew, before any change is sent. So a change is only ever made on a fresh
// observation that still asks for it.
func (c *call) act(ctx context.Context, a action) (res acted, err error) {
	c.attempted = true
	err = withDeadline(ctx, c.r.cfg.CallTimeout, func(ctx context.Context) (err error) {
		jobID := &res.jobID
		switch a.kind {
		case actResize:
			*jobID, err = c.cloud.ResizeFlavor(ctx, a.instance, a.flavor)
		case actEnlargeVolume:
			*jobID, err = c.cloud.EnlargeVolume(ctx, a.instance, a.size)
		case actUpgradeMinor:
			*jobID, err = c.cloud.UpgradeMinorVersion(ctx, a.instance)
		case actRestart:
			*jobID, err = c.cloud.RestartInstance(ctx, a.instance)
		case actSingleToHA:
			*jobID, err = c.cloud.SingleToHA(ctx, a.instance, a.standby, a.password)
		case actBackupPolicy:
			err = c.cloud.UpdateBackupPolicy(ctx, a.instance, a.policy)
		case actSetTags:
			err = c.cloud.SetTags(ctx, a.instance, a.tags)
		case actDeleteTags:
			err = c.cloud.DeleteTags(ctx, a.instance, a.keys)
		case actSecurityGroup:
			*jobID, err = c.cloud.SetSecurityGroup(ctx, a.instance, a.group)
		case actUpdatePort:
			*jobID, err = c.cloud.UpdatePort(ctx, a.instance, a.port)
		case actSwitchSSL:
			*jobID, err = c.cloud.SwitchSSL(ctx, a.instance, a.ssl)
		case actRestoreInPlace:
			*jobID, err = c.cloud.RestoreInPlace(ctx, a.instance, a.at)
		case actStorageAutoscaling:
			reader, ok := c.cloud.(cloud.MetricsReader)
			if !ok {
				return cloud.ErrMetricsUnavailable
			}
			err = reader.SetStorageAutoscaling(ctx, a.instance, a.scaling)
		case actCreate:
			res.instanceID, *jobID, err = c.cloud.CreateInstance(ctx, *a.create)
		case actRestoreToNew:
			res.instanceID, *jobID, err = c.cloud.RestoreToNew(ctx, cloud.RestoreToNewOpts{CreateInstanceOpts: *a.create, From: a.from})
		case actCreateBackup:
			res.backup, err = c.cloud.CreateBackup(ctx, a.instance, a.backup, a.about)
		case actDeleteInstance:
			*jobID, err = c.cloud.DeleteInstance(ctx, a.instance)
		case actCreateReplica:
			res.instanceID, *jobID, err = c.cloud.CreateReplica(ctx, *a.replica)
		case actUpdateParameters:
			var ch cloud.ParametersChange
			ch, err = c.cloud.UpdateParameters(ctx, a.instance, a.values)
			*jobID, res.parameters = ch.JobID, &ch
		case actCreateTemplate:
			res.template, err = c.cloud.CreateParameterTemplate(ctx, *a.template)
		case actDeleteTemplate:
			err = c.cloud.DeleteParameterTemplate(ctx, a.templateID)
		case actStorageType:
			*jobID, err = c.cloud.ChangeStorageType(ctx, a.instance, a.storage)
		case actReplicationMode:
			*jobID, err = c.cloud.ChangeReplicationMode(ctx, a.instance, a.mode)
		case actMaintenanceWindow:
			err = c.cloud.ChangeMaintenanceWindow(ctx, a.instance, a.window)
		case actStop:
			*jobID, err = c.cloud.StopInstance(ctx, a.instance)
		case actStart:
			*jobID, err = c.cloud.StartInstance(ctx, a.instance)
		default:
			return fmt.Errorf("sync: act: unknown action %q", a.kind) // a programming error, never sent
		}
		return err
	})
	return res, err
}

// sqlKind names one action a step takes outside the cloud: on the database server, or the
// passwords it generates for it.
type sqlKind string

const (
	sqlGeneratePasswords sqlKind = "GeneratePasswords"
	sqlApply             sqlKind = "ApplyDatabases"
)

// sqlAction is an action outside the cloud, as data: passwords to generate (seeds, by the spec
// user's index), or a desired state to apply over SQL as root (conn, without its deadlines).
//
// NOTE: it is a second switch beside act (actSQL), not a kind of action: act is the one place that
// changes OTC, the call's one change, which a call that read the shared view never makes
// (runStep). A password or a statement changes nothing in OTC, so such a call makes it too, and it
// does not count as the call's change: the databases step runs after the others and never stops
// the call.
type sqlAction struct {
	kind    sqlKind
	seeds   map[int]string       // sqlGeneratePasswords
	engine  string               // sqlApply
	conn    dbusers.Conn         // sqlApply: host, port, root and its password
	desired dbusers.Desired      // sqlApply
	managed dbusers.ManagedState // sqlApply: what was applied before
	tls     bool                 // sqlApply: the session is TLS, the server verified with Config.Databases.CA
}

// actSQL makes an action outside the cloud. Generated passwords come from the Reconciler's
// password source (passwordSource); a failure to make one fails the call. An apply runs under its
// own deadline, and its error is the step's answer (acted.applied), never the call's.
func (c *call) actSQL(ctx context.Context, a sqlAction) (res acted, err error) {
	switch a.kind {
	case sqlGeneratePasswords:
		res.passwords = map[int]secret.Value{}
		for _, i := range slices.Sorted(maps.Keys(a.seeds)) { // in the spec's order, as the random source is read
			gen, err := generatePassword(c.r.cfg, c.parent.UID, a.seeds[i])
			if err != nil {
				return res, err
			}
			res.passwords[i] = secret.New(gen)
		}
	case sqlApply:
		cfg := c.r.cfg.Databases
		conn := a.conn
		conn.Timeout, conn.ConnectTimeout = c.r.cfg.CallTimeout, cfg.ConnectTimeout
		if a.tls {
			conn.TLS = dbusers.VerifyCA(cfg.CA)
		}
		actx, cancel := context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
		apply := sqlLayers[a.engine].Apply // planned only for an engine with a SQL layer
		if cfg.Apply != nil {
			apply = cfg.Apply
		}
		applied, err := apply(actx, conn, a.desired, a.managed)
		res.applied = &applyAnswer{res: applied, err: err}
	default:
		return res, fmt.Errorf("sync: actSQL: unknown action %q", a.kind) // a programming error
	}
	return res, nil
}
