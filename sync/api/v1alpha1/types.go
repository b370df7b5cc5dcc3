// Package v1alpha1 holds the otc.mcsps.de/v1alpha1 API: the Rds custom resource as users write it
// and as the hooks report it. Field names keep the original operator's spelling so that existing
// objects apply unchanged; new fields follow the same all-lowercase style.
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

const (
	Group   = "otc.mcsps.de"
	Version = "v1alpha1"
	Kind    = "Rds"
	// APIVersion is the apiVersion of every Rds object.
	APIVersion = Group + "/" + Version
)

// Engines, as OTC spells them (case-sensitive in the RDS API).
const (
	EngineMySQL      = "MySQL"
	EnginePostgreSQL = "PostgreSQL"
	EngineSQLServer  = "SQLServer"
)

// Deletion policies.
const (
	DeletionPolicyDelete = "Delete"
	DeletionPolicyRetain = "Retain"
)

// Rds is one OTC relational database instance managed through Kubernetes.
type Rds struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   RdsSpec   `json:"spec"`
	Status RdsStatus `json:"status,omitempty"`
}

// RdsSpec is what the user asks for.
type RdsSpec struct {
	// Datastoretype is the engine: MySQL, PostgreSQL or SQLServer. Immutable.
	Datastoretype string `json:"datastoretype"`
	// Datastoreversion is the engine version, e.g. "8.0" or "15". The major part is immutable.
	Datastoreversion string `json:"datastoreversion"`
	// Flavorref is the OTC spec code, e.g. rds.mysql.c2.medium (".ha" suffix for HA instances).
	Flavorref string `json:"flavorref"`
	// Volumetype is the storage type: COMMON, ULTRAHIGH, CLOUDSSD or ESSD. It changes in place
	// where OTC offers the move (CLOUDSSD and ESSD into each other, settings.go).
	Volumetype string `json:"volumetype"`
	// Volumesize is the storage in GB: 40 to 4000, a multiple of 10; it can only grow.
	Volumesize int `json:"volumesize"`
	// Availabilityzone is one AZ per node, comma-separated (two for HA). Immutable, except that
	// turning a single instance into HA appends the standby's AZ.
	Availabilityzone string `json:"availabilityzone"`
	// Region is the OTC region, e.g. eu-de.
	Region string `json:"region"`
	// Vpc is the name or id of the VPC. Immutable: OTC cannot move an instance to another VPC.
	Vpc string `json:"vpc"`
	// Subnet is the name or id of the subnet (the VPC v1 subnet id). Immutable: OTC cannot move
	// an instance to another subnet.
	Subnet string `json:"subnet"`
	// Securitygroup is the name or id of the security group; a change moves the instance to the
	// new group in place.
	Securitygroup string `json:"securitygroup"`
	// Port is the database port; "3306" and 3306 are both accepted; a change moves the database to
	// the new port in place. Empty: the engine's default at create, and afterwards the port the
	// instance has is kept.
	Port *intstr.IntOrString `json:"port,omitempty"`
	// Ssl turns SSL for client connections on (true) or off (false), in place (MySQL only). Unset
	// leaves OTC's setting alone.
	Ssl *bool `json:"ssl,omitempty"`
	// Timezone is the instance's time zone, e.g. UTC+08:00 (OTC's create option time_zone). Set at
	// create only; immutable afterwards.
	Timezone string `json:"timezone,omitempty"`
	// Lowercasetablenames is MySQL's lower_case_table_names: 1 stores table names in lowercase
	// and compares them case-insensitively (OTC's default), 0 keeps their case. Set at create
	// only; immutable afterwards (MySQL only).
	Lowercasetablenames *int `json:"lowercasetablenames,omitempty"`
	// Diskencryptionid is the id of the KMS key that encrypts the instance's disk. Set at create
	// only; immutable afterwards.
	Diskencryptionid string `json:"diskencryptionid,omitempty"`
	// Backupstarttime is the daily backup window, hh:mm-HH:MM (UTC), one hour long.
	Backupstarttime string `json:"backupstarttime,omitempty"`
	// Backupkeepdays is how many days automated backups are kept (1-732).
	Backupkeepdays int `json:"backupkeepdays,omitempty"`
	// Backuprestoretime asks for a point-in-time restore of this instance (RFC3339).
	Backuprestoretime string `json:"backuprestoretime,omitempty"`
	// Hamode is "Single" (default) or "Ha".
	Hamode string `json:"hamode,omitempty"`
	// Hareplicationmode is async, semisync or sync, depending on the engine. It changes in place
	// on a primary/standby MySQL or PostgreSQL instance; empty leaves OTC's.
	Hareplicationmode string `json:"hareplicationmode,omitempty"`
	// Password is the root password in clear text. Kept for compatibility; prefer
	// Passwordsecretref or let the controller generate one.
	Password string `json:"password,omitempty"`
	// Passwordsecretref names a Secret key in the same namespace that holds the root password.
	Passwordsecretref *SecretKeyRef `json:"passwordsecretref,omitempty"`
	// Credentialssecret names a Secret in the same namespace holding the OTC login (OS_* keys) this
	// object works with, in its team's own OTC project. Empty: the namespace's default Secret if
	// there is one, else the controller's own login (see docs/credentials.md).
	Credentialssecret string `json:"credentialssecret,omitempty"`
	// Databases to create on the instance (MySQL).
	Databases []string `json:"databases,omitempty"`
	// Users to create on the instance (MySQL).
	Users []User `json:"users,omitempty"`
	// Deletionpolicy is Delete (default: final backup, then delete the instance) or Retain.
	Deletionpolicy string `json:"deletionpolicy,omitempty"`
	// Skipfinalbackup deletes without a final backup. Default false.
	Skipfinalbackup bool `json:"skipfinalbackup,omitempty"`
	// Endpoint is accepted and ignored: the original operator had it in spec; it is status now.
	// Autopilot needs no inbound webhook (see autopilot.go).
	Endpoint string `json:"endpoint,omitempty"`

	// Autopilot: the instance grows its storage and its flavor by itself (docs/autopilot.md).

	// Autopilot turns it on. flavorref and volumesize become floors: a larger flavor or volume
	// chosen by autopilot or by OTC is kept.
	Autopilot bool `json:"autopilot,omitempty"`
	// Autopilotmaxvolume is the largest volume in GB autopilot grows to. Default twice
	// volumesize, at most 4000.
	Autopilotmaxvolume int `json:"autopilotmaxvolume,omitempty"`
	// Autopilotmaxflavor is the largest flavor (spec code) autopilot moves to: none with more
	// vCPUs or RAM. Default: Autopilotmaxvcpus.
	Autopilotmaxflavor string `json:"autopilotmaxflavor,omitempty"`
	// Autopilotmaxvcpus is the most vCPUs autopilot moves to. Default twice those of flavorref.
	Autopilotmaxvcpus int `json:"autopilotmaxvcpus,omitempty"`
	// Autopilotcputhreshold is the CPU usage in percent that, held for the whole window, moves
	// to a flavor with more vCPUs. Default 90.
	Autopilotcputhreshold int `json:"autopilotcputhreshold,omitempty"`
	// Autopilotmemorythreshold is the memory usage in percent that, held for the whole window,
	// moves to a flavor with more RAM. Default 90.
	Autopilotmemorythreshold int `json:"autopilotmemorythreshold,omitempty"`
	// Autopilotdiskthreshold is the storage usage in percent at which the volume grows: 80, 85
	// or 90 (OTC's autoscaling triggers at 20, 15 or 10 % free). Default 90.
	Autopilotdiskthreshold int `json:"autopilotdiskthreshold,omitempty"`
	// Autopilotwindow is how long CPU or memory must stay above its threshold, e.g. "15m"
	// (Cloud Eye's 5-minute periods). Default 15m.
	Autopilotwindow string `json:"autopilotwindow,omitempty"`
	// Autopilotcooldown is the least time between two autopilot changes, e.g. "1h". Default 1h.
	Autopilotcooldown string `json:"autopilotcooldown,omitempty"`

	// Day-2 operations: restart, restore, adoption, tags.

	// Restorefrom starts the new instance from another instance's backup or point in time instead
	// of empty. Read only while the instance is created; ignored afterwards.
	Restorefrom *RestoreFrom `json:"restorefrom,omitempty"`
	// Instanceid adopts the existing OTC instance with this id instead of creating one.
	Instanceid string `json:"instanceid,omitempty"`
	// Restartrequest asks for one restart of the instance: each new value (e.g. a date) restarts
	// it once. status.restartRequest holds the value handled last.
	Restartrequest string `json:"restartrequest,omitempty"`
	// Tags are OTC tags on the instance, kept in sync. Tags set in OTC by others are left alone.
	Tags []Tag `json:"tags,omitempty"`

	// Settings changed in place (docs/day2.md): the maintenance window, the backup days, stop and
	// start.

	// Maintenancewindow is the daily window, hh:mm-HH:MM in UTC and four hours long, in which OTC
	// may interrupt the instance for maintenance (and starts an instance stopped for seven days).
	// Empty: OTC's window (02:00-06:00 at create) is left as it is.
	Maintenancewindow string `json:"maintenancewindow,omitempty"`
	// Backupperiod is the days of the week automated backups run, written as OTC writes them:
	// 1 (Monday) to 7 (Sunday), comma-separated, e.g. "1,3,5". It needs automated backups
	// (backupkeepdays). Empty: OTC's days (every day at create) are left as they are.
	Backupperiod string `json:"backupperiod,omitempty"`
	// Stopped stops the instance (MySQL and PostgreSQL); false or omitted starts a stopped one.
	// While it is stopped no other change is made. OTC starts an instance stopped for seven
	// days by itself; the controller then stops it again, once.
	Stopped bool `json:"stopped,omitempty"`

	// Databases and users.

	// Prunedatabases drops databases this controller created once they leave Databases. Default
	// false: a database removed from the list is left in place with its data.
	Prunedatabases bool `json:"prunedatabases,omitempty"`

	// Engine parameters (docs/parameters.md).

	// Parameters are engine parameters by name (e.g. max_connections), values as OTC takes them
	// (strings). The differences are set on the instance in one change; a value changed elsewhere
	// is set back at the next drift check; parameters not named are left alone.
	Parameters map[string]string `json:"parameters,omitempty"`
	// Parametersrestart says who restarts the instance when a value set needs a restart: Manual
	// (default: reported, restarted only by restartrequest), Immediate, or InMaintenanceWindow.
	Parametersrestart string `json:"parametersrestart,omitempty"`

	// Logs on request.
	// Logs asks for the error and slow query logs, printed by a Job (see LogsRequest).
	Logs *LogsRequest `json:"logs,omitempty"`

	// Readreplicas are the instance's read replicas, by name (docs/reference.md#readreplicas).
	Readreplicas []ReadReplica `json:"readreplicas,omitempty"`
}

