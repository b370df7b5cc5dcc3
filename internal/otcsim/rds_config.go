package otcsim

import (
	"maps"
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
}

// engineParams is a small but representative subset of each engine's parameters.
var engineParams = map[string][]paramDef{
	"mysql": {
		{name: "max_connections", typ: "integer", valueRange: "10-100000", def: "2500", desc: "Maximum permitted number of simultaneous client connections."},
		{name: "innodb_buffer_pool_size", typ: "integer", valueRange: "5242880-18446744073709551615", def: "1073741824", restart: true, desc: "Size in bytes of the InnoDB buffer pool."},
		{name: "long_query_time", typ: "float", valueRange: "0.03-3600", def: "1", desc: "Queries running longer are slow queries."},
		{name: "slow_query_log", typ: "string", valueRange: "ON,OFF", def: "ON", desc: "Whether the slow query log is enabled."},
		{name: "character_set_server", typ: "string", valueRange: "utf8,utf8mb4,latin1,gbk", def: "utf8mb4", restart: true, desc: "The server's default character set."},
		{name: "time_zone", typ: "string", valueRange: "", def: "UTC", desc: "The server time zone."},
		{name: "lower_case_table_names", typ: "integer", valueRange: "0-1", def: "1", readonly: true, desc: "Whether table names are stored in lowercase."},
	},
	"pg": {
		{name: "max_connections", typ: "integer", valueRange: "10-8388607", def: "100", restart: true, desc: "Maximum number of concurrent connections."},
		{name: "shared_buffers", typ: "integer", valueRange: "16-1073741823", def: "131072", restart: true, desc: "Memory used for shared buffers (8 kB pages)."},
		{name: "work_mem", typ: "integer", valueRange: "64-2147483647", def: "4096", desc: "Memory for internal sort operations (kB)."},
		{name: "log_min_duration_statement", typ: "integer", valueRange: "-1-2147483647", def: "1000", desc: "Statements running at least this long (ms) are logged."},
		{name: "timezone", typ: "string", valueRange: "", def: "UTC", desc: "The time zone for displaying and interpreting time stamps."},
	},
	"mssql": {
		{name: "max degree of parallelism", typ: "integer", valueRange: "0-32767", def: "0", desc: "Limits the processors used by a parallel plan."},
		{name: "cost threshold for parallelism", typ: "integer", valueRange: "0-32767", def: "5", desc: "Cost above which parallel plans are considered."},
		{name: "max server memory (MB)", typ: "integer", valueRange: "128-2147483647", def: "2147483647", restart: true, desc: "Upper limit of the buffer pool."},
	},
}

func findParam(e *engine, name string) *paramDef {
	for i, p := range engineParams[e.short] {
		if p.name == name {
			return &engineParams[e.short][i]
		}
	}
	return nil
}

// validValue checks a value against a parameter's type and range.
func (p *paramDef) validValue(v string) bool {
	switch p.typ {
	case "integer", "float":
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || (p.typ == "integer" && strings.ContainsAny(v, ".eE")) {
			return false
		}
		// Ranges are "lo-hi"; lo may be negative ("-1-2147483647").
		i := strings.LastIndex(p.valueRange, "-")
		lo, err1 := strconv.ParseFloat(p.valueRange[:i], 64)
		hi, err2 := strconv.ParseFloat(p.valueRange[i+1:], 64)
		return err1 == nil && err2 == nil && x >= lo && x <= hi
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
		out["configuration_parameters"] = paramsJSON(c.engine, c.values)
	}
	return out
}

// paramsJSON lists an engine's parameters with values overlaid on the defaults.
func paramsJSON(e *engine, values ...map[string]string) []map[string]any {
	out := []map[string]any{}
	for _, p := range engineParams[e.short] {
		v := p.def
		for _, m := range values {
			if x, ok := m[p.name]; ok {
				v = x
			}
		}
		out = append(out, map[string]any{
			"name": p.name, "value": v, "restart_required": p.restart, "readonly": p.readonly,
			"value_range": p.valueRange, "type": p.typ, "description": p.desc,
		})
	}
	return out
}

// validateValues checks user-set values; unknown and read-only names are returned as ignored.
func validateValues(e *engine, values map[string]string) (ignored []string, err *apiError) {
	for _, k := range slices.Sorted(maps.Keys(values)) {
		p := findParam(e, k)
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
		_, err = validateValues(e, values)
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
		_, err = validateValues(c.engine, values)
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

// instanceValues are the values an instance runs with: its template's, then its own changes.
func (s *Sim) instanceValues(in *instance) []map[string]string {
	var out []map[string]string
	if c := s.configurations[in.configurationID]; c != nil {
		out = append(out, c.values)
	}
	return append(out, in.configValues)
}

// handleGetInstanceConfiguration serves GET /instances/{id}/configurations: the bare object, with
// empty id and name.
func (s *Sim) handleGetInstanceConfiguration(w http.ResponseWriter, r *http.Request) {
	s.lockAt()
	defer s.mu.Unlock()
	in := s.lookupInstance(w, r.PathValue("id"))
	if in == nil {
		return
	}
	ts := in.ordered.UTC().Format(configTimeLayout)
	writeJSON(w, http.StatusOK, map[string]any{
		"id": "", "name": "", "datastore_version_name": in.version, "datastore_name": datastoreName(in.engine),
		"created": ts, "updated": ts, "configuration_parameters": paramsJSON(in.engine, s.instanceValues(in)...),
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
	now := s.lockAt()
	defer s.mu.Unlock()
	in := s.lookupInstance(w, r.PathValue("id"))
	if in == nil {
		return
	}
	if err := in.checkIdle(); err != nil {
		writeError(w, svcRDS, err)
		return
	}
	ignored, err := validateValues(in.engine, values)
	if err != nil {
		writeError(w, svcRDS, err)
		return
	}
	restart := false
	for k, v := range values {
		if slices.Contains(ignored, k) {
			continue
		}
		in.configValues[k] = v
		restart = restart || findParam(in.engine, k).restart
	}
	in.restartPending = in.restartPending || restart
	j := s.newJob("Modify"+in.engine.jobName+"Parameters", in, now, time.Second)
	writeJSON(w, http.StatusOK, map[string]any{"restart_required": restart, "job_id": j.id, "ignored_params": nonNil(ignored)})
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
					if p := findParam(in.engine, k); p != nil && p.restart {
						restart = true
					}
				}
				in.configurationID, in.configValues = c.id, map[string]string{}
				in.restartPending = in.restartPending || restart
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
