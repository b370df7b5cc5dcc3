package v1alpha1

// Tag is one OTC tag: keys of 1 to 36 and values of up to 43 letters, digits, '-', '_' or '.'.
type Tag struct {
	Key   string `json:"key"`
	Value string `json:"value,omitempty"`
}

// deepCopyDay2 copies the day-2 fields of s that DeepCopy's shallow copy shares.
func (s *RdsStatus) deepCopyDay2(out *RdsStatus) {
	out.ManagedTags = append([]string(nil), s.ManagedTags...)
	out.Duplicates = append([]string(nil), s.Duplicates...)
}
