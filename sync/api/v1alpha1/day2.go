package v1alpha1

// Tag is one OTC tag: keys of 1 to 36 and values of up to 43 letters, digits, '-', '_' or '.'.
type Tag struct {
	Key   string `json:"key"`
	Value string `json:"value,omitempty"`
}
