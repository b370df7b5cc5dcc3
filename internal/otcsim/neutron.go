package otcsim

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
)

// Neutron (the "network" catalog entry + "v2.0/") networks and subnets, read-only.
//
// NOTE: one OTC subnet is two Neutron objects. The VPC v1 subnet id is the Neutron *network* id (the
// id RDS create wants as subnet_id); `neutron_subnet_id` is the Neutron *subnet* id, whose
// `network_id` leads back to it. So an SDK program can discover an RDS subnet_id through Neutron:
// subnets.List(name) -> network_id. Each tenant also sees the shared external network
// `admin_external_net` (router:external, no subnet of its own to the tenant).
// NOTE: on OTC the Neutron subnet carries the VPC subnet's name (`openstack subnet list` shows it,
// opentelekomcloud/python-otcclient#44), while the network that OTC creates for it is named with a
// UUID; the contract (../shared/otc-api.md, section 9) does not say which, so the simulator uses the
// VPC's id and clients must find a network through its subnet, never by the network's name.

// AdminExternalNetName is the shared external network every OTC project lists.
const AdminExternalNetName = "admin_external_net"

// AdminExternalNetID is the id of the simulator's admin_external_net.
var AdminExternalNetID = stableUUID("network/" + AdminExternalNetName)

// neutronListKeys are the query keys of a Neutron list that are not attribute filters.
var neutronListKeys = []string{"limit", "marker", "page_reverse", "fields", "sort_key", "sort_dir"}

func (s *Sim) neutronNetworks() []map[string]any {
	pid := s.opts.ProjectID
	out := []map[string]any{{
		"id": AdminExternalNetID, "name": AdminExternalNetName, "status": "ACTIVE", "subnets": []string{},
		"admin_state_up": true, "shared": true, "router:external": true, "provider:network_type": "vlan",
		"tenant_id": stableHex("project/admin"), "project_id": stableHex("project/admin"),
		"availability_zone_hints": []string{}, "availability_zones": []string{}, "port_security_enabled": true,
	}}
	for _, sn := range s.subnets {
		out = append(out, map[string]any{
			"id": sn.id, "name": sn.vpcID, "status": "ACTIVE", "subnets": []string{sn.neutronSubnetID},
			"admin_state_up": true, "shared": false, "router:external": false, "provider:network_type": "vxlan",
			"tenant_id": pid, "project_id": pid, "availability_zone_hints": []string{},
			"availability_zones": []string{"eu-de-01", "eu-de-02", "eu-de-03"}, "port_security_enabled": true,
		})
	}
	return out
}

func (s *Sim) neutronSubnets() []map[string]any {
	pid := s.opts.ProjectID
	out := []map[string]any{}
	for _, sn := range s.subnets {
		first, last := sn.prefix.Addr(), lastAddr(sn.prefix)
		out = append(out, map[string]any{
			"id": sn.neutronSubnetID, "name": sn.name, "description": "", "network_id": sn.id,
			"ip_version": 4, "cidr": sn.prefix.String(), "gateway_ip": first.Next().String(),
			"enable_dhcp": true, "dns_nameservers": []string{"100.125.4.25", "100.125.129.199"},
			// The first address, the gateway and the last three are reserved (OTC VPC docs).
			"allocation_pools": []map[string]string{{
				"start": first.Next().Next().String(), "end": last.Prev().Prev().Prev().Prev().String(),
			}},
			"host_routes": []any{}, "tenant_id": pid, "project_id": pid,
			"ipv6_address_mode": nil, "ipv6_ra_mode": nil, "subnetpool_id": nil,
		})
	}
	return out
}

// lastAddr is the broadcast address of an IPv4 prefix.
func lastAddr(p netip.Prefix) netip.Addr {
	a := p.Masked().Addr().As4()
	n := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	n |= 1<<(32-p.Bits()) - 1
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}

