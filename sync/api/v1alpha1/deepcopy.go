package v1alpha1

// DeepCopy returns a copy of the status that shares no memory with s. A field added to the status
// (or to a type it holds) that DeepCopy must copy fails TestDeepCopyCopiesEveryField until it does.
func (s *RdsStatus) DeepCopy() *RdsStatus {
	if s == nil {
		return nil
	}
	out := new(RdsStatus)
	s.DeepCopyInto(out)
	return out
}

// DeepCopyInto writes into out a copy of the status that shares no memory with s (DeepCopy, into a
// status the caller holds).
func (s *RdsStatus) DeepCopyInto(out *RdsStatus) {
	*out = *s
	if s.Volume != nil {
		v := *s.Volume
		out.Volume = &v
	}
	if s.Operation != nil {
		o := *s.Operation
		out.Operation = &o
	}
	if s.FinalBackup != nil {
		b := *s.FinalBackup
		out.FinalBackup = &b
	}
	if s.NetworkRefs != nil {
		r := *s.NetworkRefs
		out.NetworkRefs = &r
	}
	if s.SSL != nil {
		b := *s.SSL
		out.SSL = &b
	}
	if s.LowerCaseTableNames != nil {
		n := *s.LowerCaseTableNames
		out.LowerCaseTableNames = &n
	}
	if s.BackupPolicy != nil {
		b := *s.BackupPolicy
		out.BackupPolicy = &b
	}
	if s.Stopped != nil {
		st := *s.Stopped
		out.Stopped = &st
	}
	out.DatabasesAndUsers = s.DatabasesAndUsers.DeepCopy()
	out.Restore = s.Restore.DeepCopy()
	out.Logs = s.Logs.DeepCopy()
	out.Autopilot = s.Autopilot.DeepCopy()
	out.Parameters = s.Parameters.DeepCopy()
	out.Nodes = append([]Node(nil), s.Nodes...)
	out.ManagedTags = append([]string(nil), s.ManagedTags...)
	out.Duplicates = append([]string(nil), s.Duplicates...)
	out.ReadReplicas = append([]ReadReplicaStatus(nil), s.ReadReplicas...)
	out.Conditions = append([]Condition(nil), s.Conditions...)
}
