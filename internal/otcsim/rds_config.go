package otcsim

import (
	"maps"
	"math/big"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// configTimeLayout is how parameter templates show their times ("2018-10-11 11:40:44").
const configTimeLayout = "2006-01-02 15:04:05"

// paramDef is a parameter an engine knows, with its default.
type paramDef struct {
	name, typ, valueRange, def, desc string
	restart, readonly                bool
	// versions, when set, are the only engine versions that have the parameter (MySQL 5.7's query
	// cache is gone in 8.0).
	versions []string
	// byMemory, when set, is the default for an instance with this much RAM (GB): OTC sizes the
	// buffers and the connection limit to the flavor. A template has no flavor: it shows def.
	byMemory func(ramGB int) string
}

const gib = 1 << 30

// engineParams is a small but representative catalog of each engine's parameters: every type
// OTC reports (integer, float, string, boolean, list), restart-required, read-only,
// version-specific and memory-dependent ones.
var engineParams = map[string][]paramDef{
	"mysql": {
		{name: "max_connections", typ: "integer", valueRange: "10-100000", def: "2500", desc: "Maximum permitted number of simultaneous client connections.",
			byMemory: func(ram int) string { return strconv.Itoa(tier(ram, 1500, 2500, 5000, 10000)) }},
		{name: "innodb_buffer_pool_size", typ: "integer", valueRange: "5242880-18446744073709551615", def: "1073741824", restart: true, desc: "Size in bytes of the InnoDB buffer pool.",
			byMemory: func(ram int) string { return strconv.FormatInt(int64(ram)*gib*int64(tier(ram, 2, 2, 3, 3))/4, 10) }},
		{name: "innodb_log_file_size", typ: "integer", valueRange: "4194304-4294967296", def: "1073741824", restart: true, desc: "Size in bytes of each redo log file."},
		{name: "long_query_time", typ: "float", valueRange: "0.03-3600", def: "1", desc: "Queries running longer are slow queries."},
		{name: "slow_query_log", typ: "string", valueRange: "ON,OFF", def: "ON", desc: "Whether the slow query log is enabled."},
		{name: "wait_timeout", typ: "integer", valueRange: "1-31536000", def: "28800", desc: "Seconds the server waits on an idle connection before closing it."},
		{name: "character_set_server", typ: "string", valueRange: "utf8,utf8mb4,latin1,gbk", def: "utf8mb4", restart: true, desc: "The server's default character set."},
		{name: "performance_schema", typ: "string", valueRange: "ON,OFF", def: "OFF", restart: true, desc: "Whether the Performance Schema is enabled."},
		{name: "sql_mode", typ: "list", valueRange: "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,STRICT_ALL_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION,ANSI_QUOTES", def: "STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION", desc: "The server SQL modes."},
		{name: "explicit_defaults_for_timestamp", typ: "boolean", valueRange: "true|false", def: "true", desc: "Whether TIMESTAMP columns get the standard defaults."},
		{name: "query_cache_type", typ: "string", valueRange: "OFF,ON,DEMAND", def: "OFF", restart: true, versions: []string{"5.7"}, desc: "The query cache mode."},
		{name: "time_zone", typ: "string", valueRange: "", def: "UTC", desc: "The server time zone."},
		{name: "lower_case_table_names", typ: "integer", valueRange: "0-1", def: "1", readonly: true, desc: "Whether table names are stored in lowercase."},
	},
	"pg": {
		{name: "max_connections", typ: "integer", valueRange: "10-8388607", def: "100", restart: true, desc: "Maximum number of concurrent connections.",
			byMemory: func(ram int) string { return strconv.Itoa(tier(ram, 200, 400, 800, 1600)) }},
		{name: "shared_buffers", typ: "integer", valueRange: "16-1073741823", def: "131072", restart: true, desc: "Memory used for shared buffers (8 kB pages).",
			byMemory: func(ram int) string { return strconv.Itoa(ram * gib / 4 / 8192) }},
		{name: "work_mem", typ: "integer", valueRange: "64-2147483647", def: "4096", desc: "Memory for internal sort operations (kB)."},
		{name: "maintenance_work_mem", typ: "integer", valueRange: "1024-2147483647", def: "65536", desc: "Memory for maintenance operations (kB)."},
		{name: "log_min_duration_statement", typ: "integer", valueRange: "-1-2147483647", def: "-1", desc: "Statements running at least this long (ms) are logged."},
		{name: "statement_timeout", typ: "integer", valueRange: "0-2147483647", def: "0", desc: "Statements running longer (ms) are aborted; 0 never."},
		{name: "random_page_cost", typ: "float", valueRange: "0-1.79769e+308", def: "4", desc: "The planner's cost of a nonsequentially fetched disk page."},
		{name: "autovacuum", typ: "boolean", valueRange: "on|off", def: "on", desc: "Whether the autovacuum launcher runs."},
		{name: "max_wal_senders", typ: "integer", valueRange: "5-262143", def: "10", restart: true, desc: "Maximum number of simultaneous WAL sender processes."},
		{name: "wal_level", typ: "string", valueRange: "replica,logical", def: "replica", readonly: true, desc: "How much information is written to the WAL."},
		{name: "timezone", typ: "string", valueRange: "", def: "UTC", desc: "The time zone for displaying and interpreting time stamps."},
	},
	"mssql": {
		{name: "max degree of parallelism", typ: "integer", valueRange: "0-32767", def: "0", desc: "Limits the processors used by a parallel plan."},
		{name: "cost threshold for parallelism", typ: "integer", valueRange: "0-32767", def: "5", desc: "Cost above which parallel plans are considered."},
		{name: "max server memory (MB)", typ: "integer", valueRange: "128-2147483647", def: "2147483647", restart: true, desc: "Upper limit of the buffer pool.",
			byMemory: func(ram int) string { return strconv.Itoa(ram * 1024 * 3 / 4) }},
	},
}

// tier picks the value for a RAM size: up to 2 GB, 4 GB, 8 GB, more.
func tier(ramGB int, upTo2, upTo4, upTo8, more int) int {
	switch {
	case ramGB <= 2:
		return upTo2
	case ramGB <= 4:
		return upTo4
	case ramGB <= 8:
		return upTo8
	}
	return more
}

// has reports whether an engine version has the parameter.
func (p *paramDef) has(version string) bool {
	return len(p.versions) == 0 || slices.Contains(p.versions, version)
}

// defaultFor is the parameter's default for an instance with ramGB of memory (0: a template).
func (p *paramDef) defaultFor(ramGB int) string {
	if p.byMemory != nil && ramGB > 0 {
		return p.byMemory(ramGB)
	}
	return p.def
}

func findParam(e *engine, version, name string) *paramDef {
	for i, p := range engineParams[e.short] {
		if p.name == name && p.has(version) {
			return &engineParams[e.short][i]
		}
	}
	return nil
}

// validValue checks a value against a parameter's type and range. NOTE: OTC refuses an empty value.
func (p *paramDef) validValue(v string) bool {
	if v == "" {
		return false
	}
	switch p.typ {
	case "integer", "float":
		x, ok := new(big.Float).SetString(v)
		if !ok || (p.typ == "integer" && strings.ContainsAny(v, ".eE")) {
			return false
		}
		// Ranges are "lo-hi"; lo may be negative ("-1-2147483647").
		i := strings.LastIndex(p.valueRange, "-")
		lo, ok1 := new(big.Float).SetString(p.valueRange[:i])
		hi, ok2 := new(big.Float).SetString(p.valueRange[i+1:])
		return ok1 && ok2 && x.Cmp(lo) >= 0 && x.Cmp(hi) <= 0
	case "list":
		for _, x := range strings.Split(v, ",") {
			if !slices.Contains(strings.Split(p.valueRange, ","), x) {
				return false
			}
		}
		return true
	case "boolean":
		return slices.Contains(strings.Split(p.valueRange, "|"), v)
	default:
		return p.valueRange == "" || slices.Contains(strings.Split(p.valueRange, ","), v)
	}
}

// configuration is a parameter template.
type configuration struct {
	id, name, description string
	engine                *engine
	version               string
	userDefined           bool
	values                map[string]string
	created, updated      time.Time
}

// seedConfigurations adds the default template of every engine version.
func (s *Sim) seedConfigurations() {
	now := s.now()
	for _, e := range engines {
		for _, v := range e.versions {
			c := &configuration{
				id:   stableHex("config/default/"+e.name+"/"+v.name) + "pr01",
				name: "Default-" + e.name + "-" + v.name, description: "Default parameter group for " + e.name + " " + v.name,
				engine: e, version: v.name, values: map[string]string{}, created: now, updated: now,
			}
			s.configurations[c.id] = c
		}
	}
}

func datastoreName(e *engine) string { return strings.ToLower(e.name) }

func (c *configuration) json(withParams bool) map[string]any {
	out := map[string]any{
		"id": c.id, "name": c.name, "description": c.description, "datastore_version_name": c.version,
		"datastore_name": datastoreName(c.engine), "created": c.created.UTC().Format(configTimeLayout),
		"updated": c.updated.UTC().Format(configTimeLayout), "user_defined": c.userDefined,
	}
	if withParams {
		out["configuration_parameters"] = paramsJSON(c.engine, c.version, 0, c.values)
	}
	return out
}

// paramsJSON lists an engine version's parameters with values overlaid on the defaults for ramGB
// of memory (0: a template's).
func paramsJSON(e *engine, version string, ramGB int, values map[string]string) []map[string]any {
	out := []map[string]any{}
	for _, p := range engineParams[e.short] {
		if !p.has(version) {
			continue
		}
		v := p.defaultFor(ramGB)
		if x, ok := values[p.name]; ok {
			v = x
		}
		out = append(out, map[string]any{
			"name": p.name, "value": v, "restart_required": p.restart, "readonly": p.readonly,
			"value_range": p.valueRange, "type": p.typ, "description": p.desc,
		})
	}
	return out
}

// validateValues checks user-set values; unknown and read-only names are returned as ignored.
func validateValues(e *engine, version string, values map[string]string) (ignored []string, err *apiError) {
	for _, k := range slices.Sorted(maps.Keys(values)) {
		p := findParam(e, version, k)
		switch {
		case p == nil || p.readonly:
			ignored = append(ignored, k)
		case !p.validValue(values[k]):
			return nil, errorf(http.StatusBadRequest, "DBS.212002", "Invalid value %q of parameter %s (%s %s).", values[k], k, p.typ, p.valueRange)
		}
	}
	return ignored, nil
}

// scalarValues turns JSON scalars into the strings OTC stores.
func scalarValues(in map[string]any) (map[string]string, *apiError) {
	out := make(map[string]string, len(in))
	for k, v := range in {
		switch x := v.(type) {
		case string:
			out[k] = x
		case float64:
			out[k] = strconv.FormatFloat(x, 'f', -1, 64)
		case bool:
			out[k] = strconv.FormatBool(x)
		default:
			return nil, errParam("the value of %s must be a string or a number", k)
		}
	}
	return out, nil
}

func (s *Sim) handleListConfigurations(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := slices.SortedFunc(maps.Values(s.configurations), func(a, b *configuration) int {
		return strings.Compare(a.name, b.name)
	})
	out := make([]map[string]any, 0, len(all))
	for _, c := range all {
		out = append(out, c.json(false))
	}
	writeJSON(w, http.StatusOK, map[string]any{"configurations": out})
}

func (s *Sim) lookupConfiguration(w http.ResponseWriter, id string) *configuration {
	c := s.configurations[id]
	if c == nil {
		writeError(w, svcRDS, errorf(http.StatusNotFound, "DBS.212001", "The parameter template does not exist."))
	}
	return c
}

// handleGetConfiguration answers the bare template object (no wrapper).
func (s *Sim) handleGetConfiguration(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.lookupConfiguration(w, r.PathValue("cid")); c != nil {
		writeJSON(w, http.StatusOK, c.json(true))
	}
}

// handleCreateConfiguration answers 200 with {"configuration":{…}}.
func (s *Sim) handleCreateConfiguration(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Values      map[string]any `json:"values"`
		Datastore   *struct {
			Type    string `json:"type"`
			Version string `json:"version"`
		} `json:"datastore"`
	}
	if e := decodeBody(r, &req); e != nil {
		writeError(w, svcRDS, e)
		return
	}
	if req.Name == "" || len(req.Name) > 64 || req.Datastore == nil {
		writeError(w, svcRDS, errParam("name (1 to 64 characters) and datastore are required"))
		return
	}
	e := findEngine(req.Datastore.Type)
	if e == nil || e.version(req.Datastore.Version) == nil {
		writeError(w, svcRDS, errParam("unknown datastore %s %s", req.Datastore.Type, req.Datastore.Version))
		return
	}
	values, err := scalarValues(req.Values)
	if err == nil {
		_, err = validateValues(e, req.Datastore.Version, values)
	}
	if err != nil {
		writeError(w, svcRDS, err)
		return
	}
	now := s.lockAt()
	defer s.mu.Unlock()
	for _, c := range s.configurations {
		if c.name == req.Name {
			writeError(w, svcRDS, errorf(http.StatusConflict, "DBS.212012", "The parameter template name already exists."))
			return
		}
	}
	c := &configuration{
		id: s.randHex(32) + "pr01", name: req.Name, description: req.Description, engine: e,
		version: req.Datastore.Version, userDefined: true, values: values, created: now, updated: now,
	}
	s.configurations[c.id] = c
	writeJSON(w, http.StatusOK, map[string]any{"configuration": c.json(false)})
}

