package otcsim

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"
)

// InstanceView is a read-only snapshot of an instance.
type InstanceView struct {
	ID                string            `json:"id"`
	Name              string            `json:"name"`
	Status            string            `json:"status"`
	Operation         string            `json:"operation,omitempty"` // kind of the operation in flight
	OperationEnds     time.Time         `json:"operation_ends,omitzero"`
	JobID             string            `json:"job_id,omitempty"`
	Engine            string            `json:"engine"`
	Version           string            `json:"version"`
	CompleteVersion   string            `json:"complete_version"`
	Type              string            `json:"type"`
	ReplicationMode   string            `json:"replication_mode,omitempty"`
	Flavor            string            `json:"flavor"`
	VolumeType        string            `json:"volume_type"`
	VolumeSize        int               `json:"volume_size"`
	AvailabilityZones []string          `json:"availability_zones"`
	PrivateIPs        []string          `json:"private_ips"`
	Port              int               `json:"port"`
	VpcID             string            `json:"vpc_id"`
	SubnetID          string            `json:"subnet_id"`
	SecurityGroupID   string            `json:"security_group_id"`
	SSL               bool              `json:"enable_ssl"`
	TimeZone          string            `json:"time_zone,omitempty"`
	DiskEncryptionID  string            `json:"disk_encryption_id,omitempty"`
	BackupStartTime   string            `json:"backup_start_time"`
	BackupKeepDays    int               `json:"backup_keep_days"`
	BackupPeriod      string            `json:"backup_period"`
	MaintenanceWindow string            `json:"maintenance_window"`
	Tags              map[string]string `json:"tags"`
	Created           time.Time         `json:"created,omitzero"`
	// ReplicaOf is a read replica's primary (rds_replicas.go).
	ReplicaOf string `json:"replica_of,omitempty"`
}

// BackupView is a read-only snapshot of a backup.
type BackupView struct {
	ID         string    `json:"id"`
	InstanceID string    `json:"instance_id"`
	Name       string    `json:"name"`
	Type       string    `json:"type"`
	Status     string    `json:"status"`
	Begin      time.Time `json:"begin"`
	End        time.Time `json:"end"`
}

func (in *instance) view() InstanceView {
	v := InstanceView{
		ID: in.id, Name: in.name, Status: in.shownStatus(), Engine: in.engine.name,
		Version: in.version, CompleteVersion: in.completeVersion, Type: in.typ,
		ReplicationMode: in.replicationMode, Flavor: in.flavor.spec, VolumeType: in.volumeType,
		VolumeSize: in.volumeSize, AvailabilityZones: slices.Clone(in.azs), PrivateIPs: in.privateIPs(),
		Port: in.shownPort(), VpcID: in.vpcID, SubnetID: in.subnetID, SecurityGroupID: in.secGroupID,
		SSL: in.ssl, TimeZone: in.timeZone, DiskEncryptionID: in.diskEncryption,
		BackupStartTime: in.backupStart, BackupKeepDays: in.backupKeepDays, Tags: in.tagMap(),
		BackupPeriod: in.backupPeriod, MaintenanceWindow: in.shownMaintenanceWindow(),
		Created: in.created,
	}
	if in.op != nil {
		v.Operation, v.OperationEnds, v.JobID = in.op.kind, in.op.end, in.op.jobID
	}
	if in.replicaOf != nil {
		v.ReplicaOf = in.replicaOf.id
	}
	return v
}

// Instances returns a snapshot of all instances, oldest first.
func (s *Sim) Instances() []InstanceView {
	s.lockAt()
	defer s.mu.Unlock()
	out := []InstanceView{}
	for _, in := range s.sortedInstances() {
		out = append(out, in.view())
	}
	return out
}

// Instance returns a snapshot of one instance.
func (s *Sim) Instance(id string) (InstanceView, bool) {
	s.lockAt()
	defer s.mu.Unlock()
	in := s.instances[id]
	if in == nil {
		return InstanceView{}, false
	}
	return in.view(), true
}

// Backups returns a snapshot of all backups, oldest first.
func (s *Sim) Backups() []BackupView {
	now := s.lockAt()
	defer s.mu.Unlock()
	out := []BackupView{}
	for _, b := range s.backups {
		out = append(out, BackupView{
			ID: b.id, InstanceID: b.instanceID, Name: b.name, Type: b.typ, Status: b.status(now),
			Begin: b.begin, End: b.end,
		})
	}
	slices.SortFunc(out, func(a, b BackupView) int { return a.Begin.Compare(b.Begin) })
	return out
}

// knownStatuses are the statuses SetInstanceStatus accepts.
var knownStatuses = []string{
	StatusBuild, StatusCreateFail, StatusActive, StatusFailed, StatusFrozen, StatusModifying,
	StatusRebooting, StatusRestoring, StatusModifyingInstanceType, StatusSwitchover, StatusMigrating,
	StatusBackingUp, StatusModifyingPort, StatusStorageFull, StatusShutdown,
}

// SetInstanceStatus forces an instance's status, e.g. FAILED or CREATE FAIL. An operation in flight
// is abandoned and its job ends Failed. Unknown ids and statuses are ignored; see ForceInstanceStatus.
func (s *Sim) SetInstanceStatus(id, status string) {
	_ = s.ForceInstanceStatus(id, status)
}

