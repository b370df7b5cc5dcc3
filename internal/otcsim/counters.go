package otcsim

import (
	"maps"
	"slices"
)

// Operation names, used by the call counters and by Fault.Op.
const (
	OpGetVersions               = "GetVersions"
	OpCreateToken               = "CreateToken"
	OpGetToken                  = "GetToken"
	OpValidateToken             = "ValidateToken"
	OpRevokeToken               = "RevokeToken"
	OpGetCatalog                = "GetCatalog"
	OpListProjects              = "ListProjects"
	OpListDomains               = "ListDomains"
	OpCreateTemporaryCredential = "CreateTemporaryCredential"

	OpListInstances        = "ListInstances"
	OpCreateInstance       = "CreateInstance"
	OpRestoreToNew         = "RestoreToNew"
	OpCreateReplica        = "CreateReplica" // POST /instances with replica_of_id
	OpDeleteInstance       = "DeleteInstance"
	OpResize               = "Resize"
	OpEnlargeVolume        = "EnlargeVolume"
	OpRestart              = "Restart"
	OpInstanceAction       = "InstanceAction" // an action body naming no known action
	OpSingleToHa           = "SingleToHa"
	OpUpgradeDbVersion     = "UpgradeDbVersion"
	OpUpgradeMajorVersion  = "UpgradeMajorVersion"
	OpGetAvailableVersion  = "GetAvailableVersion"
	OpMajorVersionPreCheck = "MajorVersionPreCheck"
	OpStartupInstance      = "StartupInstance"
	OpStopInstance         = "StopInstance"
	OpGetAutoScaling       = "GetAutoScaling"
	OpManageAutoScaling    = "ManageAutoScaling"
	OpGetJob               = "GetJob"
	OpListBackups          = "ListBackups"
	OpCreateBackup         = "CreateBackup"
	OpDeleteBackup         = "DeleteBackup"
	OpShowBackupPolicy     = "ShowBackupPolicy"
	OpUpdateBackupPolicy   = "UpdateBackupPolicy"
	OpRestorePITR          = "RestorePITR"
	OpListRestoreTimes     = "ListRestoreTimes"
	OpListErrorLogs        = "ListErrorLogs"
	OpListSlowLogs         = "ListSlowLogs"
	OpListFlavors          = "ListFlavors"
	OpListDatastores       = "ListDatastores"
	OpListStorageTypes     = "ListStorageTypes"
	OpListConfigurations   = "ListConfigurations"
	OpGetConfiguration     = "GetConfiguration"
	OpCreateConfiguration  = "CreateConfiguration"
	OpUpdateConfiguration  = "UpdateConfiguration"
	OpDeleteConfiguration  = "DeleteConfiguration"
	OpGetInstanceConfig    = "GetInstanceConfiguration"
	OpUpdateInstanceCfg    = "UpdateInstanceConfiguration"
	OpApplyConfiguration   = "ApplyConfiguration"
	OpUpdatePort           = "UpdatePort"
	OpSetSecurityGroup     = "SetSecurityGroup"
	OpSwitchSSL            = "SwitchSSL"
	OpTagsAction           = "TagsAction"
	OpGetTags              = "GetTags"
	OpChangeStorageType    = "ChangeStorageType"  // the change_volume action
	OpChangeFailoverMode   = "ChangeFailoverMode" // PUT …/failover/mode
	OpChangeOpsWindow      = "ChangeOpsWindow"    // PUT …/ops-window

	OpListVpcs           = "ListVpcs"
	OpGetVpc             = "GetVpc"
	OpListSubnets        = "ListSubnets"
	OpGetSubnet          = "GetSubnet"
	OpListSecurityGroups = "ListSecurityGroups"
	OpGetSecurityGroup   = "GetSecurityGroup"
	OpListNetworks       = "ListNetworks"       // Neutron GET /v2.0/networks
	OpGetNetwork         = "GetNetwork"         // Neutron GET /v2.0/networks/{id}
	OpListNeutronSubnets = "ListNeutronSubnets" // Neutron GET /v2.0/subnets
	OpGetNeutronSubnet   = "GetNeutronSubnet"   // Neutron GET /v2.0/subnets/{id}
	OpListRouters        = "ListRouters"        // Neutron GET /v2.0/routers
	OpGetRouter          = "GetRouter"          // Neutron GET /v2.0/routers/{id}
	OpListVpcsV3         = "ListVpcsV3"         // VPC v3 GET /v3/{project}/vpc/vpcs
	OpGetVpcV3           = "GetVpcV3"           // VPC v3 GET /v3/{project}/vpc/vpcs/{id}

	OpShowMetricData      = "ShowMetricData"
	OpBatchListMetricData = "BatchListMetricData"
	OpCreateAlarm         = "CreateAlarm"
	OpListAlarms          = "ListAlarms"
	OpShowAlarm           = "ShowAlarm"
	OpUpdateAlarmAction   = "UpdateAlarmAction"
	OpDeleteAlarm         = "DeleteAlarm"
)

// mutatingOps are the operations that change cloud state (counted by MutatingCalls).
var mutatingOps = map[string]bool{
	OpCreateInstance: true, OpRestoreToNew: true, OpCreateReplica: true, OpDeleteInstance: true, OpCreateBackup: true,
	OpResize: true, OpEnlargeVolume: true, OpRestart: true, OpSingleToHa: true,
	OpUpgradeDbVersion: true, OpUpgradeMajorVersion: true, OpStartupInstance: true, OpStopInstance: true,
	OpManageAutoScaling: true, OpUpdateBackupPolicy: true, OpDeleteBackup: true,
	OpRestorePITR: true, OpUpdateInstanceCfg: true, OpApplyConfiguration: true, OpInstanceAction: true,
	OpCreateConfiguration: true, OpUpdateConfiguration: true, OpDeleteConfiguration: true,
	OpUpdatePort: true, OpSetSecurityGroup: true, OpSwitchSSL: true, OpTagsAction: true, OpCreateTemporaryCredential: true,
	OpChangeStorageType: true, OpChangeFailoverMode: true, OpChangeOpsWindow: true,
	OpCreateAlarm: true, OpUpdateAlarmAction: true, OpDeleteAlarm: true,
}

// Operations returns every operation name a request can be counted under (and a Fault can name),
// sorted: those of the routes and those a route tells apart by the request body.
func Operations() []string {
	seen := map[string]bool{OpRestoreToNew: true, OpCreateReplica: true}
	for _, op := range actionOps {
		seen[op] = true
	}
	for _, rt := range (&Sim{}).apiRoutes() {
		seen[rt.op] = true
	}
	return slices.Sorted(maps.Keys(seen))
}

// IsMutating reports whether op changes cloud state.
func IsMutating(op string) bool { return mutatingOps[op] }

// NOTE: counters count requests as they arrive at a known route, whatever their outcome (refused by
// auth, failed by a fault, rejected by validation): an idempotency test wants to see attempts.

func (s *Sim) countCall(op string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[op]++
	if mutatingOps[op] {
		s.mutating++
	}
}

// Calls returns how many requests for op arrived.
func (s *Sim) Calls(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[op]
}

// CallCounts returns a copy of all counters.
func (s *Sim) CallCounts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.calls)
}

// MutatingCalls returns how many requests for mutating operations arrived.
func (s *Sim) MutatingCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mutating
}

// ResetCounters sets all counters to zero.
func (s *Sim) ResetCounters() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = map[string]int{}
	s.mutating = 0
}
