package v1alpha1

// DeepCopy returns a copy of the status that shares no memory with s.
func (s *RdsStatus) DeepCopy() *RdsStatus {
	if s == nil {
		return nil
	}
	out := *s
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
	out.DatabasesAndUsers = s.DatabasesAndUsers.DeepCopy()
	out.Restore = s.Restore.DeepCopy()
	out.Logs = s.Logs.DeepCopy()
	out.Autopilot = s.Autopilot.DeepCopy()
	out.Nodes = append([]Node(nil), s.Nodes...)
	s.deepCopyDay2(&out)
	out.Conditions = append([]Condition(nil), s.Conditions...)
	return &out
}