// handleUpdateConfiguration answers 200 with an empty body. NOTE: the SDK also sends "ConfigId".
func (s *Sim) handleUpdateConfiguration(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name        string         `json:"name"`
		Description *string        `json:"description"`
		Values      map[string]any `json:"values"`
	}
	if e := decodeBody(r, &req); e != nil {
		writeError(w, svcRDS, e)
		return
	}
	now := s.lockAt()
	defer s.mu.Unlock()
	c := s.lookupConfiguration(w, r.PathValue("cid"))
	if c == nil {
		return
	}
	if !c.userDefined {
		writeError(w, svcRDS, errorf(http.StatusBadRequest, "DBS.212013", "Default parameter templates cannot be modified."))
		return
	}
	values, err := scalarValues(req.Values)
	if err == nil {
		_, err = validateValues(c.engine, c.version, values)
	}
	if err != nil {
		writeError(w, svcRDS, err)
		return
	}
	if req.Name != "" {
		c.name = req.Name
	}
	if req.Description != nil {
		c.description = *req.Description
	}
	maps.Copy(c.values, values)
	c.updated = now
	writeEmpty(w, http.StatusOK)
}

func (s *Sim) handleDeleteConfiguration(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.lookupConfiguration(w, r.PathValue("cid"))
	if c == nil {
		return
	}
	if !c.userDefined {
		writeError(w, svcRDS, errorf(http.StatusBadRequest, "DBS.212013", "Default parameter templates cannot be deleted."))
		return
	}
	delete(s.configurations, c.id)
	writeEmpty(w, http.StatusOK)
}

