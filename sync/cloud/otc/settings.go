package otc

import (
	"context"
	"strings"

	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/backups"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/instances"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// engineCodes are the engines as OTC's storage codes name them.
var engineCodes = map[string]string{"MySQL": "mysql", "PostgreSQL": "pg", "SQLServer": "mssql"}

// volumeCode is the storage code of ChangeStorageType: rds.<engine>.volume.<type>, with .ha for
// a primary/standby instance and .rr for a read replica (DOC: changing the storage type of a DB
// instance), e.g. rds.mysql.volume.essd.ha.
func volumeCode(to cloud.Storage) (string, bool) {
	engine, ok := engineCodes[to.Engine]
	if !ok || to.VolumeType == "" {
		return "", false
	}
	code := "rds." + engine + ".volume." + strings.ToLower(to.VolumeType)
	switch {
	case strings.EqualFold(to.InstanceType, cloud.TypeHa):
		code += ".ha"
	case strings.EqualFold(to.InstanceType, cloud.TypeReplica):
		code += ".rr"
	}
	return code, true
}

// ChangeStorageType moves the storage to another type and returns the job id.
//
// NOTE: the SDK's VolumeCode is a string; the API reference's table says Integer, its examples
// send a string. OTC refuses a move it does not offer (the decision checks the pairs first).
func (c *Client) ChangeStorageType(ctx context.Context, id string, to cloud.Storage) (string, error) {
	const op = "ChangeStorageType"
	if err := checkFilter(op, "instance id", id); err != nil {
		return "", err
	}
	code, ok := volumeCode(to)
	if !ok {
		return "", cloud.Errorf(cloud.KindInvalid, op, "", "no storage code for %s %s", to.Engine, to.VolumeType)
	}
	return jobCall(ctx, c, op, func(s services) (*string, error) {
		return instances.ChangeStorageType(s.rds, instances.ChangeStorageTypeOpts{InstanceId: id, VolumeCode: code})
	})
}

// ChangeReplicationMode sets the replication mode between primary and standby and returns OTC's
// workflow id (a job id).
func (c *Client) ChangeReplicationMode(ctx context.Context, id, mode string) (string, error) {
	const op = "ChangeReplicationMode"
	if err := checkFilter(op, "instance id", id); err != nil {
		return "", err
	}
	return call(ctx, c, op, func(s services) (string, error) {
		res, err := instances.ChangeFailoverMode(s.rds, instances.ChangeFailoverModeOpts{InstanceId: id, Mode: mode})
		if err != nil {
			return "", err
		}
		return res.WorkflowId, nil
	})
}

// ChangeMaintenanceWindow sets the maintenance window, "hh:mm-HH:MM" in UTC.
func (c *Client) ChangeMaintenanceWindow(ctx context.Context, id, window string) error {
	const op = "ChangeMaintenanceWindow"
	if err := checkFilter(op, "instance id", id); err != nil {
		return err
	}
	start, end, ok := strings.Cut(window, "-")
	if !ok {
		return cloud.Errorf(cloud.KindInvalid, op, "", "invalid maintenance window %q", window)
	}
	_, err := call(ctx, c, op, func(s services) (struct{}, error) {
		return struct{}{}, instances.ChangeOpsWindow(s.rds, instances.ChangeOpsWindowOpts{InstanceId: id, StartTime: start, EndTime: end})
	})
	return err
}

// StopInstance stops the instance and returns the job id.
func (c *Client) StopInstance(ctx context.Context, id string) (string, error) {
	const op = "StopInstance"
	if err := checkFilter(op, "instance id", id); err != nil {
		return "", err
	}
	return jobCall(ctx, c, op, func(s services) (*string, error) { return instances.StopInstance(s.rds, id) })
}

// StartInstance starts a stopped instance and returns the job id.
func (c *Client) StartInstance(ctx context.Context, id string) (string, error) {
	const op = "StartInstance"
	if err := checkFilter(op, "instance id", id); err != nil {
		return "", err
	}
	return jobCall(ctx, c, op, func(s services) (*string, error) { return instances.StartupInstance(s.rds, id) })
}

// GetBackupPolicy reads the automated backup policy, with its days of the week.
func (c *Client) GetBackupPolicy(ctx context.Context, id string) (cloud.BackupStrategy, error) {
	const op = "GetBackupPolicy"
	if err := checkFilter(op, "instance id", id); err != nil {
		return cloud.BackupStrategy{}, err
	}
	return call(ctx, c, op, func(s services) (cloud.BackupStrategy, error) {
		p, err := backups.ShowBackupPolicy(s.rds, id)
		if err != nil {
			return cloud.BackupStrategy{}, err
		}
		return cloud.BackupStrategy{StartTime: p.StartTime, KeepDays: p.KeepDays, Period: p.Period}, nil
	})
}
