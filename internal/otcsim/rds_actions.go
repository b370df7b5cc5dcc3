package otcsim

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// actionRequest is the body of POST /instances/{id}/action: exactly one of its members is set.
type actionRequest struct {
	ResizeFlavor *struct {
		SpecCode string `json:"spec_code"`
	} `json:"resize_flavor"`
	EnlargeVolume *struct {
		Size flexInt `json:"size"`
	} `json:"enlarge_volume"`
	Restart    *struct{} `json:"restart"`
	SingleToHA *struct {
		AzCodeNewNode string `json:"az_code_new_node"`
		Password      string `json:"password"`
	} `json:"single_to_ha"`
	ChangeVolume *struct {
		VolumeCode string `json:"volume_code"`
	} `json:"change_volume"`
}

// actionOps maps the body key of POST /instances/{id}/action to an operation name.
var actionOps = map[string]string{
	"resize_flavor":  OpResize,
	"enlarge_volume": OpEnlargeVolume,
	"restart":        OpRestart,
	"single_to_ha":   OpSingleToHa,
	"change_volume":  OpChangeStorageType,
}

// bodyKeys returns the top-level keys of a JSON request body and leaves the body readable.
func bodyKeys(r *http.Request) map[string]json.RawMessage {
	data, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	r.Body = io.NopCloser(bytes.NewReader(data))
	var keys map[string]json.RawMessage
	if err != nil || json.Unmarshal(data, &keys) != nil {
		return nil
	}
	return keys
}

// actionOp names the operation of POST /instances/{id}/action from its body.
func actionOp(r *http.Request) string {
	keys := bodyKeys(r)
	if len(keys) == 1 {
		for k := range keys {
			if op, ok := actionOps[k]; ok {
				return op
			}
		}
	}
	return OpInstanceAction
}

// createOp names the operation of POST /instances: a restore_point makes it RestoreToNew, a
// replica_of_id CreateReplica.
func createOp(r *http.Request) string {
	keys := bodyKeys(r)
	if _, ok := keys["replica_of_id"]; ok {
		return OpCreateReplica
	}
	if _, ok := keys["restore_point"]; ok {
		return OpRestoreToNew
	}
	return OpCreateInstance
}

// handleInstanceAction serves POST /rds/v3/{project}/instances/{id}/action: resize, enlarge volume,
// restart, single-to-HA and the storage type change (rds_settings.go). All answer 202 with a job_id.
func (s *Sim) handleInstanceAction(w http.ResponseWriter, r *http.Request) {
	var req actionRequest
	if e := decodeBody(r, &req); e != nil {
		writeError(w, svcRDS, e)
		return
	}
	set := 0
	for _, p := range []bool{req.ResizeFlavor != nil, req.EnlargeVolume != nil, req.Restart != nil, req.SingleToHA != nil, req.ChangeVolume != nil} {
		if p {
			set++
		}
	}
	if set != 1 {
		writeError(w, svcRDS, errParam("exactly one of resize_flavor, enlarge_volume, restart, single_to_ha and change_volume is required"))
		return
	}
	in, now := s.lockInstance(w, r, nil)
	if in == nil {
		return
	}
	defer s.mu.Unlock()
	var (
		j   *job
		err *apiError
	)
	switch {
	case req.ResizeFlavor != nil:
		j, err = s.resize(in, req.ResizeFlavor.SpecCode, now)
	case req.EnlargeVolume != nil:
		j, err = s.enlarge(in, req.EnlargeVolume.Size.Value, now, "Enlarge"+in.engine.jobName+"Volume")
	case req.Restart != nil:
		j, err = s.restart(in, now)
	case req.ChangeVolume != nil:
		j, err = s.changeStorageType(in, req.ChangeVolume.VolumeCode, now)
	default:
		j, err = s.singleToHA(in, req.SingleToHA.AzCodeNewNode, req.SingleToHA.Password, now)
	}
	if err != nil {
		writeError(w, svcRDS, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"job_id": j.id})
}

