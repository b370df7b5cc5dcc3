package otc

import (
	"context"
	"strconv"
	"strings"

	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/instances"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// listPageSize is the page size of RDS list calls (OTC's maximum).
const listPageSize = 100

// maxListPages bounds a paged listing, against a server that never stops paging.
const maxListPages = 50

// GetInstance returns the instance with this id, KindNotFound if OTC does not list it.
//
// NOTE: RDS v3 has no GET by id; List with ?id= answers an unknown id with 200 and an empty list.
func (c *Client) GetInstance(ctx context.Context, id string) (*cloud.Instance, error) {
	const op = "GetInstance"
	if err := checkFilter(op, "instance id", id); err != nil {
		return nil, err
	}
	return call(ctx, c, op, func(s services) (*cloud.Instance, error) {
		return findInstance(s, op, instances.ListOpts{Id: id}, func(in instances.InstanceResponse) bool { return in.Id == id }, "instance "+id)
	})
}

// FindInstancesByName returns every instance with exactly this name, none if there is none.
//
// NOTE: OTC's create API reference: "Instances of the same type can have the same name under the
// same tenant". A name is a way to find candidates, never proof of which one is whose: the caller
// tells them apart by their ownership tags.
func (c *Client) FindInstancesByName(ctx context.Context, name string) ([]*cloud.Instance, error) {
	const op = "FindInstancesByName"
	if err := checkFilter(op, "instance name", name); err != nil {
		return nil, err
	}
	return call(ctx, c, op, func(s services) ([]*cloud.Instance, error) {
		return listInstances(s, instances.ListOpts{Name: name}, func(in instances.InstanceResponse) bool { return in.Name == name })
	})
}

// checkFilter refuses values that List would not treat as an exact match.
//
// NOTE: List matches id and name fuzzily when they start with "*", and lists every instance when
// they are empty; neither may ever reach it from a lookup of one instance.
func checkFilter(op, what, v string) error {
	if v == "" || strings.HasPrefix(v, "*") {
		return cloud.Errorf(cloud.KindInvalid, op, "", "invalid %s %q", what, v)
	}
	return nil
}

// findInstance lists with opts and returns the one instance that match accepts, checking every page.
func findInstance(s services, op string, opts instances.ListOpts, match func(instances.InstanceResponse) bool, what string) (*cloud.Instance, error) {
	found, err := listInstances(s, opts, match)
	if err != nil {
		return nil, err
	}
	switch len(found) {
	case 0:
		return nil, cloud.Errorf(cloud.KindNotFound, op, "", "%s not found", what)
	case 1:
		return found[0], nil
	}
	return nil, cloud.Errorf(cloud.KindConflict, op, "", "%d instances match: %s", len(found), what)
}

// listInstances lists with opts and returns the instances that match accepts, checking every page.
func listInstances(s services, opts instances.ListOpts, match func(instances.InstanceResponse) bool) ([]*cloud.Instance, error) {
	opts.Limit = listPageSize
	var found []*cloud.Instance
	for page := 0; page < maxListPages; page++ {
		opts.Offset = page * listPageSize
		res, err := instances.List(s.rds, opts)
		if err != nil {
			return nil, err
		}
		for _, in := range res.Instances {
			if match(in) {
				found = append(found, toInstance(in))
			}
		}
		if len(res.Instances) < listPageSize || opts.Offset+len(res.Instances) >= res.TotalCount {
			break
		}
	}
	return found, nil
}

// CreateInstance issues the create and returns the new instance's id and the job's id. It does not
// wait for the instance.
func (c *Client) CreateInstance(ctx context.Context, o cloud.CreateInstanceOpts) (id, jobID string, err error) {
	const op = "CreateInstance"
	if o.Password.Empty() {
		return "", "", cloud.Errorf(cloud.KindInvalid, op, "", "no password for the instance")
	}
	opts := createOpts(o, c.region)
	type created struct{ id, job string }
	r, err := call(ctx, c, op, func(s services) (created, error) {
		res, err := instances.Create(s.rds, opts)
		if err != nil {
			return created{}, err
		}
		if res.Instance.Id == "" {
			return created{}, cloud.Errorf(cloud.KindUnknown, op, "", "OTC accepted the create but returned no instance id")
		}
		return created{res.Instance.Id, res.JobId}, nil
	})
	return r.id, r.job, err
}

// createOpts builds the SDK's create request.
func createOpts(o cloud.CreateInstanceOpts, defaultRegion string) instances.CreateRdsOpts {
	opts := instances.CreateRdsOpts{
		Name:             o.Name,
		Datastore:        &instances.Datastore{Type: o.Engine, Version: o.Version},
		FlavorRef:        o.Flavor,
		Volume:           &instances.Volume{Type: o.VolumeType, Size: o.VolumeSize},
		Region:           firstNonEmpty(o.Region, defaultRegion),
		AvailabilityZone: strings.Join(o.AvailabilityZones, ","), // one AZ per node
		VpcId:            o.VpcID,
		SubnetId:         o.SubnetID,
		SecurityGroupId:  o.SecurityGroupID,
		Password:         o.Password.Reveal(),
		ConfigurationId:  o.ConfigurationID,
	}
	if o.Port > 0 {
		// NOTE: Create takes the port as a string; List reports it as a number.
		opts.Port = strconv.Itoa(o.Port)
	}
	if o.HAMode != "" {
		opts.Ha = &instances.Ha{Mode: o.HAMode, ReplicationMode: o.ReplicationMode}
	}
	if b := o.BackupStrategy; b != nil {
		opts.BackupStrategy = &instances.BackupStrategy{StartTime: b.StartTime, KeepDays: b.KeepDays}
	}
	opts.TimeZone = o.TimeZone
	opts.DiskEncryptionId = o.DiskEncryptionID
	if n := o.LowerCaseTableNames; n != nil {
		// NOTE: OTC takes lower_case_table_names as a string, "0" or "1", at create only.
		opts.UnchangeableParam = &instances.Param{LowerCaseTableNames: strconv.Itoa(*n)}
	}
	return opts
}

// DeleteInstance issues the delete and returns the job's id. An instance that does not exist is an
// error of kind NotFound, not a success: whether that means "already deleted" is the caller's call.
func (c *Client) DeleteInstance(ctx context.Context, id string) (string, error) {
	const op = "DeleteInstance"
	if err := checkFilter(op, "instance id", id); err != nil {
		return "", err
	}
	return call(ctx, c, op, func(s services) (string, error) {
		job, err := instances.Delete(s.rds, id)
		if err != nil {
			return "", err
		}
		return *job, nil
	})
}

// toInstance converts the SDK's list entry.
func toInstance(in instances.InstanceResponse) *cloud.Instance {
	out := &cloud.Instance{
		ID:               in.Id,
		Name:             in.Name,
		Status:           in.Status,
		Type:             in.Type,
		Engine:           in.DataStore.Type,
		Version:          in.DataStore.Version,
		CompleteVersion:  in.DataStore.CompleteVersion,
		Flavor:           in.FlavorRef,
		Volume:           cloud.Volume{Type: in.Volume.Type, Size: in.Volume.Size},
		PrivateIPs:       in.PrivateIps,
		Port:             in.Port,
		Region:           in.Region,
		VpcID:            in.VpcId,
		SubnetID:         in.SubnetId,
		SecurityGroupID:  in.SecurityGroupId,
		ReplicationMode:  in.Ha.ReplicationMode,
		BackupStrategy:   cloud.BackupStrategy{StartTime: in.BackupStrategy.StartTime, KeepDays: in.BackupStrategy.KeepDays},
		SSL:              in.EnableSSL,
		TimeZone:         in.TimeZone,
		DiskEncryptionID: in.DiskEncryptionId,
		Created:          parseTime(in.Created).UTC(), // the shared view keeps the instant alone
		// MaintenanceWindow: the SDK's doc says "the start time"; OTC answers the window, "02:00-06:00".
		MaintenanceWindow: in.MaintenanceWindow,
	}
	for _, n := range in.Nodes {
		out.Nodes = append(out.Nodes, cloud.Node{ID: n.Id, Name: n.Name, Role: n.Role, Status: n.Status, AvailabilityZone: n.AvailabilityZone})
	}
	related(out, in.RelatedInstance) // replicas.go
	if len(in.Tags) > 0 {
		out.Tags = make(map[string]string, len(in.Tags))
		for _, t := range in.Tags {
			out.Tags[t.Key] = t.Value
		}
	}
	return out
}

// maxFleetPages bounds the listing of every instance of a project: 100,000 instances.
const maxFleetPages = 1000

// ListInstances returns every instance of the project, one request per page of 100 (the shared
// view's refresh, sync/cloud/view). It implements cloud.InstanceLister.
//
// NOTE: instances created or deleted while the pages are read can shift the offsets, so one may be
// missed or listed twice: a later listing repairs that, and the view reads an instance it does not
// find by id.
func (c *Client) ListInstances(ctx context.Context) ([]cloud.Instance, error) {
	const op = "ListInstances"
	return call(ctx, c, op, func(s services) ([]cloud.Instance, error) {
		opts := instances.ListOpts{Limit: listPageSize}
		var out []cloud.Instance
		seen := map[string]bool{}
		for page := 0; page < maxFleetPages; page++ {
			opts.Offset = page * listPageSize
			res, err := instances.List(s.rds, opts)
			if err != nil {
				return nil, err
			}
			for _, in := range res.Instances {
				if !seen[in.Id] {
					seen[in.Id] = true
					out = append(out, *toInstance(in))
				}
			}
			if len(res.Instances) < listPageSize || opts.Offset+len(res.Instances) >= res.TotalCount {
				return out, nil
			}
		}
		return nil, cloud.Errorf(cloud.KindUnknown, op, "", "more than %d pages of instances", maxFleetPages)
	})
}
