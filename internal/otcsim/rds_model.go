package otcsim

import (
	"time"
)

// Instance statuses as the RDS v3 API reports them.
const (
	StatusBuild                 = "BUILD"
	StatusCreateFail            = "CREATE FAIL"
	StatusActive                = "ACTIVE"
	StatusFailed                = "FAILED"
	StatusFrozen                = "FROZEN"
	StatusModifying             = "MODIFYING"
	StatusRebooting             = "REBOOTING"
	StatusRestoring             = "RESTORING"
	StatusModifyingInstanceType = "MODIFYING INSTANCE TYPE"
	StatusSwitchover            = "SWITCHOVER"
	StatusMigrating             = "MIGRATING"
	StatusBackingUp             = "BACKING UP"
	StatusModifyingPort         = "MODIFYING DATABASE PORT"
	StatusStorageFull           = "STORAGE FULL"
	StatusShutdown              = "SHUTDOWN"
)

// Instance types as List reports them.
const (
	TypeSingle  = "Single"
	TypeHa      = "Ha"
	TypeReplica = "Replica"
)

// instance is an RDS instance.
type instance struct {
	seq             int
	id, name        string
	engine          *engine
	version         string // as requested, e.g. "8.0"
	completeVersion string // e.g. "8.0.28"
	typ             string // Single, Ha or Replica
	replicationMode string
	flavor          *flavor
	volumeType      string
	volumeSize      int
	azs             []string // one per node
	vpcID           string
	subnetID        string
	secGroupID      string
	port            int
	privateIP       string
	nodes           []*node
	backupStart     string // hh:mm-HH:MM
	backupKeepDays  int
	backupPeriod    string // "1,2,3,4,5,6,7"
	configurationID string
	diskEncryption  string
	timeZone        string
	ssl             bool // enable_ssl
	dataVIP         string
	tags            []tag
	autoscaling     autoscalingPolicy
	// configValues are the parameter values the instance runs with beyond its defaults: its own
	// copy, made from the template it was created with or had applied, and changed since.
	configValues map[string]string
	// pendingRestart are the parameters set whose values take effect at the next restart.
	pendingRestart map[string]bool
	// maintenanceWindow is "hh:mm-HH:MM" (UTC); "" is OTC's default (rds_settings.go).
	maintenanceWindow string
	// stoppedAt is when a stop finished; OTC starts the instance seven days later (autoStart).
	stoppedAt time.Time

	status  string      // the settled status; an operation in flight may show another
	op      *instanceOp // the operation in flight, if any
	created time.Time   // when the instance became available (zero while BUILD)
	updated time.Time
	ordered time.Time // when it was ordered (creation request)

	// endpoint, when set, replaces private_ips/port: the instance is backed by a real server.
	// Pinned by SetInstanceEndpoint; otherwise Options.Endpoints decides on every request.
	endpointHost   string
	endpointPort   int
	endpointPinned bool

	failNextBackup bool

	// replicaOf is a read replica's primary; replicas are a primary's read replicas
	// (rds_replicas.go).
	replicaOf *instance
	replicas  []*instance

	errorLogs []errorLogEntry
	slowLogs  []SlowLogEntry
}

type node struct {
	id, name, role, az string
}

type tag struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

type autoscalingPolicy struct {
	enabled          bool
	limitSize        int
	triggerThreshold int
}

// Operation kinds.
const (
	opKindCreate     = "create"
	opKindDelete     = "delete"
	opKindBackup     = "backup"
	opKindResize     = "resize"
	opKindEnlarge    = "enlarge"
	opKindRestart    = "restart"
	opKindSingleToHA = "single-to-ha"
	opKindUpgrade    = "upgrade"
	opKindRestore    = "restore"
	opKindPort       = "port"
	opKindStartStop  = "start-stop"
	// rds_settings.go
	opKindStorageType = "storage-type"
	opKindReplication = "replication-mode"
)

// instanceOp is an operation in flight on an instance. Its effect is applied by finish at end.
type instanceOp struct {
	kind   string
	status string // shown while the operation runs; "" keeps the settled status
	start  time.Time
	end    time.Time
	jobID  string
	finish func(in *instance, at time.Time)
}

// shownStatus is the status List reports.
func (in *instance) shownStatus() string {
	if in.op != nil && in.op.status != "" {
		return in.op.status
	}
	return in.status
}

func (in *instance) deleting() bool { return in.op != nil && in.op.kind == opKindDelete }

// startOp puts an operation in flight.
func (in *instance) startOp(kind, status string, now time.Time, d time.Duration, j *job, finish func(*instance, time.Time)) {
	op := &instanceOp{kind: kind, status: status, start: now, end: now.Add(d), finish: finish}
	if j != nil {
		op.jobID = j.id
	}
	in.op = op
}

// checkIdle refuses changes unless the instance is available and no operation runs on it.
func (in *instance) checkIdle() *apiError {
	switch {
	case in.op != nil, in.replicaBuilding():
		return errInstanceBusy()
	case in.status == StatusFrozen:
		return errorf(400, "DBS.280449", "The DB instance is frozen.")
	case in.status == StatusStorageFull:
		return errorf(409, "DBS.200316", "The DB instance storage is full.")
	case in.status != StatusActive:
		return errInstanceBusy()
	}
	return nil
}

// privateIPs are the addresses List reports: none while the instance is being built.
func (in *instance) privateIPs() []string {
	switch {
	case in.op != nil && in.op.kind == opKindCreate:
		return []string{}
	case in.endpointHost != "":
		return []string{in.endpointHost}
	case in.privateIP == "":
		return []string{}
	}
	return []string{in.privateIP}
}

func (in *instance) shownPort() int {
	if in.endpointPort != 0 {
		return in.endpointPort
	}
	return in.port
}

// tagMap returns the tags as a map.
func (in *instance) tagMap() map[string]string {
	m := make(map[string]string, len(in.tags))
	for _, t := range in.tags {
		m[t.Key] = t.Value
	}
	return m
}
