package reconcile

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
)

// maxLabelValue is the length limit of a label value.
const maxLabelValue = 63

// childLabels are the labels of every child and of the log Job's pods.
func childLabels(parent *v1alpha1.Rds) map[string]string {
	return map[string]string{LabelManagedBy: ManagedBy, LabelRds: labelValue(parent.Name)}
}

// labelValue is an object name as a label value.
//
// NOTE: an Rds name may have 253 characters, a label value at most 63. A longer name is cut and
// ends in a hash of the whole name, so that two long names never share a value; the API server
// would refuse a child with the name itself, and the object would wait for ever without an error.
func labelValue(name string) string {
	if len(name) <= maxLabelValue {
		return name
	}
	return withHash(name, maxLabelValue)
}

// withHash cuts s to fit in limit characters together with "-" and the first 8 hex digits of
// SHA-256(s); what is left ends in a letter or digit.
func withHash(s string, limit int) string {
	sum := sha256.Sum256([]byte(s))
	suffix := "-" + hex.EncodeToString(sum[:])[:hashLen]
	return strings.TrimRight(s[:limit-len(suffix)], "-._") + suffix
}
