package otcsim

import (
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"time"
)

// Seed network: the names the original operator's sample spec uses. The ids are stable.
const (
	SeedVPCName           = "frank-test"
	SeedSubnetName        = "frank-test"
	SeedSecurityGroupName = "golang"
	DefaultSecurityGroup  = "default"
)

// Ids of the seed network.
var (
	SeedVPCID                  = stableUUID("vpc/" + SeedVPCName)
	SeedSubnetID               = stableUUID("subnet/" + SeedSubnetName) // the VPC v1 id = Neutron network id; RDS wants this one
	SeedNeutronSubnetID        = stableUUID("neutron-subnet/" + SeedSubnetName)
	SeedSecurityGroupID        = stableUUID("secgroup/" + SeedSecurityGroupName)
	SeedDefaultSecurityGroupID = stableUUID("secgroup/" + DefaultSecurityGroup)
)

type vpc struct {
	id, name, cidr string
	created        time.Time
}

type subnet struct {
	id, neutronSubnetID, vpcID, name string
	prefix                           netip.Prefix
	nextHost                         netip.Addr // next address handed to an instance
}

type secGroup struct {
	id, name, description string
}

func (s *Sim) seedNetwork() {
	s.vpcs = append(s.vpcs, &vpc{id: SeedVPCID, name: SeedVPCName, cidr: "192.168.0.0/16", created: s.now()})
	s.subnets = append(s.subnets, newSubnet(SeedSubnetID, SeedNeutronSubnetID, SeedVPCID, SeedSubnetName,
		netip.MustParsePrefix("192.168.0.0/24")))
	s.groups = append(s.groups,
		&secGroup{id: SeedSecurityGroupID, name: SeedSecurityGroupName, description: "seed security group"},
		&secGroup{id: SeedDefaultSecurityGroupID, name: DefaultSecurityGroup, description: "Default security group"})
}

func newSubnet(id, neutronID, vpcID, name string, p netip.Prefix) *subnet {
	// .1 is the gateway; instances start at .100 like the addresses OTC tends to hand out.
	first := p.Addr()
	for range 100 {
		first = first.Next()
	}
	return &subnet{id: id, neutronSubnetID: neutronID, vpcID: vpcID, name: name, prefix: p, nextHost: first}
}

// AddVPC adds a VPC and returns its id. Names need not be unique: ambiguity is the client's problem.
func (s *Sim) AddVPC(name, cidr string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.randUUID()
	s.vpcs = append(s.vpcs, &vpc{id: id, name: name, cidr: cidr, created: s.now()})
	return id
}

// AddSubnet adds a subnet to a VPC and returns its (VPC v1) id. cidr must be an IPv4 prefix.
func (s *Sim) AddSubnet(vpcID, name, cidr string) (string, error) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil || !p.Addr().Is4() || p.Bits() > 24 {
		return "", fmt.Errorf("subnet cidr %q: want an IPv4 prefix of /24 or larger", cidr)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.findVPC(vpcID) == nil {
		return "", fmt.Errorf("vpc %s does not exist", vpcID)
	}
	sn := newSubnet(s.randUUID(), s.randUUID(), vpcID, name, p.Masked())
	s.subnets = append(s.subnets, sn)
	return sn.id, nil
}

// AddSecurityGroup adds a security group and returns its id.
func (s *Sim) AddSecurityGroup(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.randUUID()
	s.groups = append(s.groups, &secGroup{id: id, name: name})
	return id
}

func (s *Sim) findVPC(id string) *vpc {
	for _, v := range s.vpcs {
		if v.id == id {
			return v
		}
	}
	return nil
}

func (s *Sim) findSubnet(id string) *subnet {
	for _, sn := range s.subnets {
		if sn.id == id {
			return sn
		}
	}
	return nil
}

func (s *Sim) findSecGroup(id string) *secGroup {
	for _, g := range s.groups {
		if g.id == id {
			return g
		}
	}
	return nil
}

// allocateIP hands out the next free address of a subnet.
func (sn *subnet) allocateIP() string {
	a := sn.nextHost
	if next := a.Next(); sn.prefix.Contains(next) {
		sn.nextHost = next
	}
	return a.String()
}

func (v *vpc) json() map[string]any {
	return map[string]any{
		"id": v.id, "name": v.name, "cidr": v.cidr, "description": "", "status": "OK",
		"routes": []any{}, "enable_shared_snat": false, "enterprise_project_id": "0",
	}
}

func (sn *subnet) json() map[string]any {
	gw := sn.prefix.Addr().Next()
	return map[string]any{
		"id": sn.id, "name": sn.name, "description": "", "cidr": sn.prefix.String(),
		"gateway_ip": gw.String(), "dhcp_enable": true, "ipv6_enable": false,
		"primary_dns": "100.125.4.25", "secondary_dns": "100.125.129.199",
		"dnsList":           []string{"100.125.4.25", "100.125.129.199"},
		"availability_zone": "", "vpc_id": sn.vpcID, "status": "ACTIVE",
		"neutron_network_id": sn.id, "neutron_subnet_id": sn.neutronSubnetID,
		"extra_dhcp_opts": []any{},
	}
}

func (g *secGroup) json(projectID string) map[string]any {
	return map[string]any{
		"id": g.id, "name": g.name, "description": g.description,
		"security_group_rules": []any{}, "tenant_id": projectID, "project_id": projectID,
	}
}

// handleListVpcs serves GET /vpc/v1/{project}/vpcs.
// NOTE: VPC v1 has no server-side name filter; the SDK's vpcs.List filters client-side and pages
// through "vpcs_links" (absent here: one page holds everything).
func (s *Sim) handleListVpcs(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []map[string]any{}
	for _, v := range s.vpcs {
		out = append(out, v.json())
	}
	writeJSON(w, http.StatusOK, map[string]any{"vpcs": out})
}

