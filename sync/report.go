package reconcile

import (
	"cmp"
	"slices"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// report copies what OTC says into the status and sets Ready from the instance's status
// (reported).
func (c *call) report(inst *cloud.Instance) {
	var ready outcome
	c.st, ready = reported(c.st, inst)
	c.out.tell(ready.fallback()) // a step's Ready about its change replaces the instance's state
}

// reported is the status with what OTC says of the instance, and the Ready outcome its status
// gives. It asks for an early look while the instance is in a transitional state or an operation
// is in flight.
func reported(st v1alpha1.RdsStatus, inst *cloud.Instance) (v1alpha1.RdsStatus, outcome) {
	st.ID = inst.ID
	if inst.Name != "" {
		st.Name = inst.Name // an adopted or migrated instance keeps the name it has
	}
	st.Status = inst.Status
	st.Type = inst.Type
	st.Flavor = inst.Flavor
	st.Version = inst.CompleteVersion
	if st.Version == "" {
		st.Version = inst.Version
	}
	st.Volume = &v1alpha1.Volume{Type: inst.Volume.Type, Size: inst.Volume.Size}
	st.Port = inst.Port
	st.IP, st.Endpoint = "", ""
	if len(inst.PrivateIPs) > 0 {
		st.IP = inst.PrivateIPs[0]
		if inst.Port != 0 {
			st.Endpoint = st.IP + ":" + strconv.Itoa(inst.Port)
		}
	}
	st.Nodes = nil
	if len(inst.Nodes) > 0 {
		st.Nodes = make([]v1alpha1.Node, 0, len(inst.Nodes))
	}
	for _, n := range inst.Nodes {
		st.Nodes = append(st.Nodes, v1alpha1.Node{Name: n.Name, Role: n.Role, Status: n.Status, Availabilityzone: n.AvailabilityZone})
	}
	// NOTE: OTC does not document the order of an instance's nodes; a status that followed it
	// could change on every call, so the nodes are sorted.
	slices.SortFunc(st.Nodes, func(a, b v1alpha1.Node) int {
		return cmp.Or(cmp.Compare(a.Role, b.Role), cmp.Compare(a.Name, b.Name))
	})
	st.VpcID, st.SubnetID, st.SecurityGroupID = inst.VpcID, inst.SubnetID, inst.SecurityGroupID
	st.SSL = nil
	if inst.SSL != nil {
		st.SSL = ptr.To(*inst.SSL)
	}
	st.TimeZone = inst.TimeZone
	st.DiskEncryptionID, st.Encrypted = inst.DiskEncryptionID, inst.DiskEncryptionID != ""
	st.ReplicationMode, st.MaintenanceWindow = inst.ReplicationMode, inst.MaintenanceWindow
	st.BackupPolicy = reportedBackupPolicy(st.BackupPolicy, inst.BackupStrategy) // settings.go
	if op := st.Operation; op != nil && operationDone(op, inst.Status) && settingReached(op, inst) {
		st.Operation = nil
	}
	reason, message, ok := readiness(inst.Status)
	ready := notReady(reason, message, settled)
	if ok {
		ready.status = metav1.ConditionTrue
	}
	// NOTE: a settled operation (settings.go) the instance shows no sign of is the day-2 step's
	// to follow: it asks for early looks while the operation's job runs, and not once the job
	// ended without the change, so that the change is asked again at the steady look, not at the
	// next early one, a new change every few seconds for a change OTC fails every time.
	if transitional(inst.Status) || st.Operation != nil && !settledOp(st.Operation) {
		ready.class = inFlight
	}
	return st, ready
}
