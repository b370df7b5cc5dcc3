package otc

import (
	"context"
	"time"

	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/backups"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// ListRestoreTimes returns the periods the instance can be restored to.
//
// NOTE: the SDK's ListRestoreTimesOpts.Date has a json tag, not a q tag, so it is never sent: OTC
// answers with every period it has.
func (c *Client) ListRestoreTimes(ctx context.Context, instanceID string) ([]cloud.TimeRange, error) {
	const op = "ListRestoreTimes"
	if err := checkFilter(op, "instance id", instanceID); err != nil {
		return nil, err
	}
	return call(ctx, c, op, func(s services) ([]cloud.TimeRange, error) {
		res, err := backups.ListRestoreTimes(s.rds, backups.ListRestoreTimesOpts{InstanceId: instanceID})
		if err != nil {
			return nil, err
		}
		out := make([]cloud.TimeRange, 0, len(res))
		for _, r := range res {
			out = append(out, cloud.TimeRange{Start: time.UnixMilli(r.StartTime).UTC(), End: time.UnixMilli(r.EndTime).UTC()})
		}
		return out, nil
	})
}

// RestoreInPlace restores the instance to its own state at a point in time (millisecond precision)
// and returns the job id.
func (c *Client) RestoreInPlace(ctx context.Context, instanceID string, at time.Time) (string, error) {
	const op = "RestoreInPlace"
	if err := checkFilter(op, "instance id", instanceID); err != nil {
		return "", err
	}
	if at.IsZero() {
		return "", cloud.Errorf(cloud.KindInvalid, op, "", "no restore time")
	}
	opts := backups.RestorePITROpts{
		Source: backups.Source{InstanceID: instanceID, Type: string(backups.TypeTimestamp), RestoreTime: at.UnixMilli()},
		Target: backups.Target{InstanceID: instanceID},
	}
	return call(ctx, c, op, func(s services) (string, error) {
		job, err := backups.RestorePITR(s.rds, opts)
		if err != nil {
			return "", err
		}
		if job == "" {
			return "", cloud.Errorf(cloud.KindUnknown, op, "", "OTC accepted the restore but returned no job id")
		}
		return job, nil
	})
}

// RestoreToNew issues the creation of a new instance from a backup or a point in time of another
// instance and returns the new instance's id and the job's id.
func (c *Client) RestoreToNew(ctx context.Context, o cloud.RestoreToNewOpts) (id, jobID string, err error) {
	const op = "RestoreToNew"
	if o.Password.Empty() {
		return "", "", cloud.Errorf(cloud.KindInvalid, op, "", "no password for the instance")
	}
	if err := checkFilter(op, "source instance id", o.From.InstanceID); err != nil {
		return "", "", err
	}
	point, perr := restorePoint(op, o.From)
	if perr != nil {
		return "", "", perr
	}
	// The body is the create body without datastore and region: OTC takes them from the source.
	co := createOpts(o.CreateInstanceOpts, c.region)
	opts := backups.RestoreToNewOpts{
		Name:             co.Name,
		Ha:               co.Ha,
		Port:             co.Port,
		Password:         co.Password,
		BackupStrategy:   co.BackupStrategy,
		FlavorRef:        co.FlavorRef,
		Volume:           co.Volume,
		AvailabilityZone: co.AvailabilityZone,
		VpcId:            co.VpcId,
		SubnetId:         co.SubnetId,
		SecurityGroupId:  co.SecurityGroupId,
		DiskEncryptionId: co.DiskEncryptionId,
		// NOTE: the restore takes no time_zone: the new instance has the source's (Validate
		// refuses timezone with restorefrom).
		UnchangeableParam: co.UnchangeableParam,
		RestorePoint:      point,
	}
	type created struct{ id, job string }
	r, err := call(ctx, c, op, func(s services) (created, error) {
		res, err := backups.RestoreToNew(s.rds, opts)
		if err != nil {
			return created{}, err
		}
		if res.Instance.Id == "" {
			return created{}, cloud.Errorf(cloud.KindUnknown, op, "", "OTC accepted the restore but returned no instance id")
		}
		return created{res.Instance.Id, res.JobId}, nil
	})
	return r.id, r.job, err
}

// restorePoint builds the SDK's restore point: a backup, or a time in milliseconds.
//
// NOTE: the SDK types RestorePoint.RestoreTime as int, Source.RestoreTime as int64; both are
// milliseconds since the epoch (int is 64 bits on every platform we build for).
func restorePoint(op string, p cloud.RestorePoint) (backups.RestorePoint, *cloud.Error) {
	switch {
	case p.BackupID != "" && !p.Time.IsZero():
		return backups.RestorePoint{}, cloud.Errorf(cloud.KindInvalid, op, "", "a restore point is a backup or a time, not both")
	case p.BackupID != "":
		return backups.RestorePoint{InstanceID: p.InstanceID, Type: backups.TypeBackup, BackupID: p.BackupID}, nil
	case !p.Time.IsZero():
		return backups.RestorePoint{InstanceID: p.InstanceID, Type: backups.TypeTimestamp, RestoreTime: int(p.Time.UnixMilli())}, nil
	}
	return backups.RestorePoint{}, cloud.Errorf(cloud.KindInvalid, op, "", "a restore point needs a backup or a time")
}