// resize changes the flavor: MODIFYING, then the new flavor (cpu and mem follow).
func (s *Sim) resize(in *instance, spec string, now time.Time) (*job, *apiError) {
	if spec == "" {
		return nil, errParam("resize_flavor.spec_code is required")
	}
	if err := in.checkIdle(); err != nil {
		return nil, err
	}
	f := findFlavor(spec)
	wantMode := modeSingle
	switch in.typ {
	case TypeHa:
		wantMode = modeHA
	case TypeReplica:
		wantMode = modeReplica
	}
	if f == nil || f.engine != in.engine || !slices.Contains(f.versions, in.version) {
		return nil, errorf(http.StatusBadRequest, "DBS.200053", "The specifications %s do not exist for %s %s.", spec, in.engine.name, in.version)
	}
	if f.mode != wantMode {
		// NOTE: resize stays within the instance type: single <-> .ha is SingleToHa, not a resize.
		return nil, errorf(http.StatusBadRequest, "DBS.200053", "The specifications %s are not for %s instances.", spec, in.typ)
	}
	if f == in.flavor {
		return nil, errParam("the new specifications are the current ones")
	}
	if err := checkFlavorAZs(f, in.azs); err != nil {
		return nil, err
	}
	d := s.opts.Durations.Resize
	j := s.newJob("Resize"+in.engine.jobName+"Flavor", in, now, d)
	j.entities = map[string]any{"old_flavor": in.flavor.spec, "new_flavor": f.spec}
	in.startOp(opKindResize, StatusModifying, now, d, j, func(in *instance, _ time.Time) {
		in.flavor = f
		in.status = StatusActive
	})
	return j, nil
}

// enlarge grows the volume to size (the new total): MODIFYING, then the new size.
func (s *Sim) enlarge(in *instance, size int, now time.Time, jobName string) (*job, *apiError) {
	if in.op != nil || (in.status != StatusActive && in.status != StatusStorageFull) {
		return nil, errInstanceBusy()
	}
	switch {
	case size < in.volumeSize+10:
		return nil, errorf(http.StatusBadRequest, "DBS.200306",
			"The new storage size must be at least 10 GB larger than the original size (%d GB).", in.volumeSize)
	case size%10 != 0:
		return nil, errorf(http.StatusBadRequest, "DBS.200027", "The storage size must be a multiple of 10.")
	case size > 4000:
		return nil, errorf(http.StatusBadRequest, "DBS.200023", "The storage size must be between 40 and 4000 GB.")
	}
	d := s.opts.Durations.Enlarge
	j := s.newJob(jobName, in, now, d)
	j.entities = map[string]any{"volume": map[string]any{
		"type": in.volumeType, "original_size": strconv.Itoa(in.volumeSize), "target_size": strconv.Itoa(size),
	}}
	old := in.volumeSize
	in.startOp(opKindEnlarge, StatusModifying, now, d, j, func(in *instance, _ time.Time) {
		in.volumeSize = size
		in.status = StatusActive
		// The data did not grow with the disk: scale the disk usage an override set.
		k := metricKey{instanceID: in.id, metric: metricDiskUtil}
		if v, ok := s.metrics[k]; ok {
			s.metrics[k] = v * float64(old) / float64(size)
		}
	})
	return j, nil
}

// restart reboots: REBOOTING, then ACTIVE; pending parameter changes take effect.
func (s *Sim) restart(in *instance, now time.Time) (*job, *apiError) {
	if err := in.checkIdle(); err != nil {
		return nil, err
	}
	d := s.opts.Durations.Restart
	j := s.newJob("Restart"+in.engine.jobName+"Instance", in, now, d)
	in.startOp(opKindRestart, StatusRebooting, now, d, j, func(in *instance, at time.Time) {
		in.status = StatusActive
		clear(in.pendingRestart)
		in.logError(at, "NOTE", "Shutdown complete; the instance was restarted.")
	})
	return j, nil
}

// singleToHA adds a standby: MODIFYING INSTANCE TYPE, then type Ha with the .ha flavor.
func (s *Sim) singleToHA(in *instance, az, password string, now time.Time) (*job, *apiError) {
	if in.typ != TypeSingle {
		return nil, errorf(http.StatusBadRequest, "DBS.200086", "Only single DB instances can be changed to primary/standby.")
	}
	if err := in.checkIdle(); err != nil {
		return nil, err
	}
	if !slices.Contains(availabilityZones, az) {
		return nil, errorf(http.StatusBadRequest, "DBS.200025", "Invalid AZ %q.", az)
	}
	if storageAZStatus(in.volumeType, az) != azNormal {
		return nil, errorf(http.StatusBadRequest, "DBS.200026", "The storage type %s is not offered in %s.", in.volumeType, az)
	}
	if in.engine.short == "mssql" && !validPassword(in.engine, password) {
		return nil, errorf(http.StatusBadRequest, "DBS.200052", "A valid password is required for Microsoft SQL Server.")
	}
	haFlavor := findFlavor(in.flavor.spec + ".ha")
	if haFlavor == nil {
		return nil, errorf(http.StatusBadRequest, "DBS.200053", "There are no primary/standby specifications for %s.", in.flavor.spec)
	}
	if err := checkFlavorAZs(haFlavor, append(slices.Clone(in.azs), az)); err != nil {
		return nil, err
	}
	d := s.opts.Durations.SingleToHA
	j := s.newJob("Single2Ha"+in.engine.jobName+"Instance", in, now, d)
	in.startOp(opKindSingleToHA, StatusModifyingInstanceType, now, d, j, func(in *instance, _ time.Time) {
		in.typ = TypeHa
		in.flavor = haFlavor
		in.azs = append(in.azs, az)
		in.replicationMode = in.engine.replication[0]
		in.nodes = append(in.nodes, &node{id: s.randHex(32) + "no01", name: in.name + "_node1", role: "slave", az: az})
		in.status = StatusActive
	})
	return j, nil
}

