package server

import (
	"slices"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/mcsps/rds-lambda-controller/sync/hook"
)

// validRules keeps of the related-resource rules only the names an object can have (DNS
// subdomains): a reference of an invalid spec that cannot name an object asks Metacontroller for
// nothing.
//
// NOTE: a rule left without names would select every object of its kind in the namespace, so a
// rule whose names were all dropped is dropped whole.
func validRules(rules []hook.ResourceRule) []hook.ResourceRule {
	out := make([]hook.ResourceRule, 0, len(rules))
	for _, r := range rules {
		if len(r.Names) == 0 {
			out = append(out, r)
			continue
		}
		r.Names = slices.DeleteFunc(slices.Clone(r.Names), func(n string) bool {
			return len(validation.IsDNS1123Subdomain(n)) > 0
		})
		if len(r.Names) > 0 {
			out = append(out, r)
		}
	}
	return out
}
