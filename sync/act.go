package sync

import (
	"context"
	"fmt"
	"time"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
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
	actRestoreInPlace     actionKind = "RestoreInPlace"
	actStorageAutoscaling actionKind = "SetStorageAutoscaling"
	actCreate             actionKind = "CreateInstance"
	actRestoreToNew       actionKind = "RestoreToNew"
	actCreateBackup       actionKind = "CreateBackup"
	actDeleteInstance     actionKind = "DeleteInstance"
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
	at      time.Time                 // actRestoreInPlace
	scaling cloud.StorageAutoscaling  // actStorageAutoscaling
	create  *cloud.CreateInstanceOpts // actCreate, actRestoreToNew (its Password is a secret.Value)
	from    cloud.RestorePoint        // actRestoreToNew
	backup  string                    // actCreateBackup: the backup's name
	about   string                    // actCreateBackup: the backup's description

	// password is the root password SingleToHA needs for SQL Server. It is never compared or
	// printed (secret.Value), and never part of what a decision is tested on.
	password secret.Value
}

// acted is what OTC answered to an action: the job that carries it out, if any, the id of an
// instance it creates, and the backup it starts.
type acted struct {
	jobID, instanceID string
	backup            *cloud.Backup
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
		default:
			return fmt.Errorf("sync: act: unknown action %q", a.kind) // a programming error, never sent
		}
		return err
	})
	return res, err
}