// handleUpgradeDbVersion serves the minor version upgrade on both paths:
// POST /instances/{id}/action/db-upgrade {"delay":bool} (what the SDK sends) and
// POST /instances/{id}/db-upgrade {"is_delayed":bool} (what the docs describe). Both answer 202.
// NOTE: a delayed upgrade is carried out at once; the simulator has no maintenance window.
func (s *Sim) handleUpgradeDbVersion(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Delay     *bool `json:"delay"`
		IsDelayed *bool `json:"is_delayed"`
	}
	in, now := s.lockInstance(w, r, &req)
	if in == nil {
		return
	}
	defer s.mu.Unlock()
	if err := in.checkIdle(); err != nil {
		writeError(w, svcRDS, err)
		return
	}
	latest := in.engine.version(in.version).latest
	if in.completeVersion == latest {
		writeError(w, svcRDS, errorf(http.StatusBadRequest, "DBS.200086", "The DB instance already runs the latest minor version %s.", latest))
		return
	}
	d := s.opts.Durations.Upgrade
	j := s.newJob("Upgrade"+in.engine.jobName+"MinorVersion", in, now, d)
	j.entities = map[string]any{"source_version": in.completeVersion, "target_version": latest}
	in.startOp(opKindUpgrade, StatusModifying, now, d, j, func(in *instance, _ time.Time) {
		in.completeVersion = latest
		in.status = StatusActive
	})
	writeJSON(w, http.StatusAccepted, map[string]any{"job_id": j.id})
}

// handleStartup serves POST /instances/{id}/action/startup (200): SHUTDOWN → ACTIVE. The status
// stays SHUTDOWN while the job runs ("Only instances in Stopped state can be started").
func (s *Sim) handleStartup(w http.ResponseWriter, r *http.Request) {
	s.startStop(w, r, StatusShutdown, StatusActive, "Startup")
}

// handleShutdown serves POST /instances/{id}/action/shutdown (200): ACTIVE → SHUTDOWN. The status
// stays ACTIVE while the job runs; OTC starts it again after seven days (autoStart).
func (s *Sim) handleShutdown(w http.ResponseWriter, r *http.Request) {
	s.startStop(w, r, StatusActive, StatusShutdown, "Shutdown")
}

func (s *Sim) startStop(w http.ResponseWriter, r *http.Request, from, to, verb string) {
	in, now := s.lockInstance(w, r, nil)
	if in == nil {
		return
	}
	defer s.mu.Unlock()
	if in.engine.short == "mssql" {
		// NOTE: "This API is supported for MySQL and PostgreSQL DB engines" (DOC: stopping and
		// starting an instance).
		writeError(w, svcRDS, errParam("%s instances cannot be stopped or started", in.engine.name))
		return
	}
	if in.typ == TypeReplica { // rds_replicas.go: a replica stops and starts with its primary
		writeError(w, svcRDS, errParam("a read replica is stopped and started with its primary"))
		return
	}
	if in.op != nil || in.replicaBuilding() {
		writeError(w, svcRDS, errInstanceBusy())
		return
	}
	if in.status != from {
		writeError(w, svcRDS, errorf(http.StatusBadRequest, "DBS.200086", "This operation is not allowed by the DB instance status."))
		return
	}
	d := s.opts.Durations.Restart
	j := s.newJob(verb+in.engine.jobName+"Instance", in, now, d)
	in.startOp(opKindStartStop, "", now, d, j, func(in *instance, at time.Time) {
		in.status, in.stoppedAt = to, time.Time{}
		if to == StatusShutdown {
			// the database is down: the start boots it with the values set, as a restart does
			in.stoppedAt = at
			clear(in.pendingRestart)
		}
		in.replicasFollow(to)
	})
	writeJSON(w, http.StatusOK, map[string]any{"job_id": j.id})
}

