// Package cloud is the port between the hooks and OTC: the types the decision logic reads and the
// operations it may call. It speaks our own types and error kinds; the only package that imports
// gophertelekomcloud is cloud/otc, which implements Cloud.
package cloud

import (
	"context"
	"time"

	"github.com/mcsps/rds-lambda-controller/sync/secret"
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

// Job statuses.
const (
	JobRunning   = "Running"
	JobCompleted = "Completed"
	JobFailed    = "Failed"
)

// Backup statuses.
const (
	BackupBuilding  = "BUILDING"
	BackupCompleted = "COMPLETED"
	BackupFailed    = "FAILED"
	BackupDeleting  = "DELETING"
)

// Instance is an RDS instance as listed by OTC.
type Instance struct {
	ID              string
	Name            string
	Status          string
	Type            string // Single, Ha or Replica
	Engine          string
	Version         string // as asked, e.g. "8.0"
	CompleteVersion string // e.g. "8.0.28"
	Flavor          string
	Volume          Volume
	PrivateIPs      []string
	Port            int
	Region          string
	VpcID           string
	SubnetID        string
	SecurityGroupID string
	ReplicationMode string
	BackupStrategy  BackupStrategy
	// SSL is whether SSL is on for client connections; nil when OTC does not say.
	SSL *bool
	// TimeZone is the instance's time zone (time_zone); empty when OTC reports none.
	TimeZone string
	// DiskEncryptionID is the KMS key that encrypts the disk; empty for an unencrypted one.
	DiskEncryptionID string
	// MaintenanceWindow is OTC's maintenance window, hh:mm-HH:MM in UTC.
	MaintenanceWindow string
	Nodes             []Node
	Tags              map[string]string
	// ReplicaOf is the primary's id of a read replica (OTC's related_instance of type
	// replica_of); Replicas are the ids of a primary's read replicas (of type replica).
	ReplicaOf string
	Replicas  []string
	// Created is when OTC finished creating the instance, in UTC; zero while it is being created.
	// Compare it as an instant (Equal, Before): the shared view keeps nothing else of it.
	Created time.Time
}

// Volume is an instance's storage.
type Volume struct {
	Type string
	Size int
}

// BackupStrategy is the automated backup policy.
type BackupStrategy struct {
	StartTime string
	KeepDays  int
	// Period is the days of the week backups run, "1,2,3,4,5,6,7" (Monday is 1). OTC's instance
	// list does not report it: only the policy's own read (GetBackupPolicy) fills it.
	Period string
}

// Node is one node of an instance.
type Node struct {
	ID               string
	Name             string
	Role             string // master, slave or readreplica
	Status           string
	AvailabilityZone string
}

// CreateInstanceOpts is what Create needs. Names of network resources are resolved to ids before.
type CreateInstanceOpts struct {
	Name              string
	Engine            string
	Version           string
	Flavor            string
	VolumeType        string
	VolumeSize        int
	Region            string
	AvailabilityZones []string
	VpcID             string
	SubnetID          string
	SecurityGroupID   string
	Port              int // 0: the engine's default
	Password          secret.Value
	BackupStrategy    *BackupStrategy
	HAMode            string // "" for single, "ha" for primary/standby
	ReplicationMode   string
	// TimeZone, LowerCaseTableNames and DiskEncryptionID are set at create only; "" and nil
	// leave OTC's defaults.
	TimeZone            string
	LowerCaseTableNames *int
	DiskEncryptionID    string
	// ConfigurationID is the parameter template the instance starts with; empty: the engine's default.
	ConfigurationID string
}

// Job is an asynchronous OTC task.
type Job struct {
	ID         string
	Name       string
	Status     string // Running, Completed or Failed
	InstanceID string
	FailReason string
}

// Backup is one backup of an instance.
type Backup struct {
	ID         string
	InstanceID string
	Name       string
	Type       string // auto, manual, ...
	Status     string
	SizeKB     int
	Begin      time.Time
	End        time.Time
}

// Network holds the ids that Create needs.
type Network struct {
	VpcID           string
	SubnetID        string
	SecurityGroupID string
}

// Flavor is one spec code for an engine.
type Flavor struct {
	SpecCode string
	VCPUs    string
	RAMGB    int
	Mode     string // single, ha or replica
	Versions []string
	AZStatus map[string]string // normal, unsupported or sellout
}

// Cloud is what the hooks may ask of OTC. Every method honours ctx's deadline and returns errors of
// type *Error (see KindOf). Methods that look a thing up return an error of kind NotFound when it
// does not exist. Mutating methods never wait for the operation to finish.
//
// It is split by area, one interface per file, so that each feature's calls live beside it.
type Cloud interface {
	Core
	Operations         // day2.go: changes to a running instance
	Security           // security.go: security group, port, SSL
	Settings           // settings.go: storage type, replication mode, maintenance window, stop and start
	Restores           // restore.go: point-in-time restore, restore into a new instance
	Logs               // logs.go: error and slow logs
	Replicas           // replicas.go: read replicas
	Parameters         // parameters.go: engine parameters
	ParameterTemplates // parameters.go: the templates a create names
}

// Core is what creating, observing and deleting an instance needs.
type Core interface {
	// Region is the one region this client serves.
	Region() string

	// GetInstance returns the instance with this id.
	GetInstance(ctx context.Context, id string) (*Instance, error)
	// FindInstancesByName returns every instance with exactly this name, none (and no error) if
	// there is none. OTC lets instances share a name.
	FindInstancesByName(ctx context.Context, name string) ([]*Instance, error)
	// CreateInstance issues the create and returns the new instance id and its job id.
	CreateInstance(ctx context.Context, opts CreateInstanceOpts) (id, jobID string, err error)
	// DeleteInstance issues the delete and returns the job id.
	DeleteInstance(ctx context.Context, id string) (jobID string, err error)
	// GetJob returns a job; a job OTC does not know yet is of kind NotFound.
	GetJob(ctx context.Context, id string) (*Job, error)

	// ResolveNetwork turns names (or ids) of a VPC, a subnet in it and a security group into ids.
	ResolveNetwork(ctx context.Context, vpc, subnet, securityGroup string) (Network, error)

	// ListBackups returns the instance's backups.
	ListBackups(ctx context.Context, instanceID string) ([]Backup, error)
	// CreateBackup starts a manual backup.
	CreateBackup(ctx context.Context, instanceID, name, description string) (*Backup, error)

	// ListFlavors returns the spec codes for an engine and version.
	ListFlavors(ctx context.Context, engine, version string) ([]Flavor, error)
}
