package otc

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"time"

	golangsdk "github.com/opentelekomcloud/gophertelekomcloud"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/networking/v1/subnets"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/networking/v1/vpcs"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/networking/v2/extensions/security/groups"
	"github.com/opentelekomcloud/gophertelekomcloud/pagination"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// networkTTL is how long a resolved network is remembered. The ids behind the names of existing
// VPCs, subnets and security groups do not change; a rename or a deletion shows within this time.
const networkTTL = 5 * time.Minute

// networkCache remembers resolved networks by the (VPC, subnet, security group) references.
type networkCache struct {
	mu sync.Mutex
	m  map[[3]string]cachedNetwork
}

type cachedNetwork struct {
	net   cloud.Network
	until time.Time
}

func (nc *networkCache) get(key [3]string, now time.Time) (cloud.Network, bool) {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	e, ok := nc.m[key]
	if !ok || !now.Before(e.until) {
		return cloud.Network{}, false
	}
	return e.net, true
}

func (nc *networkCache) put(key [3]string, net cloud.Network, now time.Time) {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	if nc.m == nil {
		nc.m = make(map[[3]string]cachedNetwork)
	}
	for k, e := range nc.m { // drop what has expired, so that old spec values do not pile up
		if !now.Before(e.until) {
			delete(nc.m, k)
		}
	}
	nc.m[key] = cachedNetwork{net: net, until: now.Add(networkTTL)}
}

// ResolveNetwork turns names or ids of a VPC, a subnet in it and a security group into the ids that
// CreateInstance needs. A reference that matches nothing, or a name that several resources carry,
// is an error of kind Invalid: the user must fix the spec. A resolved network is remembered for
// networkTTL; errors are not.
func (c *Client) ResolveNetwork(ctx context.Context, vpc, subnet, securityGroup string) (cloud.Network, error) {
	const op = "ResolveNetwork"
	for _, r := range []struct{ what, ref string }{{"VPC", vpc}, {"subnet", subnet}, {"security group", securityGroup}} {
		if r.ref == "" {
			return cloud.Network{}, cloud.Errorf(cloud.KindInvalid, op, "", "no %s given", r.what)
		}
	}
	// NOTE: every create attempt resolves the network again, under the one deadline of its call; on a
	// slow API (1.4 s a list) three lists in a row never fit, and the create never got through.
	// Hence the cache, and the three lookups run at once.
	key := [3]string{vpc, subnet, securityGroup}
	if net, ok := c.networks.get(key, c.now()); ok {
		return net, nil
	}
	net, err := call(ctx, c, op, func(s services) (cloud.Network, error) {
		return resolveNetwork(s, op, vpc, subnet, securityGroup)
	})
	if err == nil {
		c.networks.put(key, net, c.now())
	}
	return net, err
}

// resolveNetwork lists VPCs, subnets and security groups concurrently, then picks from them. Errors
// are reported in that order, whichever lookup ended first.
func resolveNetwork(s services, op, vpcRef, subnetRef, sgRef string) (cloud.Network, error) {
	var (
		allVPCs    []vpcs.Vpc
		allSubnets []subnets.Subnet
		sg         string
	)
	errs := concurrently(
		func() (err error) {
			allVPCs, err = eachPage(s.vpc.ServiceURL(s.vpc.ProjectID, "vpcs"), s.vpc, func(r pagination.PageResult) pagination.Page {
				return vpcs.VpcPage{LinkedPageBase: pagination.LinkedPageBase{PageResult: r}}
			}, vpcs.ExtractVpcs)
			return err
		},
		// NOTE: subnets.List never sends its VpcID (it filters client-side), so listing them all
		// before the VPC is known costs nothing more.
		func() (err error) {
			allSubnets, err = eachPage(s.vpc.ServiceURL(s.vpc.ProjectID, "subnets"), s.vpc, func(r pagination.PageResult) pagination.Page {
				return subnets.SubnetPage{LinkedPageBase: pagination.LinkedPageBase{PageResult: r}}
			}, subnets.ExtractSubnets)
			return err
		},
		func() (err error) { sg, err = resolveSecurityGroup(s, op, sgRef); return err },
	)
	if errs[0] != nil {
		return cloud.Network{}, errs[0]
	}
	// NOTE: the VPC v1 API has no server-side name filter on OTC: pick filters client-side.
	v, err := pick(op, "VPC", vpcRef, "", allVPCs, func(v vpcs.Vpc) ([]string, string) { return []string{v.ID}, v.Name })
	if err != nil {
		return cloud.Network{}, err
	}
	if errs[1] != nil {
		return cloud.Network{}, errs[1]
	}
	sn, err := pickSubnet(op, v, subnetRef, allSubnets)
	if err != nil {
		return cloud.Network{}, err
	}
	if errs[2] != nil {
		return cloud.Network{}, errs[2]
	}
	return cloud.Network{VpcID: v.ID, SubnetID: sn, SecurityGroupID: sg}, nil
}

