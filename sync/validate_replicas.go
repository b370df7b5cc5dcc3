package reconcile

import (
	"regexp"
	"strings"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
)

// replicaNamePattern is a read replica's name in spec.readreplicas: 1 to 16 lowercase letters,
// digits and '-', starting with a letter and not ending with '-'.
var replicaNamePattern = regexp.MustCompile(`^[a-z]([a-z0-9-]{0,14}[a-z0-9])?$`)

// replicaProblems validates spec.readreplicas, in field order.
func replicaProblems(spec *v1alpha1.RdsSpec) []string {
	var p problems
	rrs := spec.Readreplicas
	if len(rrs) == 0 {
		return nil
	}
	switch spec.Datastoretype {
	case v1alpha1.EngineMySQL, v1alpha1.EnginePostgreSQL:
	default:
		p.addf("readreplicas are offered for MySQL and PostgreSQL only.")
	}
	if len(rrs) > MaxReadReplicas {
		p.addf("readreplicas lists %d replicas; OTC allows at most %d per instance.", len(rrs), MaxReadReplicas)
	}
	seen := map[string]bool{}
	for _, r := range rrs {
		switch {
		case !replicaNamePattern.MatchString(r.Name):
			p.addf("readreplicas name %q is not 1 to 16 lowercase letters, digits and '-', starting with a letter.", r.Name)
			continue
		case seen[r.Name]:
			p.addf("readreplicas name %q is listed twice.", r.Name)
		}
		seen[r.Name] = true
		if !flavorPattern.MatchString(r.Flavorref) || !strings.HasSuffix(r.Flavorref, ".rr") {
			p.addf("readreplicas %s: flavorref %q is not a read replica spec code such as rds.mysql.n1.large.2.rr.", r.Name, r.Flavorref)
		}
		if !azPattern.MatchString(r.Availabilityzone) {
			p.addf("readreplicas %s: availabilityzone %q is not one AZ name such as eu-de-01.", r.Name, r.Availabilityzone)
		}
		switch v := r.Volumesize; {
		case v == 0:
		case v < 40 || v > 4000 || v%10 != 0:
			p.addf("readreplicas %s: volumesize %d is not a multiple of 10 between 40 and 4000.", r.Name, v)
		}
	}
	return p
}