// handleGetVpc serves GET /vpc/v1/{project}/vpcs/{id}.
func (s *Sim) handleGetVpc(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.findVPC(r.PathValue("id"))
	if v == nil {
		writeError(w, svcVPC, errorf(http.StatusNotFound, "VPC.0003", "The VPC does not exist."))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"vpc": v.json()})
}

// handleListSubnets serves GET /vpc/v1/{project}/subnets[?vpc_id=].
// NOTE: the SDK's subnets.List sends no vpc_id and filters client-side; other clients may send it.
func (s *Sim) handleListSubnets(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	vpcID := r.URL.Query().Get("vpc_id")
	out := []map[string]any{}
	for _, sn := range s.subnets {
		if vpcID == "" || sn.vpcID == vpcID {
			out = append(out, sn.json())
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"subnets": out})
}

// handleGetSubnet serves GET /vpc/v1/{project}/subnets/{id}.
func (s *Sim) handleGetSubnet(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sn := s.findSubnet(r.PathValue("id"))
	if sn == nil {
		writeError(w, svcVPC, errorf(http.StatusNotFound, "VPC.0202", "The subnet does not exist."))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"subnet": sn.json()})
}

// handleListSecurityGroups serves GET /vpc/v2.0/security-groups (Neutron; filters on id and name).
func (s *Sim) handleListSecurityGroups(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := r.URL.Query()
	out := []map[string]any{}
	for _, g := range s.groups {
		if (!q.Has("name") || q.Get("name") == g.name) && (!q.Has("id") || q.Get("id") == g.id) {
			out = append(out, g.json(s.opts.ProjectID))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"security_groups": out})
}

// handleGetSecurityGroup serves GET /vpc/v2.0/security-groups/{id}.
func (s *Sim) handleGetSecurityGroup(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.findSecGroup(r.PathValue("id"))
	if g == nil {
		writeError(w, svcNeutron, errorf(http.StatusNotFound, "", "Security group %s could not be found.", r.PathValue("id")))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"security_group": g.json(s.opts.ProjectID)})
}

// jsonV3 is the VPC as VPC v3 shows it.
func (v *vpc) jsonV3(projectID string, subnets int) map[string]any {
	at := v.created.UTC().Format("2006-01-02T15:04:05Z")
	return map[string]any{
		"id": v.id, "name": v.name, "description": "", "cidr": v.cidr, "extend_cidrs": []string{},
		"status": "ACTIVE", "project_id": projectID, "enterprise_project_id": "0",
		"created_at": at, "updated_at": at, "tags": []any{},
		"cloud_resources": []map[string]any{
			{"resource_type": "routetable", "resource_count": 1},
			{"resource_type": "virsubnet", "resource_count": subnets},
		},
	}
}

func (s *Sim) vpcsV3() []map[string]any {
	out := []map[string]any{}
	for _, v := range s.vpcs {
		n := 0
		for _, sn := range s.subnets {
			if sn.vpcID == v.id {
				n++
			}
		}
		out = append(out, v.jsonV3(s.opts.ProjectID, n))
	}
	return out
}

// handleListVpcsV3 serves GET /vpc/v3/{project}/vpc/vpcs: VPC v3 filters on id, name, description
// and cidr (each repeatable: any of its values matches) and pages with limit and marker.
// NOTE: the SDK's vpcs.List (v0.9.8) reads one page and never follows page_info.next_marker.
func (s *Sim) handleListVpcsV3(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := 2000
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 0 || n > 2000 {
			writeError(w, svcVPC3, errorf(http.StatusBadRequest, "VPC.0002", "Invalid limit %q: 0 to 2000.", l))
			return
		}
		if n > 0 {
			limit = n
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []map[string]any{}
	for _, v := range s.vpcsV3() {
		match := true
		for _, k := range []string{"id", "name", "description", "cidr"} {
			if want := q[k]; len(want) > 0 && !slices.Contains(want, fmt.Sprint(v[k])) {
				match = false
			}
		}
		if match {
			out = append(out, v)
		}
	}
	if m := q.Get("marker"); m != "" {
		i := slices.IndexFunc(out, func(v map[string]any) bool { return v["id"] == m })
		if i < 0 {
			writeError(w, svcVPC3, errorf(http.StatusBadRequest, "VPC.0002", "Invalid marker %s.", m))
			return
		}
		out = out[i+1:]
	}
	page := map[string]any{"current_count": min(len(out), limit)}
	if len(out) > limit {
		out = out[:limit]
		page["next_marker"] = out[limit-1]["id"]
	}
	if len(out) > 0 {
		page["previous_marker"] = out[0]["id"]
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"request_id": stableHex("request/ListVpcsV3/" + r.URL.RawQuery), "vpcs": out, "page_info": page,
	})
}

// handleGetVpcV3 serves GET /vpc/v3/{project}/vpc/vpcs/{id}.
func (s *Sim) handleGetVpcV3(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := r.PathValue("id")
	for _, v := range s.vpcsV3() {
		if v["id"] == id {
			writeJSON(w, http.StatusOK, map[string]any{"request_id": stableHex("request/GetVpcV3/" + id), "vpc": v})
			return
		}
	}
	// NOTE: the contract (../shared/otc-api.md, section 9) gives VPC v3's error shape, not its
	// codes; the simulator answers an unknown VPC with VPC v1's VPC.0003.
	writeError(w, svcVPC3, errorf(http.StatusNotFound, "VPC.0003", "The VPC %s does not exist.", id))
}
