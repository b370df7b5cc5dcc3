package otc

import (
	"context"
	"fmt"
	"regexp"

	"github.com/opentelekomcloud/gophertelekomcloud/openstack/networking/v1/subnets"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/networking/v1/vpcs"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/networking/v2/extensions/security/groups"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// ResolveNetwork turns names or ids of a VPC, a subnet in it and a security group into the ids that
// CreateInstance needs. A reference that matches nothing, or a name that several resources carry,
// is an error of kind Invalid: the user must fix the spec.
func (c *Client) ResolveNetwork(ctx context.Context, vpc, subnet, securityGroup string) (cloud.Network, error) {
	const op = "ResolveNetwork"
	for _, r := range []struct{ what, ref string }{{"VPC", vpc}, {"subnet", subnet}, {"security group", securityGroup}} {
		if r.ref == "" {
			return cloud.Network{}, cloud.Errorf(cloud.KindInvalid, op, "", "no %s given", r.what)
		}
	}
	return call(ctx, c, op, func(s services) (cloud.Network, error) {
		v, err := resolveVPC(s, op, vpc)
		if err != nil {
			return cloud.Network{}, err
		}
		sn, err := resolveSubnet(s, op, v, subnet)
		if err != nil {
			return cloud.Network{}, err
		}
		sg, err := resolveSecurityGroup(s, op, securityGroup)
		if err != nil {
			return cloud.Network{}, err
		}
		return cloud.Network{VpcID: v.ID, SubnetID: sn, SecurityGroupID: sg}, nil
	})
}

// NOTE: the VPC v1 API has no server-side name filter on OTC; vpcs.List fetches all VPCs and filters
// client-side.
func resolveVPC(s services, op, ref string) (vpcs.Vpc, error) {
	all, err := vpcs.List(s.vpc, vpcs.ListOpts{})
	if err != nil {
		return vpcs.Vpc{}, err
	}
	return pick(op, "VPC", ref, "", all, func(v vpcs.Vpc) ([]string, string) { return []string{v.ID}, v.Name })
}

// NOTE: one OTC subnet has several ids. RDS wants the VPC v1 subnet id, which is also the Neutron
// network id; it refuses the Neutron subnet id. A user may have copied either, so both are matched
// and the VPC v1 id is returned.
func resolveSubnet(s services, op string, vpc vpcs.Vpc, ref string) (string, error) {
	all, err := subnets.List(s.vpc, subnets.ListOpts{VpcID: vpc.ID})
	if err != nil {
		return "", err
	}
	sn, err := pick(op, "subnet", ref, fmt.Sprintf(" in VPC %q", vpc.Name), all, func(sn subnets.Subnet) ([]string, string) {
		return []string{sn.ID, sn.NetworkID, sn.SubnetID}, sn.Name
	})
	return sn.ID, err
}

// uuidPattern matches the form of Neutron ids.
var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// NOTE: Neutron filters lists on any attribute (?name=, ?id=); the answer is still checked
// client-side, in case a filter is ignored.
func resolveSecurityGroup(s services, op, ref string) (string, error) {
	list := func(opts groups.ListOpts) ([]groups.SecGroup, error) {
		pages, err := groups.List(s.neutron, opts).AllPages()
		if err != nil {
			return nil, err
		}
		return groups.ExtractGroups(pages)
	}
	key := func(g groups.SecGroup) ([]string, string) { return []string{g.ID}, g.Name }
	if uuidPattern.MatchString(ref) {
		byID, err := list(groups.ListOpts{ID: ref})
		if err != nil {
			return "", err
		}
		if g, err := pick(op, "security group", ref, "", byID, key); err == nil {
			return g.ID, nil
		}
	}
	byName, err := list(groups.ListOpts{Name: ref})
	if err != nil {
		return "", err
	}
	g, err := pick(op, "security group", ref, "", byName, key)
	return g.ID, err
}

// pick returns the one item whose id is ref or, failing that, whose name is ref.
func pick[T any](op, what, ref, where string, items []T, key func(T) (ids []string, name string)) (T, error) {
	var byName []T
	for _, it := range items {
		ids, name := key(it)
		for _, id := range ids {
			if id != "" && id == ref {
				return it, nil
			}
		}
		if name == ref {
			byName = append(byName, it)
		}
	}
	var zero T
	switch len(byName) {
	case 0:
		return zero, cloud.Errorf(cloud.KindInvalid, op, "", "%s %q not found%s", what, ref, where)
	case 1:
		return byName[0], nil
	}
	return zero, cloud.Errorf(cloud.KindInvalid, op, "", "%s name %q is ambiguous%s: %d match, give the id", what, ref, where, len(byName))
}
