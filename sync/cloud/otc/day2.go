package otc

import (
	"context"
	"maps"
	"slices"

	"github.com/opentelekomcloud/gophertelekomcloud/openstack/common/tags"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/backups"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/instances"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// allWeekdays is the backup cycle set when OTC reports none: every day.
const allWeekdays = "1,2,3,4,5,6,7"

// tagResource is the resource type of RDS instances in the tags API.
const tagResource = "instances"

// ResizeFlavor issues a flavor change and returns the job id.
func (c *Client) ResizeFlavor(ctx context.Context, id, flavor string) (string, error) {
	const op = "ResizeFlavor"
	if err := checkFilter(op, "instance id", id); err != nil {
		return "", err
	}
	return jobCall(ctx, c, op, func(s services) (*string, error) {
		return instances.Resize(s.rds, instances.ResizeOpts{InstanceId: id, SpecCode: flavor})
	})
}

// EnlargeVolume grows the volume to sizeGB and returns the job id.
//
// NOTE: size is the new total, not the increment; OTC refuses less than current+10 GB.
func (c *Client) EnlargeVolume(ctx context.Context, id string, sizeGB int) (string, error) {
	const op = "EnlargeVolume"
	if err := checkFilter(op, "instance id", id); err != nil {
		return "", err
	}
	return jobCall(ctx, c, op, func(s services) (*string, error) {
		return instances.EnlargeVolume(s.rds, instances.EnlargeVolumeRdsOpts{InstanceId: id, Size: sizeGB})
	})
}

// RestartInstance restarts the instance and returns the job id.
func (c *Client) RestartInstance(ctx context.Context, id string) (string, error) {
	const op = "RestartInstance"
	if err := checkFilter(op, "instance id", id); err != nil {
		return "", err
	}
	return jobCall(ctx, c, op, func(s services) (*string, error) {
		return instances.Restart(s.rds, instances.RestartOpts{InstanceId: id})
	})
}

// UpgradeMinorVersion upgrades to the newest minor version, at once (not in the maintenance
// window), and returns the job id.
//
// NOTE: the SDK posts to …/action/db-upgrade; the API docs name …/db-upgrade. OTC serves both.
func (c *Client) UpgradeMinorVersion(ctx context.Context, id string) (string, error) {
	const op = "UpgradeMinorVersion"
	if err := checkFilter(op, "instance id", id); err != nil {
		return "", err
	}
	return jobCall(ctx, c, op, func(s services) (*string, error) {
		return instances.UpgradeDbVersion(s.rds, instances.UpgradeDbVersionOpts{InstanceId: id})
	})
}

// SingleToHA adds a standby node in standbyAZ and returns the job id. OTC needs the root password
// for SQL Server only; it is sent only when set.
func (c *Client) SingleToHA(ctx context.Context, id, standbyAZ string, password secret.Value) (string, error) {
	const op = "SingleToHA"
	if err := checkFilter(op, "instance id", id); err != nil {
		return "", err
	}
	if standbyAZ == "" {
		return "", cloud.Errorf(cloud.KindInvalid, op, "", "no availability zone for the standby")
	}
	return jobCall(ctx, c, op, func(s services) (*string, error) {
		return instances.SingleToHa(s.rds, instances.SingleToHaOpts{InstanceId: id, AzCodeNewNode: standbyAZ, Password: password.Reveal()})
	})
}

// UpdateBackupPolicy sets the backup window, retention and weekly cycle; a policy without a cycle
// keeps OTC's.
//
// NOTE: OTC requires the cycle (period) with every enabled policy, and the instance list does not
// report it: without one it is read from the policy first, every day of the week if OTC has none.
func (c *Client) UpdateBackupPolicy(ctx context.Context, id string, p cloud.BackupStrategy) error {
	const op = "UpdateBackupPolicy"
	if err := checkFilter(op, "instance id", id); err != nil {
		return err
	}
	_, err := call(ctx, c, op, func(s services) (struct{}, error) {
		opts := backups.UpdateOpts{InstanceId: id, KeepDays: &p.KeepDays}
		if p.KeepDays > 0 {
			opts.StartTime, opts.Period = p.StartTime, p.Period
		}
		if p.KeepDays > 0 && p.Period == "" {
			cur, err := backups.ShowBackupPolicy(s.rds, id)
			if err != nil {
				return struct{}{}, err
			}
			opts.Period = firstNonEmpty(cur.Period, allWeekdays)
		}
		return struct{}{}, backups.Update(s.rds, opts)
	})
	return err
}

// SetTags creates tags or updates their values, in one request.
func (c *Client) SetTags(ctx context.Context, id string, kv map[string]string) error {
	const op = "SetTags"
	if err := checkFilter(op, "instance id", id); err != nil {
		return err
	}
	if len(kv) == 0 {
		return nil
	}
	var list []tags.ResourceTag
	for _, k := range slices.Sorted(maps.Keys(kv)) {
		list = append(list, tags.ResourceTag{Key: k, Value: kv[k]})
	}
	_, err := call(ctx, c, op, func(s services) (struct{}, error) {
		return struct{}{}, tags.Create(s.rds, tagResource, id, list).Err
	})
	return err
}

// DeleteTags removes the tags with these keys, in one request.
func (c *Client) DeleteTags(ctx context.Context, id string, keys []string) error {
	const op = "DeleteTags"
	if err := checkFilter(op, "instance id", id); err != nil {
		return err
	}
	if len(keys) == 0 {
		return nil
	}
	var list []tags.ResourceTag
	for _, k := range keys {
		list = append(list, tags.ResourceTag{Key: k})
	}
	_, err := call(ctx, c, op, func(s services) (struct{}, error) {
		return struct{}{}, tags.Delete(s.rds, tagResource, id, list).Err
	})
	return err
}

// jobCall runs an instance action that answers with a job id.
func jobCall(ctx context.Context, c *Client, op string, fn func(s services) (*string, error)) (string, error) {
	return call(ctx, c, op, func(s services) (string, error) {
		job, err := fn(s)
		if err != nil {
			return "", err
		}
		if job == nil {
			return "", nil
		}
		return *job, nil
	})
}
