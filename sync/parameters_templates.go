// The object's parameter templates: their names and description, and how the object knows its own
// (docs/parameters.md). The create makes them (parameters_create.go), the parameters step deletes
// them once the instance is ACTIVE (parameters.go), and finalize deletes any left.

package reconcile

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// ownedTemplates are the object's templates in list, by name.
func ownedTemplates(list []cloud.ParameterTemplate, me owner) []cloud.ParameterTemplate {
	var owned []cloud.ParameterTemplate
	for _, t := range list {
		if templateOwned(t, me) {
			owned = append(owned, t)
		}
	}
	slices.SortFunc(owned, func(a, b cloud.ParameterTemplate) int { return strings.Compare(a.Name, b.Name) })
	return owned
}

// templateOwned reports whether t is one of the object's templates: its name and its description
// both say so, and it is no default.
func templateOwned(t cloud.ParameterTemplate, me owner) bool {
	return t.UserDefined && strings.HasPrefix(t.Name, TemplatePrefix(me)) && strings.Contains(t.Description, "uid "+me.UID+")")
}

const (
	templateNamePrefix = "rds-"
	maxTemplateName    = 64
	templateOwnerHash  = 16
	templateValuesHash = 8
)

// TemplatePrefix is the start of every parameter template name of the object me: readable, then
// a hash of cluster, namespace, name and uid.
func TemplatePrefix(me owner) string {
	sum := sha256.Sum256([]byte(me.Cluster + "/" + me.Namespace + "/" + me.Name + "/" + me.UID))
	suffix := "-" + hex.EncodeToString(sum[:])[:templateOwnerHash] + "-"
	readable := sanitize(me.Namespace + "-" + me.Name)
	if room := maxTemplateName - len(templateNamePrefix) - len(suffix) - templateValuesHash; len(readable) > room {
		readable = strings.TrimRight(readable[:room], "-")
	}
	return templateNamePrefix + readable + suffix
}

// TemplateName is the name of the object's parameter template for these values.
func TemplateName(me owner, values map[string]string) string {
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(values)) {
		fmt.Fprintf(h, "%s\x00%s\x00", k, values[k])
	}
	return TemplatePrefix(me) + hex.EncodeToString(h.Sum(nil))[:templateValuesHash]
}

// templateDescription is the description of the object's templates: it names the uid that
// templateOwned checks. NOTE: OTC takes at most 256 characters and none of !<>='&".
func templateDescription(me owner) string {
	return fmt.Sprintf("rds-lambda-controller: parameters at create of an Rds object (cluster %s, uid %s); deleted once its instance is ACTIVE.", me.Cluster, me.UID)
}