// SecretKeyRef points at one key of a Secret in the Rds object's namespace.
type SecretKeyRef struct {
	Name string `json:"name"`
	Key  string `json:"key,omitempty"`
}

// User is a database account. Privileges are GRANT statements in the original operator's format.
type User struct {
	Name       string   `json:"name"`
	Host       string   `json:"host,omitempty"`
	Password   string   `json:"password,omitempty"`
	Privileges []string `json:"privileges,omitempty"`
	// Passwordsecretref names a Secret key holding the password. Without it and without Password,
	// the controller generates one and keeps it in the user's Secret.
	Passwordsecretref *SecretKeyRef `json:"passwordsecretref,omitempty"`
	// Grants is the structured form of Privileges; both may be used together.
	Grants []DatabaseGrant `json:"grants,omitempty"`
}

// RdsStatus is the hook's report of what it last observed, and everything it must remember:
// Metacontroller replaces it whole on every call.
type RdsStatus struct {
	// ObservedGeneration is the spec generation this status describes.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// ID is the OTC instance id.
	ID string `json:"id,omitempty"`
	// Name is the instance name in OTC, derived from namespace and name (an adopted instance keeps
	// its own).
	Name string `json:"name,omitempty"`
	// Status is the OTC status string, e.g. BUILD or ACTIVE.
	Status string `json:"status,omitempty"`
	// IP is the private address of the instance.
	IP string `json:"ip,omitempty"`
	// Port is the database port.
	Port int `json:"port,omitempty"`
	// Endpoint is ip:port, for printing.
	Endpoint string `json:"endpoint,omitempty"`
	// VpcID, SubnetID and SecurityGroupID are the instance's network ids as OTC reports them.
	VpcID           string `json:"vpcID,omitempty"`
	SubnetID        string `json:"subnetID,omitempty"`
	SecurityGroupID string `json:"securityGroupID,omitempty"`
	// NetworkRefs are the spec's vpc, subnet and securitygroup (names or ids) as last resolved to
	// ids: while the spec names the same, no lookup is needed to know what they name.
	NetworkRefs *NetworkRefs `json:"networkRefs,omitempty"`
	// SSL says whether SSL is on for client connections, as OTC reports it.
	SSL *bool `json:"ssl,omitempty"`
	// TimeZone is the instance's time zone as OTC reports it (empty: OTC's default, UTC).
	TimeZone string `json:"timeZone,omitempty"`
	// Encrypted says the instance's disk is encrypted with the KMS key DiskEncryptionID, as OTC
	// reports it.
	Encrypted        bool   `json:"encrypted,omitempty"`
	DiskEncryptionID string `json:"diskEncryptionID,omitempty"`
	// LowerCaseTableNames is the lower_case_table_names the instance was created with, as the
	// create asked for it (OTC's listing does not report it); absent when the create left OTC's
	// default.
	LowerCaseTableNames *int `json:"lowerCaseTableNames,omitempty"`
	// Flavor is the observed spec code.
	Flavor string `json:"flavor,omitempty"`
	// Volume is the observed storage.
	Volume *Volume `json:"volume,omitempty"`
	// Version is the observed complete engine version, e.g. 8.0.28.
	Version string `json:"version,omitempty"`
	// Type is Single, Ha or Replica.
	Type string `json:"type,omitempty"`
	// Nodes are the instance's nodes with their roles and AZs.
	Nodes []Node `json:"nodes,omitempty"`
	// Operation is the change in flight, if any.
	Operation *Operation `json:"operation,omitempty"`
	// ConnectionSecret is the name of the child Secret with the connection details.
	ConnectionSecret string `json:"connectionSecret,omitempty"`
	// PasswordGenerated says the root password was generated by the controller and lives only in
	// the connection Secret.
	PasswordGenerated bool `json:"passwordGenerated,omitempty"`
	// FinalBackup is the backup taken before deletion.
	FinalBackup *Backup `json:"finalBackup,omitempty"`
	// CredentialsSecret is the Secret in the object's namespace whose OTC login found or created
	// the instance; empty for the controller's own login. An instance lives in one OTC project, so
	// a later call that would use another login waits instead.
	CredentialsSecret string `json:"credentialsSecret,omitempty"`
	// CredentialsProject is the id of the OTC project that login reached when it last served the
	// object: a Secret rewritten to log in to another project cannot see the instance, so the
	// object waits instead of reporting it gone or finalizing without deleting it.
	CredentialsProject string `json:"credentialsProject,omitempty"`

	// Day-2 operations: what was handled, so that it runs once.

	// Restore is the last backuprestoretime the hooks handled, and what became of it.
	Restore *RestoreStatus `json:"restore,omitempty"`
	// Adopted says the instance was taken over through instanceid, not created by the hooks.
	Adopted bool `json:"adopted,omitempty"`
	// Duplicates are the ids of further OTC instances that belong to this object (their tags or,
	// untagged, their name say so): the controller manages the instance in id and never deletes
	// these; it reports them until they are gone.
	Duplicates []string `json:"duplicates,omitempty"`
	// RestartRequest is the spec.restartrequest value handled last: its restart was issued.
	RestartRequest string `json:"restartRequest,omitempty"`
	// PortRequest is the port the create asked, and PortReported the port OTC reported while it
	// built the instance: while the instance has that port, the create's port is no difference
	// (OTC made that of it).
	PortRequest  int `json:"portRequest,omitempty"`
	PortReported int `json:"portReported,omitempty"`
	// UpgradeRequest is the datastoreversion a minor version upgrade was last issued for.
	UpgradeRequest string `json:"upgradeRequest,omitempty"`
	// ManagedTags are the keys of the OTC tags this object manages, sorted: a key removed from
	// spec.tags is removed in OTC only if it is listed here.
	ManagedTags []string `json:"managedTags,omitempty"`

	// Settings as OTC reports them (settings.go).

	// ReplicationMode is the replication between primary and standby OTC reports (Ha only).
	ReplicationMode string `json:"replicationMode,omitempty"`
	// MaintenanceWindow is the maintenance window OTC reports, hh:mm-HH:MM in UTC.
	MaintenanceWindow string `json:"maintenanceWindow,omitempty"`
	// BackupPolicy is the automated backup policy OTC reports.
	BackupPolicy *BackupPolicy `json:"backupPolicy,omitempty"`
	// Stopped is set while the instance is stopped: since when, and when OTC starts it again.
	Stopped *StoppedStatus `json:"stopped,omitempty"`

	// Databases and users: what was last applied.
	DatabasesAndUsers *DatabasesStatus `json:"databasesAndUsers,omitempty"`

	// Logs: the latest log request and where its output is.
	Logs *LogsStatus `json:"logs,omitempty"`
	// Autopilot: what autopilot did last and would do next, and what it must remember.
	Autopilot *AutopilotStatus `json:"autopilot,omitempty"`
	// ReadReplicas are the instance's read replicas the controller manages, as last observed:
	// the declared ones in spec order, then those being deleted.
	ReadReplicas []ReadReplicaStatus `json:"readReplicas,omitempty"`
	// Parameters: spec.parameters as last read or set, and those waiting for a restart.
	Parameters *ParametersStatus `json:"parameters,omitempty"`
	// Conditions: Ready and Synced, Autopilot while spec.autopilot is on, Parameters while
	// spec.parameters names any.
	Conditions []Condition `json:"conditions,omitempty"`
}