// ForceInstanceStatus is SetInstanceStatus with an error for unknown ids and statuses.
func (s *Sim) ForceInstanceStatus(id, status string) error {
	status = strings.ToUpper(strings.TrimSpace(status))
	if !slices.Contains(knownStatuses, status) {
		return fmt.Errorf("unknown status %q", status)
	}
	now := s.lockAt()
	defer s.mu.Unlock()
	in := s.instances[id]
	if in == nil {
		return fmt.Errorf("instance %s does not exist", id)
	}
	if in.op != nil {
		if j := s.jobs[in.op.jobID]; j != nil && now.Before(j.ends) {
			j.ends, j.failReason = now, "The simulator forced the instance to "+status+"."
		}
		in.op = nil
	}
	in.status = status
	in.updated = now
	if in.created.IsZero() && status != StatusBuild && status != StatusCreateFail {
		in.created = now
	}
	return nil
}

// FailNextBackup makes the next manual backup of the instance end FAILED.
func (s *Sim) FailNextBackup(instanceID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if in := s.instances[instanceID]; in != nil {
		in.failNextBackup = true
	}
}

// SetInstanceEndpoint backs an instance with a real database server: List then reports host as its
// only private IP and port as its port, so SQL features can run against, e.g., a local MySQL on
// 127.0.0.1:3307. It takes precedence over Options.Endpoints; an empty host removes it.
func (s *Sim) SetInstanceEndpoint(id, host string, port int) error {
	if host != "" && (port < 1 || port > 65535) {
		return fmt.Errorf("port %d is out of range", port)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.instances[id]
	if in == nil {
		return fmt.Errorf("instance %s does not exist", id)
	}
	in.endpointHost, in.endpointPort, in.endpointPinned = host, port, host != ""
	if host == "" {
		in.endpointHost, in.endpointPort = s.endpointOf(in)
	}
	return nil
}

// ParseEndpoint splits a "host:port" endpoint of a real database server and checks the port.
func ParseEndpoint(endpoint string) (host string, port int, err error) {
	h, p, err := net.SplitHostPort(endpoint)
	if err != nil {
		return "", 0, fmt.Errorf("endpoint %q: want host:port", endpoint)
	}
	n, err := strconv.Atoi(p)
	if err != nil || h == "" || n < 1 || n > 65535 {
		return "", 0, fmt.Errorf("endpoint %q: want host:port with a port from 1 to 65535", endpoint)
	}
	return h, n, nil
}

// InstanceSpec describes an instance for AddInstance. Empty fields take defaults: MySQL 8.0, flavor
// rds.mysql.n1.large.2 (.ha for HA), CLOUDSSD 100 GB, eu-de-01 (and eu-de-02), the seed network
// and the engine's default port.
type InstanceSpec struct {
	Name            string
	Engine, Version string
	Flavor          string
	HA              bool
	ReplicationMode string
	VolumeType      string
	VolumeSize      int
	AZs             []string
	VpcID           string
	SubnetID        string
	SecurityGroupID string
	Port            int
	// Endpoint, "host:port", backs the instance with a real database server (see SetInstanceEndpoint).
	Endpoint string
	Tags     map[string]string
}

// AddInstance puts an ACTIVE instance in place without going through the API (no job, no counted
// call), as if it had been created earlier. The spec is validated like a create request.
func (s *Sim) AddInstance(spec InstanceSpec) (string, error) {
	req, err := spec.createRequest()
	if err != nil {
		return "", err
	}
	now := s.lockAt()
	defer s.mu.Unlock()
	in, j, apiErr := s.createInstance(req, now)
	if apiErr != nil {
		return "", apiErr
	}
	delete(s.jobs, j.id)
	op := in.op
	in.op = nil
	op.finish(in, now)
	in.updated = now
	if spec.Endpoint != "" {
		in.endpointHost, in.endpointPort, _ = ParseEndpoint(spec.Endpoint) // checked by createRequest
		in.endpointPinned = true
	}
	for _, k := range slices.Sorted(maps.Keys(spec.Tags)) {
		in.tags = append(in.tags, tag{Key: k, Value: spec.Tags[k]})
	}
	return in.id, nil
}

func (spec InstanceSpec) createRequest() (*createRequest, error) {
	if spec.Endpoint != "" {
		if _, _, err := ParseEndpoint(spec.Endpoint); err != nil {
			return nil, err
		}
	}
	or := func(v, def string) string {
		if v == "" {
			return def
		}
		return v
	}
	engineName, version := or(spec.Engine, "MySQL"), or(spec.Version, "8.0")
	e := engineExact(engineName)
	if e == nil {
		return nil, fmt.Errorf("unknown engine %q", engineName)
	}
	req := &createRequest{
		Name: spec.Name, Password: "Sim-Added-Instance-1", Region: Region,
		VpcID: or(spec.VpcID, SeedVPCID), SubnetID: or(spec.SubnetID, SeedSubnetID),
		SecurityGroupID: or(spec.SecurityGroupID, SeedSecurityGroupID),
	}
	req.Datastore = &datastoreSpec{Type: engineName, Version: version}
	flavor, azs := or(spec.Flavor, "rds."+e.short+".n1.large.2"), spec.AZs
	if spec.HA {
		if spec.Flavor == "" {
			flavor += ".ha"
		}
		if len(azs) == 0 {
			azs = []string{"eu-de-01", "eu-de-02"}
		}
		req.Ha = &haSpec{Mode: "ha", ReplicationMode: or(spec.ReplicationMode, e.replication[0])}
	}
	if len(azs) == 0 {
		azs = []string{"eu-de-01"}
	}
	req.FlavorRef, req.AvailabilityZone = flavor, strings.Join(azs, ",")
	size := spec.VolumeSize
	if size == 0 {
		size = 100
	}
	req.Volume = &volumeSpec{Type: or(spec.VolumeType, "CLOUDSSD"), Size: flexInt{Value: size, Set: true}}
	if spec.Port != 0 {
		req.Port = flexInt{Value: spec.Port, Set: true}
	}
	return req, nil
}