// handleGetInstanceConfiguration serves GET /instances/{id}/configurations: the bare object, with
// empty id and name. NOTE: OTC shows the values set, whether a restart brought them into effect
// or not: nothing in the answer says a restart is pending.
func (s *Sim) handleGetInstanceConfiguration(w http.ResponseWriter, r *http.Request) {
	in, _ := s.lockInstance(w, r, nil)
	if in == nil {
		return
	}
	defer s.mu.Unlock()
	ts := in.ordered.UTC().Format(configTimeLayout)
	writeJSON(w, http.StatusOK, map[string]any{
		"id": "", "name": "", "datastore_version_name": in.version, "datastore_name": datastoreName(in.engine),
		"created": ts, "updated": ts, "configuration_parameters": paramsJSON(in.engine, in.version, in.flavor.ramGB, in.configValues),
	})
}

// handleUpdateInstanceConfiguration serves PUT /instances/{id}/configurations (200). Unknown and
// read-only parameters are reported in ignored_params; restart_required says whether a reboot is
// needed for a change to take effect.
func (s *Sim) handleUpdateInstanceConfiguration(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Values map[string]any `json:"values"`
	}
	if e := decodeBody(r, &req); e != nil {
		writeError(w, svcRDS, e)
		return
	}
	values, err := scalarValues(req.Values)
	if err == nil && len(values) == 0 {
		err = errParam("values is required")
	}
	if err != nil {
		writeError(w, svcRDS, err)
		return
	}
	in, now := s.lockInstance(w, r, nil)
	if in == nil {
		return
	}
	defer s.mu.Unlock()
	restart, ignored, err := s.setParameters(in, values)
	if err != nil {
		writeError(w, svcRDS, err)
		return
	}
	j := s.newJob("Modify"+in.engine.jobName+"Parameters", in, now, time.Second)
	writeJSON(w, http.StatusOK, map[string]any{"restart_required": restart, "job_id": j.id, "ignored_params": nonNil(ignored)})
}