// neutronList answers a Neutron list: every query key that names an attribute filters on it (any of
// its values matches), and limit/marker page through the result with a "<kind>_links" next link.
func (s *Sim) neutronList(w http.ResponseWriter, r *http.Request, kind string, all []map[string]any) {
	q := r.URL.Query()
	out := []map[string]any{}
	for _, obj := range all {
		if neutronMatches(obj, q) {
			out = append(out, obj)
		}
	}
	if m := q.Get("marker"); m != "" {
		i := slices.IndexFunc(out, func(o map[string]any) bool { return o["id"] == m })
		if i < 0 {
			writeError(w, svcNeutron, errorf(http.StatusNotFound, "MarkerNotFound", "Marker %s could not be found.", m))
			return
		}
		out = out[i+1:]
	}
	body := map[string]any{}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 0 {
			writeError(w, svcNeutron, errorf(http.StatusBadRequest, "", "Invalid input for limit: %q.", l))
			return
		}
		if n > 0 && len(out) > n {
			out = out[:n]
			next := *r.URL
			nq := next.Query()
			nq.Set("marker", fmt.Sprint(out[n-1]["id"]))
			next.RawQuery = nq.Encode()
			body[kind+"_links"] = []map[string]string{{"rel": "next", "href": s.baseURL(r) + next.RequestURI()}}
		}
	}
	body[kind] = out
	writeJSON(w, http.StatusOK, body)
}

func neutronMatches(obj map[string]any, q url.Values) bool {
	for k, want := range q {
		if slices.Contains(neutronListKeys, k) {
			continue
		}
		v, ok := obj[k]
		if !ok {
			continue // OTC ignores filters on attributes it does not know
		}
		if !slices.Contains(want, fmt.Sprint(v)) {
			return false
		}
	}
	return true
}

func neutronGet(w http.ResponseWriter, kind, notFound, id string, all []map[string]any) {
	for _, obj := range all {
		if obj["id"] == id {
			writeJSON(w, http.StatusOK, map[string]any{kind: obj})
			return
		}
	}
	writeError(w, svcNeutron, errorf(http.StatusNotFound, notFound, "%s %s could not be found.",
		map[string]string{"network": "Network", "subnet": "Subnet", "router": "Router"}[kind], id))
}

// handleListNetworks serves GET /vpc/v2.0/networks.
func (s *Sim) handleListNetworks(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.neutronList(w, r, "networks", s.neutronNetworks())
}

// handleGetNetwork serves GET /vpc/v2.0/networks/{id}.
func (s *Sim) handleGetNetwork(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	neutronGet(w, "network", "NetworkNotFound", r.PathValue("id"), s.neutronNetworks())
}

// handleListNeutronSubnets serves GET /vpc/v2.0/subnets.
func (s *Sim) handleListNeutronSubnets(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.neutronList(w, r, "subnets", s.neutronSubnets())
}

// handleGetNeutronSubnet serves GET /vpc/v2.0/subnets/{id}.
func (s *Sim) handleGetNeutronSubnet(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	neutronGet(w, "subnet", "SubnetNotFound", r.PathValue("id"), s.neutronSubnets())
}

// NOTE: on OTC a VPC is a Neutron router with the same id and name (the VPC's routes are the
// router's); Neutron lists it under /v2.0/routers, which is how an OpenStack client finds a VPC.
// The simulator gives it no external gateway (no SNAT): external_gateway_info is null.
func (s *Sim) neutronRouters() []map[string]any {
	pid := s.opts.ProjectID
	out := []map[string]any{}
	for _, v := range s.vpcs {
		out = append(out, map[string]any{
			"id": v.id, "name": v.name, "description": "", "status": "ACTIVE", "admin_state_up": true,
			"distributed": false, "external_gateway_info": nil, "routes": []any{},
			"availability_zone_hints": []string{}, "tenant_id": pid, "project_id": pid,
		})
	}
	return out
}

// handleListRouters serves GET /vpc/v2.0/routers.
func (s *Sim) handleListRouters(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.neutronList(w, r, "routers", s.neutronRouters())
}

// handleGetRouter serves GET /vpc/v2.0/routers/{id}.
func (s *Sim) handleGetRouter(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	neutronGet(w, "router", "RouterNotFound", r.PathValue("id"), s.neutronRouters())
}