// handleUpdatePort serves PUT /instances/{id}/port (200, {"workflowId"}: not job_id).
func (s *Sim) handleUpdatePort(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Port flexInt `json:"port"`
	}
	in, now := s.lockInstance(w, r, &req)
	if in == nil {
		return
	}
	defer s.mu.Unlock()
	if !req.Port.Set || !validPort(in.engine, req.Port.Value) {
		writeError(w, svcRDS, errParam("port %d is not allowed for %s", req.Port.Value, in.engine.name))
		return
	}
	if err := in.checkIdle(); err != nil {
		writeError(w, svcRDS, err)
		return
	}
	port := req.Port.Value
	d := s.opts.Durations.Restart
	j := s.newJob("Modify"+in.engine.jobName+"Port", in, now, d)
	in.startOp(opKindPort, StatusModifyingPort, now, d, j, func(in *instance, _ time.Time) {
		in.port = port
		in.status = StatusActive
	})
	writeJSON(w, http.StatusOK, map[string]any{"workflowId": j.id})
}

// Autoscaling limits (DOC: configuring an autoscaling policy).
var triggerThresholds = []int{10, 15, 20}

// handleGetAutoScaling serves GET /instances/{id}/disk-auto-expansion.
func (s *Sim) handleGetAutoScaling(w http.ResponseWriter, r *http.Request) {
	in, _ := s.lockInstance(w, r, nil)
	if in == nil {
		return
	}
	defer s.mu.Unlock()
	p := in.autoscaling
	if !p.enabled {
		writeJSON(w, http.StatusOK, map[string]any{"switch_option": false})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"switch_option": true, "limit_size": p.limitSize, "trigger_threshold": p.triggerThreshold,
	})
}

// handleManageAutoScaling serves PUT /instances/{id}/disk-auto-expansion (200, empty body).
func (s *Sim) handleManageAutoScaling(w http.ResponseWriter, r *http.Request) {
	var req struct {
		SwitchOption     *bool `json:"switch_option"`
		LimitSize        *int  `json:"limit_size"`
		TriggerThreshold *int  `json:"trigger_threshold"`
	}
	in, _ := s.lockInstance(w, r, &req)
	if in == nil {
		return
	}
	defer s.mu.Unlock()
	if req.SwitchOption == nil {
		writeError(w, svcRDS, errParam("switch_option is required"))
		return
	}
	if in.op != nil && slices.Contains([]string{opKindCreate, opKindDelete, opKindResize, opKindUpgrade, opKindRestart}, in.op.kind) {
		writeError(w, svcRDS, errInstanceBusy())
		return
	}
	if !*req.SwitchOption {
		in.autoscaling.enabled = false
		writeEmpty(w, http.StatusOK)
		return
	}
	if in.volumeType != "CLOUDSSD" && in.volumeType != "ESSD" {
		writeError(w, svcRDS, errorf(http.StatusBadRequest, "DBS.200026", "Storage autoscaling needs CLOUDSSD or ESSD storage."))
		return
	}
	limit, threshold := 4000, 10
	if req.LimitSize != nil {
		limit = *req.LimitSize
	}
	if req.TriggerThreshold != nil {
		threshold = *req.TriggerThreshold
	}
	if limit < 40 || limit > 4000 || limit < in.volumeSize {
		writeError(w, svcRDS, errParam("limit_size must be between 40 and 4000 GB and not below the current %d GB", in.volumeSize))
		return
	}
	if !slices.Contains(triggerThresholds, threshold) {
		writeError(w, svcRDS, errParam("trigger_threshold must be 10, 15 or 20"))
		return
	}
	in.autoscaling = autoscalingPolicy{enabled: true, limitSize: limit, triggerThreshold: threshold}
	writeEmpty(w, http.StatusOK)
}

// autoscale grows the storage of an instance whose disk usage (rds039_disk_util, set with
// SetMetric) leaves less free space than the trigger threshold: by 15% of the allocated size, in
// steps of 10 GB, up to the limit.
func (s *Sim) autoscale(in *instance, now time.Time) {
	p := in.autoscaling
	util, ok := s.metrics[metricKey{instanceID: in.id, metric: metricDiskUtil}]
	if !p.enabled || !ok || in.op != nil || in.volumeSize >= p.limitSize ||
		(in.status != StatusActive && in.status != StatusStorageFull) ||
		100-util >= float64(p.triggerThreshold) {
		return
	}
	grow := (in.volumeSize*15/100 + 9) / 10 * 10
	size := min(max(in.volumeSize+grow, in.volumeSize+10), p.limitSize/10*10)
	if _, err := s.enlarge(in, size, now, "AutoEnlarge"+in.engine.jobName+"Volume"); err != nil {
		s.log.Warn("otcsim autoscale refused", "instance", in.id, "err", err.Error())
	}
}

// autoscaled: an instance with an autoscaling policy, which autoscale may grow.
func autoscaled(in *instance) bool { return in.autoscaling.enabled }