// setParameters sets an instance's values, as the API and the console do: only while the instance
// is ACTIVE and idle, every value checked first (one bad value refuses all), unknown and read-only
// names ignored. A value that needs a restart is pending until the next restart. The caller holds
// s.mu.
func (s *Sim) setParameters(in *instance, values map[string]string) (restart bool, ignored []string, err *apiError) {
	if err := in.checkIdle(); err != nil {
		return false, nil, err
	}
	ignored, err = validateValues(in.engine, in.version, values)
	if err != nil {
		return false, nil, err
	}
	for k, v := range values {
		if slices.Contains(ignored, k) {
			continue
		}
		in.configValues[k] = v
		if findParam(in.engine, in.version, k).restart {
			restart = true
			in.pendingRestart[k] = true
		}
	}
	return restart, ignored, nil
}

// handleApplyConfiguration serves PUT /configurations/{cid}/apply (200). NOTE: the SDK also sends
// "ConfigId" in the body.
func (s *Sim) handleApplyConfiguration(w http.ResponseWriter, r *http.Request) {
	var req struct {
		InstanceIDs []string `json:"instance_ids"`
	}
	if e := decodeBody(r, &req); e != nil {
		writeError(w, svcRDS, e)
		return
	}
	if len(req.InstanceIDs) == 0 {
		writeError(w, svcRDS, errParam("instance_ids is required"))
		return
	}
	now := s.lockAt()
	defer s.mu.Unlock()
	c := s.lookupConfiguration(w, r.PathValue("cid"))
	if c == nil {
		return
	}
	results := []map[string]any{}
	all := true
	for _, id := range req.InstanceIDs {
		in := s.instances[id]
		res := map[string]any{"instance_id": id, "instance_name": "", "restart_required": false, "success": false}
		if in != nil {
			res["instance_name"] = in.name
			if in.engine == c.engine && in.version == c.version && in.checkIdle() == nil {
				restart := false
				for k := range c.values {
					if p := findParam(in.engine, in.version, k); p != nil && p.restart {
						restart = true
						in.pendingRestart[k] = true
					}
				}
				in.configurationID = c.id
				maps.Copy(in.configValues, c.values)
				res["restart_required"], res["success"] = restart, true
			}
		}
		all = all && res["success"] == true
		results = append(results, res)
	}
	j := s.newJob("ApplyParameterGroup", nil, now, time.Second)
	writeJSON(w, http.StatusOK, map[string]any{
		"configuration_id": c.id, "configuration_name": c.name, "apply_results": results,
		"success": all, "job_id": j.id,
	})
}