// NetworkRefs are the spec's references to a network (names or ids), and the ids they named
// when they were last resolved.
type NetworkRefs struct {
	Vpc             string `json:"vpc,omitempty"`
	VpcID           string `json:"vpcID,omitempty"`
	Subnet          string `json:"subnet,omitempty"`
	SubnetID        string `json:"subnetID,omitempty"`
	Securitygroup   string `json:"securitygroup,omitempty"`
	SecurityGroupID string `json:"securityGroupID,omitempty"`
}

// Volume is the instance's storage.
type Volume struct {
	Type string `json:"type,omitempty"`
	Size int    `json:"size,omitempty"`
}

// Node is one database node.
type Node struct {
	Name             string `json:"name,omitempty"`
	Role             string `json:"role,omitempty"`
	Status           string `json:"status,omitempty"`
	Availabilityzone string `json:"availabilityzone,omitempty"`
}

// Operation is a change issued to OTC that is not finished yet.
type Operation struct {
	// Type names the change, e.g. Create, Delete, Backup, Resize.
	Type string `json:"type"`
	// JobID is OTC's job id, where the API returns one.
	JobID string `json:"jobID,omitempty"`
	// Generation is the spec generation that asked for it.
	Generation int64 `json:"generation,omitempty"`
	// Target is what the change moves to (a flavor, a size), for display.
	Target string `json:"target,omitempty"`
}

// Backup is a backup the controller took.
type Backup struct {
	ID     string `json:"id,omitempty"`
	Name   string `json:"name,omitempty"`
	Status string `json:"status,omitempty"`
}

// Condition types.
const (
	// ConditionReady is True when the instance is ACTIVE and usable.
	ConditionReady = "Ready"
	// ConditionSynced is True when the last hook call reconciled without error.
	ConditionSynced = "Synced"
)

// Condition is a metav1.Condition without ObservedGeneration: the status carries one for all.
type Condition struct {
	Type               string                 `json:"type"`
	Status             metav1.ConditionStatus `json:"status"`
	Reason             string                 `json:"reason"`
	Message            string                 `json:"message,omitempty"`
	LastTransitionTime metav1.Time            `json:"lastTransitionTime"`
}
