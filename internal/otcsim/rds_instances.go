package otcsim

import (
	"maps"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// createRequest is the body of POST /instances (SDK: instances.CreateRdsOpts; restore-to-new adds
// restore_point and drops datastore and region).
type createRequest struct {
	Name            string         `json:"name"`
	Datastore       *datastoreSpec `json:"datastore"`
	Ha              *haSpec        `json:"ha"`
	ConfigurationID string         `json:"configuration_id"`
	Port            flexInt        `json:"port"` // NOTE: the SDK sends a string, the docs a number
	Password        string         `json:"password"`
	BackupStrategy  *struct {
		StartTime string  `json:"start_time"`
		KeepDays  flexInt `json:"keep_days"`
	} `json:"backup_strategy"`
	DiskEncryptionID string      `json:"disk_encryption_id"`
	FlavorRef        string      `json:"flavor_ref"`
	Volume           *volumeSpec `json:"volume"`
	Region           string      `json:"region"`
	AvailabilityZone string      `json:"availability_zone"`
	VpcID            string      `json:"vpc_id"`
	SubnetID         string      `json:"subnet_id"`
	DataVIP          string      `json:"data_vip"`
	SecurityGroupID  string      `json:"security_group_id"`
	ChargeInfo       *struct {
		ChargeMode string `json:"charge_mode"`
	} `json:"charge_info"`
	TimeZone          string `json:"time_zone"`
	UnchangeableParam *struct {
		LowerCaseTableNames string `json:"lower_case_table_names"`
	} `json:"unchangeable_param"`
	RestorePoint *restorePoint `json:"restore_point"`
	// ReplicaOfID makes the request a read replica's (rds_replicas.go).
	ReplicaOfID string `json:"replica_of_id"`
}

type datastoreSpec struct {
	Type    string `json:"type"`
	Version string `json:"version"`
}

type haSpec struct {
	Mode            string `json:"mode"`
	ReplicationMode string `json:"replication_mode"`
}

type volumeSpec struct {
	Type string  `json:"type"`
	Size flexInt `json:"size"`
}

var (
	instanceNameRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{3,63}$`)
	backupWindowRe = regexp.MustCompile(`^([01]\d|2[0-3]):(00|15|30|45)-([01]\d|2[0-3]):(00|15|30|45)$`)
)

// passwordSpecials are the special characters OTC allows in a root password, per engine
// (DOC:rds/api_v3_recommended/db_instance_management/creating_a_db_instance). The hook and the
// CRD hold the same lists; test/otccases checks all three.
var passwordSpecials = map[string]string{
	"mysql": "~!@#$%^*-_=+?,()&",
	"pg":    "~!@#$%^*-_=+?,",
	"mssql": "~!@#$%^*-_+?,",
}

// validPassword: 8–32 characters from letters, digits and the engine's passwordSpecials, at
// least 3 classes.
func validPassword(e *engine, p string) bool {
	specials := passwordSpecials[e.short]
	if len(p) < 8 || len(p) > 32 {
		return false
	}
	var upper, lower, digit, special bool
	for _, c := range p {
		switch {
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= '0' && c <= '9':
			digit = true
		case strings.ContainsRune(specials, c):
			special = true
		default:
			return false
		}
	}
	classes := 0
	for _, b := range []bool{upper, lower, digit, special} {
		if b {
			classes++
		}
	}
	return classes >= 3
}

// validBackupWindow checks "hh:mm-HH:MM" with HH = hh+1 and mm = MM ∈ {00,15,30,45}.
func validBackupWindow(w string) bool {
	m := backupWindowRe.FindStringSubmatch(w)
	if m == nil {
		return false
	}
	h1, _ := strconv.Atoi(m[1])
	h2, _ := strconv.Atoi(m[3])
	return (h1+1)%24 == h2 && m[2] == m[4]
}

func validPort(e *engine, p int) bool {
	switch e.short {
	case "mysql":
		return p >= 1024 && p <= 65535 && p != 12017 && p != 33071
	case "pg":
		return p >= 2100 && p <= 9500
	default:
		return p == 1433 || (p >= 2100 && p <= 9500 && p != 5355 && p != 5985)
	}
}

// validateVolume checks a volume type and size (40–4000 GB, a multiple of 10).
func validateVolume(typ string, size int) *apiError {
	if !slices.Contains(storageTypes, typ) {
		return errorf(http.StatusBadRequest, "DBS.200026", "Invalid storage type %q.", typ)
	}
	if size < 40 || size > 4000 {
		return errorf(http.StatusBadRequest, "DBS.200023", "The storage size must be between 40 and 4000 GB.")
	}
	if size%10 != 0 {
		return errorf(http.StatusBadRequest, "DBS.200027", "The storage size must be a multiple of 10.")
	}
	return nil
}

// checkInstanceName checks a new instance's name (a create, a read replica's, a restore's).
func checkInstanceName(name string) *apiError {
	if !instanceNameRe.MatchString(name) {
		return errorf(http.StatusBadRequest, "DBS.200021",
			"Invalid DB instance name: 4 to 64 characters, starting with a letter; letters, digits, hyphens and underscores only.")
	}
	return nil
}

// checkNameFree refuses a new instance a name an instance has, in the strict mode only.
//
// NOTE: OTC lets instances of one type share a name; only the strict mode (UniqueNames) refuses.
func (s *Sim) checkNameFree(name string) *apiError {
	if !s.opts.UniqueNames {
		return nil
	}
	for _, other := range s.instances {
		if other.name == name {
			return errorf(http.StatusConflict, "DBS.200022", "The DB instance name already exists.")
		}
	}
	return nil
}

// offeredFlavor is the flavor ref names if it is one of e's, for version, in mode (single, ha or
// replica); nil if not.
func offeredFlavor(ref string, e *engine, version, mode string) *flavor {
	f := findFlavor(ref)
	if f == nil || f.engine != e || f.mode != mode || !slices.Contains(f.versions, version) {
		return nil
	}
	return f
}

// checkPlacement checks where a new instance's nodes go, one AZ each (azs, trimmed): each AZ one
// of the region's, the flavor f sold in each, the volume's type and size, and the storage type
// offered in each.
func checkPlacement(f *flavor, azs []string, volumeType string, size int) *apiError {
	for _, az := range azs {
		if !slices.Contains(availabilityZones, az) {
			return errorf(http.StatusBadRequest, "DBS.200025", "Invalid AZ %q.", az)
		}
	}
	if err := checkFlavorAZs(f, azs); err != nil {
		return err
	}
	if err := validateVolume(volumeType, size); err != nil {
		return err
	}
	for _, az := range azs {
		if storageAZStatus(volumeType, az) != azNormal {
			return errorf(http.StatusBadRequest, "DBS.200026", "The storage type %s is not offered in %s.", volumeType, az)
		}
	}
	return nil
}

// checkFlavorAZs checks that a flavor is sold in every requested AZ.
func checkFlavorAZs(f *flavor, azs []string) *apiError {
	for _, az := range azs {
		switch f.azStatus[az] {
		case azNormal:
		case azSellout:
			return errorf(http.StatusBadRequest, "DBS.280450", "The specifications %s are sold out in %s.", f.spec, az)
		default:
			return errorf(http.StatusBadRequest, "DBS.200053", "The specifications %s are not available in %s.", f.spec, az)
		}
	}
	return nil
}

// handleCreateInstance serves POST /rds/v3/{project}/instances: create, or restore to a new instance
// when the body has a restore_point.
func (s *Sim) handleCreateInstance(w http.ResponseWriter, r *http.Request) {
	var req createRequest
	if e := decodeBody(r, &req); e != nil {
		writeError(w, svcRDS, e)
		return
	}
	now := s.lockAt()
	defer s.mu.Unlock()

	var (
		in  *instance
		j   *job
		err *apiError
	)
	switch {
	case req.ReplicaOfID != "":
		in, j, err = s.createReplica(&req, now)
	case req.RestorePoint != nil:
		in, j, err = s.restoreToNew(&req, now)
	default:
		in, j, err = s.createInstance(&req, now)
	}
	if err != nil {
		writeError(w, svcRDS, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"instance": in.createJSON(), "job_id": j.id})
}

// createInstance validates a create request and starts building the instance.
func (s *Sim) createInstance(req *createRequest, now time.Time) (*instance, *job, *apiError) {
	if req.Datastore == nil || req.Region == "" {
		return nil, nil, errParam("datastore and region are required")
	}
	e := engineExact(req.Datastore.Type)
	if e == nil {
		return nil, nil, errParam("datastore.type %q is not one of MySQL, PostgreSQL, SQLServer (case-sensitive)", req.Datastore.Type)
	}
	v := e.version(req.Datastore.Version)
	if v == nil {
		return nil, nil, errParam("datastore.version %q is not supported for %s", req.Datastore.Version, e.name)
	}
	if req.Region != Region {
		return nil, nil, errParam("region %q does not exist", req.Region)
	}
	in, err := s.newInstance(req, e, v.name, now)
	if err != nil {
		return nil, nil, err
	}
	in.completeVersion = v.complete
	j := s.newJob("Create"+e.jobName+"SingleHAInstance", in, now, s.opts.Durations.Create)
	s.startBuild(in, j, now, s.opts.Durations.Create, nil)
	return in, j, nil
}

// newInstance validates everything but datastore and region, and registers a new instance in BUILD.
func (s *Sim) newInstance(req *createRequest, e *engine, version string, now time.Time) (*instance, *apiError) {
	if req.Name == "" || req.Password == "" || req.FlavorRef == "" || req.Volume == nil ||
		req.AvailabilityZone == "" || req.VpcID == "" || req.SubnetID == "" || req.SecurityGroupID == "" {
		return nil, errParam("name, password, flavor_ref, volume, availability_zone, vpc_id, subnet_id and security_group_id are required")
	}
	if err := checkInstanceName(req.Name); err != nil {
		return nil, err
	}

	typ, mode, replication := TypeSingle, modeSingle, ""
	if req.Ha != nil {
		if !strings.EqualFold(req.Ha.Mode, "ha") {
			return nil, errParam("ha.mode must be Ha")
		}
		if !slices.Contains(e.replication, req.Ha.ReplicationMode) {
			return nil, errParam("ha.replication_mode must be one of %s for %s", strings.Join(e.replication, ", "), e.name)
		}
		typ, mode, replication = TypeHa, modeHA, req.Ha.ReplicationMode
	}
	f := offeredFlavor(req.FlavorRef, e, version, mode)
	if f == nil {
		return nil, errorf(http.StatusBadRequest, "DBS.200053",
			"The specifications %s do not exist for %s %s (%s).", req.FlavorRef, e.name, version, mode)
	}
	azs := strings.Split(req.AvailabilityZone, ",")
	wantAZs := 1
	if typ == TypeHa {
		wantAZs = 2
	}
	if len(azs) != wantAZs {
		return nil, errorf(http.StatusBadRequest, "DBS.200025",
			"Invalid AZ %q: specify one AZ per node (%d), separated by commas.", req.AvailabilityZone, wantAZs)
	}
	for i, az := range azs {
		azs[i] = strings.TrimSpace(az)
	}
	if err := checkPlacement(f, azs, req.Volume.Type, req.Volume.Size.Value); err != nil {
		return nil, err
	}

	if s.findVPC(req.VpcID) == nil {
		return nil, errorf(http.StatusNotFound, "DBS.200503", "Either the VPC does not exist or does not belong to this user.")
	}
	sn := s.findSubnet(req.SubnetID)
	if sn == nil || sn.vpcID != req.VpcID {
		// NOTE: RDS wants the VPC v1 subnet id (= Neutron network id), not neutron_subnet_id.
		return nil, errorf(http.StatusNotFound, "DBS.200501", "The subnet does not exist or does not belong to the VPC.")
	}
	if s.findSecGroup(req.SecurityGroupID) == nil {
		return nil, errorf(http.StatusNotFound, "DBS.200050", "The security group does not exist.")
	}

	port := e.defaultPort
	if req.Port.Set {
		port = req.Port.Value
		if !validPort(e, port) {
			return nil, errParam("port %d is not allowed for %s", port, e.name)
		}
	}
	if !validPassword(e, req.Password) {
		return nil, errorf(http.StatusBadRequest, "DBS.200052",
			"Invalid root password: 8 to 32 characters with at least three of uppercase letters, lowercase letters, digits and %s.", passwordSpecials[e.short])
	}
	backupStart, keepDays := "02:00-03:00", 7
	if bs := req.BackupStrategy; bs != nil {
		if !validBackupWindow(bs.StartTime) {
			return nil, errorf(http.StatusBadRequest, "DBS.201103", "Invalid backup start time %q.", bs.StartTime)
		}
		if bs.KeepDays.Value < 0 || bs.KeepDays.Value > 732 {
			return nil, errorf(http.StatusBadRequest, "DBS.201106", "Invalid backup retention days %d.", bs.KeepDays.Value)
		}
		backupStart, keepDays = bs.StartTime, bs.KeepDays.Value
	}
	createValues, apiErr := createOnlyOptions(req, e)
	if apiErr != nil {
		return nil, apiErr
	}
	var startValues map[string]string
	if req.ConfigurationID != "" {
		c := s.configurations[req.ConfigurationID]
		if c == nil {
			return nil, errorf(http.StatusNotFound, "DBS.212001", "The parameter template does not exist.")
		}
		if c.engine != e || c.version != version {
			return nil, errorf(http.StatusBadRequest, "DBS.212004", "The parameter template is for %s %s, not %s %s.", c.engine.name, c.version, e.name, version)
		}
		// NOTE: the instance starts with a copy of the template's values, in effect from the
		// start; the template can be deleted afterwards.
		startValues = maps.Clone(c.values)
	}
	if req.ChargeInfo != nil && req.ChargeInfo.ChargeMode != "" && req.ChargeInfo.ChargeMode != "postPaid" {
		return nil, errParam("the simulator supports charge_mode postPaid only")
	}
	if err := s.checkNameFree(req.Name); err != nil {
		return nil, err
	}

	in := &instance{
		seq: s.nextSeq(), id: s.randHex(32) + "in01", name: req.Name, engine: e, version: version,
		typ: typ, replicationMode: replication, flavor: f, volumeType: req.Volume.Type,
		volumeSize: req.Volume.Size.Value, azs: azs, vpcID: req.VpcID, subnetID: req.SubnetID,
		secGroupID: req.SecurityGroupID, port: port, backupStart: backupStart, backupKeepDays: keepDays,
		backupPeriod: "1,2,3,4,5,6,7", configurationID: req.ConfigurationID,
		diskEncryption: req.DiskEncryptionID, timeZone: req.TimeZone, dataVIP: req.DataVIP,
		tags: []tag{}, configValues: startValues, pendingRestart: map[string]bool{}, status: StatusBuild, ordered: now,
	}
	if in.configValues == nil {
		in.configValues = map[string]string{}
	}
	maps.Copy(in.configValues, createValues) // time_zone, lower_case_table_names: set at create
	in.privateIP = req.DataVIP
	if in.privateIP == "" {
		in.privateIP = sn.allocateIP()
	}
	in.endpointHost, in.endpointPort = s.endpointFor(in.name, in.engine.name)
	in.nodes = s.newNodes(in)
	s.instances[in.id] = in
	return in, nil
}

// newNodes returns a master node, and a standby for HA instances.
func (s *Sim) newNodes(in *instance) []*node {
	nodes := []*node{{id: s.randHex(32) + "no01", name: in.name + "_node0", role: "master", az: in.azs[0]}}
	if in.typ == TypeHa {
		nodes = append(nodes, &node{id: s.randHex(32) + "no01", name: in.name + "_node1", role: "slave", az: in.azs[1]})
	}
	return nodes
}

// startBuild puts a new instance in BUILD for d; then it is ACTIVE and has its first automated
// backup. then, if set, runs afterwards (restores use it).
func (s *Sim) startBuild(in *instance, j *job, now time.Time, d time.Duration, then func(*instance, time.Time)) {
	endpoint := net.JoinHostPort(in.privateIP, strconv.Itoa(in.port))
	if in.endpointHost != "" {
		endpoint = net.JoinHostPort(in.endpointHost, strconv.Itoa(in.endpointPort))
	}
	j.entities = map[string]any{
		"instance": map[string]any{
			"endpoint": endpoint, "type": in.typ,
			"datastore": map[string]any{"type": strings.ToLower(in.engine.name), "version": in.version},
		},
		"resource_ids": []string{in.id + ".vm", in.id + ".volume"},
	}
	in.startOp(opKindCreate, StatusBuild, now, d, j, func(in *instance, at time.Time) {
		in.status = StatusActive
		in.created = at
		in.logStartup(at)
		if in.backupKeepDays > 0 {
			s.addAutoBackup(in, at)
		}
		if then != nil {
			then(in, at)
		}
	})
}

// createJSON is the instance as the create answer shows it. NOTE: port is a string here.
func (in *instance) createJSON() map[string]any {
	out := map[string]any{
		"id": in.id, "name": in.name, "status": StatusBuild,
		"datastore":        map[string]any{"type": in.engine.name, "version": in.version},
		"configuration_id": in.configurationID, "port": strconv.Itoa(in.port),
		"backup_strategy":    map[string]any{"start_time": in.backupStart, "keep_days": in.backupKeepDays},
		"disk_encryption_id": in.diskEncryption, "flavor_ref": in.flavor.spec,
		"volume": map[string]any{"type": in.volumeType, "size": in.volumeSize},
		"region": Region, "availability_zone": strings.Join(in.azs, ","),
		"vpc_id": in.vpcID, "subnet_id": in.subnetID, "security_group_id": in.secGroupID,
		"charge_info": map[string]any{"charge_mode": "postPaid"}, "time_zone": in.timeZone,
	}
	if in.typ == TypeHa {
		out["ha"] = map[string]any{"mode": "Ha", "replication_mode": in.replicationMode}
	}
	return out
}

// listJSON is the instance as List shows it. NOTE: port is an int here, cpu and mem are strings, and
// AZs appear only on the nodes.
func (in *instance) listJSON() map[string]any {
	status := in.shownStatus()
	nodes := make([]map[string]any, 0, len(in.nodes))
	for _, n := range in.nodes {
		nodes = append(nodes, map[string]any{
			"id": n.id, "name": n.name, "role": n.role, "status": status, "availability_zone": n.az,
		})
	}
	created, updated := "", ""
	if !in.created.IsZero() {
		created, updated = rdsTime(in.created), rdsTime(in.updated)
	}
	out := map[string]any{
		"id": in.id, "name": in.name, "status": status, "alias": "",
		"private_ips": in.privateIPs(), "public_ips": []string{}, "private_dns_names": []string{},
		"public_dns_names": []string{}, "port": in.shownPort(), "enable_ssl": in.ssl, "type": in.typ,
		"region": Region,
		"datastore": map[string]any{
			"type": in.engine.name, "version": in.version, "complete_version": in.completeVersion,
		},
		"created": created, "updated": updated, "db_user_name": dbUser(in.engine),
		"vpc_id": in.vpcID, "subnet_id": in.subnetID, "security_group_id": in.secGroupID,
		"cpu": strconv.Itoa(in.flavor.vcpus), "mem": strconv.Itoa(in.flavor.ramGB),
		"flavor_ref": in.flavor.spec, "volume": map[string]any{"type": in.volumeType, "size": in.volumeSize},
		"switch_strategy":    "reliability",
		"backup_strategy":    map[string]any{"start_time": in.backupStart, "keep_days": in.backupKeepDays},
		"maintenance_window": in.shownMaintenanceWindow(), "nodes": nodes, "related_instance": in.relatedJSON(),
		"disk_encryption_id": in.diskEncryption, "time_zone": in.timeZone,
		"charge_info": map[string]any{"charge_mode": "postPaid"}, "tags": in.tags,
		"associated_with_ddm": false,
	}
	if in.typ == TypeHa {
		out["ha"] = map[string]any{"replication_mode": in.replicationMode}
	}
	return out
}

func dbUser(e *engine) string {
	switch e.short {
	case "pg":
		return "root"
	case "mssql":
		return "rdsuser"
	}
	return "root"
}

// handleListInstances serves GET /rds/v3/{project}/instances.
// NOTE: there is no GET by id: clients list with ?id=. An unknown id answers 200 with an empty list.
func (s *Sim) handleListInstances(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	offset, err := queryInt(r, "offset", 0)
	if err == nil && offset < 0 {
		err = errParam("offset must not be negative")
	}
	if err != nil {
		writeError(w, svcRDS, err)
		return
	}
	limit, err := queryInt(r, "limit", 100)
	if err == nil && (limit < 1 || limit > 100) {
		err = errParam("limit must be between 1 and 100")
	}
	if err != nil {
		writeError(w, svcRDS, err)
		return
	}
	for _, k := range []string{"id", "name"} {
		if q.Has(k) && strings.Trim(q.Get(k), "*") == "" && q.Get(k) != "" {
			writeError(w, svcRDS, errParam("%s cannot consist of asterisks only", k))
			return
		}
	}

	s.lockAt()
	defer s.mu.Unlock()
	// NOTE: filtering before sorting keeps a look-up in a fleet of 10,000 (test/scale) from sorting
	// all of them.
	all := s.sortedInstancesWhere(func(in *instance) bool {
		return matchIDOrName(q.Get("id"), in.id) && matchIDOrName(q.Get("name"), in.name) &&
			(q.Get("type") == "" || q.Get("type") == in.typ) &&
			(q.Get("datastore_type") == "" || q.Get("datastore_type") == in.engine.name) &&
			(q.Get("vpc_id") == "" || q.Get("vpc_id") == in.vpcID) &&
			(q.Get("subnet_id") == "" || q.Get("subnet_id") == in.subnetID)
	})
	slices.Reverse(all) // newest first
	from, to := page(len(all), offset, limit)
	listed := make([]map[string]any, 0, to-from)
	for _, in := range all[from:to] {
		listed = append(listed, in.listJSON())
	}
	writeJSON(w, http.StatusOK, map[string]any{"instances": listed, "total_count": len(all)})
}

// matchIDOrName: "" matches all, "*x" matches values containing x, anything else matches exactly.
func matchIDOrName(filter, value string) bool {
	switch {
	case filter == "":
		return true
	case strings.HasPrefix(filter, "*"):
		return strings.Contains(value, filter[1:])
	default:
		return filter == value
	}
}

// handleDeleteInstance serves DELETE /rds/v3/{project}/instances/{id}.
// NOTE: the instance stays listed with its last status while the delete job runs, then vanishes.
func (s *Sim) handleDeleteInstance(w http.ResponseWriter, r *http.Request) {
	in, now := s.lockInstance(w, r, nil)
	if in == nil {
		return
	}
	defer s.mu.Unlock()
	if in.op != nil || in.replicaBuilding() {
		writeError(w, svcRDS, errInstanceBusy())
		return
	}
	if in.status == StatusShutdown && in.engine.short == "pg" {
		// NOTE: "A stopped PostgreSQL DB instance cannot be deleted" (DOC: stopping an instance).
		writeError(w, svcRDS, errorf(http.StatusBadRequest, "DBS.200086", "This operation is not allowed by the DB instance status."))
		return
	}
	j := s.newJob("Delete"+in.engine.jobName+"Instance", in, now, s.opts.Durations.Delete)
	in.startOp(opKindDelete, "", now, s.opts.Durations.Delete, j, func(in *instance, _ time.Time) {
		delete(s.instances, in.id)
		s.forget(in) // rds_replicas.go: and a primary's read replicas with it
		for id, b := range s.backups {
			if b.instanceID == in.id && b.typ == backupAuto {
				delete(s.backups, id)
			}
		}
	})
	writeJSON(w, http.StatusAccepted, map[string]any{"job_id": j.id})
}

// lookupInstance finds the instance of an action; it writes the 404 itself.
func (s *Sim) lookupInstance(w http.ResponseWriter, id string) *instance {
	in := s.instances[id]
	if in == nil {
		writeError(w, svcRDS, errInstanceNotFound(id))
	}
	return in
}

// lockInstance begins a request on the instance of the path's {id}: it decodes the body into req
// (none when req is nil), takes s.mu and looks the instance up. When it has answered an error (a
// malformed body, no such instance) it returns nil and holds no lock; otherwise the caller holds
// s.mu and releases it:
//
//	in, now := s.lockInstance(w, r, &req)
//	if in == nil {
//		return
//	}
//	defer s.mu.Unlock()
func (s *Sim) lockInstance(w http.ResponseWriter, r *http.Request, req any) (*instance, time.Time) {
	if req != nil {
		if e := decodeBody(r, req); e != nil {
			writeError(w, svcRDS, e)
			return nil, time.Time{}
		}
	}
	now := s.lockAt()
	in := s.lookupInstance(w, r.PathValue("id"))
	if in == nil {
		s.mu.Unlock()
	}
	return in, now
}
