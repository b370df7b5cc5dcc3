package manifests

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
)

// TestReadReplicasValidation: spec.readreplicas as the CRD admits it, by name, with .rr flavors,
// one AZ, storage as any instance's, at most OTC's five, for MySQL and PostgreSQL.
func TestReadReplicasValidation(t *testing.T) {
	rr := func(name, flavor, az string) map[string]any {
		return map[string]any{"name": name, "flavorref": flavor, "availabilityzone": az}
	}
	ok := rr("r1", "rds.mysql.n1.large.2.rr", "eu-de-02")
	cases := map[string]struct {
		reason string
		change func(spec map[string]any)
		want   string
	}{
		"Two":        {reason: "two replicas", change: set("readreplicas", []any{ok, rr("r2", "rds.mysql.n1.large.2.rr", "eu-de-03")})},
		"Volume":     {reason: "a volume of its own", change: set("readreplicas", []any{map[string]any{"name": "r1", "flavorref": "rds.mysql.c2.medium.rr", "availabilityzone": "eu-de-01", "volumesize": 100}})},
		"PostgreSQL": {reason: "PostgreSQL has replicas", change: both(postgres, set("readreplicas", []any{rr("r1", "rds.pg.n1.large.2.rr", "eu-de-01")}))},
		"Empty":      {reason: "no replicas", change: set("readreplicas", []any{})},

		"SQLServer":    {reason: "SQL Server has none here", change: both(sqlserver, set("readreplicas", []any{ok})), want: "readreplicas are offered for MySQL and PostgreSQL only"},
		"NotRR":        {reason: "a read replica flavor", change: set("readreplicas", []any{rr("r1", "rds.mysql.n1.large.2", "eu-de-02")}), want: "spec.readreplicas[0].flavorref in body should match"},
		"TwoAZs":       {reason: "one AZ", change: set("readreplicas", []any{rr("r1", "rds.mysql.n1.large.2.rr", "eu-de-01,eu-de-02")}), want: "spec.readreplicas[0].availabilityzone"},
		"Name":         {reason: "lowercase names", change: set("readreplicas", []any{rr("R1", "rds.mysql.n1.large.2.rr", "eu-de-02")}), want: "spec.readreplicas[0].name in body should match"},
		"NameTwice":    {reason: "the name is the key", change: set("readreplicas", []any{ok, ok}), want: "Duplicate value"},
		"NoFlavor":     {reason: "flavorref is required", change: set("readreplicas", []any{map[string]any{"name": "r1", "availabilityzone": "eu-de-02"}}), want: "spec.readreplicas[0].flavorref: Required value"},
		"VolumeStep":   {reason: "steps of 10 GB", change: set("readreplicas", []any{map[string]any{"name": "r1", "flavorref": "rds.mysql.c2.medium.rr", "availabilityzone": "eu-de-01", "volumesize": 45}}), want: "should be a multiple of 10"},
		"MoreThanFive": {reason: "OTC's limit", change: set("readreplicas", []any{rr("a", "rds.mysql.c2.medium.rr", "eu-de-01"), rr("b", "rds.mysql.c2.medium.rr", "eu-de-01"), rr("c", "rds.mysql.c2.medium.rr", "eu-de-01"), rr("d", "rds.mysql.c2.medium.rr", "eu-de-01"), rr("e", "rds.mysql.c2.medium.rr", "eu-de-01"), rr("f", "rds.mysql.c2.medium.rr", "eu-de-01")}), want: "must have at most 5 items"},
	}
	v := newCRDValidator(t, loadCRD(t), v1alpha1.Version)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := rds(t, tc.change)
			assert.Empty(t, v.admit(obj), "pruned fields")
			got := errorText(v.create(obj))
			if tc.want == "" {
				assert.Empty(t, got, tc.reason)
				return
			}
			assert.Contains(t, got, tc.want, tc.reason)
		})
	}
}