// concurrently runs each fn on its own goroutine and returns their errors, in order, once all have
// ended. A panic becomes that fn's error.
func concurrently(fns ...func() error) []error {
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					errs[i] = sdkPanic(p)
				}
			}()
			errs[i] = fn()
		})
	}
	wg.Wait()
	return errs
}

// pickSubnet returns the VPC v1 id of the subnet of vpc that ref names.
//
// NOTE: one OTC subnet has several ids. RDS wants the VPC v1 subnet id, which is also the Neutron
// network id; it refuses the Neutron subnet id. A user may have copied either, so both are matched
// and the VPC v1 id is returned.
func pickSubnet(op string, vpc vpcs.Vpc, ref string, all []subnets.Subnet) (string, error) {
	var inVPC []subnets.Subnet
	for _, sn := range all {
		if sn.VpcID == vpc.ID {
			inVPC = append(inVPC, sn)
		}
	}
	sn, err := pick(op, "subnet", ref, fmt.Sprintf(" in VPC %q", vpc.Name), inVPC, func(sn subnets.Subnet) ([]string, string) {
		return []string{sn.ID, sn.NetworkID, sn.SubnetID}, sn.Name
	})
	return sn.ID, err
}

// uuidPattern matches the form of Neutron ids.
var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// NOTE: Neutron filters lists on any attribute (?name=, ?id=); the answer is still checked
// client-side, in case a filter is ignored.
//
// NOTE: the SDK's Pager.AllPages fetches the first page twice (once to learn the page type, then
// again in EachPage): at 2 s an OTC call a cold resolution never fitted the 4 s call deadline.
// EachPage fetches each page once. A ref that looks like an id is looked up by id and by name at
// once, so that a miss by id costs no second round trip.
func resolveSecurityGroup(s services, op, ref string) (string, error) {
	list := func(opts groups.ListOpts) ([]groups.SecGroup, error) {
		return each(groups.List(s.neutron, opts), groups.ExtractGroups)
	}
	key := func(g groups.SecGroup) ([]string, string) { return []string{g.ID}, g.Name }
	var byID, byName []groups.SecGroup
	errs := []error{nil, nil}
	if uuidPattern.MatchString(ref) {
		errs = concurrently(
			func() (err error) { byID, err = list(groups.ListOpts{ID: ref}); return err },
			func() (err error) { byName, err = list(groups.ListOpts{Name: ref}); return err },
		)
	} else {
		byName, errs[1] = list(groups.ListOpts{Name: ref})
	}
	if errs[0] != nil {
		return "", errs[0]
	}
	if g, err := pick(op, "security group", ref, "", byID, key); err == nil {
		return g.ID, nil
	}
	if errs[1] != nil {
		return "", errs[1]
	}
	g, err := pick(op, "security group", ref, "", byName, key)
	return g.ID, err
}

// each collects the items of every page of pager, fetching each page once (see
// resolveSecurityGroup on Pager.AllPages).
func each[T any](pager pagination.Pager, extract func(pagination.Page) ([]T, error)) (all []T, err error) {
	err = pager.EachPage(func(page pagination.Page) (bool, error) {
		items, err := extract(page)
		all = append(all, items...)
		return err == nil, err
	})
	return all, err
}

// eachPage is each for the VPC v1 lists, whose SDK List functions call AllPages themselves.
func eachPage[T any](url string, c *golangsdk.ServiceClient, page func(pagination.PageResult) pagination.Page, extract func(pagination.Page) ([]T, error)) ([]T, error) {
	return each(pagination.NewPager(c, url, page), extract)
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
