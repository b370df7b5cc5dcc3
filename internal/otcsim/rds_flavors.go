package otcsim

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// Availability zones of the simulated region.
var availabilityZones = []string{"eu-de-01", "eu-de-02", "eu-de-03"}

// AZ statuses of a flavor.
const (
	azNormal      = "normal"
	azSellout     = "sellout"
	azUnsupported = "unsupported"
)

// engine is a DB engine with its versions.
type engine struct {
	name        string // as the API spells it (case-sensitive in datastore.type)
	short       string // in spec codes: rds.<short>.…
	jobName     string // in job names: Create<jobName>SingleHAInstance
	defaultPort int
	replication []string // allowed ha.replication_mode values
	dimension   string   // Cloud Eye instance dimension
	versions    []engineVersion
}

type engineVersion struct {
	name     string // e.g. "8.0"
	complete string // complete_version of a new instance, e.g. "8.0.28"
	latest   string // the newest minor version a minor upgrade goes to
}

var engines = []*engine{
	{
		name: "MySQL", short: "mysql", jobName: "Mysql", defaultPort: 3306,
		replication: []string{"async", "semisync"}, dimension: "rds_cluster_id",
		versions: []engineVersion{{"5.7", "5.7.41", "5.7.44"}, {"8.0", "8.0.28", "8.0.32"}},
	},
	{
		name: "PostgreSQL", short: "pg", jobName: "Postgresql", defaultPort: 5432,
		replication: []string{"async", "sync"}, dimension: "postgresql_cluster_id",
		versions: []engineVersion{
			{"13", "13.14", "13.16"}, {"14", "14.11", "14.13"}, {"15", "15.4", "15.8"},
			{"16", "16.2", "16.4"}, {"17", "17.2", "17.4"},
		},
	},
	{
		name: "SQLServer", short: "mssql", jobName: "Sqlserver", defaultPort: 1433,
		replication: []string{"sync"}, dimension: "rds_cluster_sqlserver_id",
		versions: []engineVersion{
			{"2017_SE", "14.0.3456.2", "14.0.3456.2"}, {"2017_EE", "14.0.3456.2", "14.0.3456.2"},
			{"2019_SE", "15.0.4312.2", "15.0.4312.2"}, {"2019_EE", "15.0.4312.2", "15.0.4312.2"},
			{"2022_SE", "16.0.4085.2", "16.0.4085.2"}, {"2022_EE", "16.0.4085.2", "16.0.4085.2"},
		},
	},
}

// findEngine looks an engine up case-insensitively (the flavors path segment is case-insensitive).
func findEngine(name string) *engine {
	for _, e := range engines {
		if strings.EqualFold(e.name, name) {
			return e
		}
	}
	return nil
}

// engineExact looks an engine up as datastore.type must spell it (case-sensitive).
func engineExact(name string) *engine {
	for _, e := range engines {
		if e.name == name {
			return e
		}
	}
	return nil
}

func (e *engine) version(name string) *engineVersion {
	for i := range e.versions {
		if e.versions[i].name == name {
			return &e.versions[i]
		}
	}
	return nil
}

func (e *engine) versionNames() []string {
	out := make([]string, 0, len(e.versions))
	for _, v := range e.versions {
		out = append(out, v.name)
	}
	return out
}

// Instance modes of a flavor (lowercase in the flavors API, capitalised in instances).
const (
	modeSingle  = "single"
	modeHA      = "ha"
	modeReplica = "replica"
)

// flavor is one spec code.
type flavor struct {
	engine   *engine
	spec     string
	vcpus    int
	ramGB    int
	versions []string
	mode     string
	azStatus map[string]string
}

func (f *flavor) json() map[string]any {
	desc := map[string]string{}
	for _, az := range availabilityZones {
		desc[az] = az
	}
	return map[string]any{
		"vcpus": fmt.Sprint(f.vcpus), "ram": f.ramGB, "id": stableUUID("flavor/" + f.spec),
		"spec_code": f.spec, "version_name": f.versions, "instance_mode": f.mode,
		"az_status": f.azStatus, "az_desc": desc, "group_type": "normal",
	}
}

// flavorTable is the flavor table. It follows the OTC classes rds.{mysql|pg}.n1.<size>.<ratio>[.ha|.rr],
// keeps the older c2 generation the project's sample uses (rds.mysql.c2.medium) and adds SQL Server
// SE/EE classes. A few combinations are sold out or unsupported in some AZs (see azStatusFor).
var flavorTable = buildFlavors()

