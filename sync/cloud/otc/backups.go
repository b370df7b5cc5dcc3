package otc

import (
	"context"
	"time"

	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/backups"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// ListBackups returns the instance's backups, all pages.
func (c *Client) ListBackups(ctx context.Context, instanceID string) ([]cloud.Backup, error) {
	const op = "ListBackups"
	if err := checkFilter(op, "instance id", instanceID); err != nil {
		return nil, err
	}
	return call(ctx, c, op, func(s services) ([]cloud.Backup, error) {
		// NOTE: backups.List returns the bare list without total_count: page until a short page.
		var out []cloud.Backup
		for page := 0; page < maxListPages; page++ {
			res, err := backups.List(s.rds, backups.ListOpts{InstanceID: instanceID, Offset: page * listPageSize, Limit: listPageSize})
			if err != nil {
				return nil, err
			}
			for _, b := range res {
				out = append(out, toBackup(b))
			}
			if len(res) < listPageSize {
				break
			}
		}
		return out, nil
	})
}

// CreateBackup starts a manual backup and returns it as OTC first reports it (BUILDING). There is no
// job: follow it with ListBackups.
//
// NOTE: OTC answers 200 here; the SDK accepts only 200 and 201.
func (c *Client) CreateBackup(ctx context.Context, instanceID, name, description string) (*cloud.Backup, error) {
	const op = "CreateBackup"
	if err := checkFilter(op, "instance id", instanceID); err != nil {
		return nil, err
	}
	return call(ctx, c, op, func(s services) (*cloud.Backup, error) {
		b, err := backups.Create(s.rds, backups.CreateOpts{InstanceID: instanceID, Name: name, Description: description})
		if err != nil {
			return nil, err
		}
		out := toBackup(*b)
		if out.InstanceID == "" {
			out.InstanceID = instanceID
		}
		return &out, nil
	})
}

func toBackup(b backups.Backup) cloud.Backup {
	return cloud.Backup{
		ID:         b.ID,
		InstanceID: b.InstanceID,
		Name:       b.Name,
		Type:       b.Type,
		Status:     string(b.Status),
		SizeKB:     b.Size,
		Begin:      parseTime(b.BeginTime),
		End:        parseTime(b.EndTime),
	}
}

// timeLayouts are the forms OTC writes times in: "2018-08-20T02:33:49+0800" in RDS, RFC 3339
// elsewhere.
var timeLayouts = []string{"2006-01-02T15:04:05-0700", time.RFC3339, "2006-01-02T15:04:05"}

// parseTime reads an OTC time; the zero time if it is empty or unreadable.
func parseTime(s string) time.Time {
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t
		}
	}
	return time.Time{}
}