func buildFlavors() []*flavor {
	type size struct {
		name  string
		vcpus int
	}
	var out []*flavor
	add := func(e *engine, base string, vcpus, ram int, versions []string) {
		for _, m := range []struct{ mode, suffix string }{{modeSingle, ""}, {modeHA, ".ha"}, {modeReplica, ".rr"}} {
			if e.short == "mssql" && m.mode == modeReplica {
				continue
			}
			spec := base + m.suffix
			out = append(out, &flavor{
				engine: e, spec: spec, vcpus: vcpus, ramGB: ram, versions: versions, mode: m.mode,
				azStatus: azStatusFor(spec),
			})
		}
	}
	for _, e := range engines[:2] { // MySQL, PostgreSQL
		for _, sz := range []size{{"medium", 1}, {"large", 2}, {"xlarge", 4}, {"2xlarge", 8}, {"4xlarge", 16}} {
			for _, ratio := range []int{2, 4} {
				add(e, fmt.Sprintf("rds.%s.n1.%s.%d", e.short, sz.name, ratio), sz.vcpus, sz.vcpus*ratio, e.versionNames())
			}
		}
		for _, sz := range []size{{"medium", 1}, {"large", 2}, {"xlarge", 4}} {
			add(e, fmt.Sprintf("rds.%s.c2.%s", e.short, sz.name), sz.vcpus, sz.vcpus*2, e.versionNames())
		}
	}
	mssql := engines[2]
	for _, edition := range []string{"se", "ee"} {
		var versions []string
		for _, v := range mssql.versionNames() {
			if strings.HasSuffix(strings.ToLower(v), edition) {
				versions = append(versions, v)
			}
		}
		for _, sz := range []size{{"large", 2}, {"xlarge", 4}, {"2xlarge", 8}} {
			add(mssql, fmt.Sprintf("rds.mssql.%s.s3.%s.4", edition, sz.name), sz.vcpus, sz.vcpus*4, versions)
		}
	}
	return out
}

// azStatusFor makes a few flavors unavailable so clients meet sold-out specs:
//   - n1.2xlarge.4 (all modes) is sold out in eu-de-03;
//   - n1.xlarge.2.ha is sold out in eu-de-02;
//   - n1.4xlarge.* and c2.xlarge are not offered in eu-de-03.
func azStatusFor(spec string) map[string]string {
	st := map[string]string{}
	for _, az := range availabilityZones {
		st[az] = azNormal
	}
	switch {
	case strings.Contains(spec, ".n1.2xlarge.4"):
		st["eu-de-03"] = azSellout
	case strings.HasSuffix(spec, ".n1.xlarge.2.ha"):
		st["eu-de-02"] = azSellout
	case strings.Contains(spec, ".n1.4xlarge."), strings.Contains(spec, ".c2.xlarge"):
		st["eu-de-03"] = azUnsupported
	}
	return st
}

func findFlavor(spec string) *flavor {
	for _, f := range flavorTable {
		if f.spec == spec {
			return f
		}
	}
	return nil
}

// handleListFlavors serves GET /rds/v3/{project}/flavors/{database_name}?version_name=&spec_code=.
func (s *Sim) handleListFlavors(w http.ResponseWriter, r *http.Request) {
	e := findEngine(r.PathValue("database"))
	if e == nil {
		writeError(w, svcRDS, errParam("unknown database_name %q", r.PathValue("database")))
		return
	}
	q := r.URL.Query()
	out := []map[string]any{}
	for _, f := range flavorTable {
		if f.engine != e ||
			(q.Get("version_name") != "" && !slices.Contains(f.versions, q.Get("version_name"))) ||
			(q.Get("spec_code") != "" && f.spec != q.Get("spec_code")) {
			continue
		}
		out = append(out, f.json())
	}
	writeJSON(w, http.StatusOK, map[string]any{"flavors": out})
}

// handleListDatastores serves GET /rds/v3/{project}/datastores/{database_name}.
// NOTE: the answer's key is camelCase "dataStores".
func (s *Sim) handleListDatastores(w http.ResponseWriter, r *http.Request) {
	e := findEngine(r.PathValue("database"))
	if e == nil {
		writeError(w, svcRDS, errParam("unknown database_name %q", r.PathValue("database")))
		return
	}
	out := []map[string]any{}
	for _, v := range e.versions {
		out = append(out, map[string]any{"id": stableUUID("datastore/" + e.name + "/" + v.name), "name": v.name})
	}
	writeJSON(w, http.StatusOK, map[string]any{"dataStores": out})
}

// Storage types the simulator accepts. CLOUDSSD and ESSD are documented; COMMON and ULTRAHIGH still
// appear in SDK tests and older samples.
var storageTypes = []string{"CLOUDSSD", "ESSD", "ULTRAHIGH", "COMMON"}

// handleListStorageTypes serves GET /rds/v3/{project}/storage-type/{database_name}?version_name=.
func (s *Sim) handleListStorageTypes(w http.ResponseWriter, r *http.Request) {
	e := findEngine(r.PathValue("database"))
	if e == nil {
		writeError(w, svcRDS, errParam("unknown database_name %q", r.PathValue("database")))
		return
	}
	v := r.URL.Query().Get("version_name")
	if v == "" {
		writeError(w, svcRDS, errParam("version_name is required"))
		return
	}
	if e.version(v) == nil {
		writeError(w, svcRDS, errParam("unknown version_name %q", v))
		return
	}
	if m := r.URL.Query().Get("ha_mode"); m != "" && !slices.Contains([]string{modeSingle, modeHA, modeReplica}, m) {
		writeError(w, svcRDS, errParam("ha_mode must be single, ha or replica"))
		return
	}
	out := []map[string]any{}
	for _, st := range storageTypes {
		az := map[string]string{}
		for _, a := range availabilityZones {
			az[a] = storageAZStatus(st, a)
		}
		out = append(out, map[string]any{
			"name": st, "az_status": az, "support_compute_group_type": []string{"normal", "general", "dedicated"},
		})
	}
	writeJSON(w, http.StatusOK, map[string]any{"storage_type": out})
}

// storageAZStatus tells whether a storage type is offered in an AZ: ESSD is not offered in eu-de-03.
func storageAZStatus(storageType, az string) string {
	if storageType == "ESSD" && az == "eu-de-03" {
		return azUnsupported
	}
	return azNormal
}
