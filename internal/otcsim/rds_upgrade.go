package otcsim

import (
	"net/http"
	"slices"
	"time"
)

// Major version upgrade (PostgreSQL only): POST /instances/{id}/major-version/upgrade, with
// GET …/major-version/available-version and POST …/major-version/inspection (the pre-check).
// All three answer 200 (the SDK's upgrade package expects exactly 200).

// majorTargets are the versions an instance can be upgraded to: the engine's newer versions that its
// flavor also offers.
func majorTargets(in *instance) []string {
	var out []string
	newer := false
	for _, v := range in.engine.versions {
		if newer && slices.Contains(in.flavor.versions, v.name) {
			out = append(out, v.name)
		}
		if v.name == in.version {
			newer = true
		}
	}
	return out
}

// checkMajorUpgrade refuses engines other than PostgreSQL and unknown targets.
func checkMajorUpgrade(in *instance, target string) *apiError {
	if in.engine.short != "pg" {
		return errorf(http.StatusBadRequest, "DBS.200086", "Major version upgrades are supported only for PostgreSQL.")
	}
	if target != "" && !slices.Contains(majorTargets(in), target) {
		return errParam("version %s is not a major version %s %s can be upgraded to", target, in.engine.name, in.version)
	}
	return nil
}

// handleAvailableMajorVersions serves GET /instances/{id}/major-version/available-version.
func (s *Sim) handleAvailableMajorVersions(w http.ResponseWriter, r *http.Request) {
	in, _ := s.lockInstance(w, r, nil)
	if in == nil {
		return
	}
	defer s.mu.Unlock()
	if err := checkMajorUpgrade(in, ""); err != nil {
		writeError(w, svcRDS, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"available_versions": nonNil(majorTargets(in))})
}

// handleMajorVersionInspection serves POST /instances/{id}/major-version/inspection: the pre-check
// always passes at once and answers a report id. It changes nothing.
func (s *Sim) handleMajorVersionInspection(w http.ResponseWriter, r *http.Request) {
	var req struct {
		TargetVersion string `json:"target_version"`
	}
	in, _ := s.lockInstance(w, r, &req)
	if in == nil {
		return
	}
	defer s.mu.Unlock()
	if req.TargetVersion == "" {
		writeError(w, svcRDS, errParam("target_version is required"))
		return
	}
	if err := checkMajorUpgrade(in, req.TargetVersion); err != nil {
		writeError(w, svcRDS, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"report_id": s.randUUID()})
}

// handleUpgradeMajorVersion serves POST /instances/{id}/major-version/upgrade (200, {"job_id"}).
// NOTE: the status OTC shows during a major upgrade is not documented; the simulator shows
// MODIFYING for Durations.Upgrade, then the instance runs the target version's first minor release.
// The pre-check is not required first.
func (s *Sim) handleUpgradeMajorVersion(w http.ResponseWriter, r *http.Request) {
	var req struct {
		TargetVersion            string `json:"target_version"`
		IsChangePrivateIP        bool   `json:"is_change_private_ip"`
		StatisticsCollectionMode string `json:"statistics_collection_mode"`
	}
	in, now := s.lockInstance(w, r, &req)
	if in == nil {
		return
	}
	defer s.mu.Unlock()
	if req.TargetVersion == "" {
		writeError(w, svcRDS, errParam("target_version is required"))
		return
	}
	if err := in.checkIdle(); err != nil {
		writeError(w, svcRDS, err)
		return
	}
	if err := checkMajorUpgrade(in, req.TargetVersion); err != nil {
		writeError(w, svcRDS, err)
		return
	}
	target := in.engine.version(req.TargetVersion)
	d := s.opts.Durations.Upgrade
	j := s.newJob("Upgrade"+in.engine.jobName+"MajorVersion", in, now, d)
	j.entities = map[string]any{"source_version": in.version, "target_version": target.name}
	in.startOp(opKindUpgrade, StatusModifying, now, d, j, func(in *instance, _ time.Time) {
		in.version = target.name
		in.completeVersion = target.complete
		in.status = StatusActive
	})
	writeJSON(w, http.StatusOK, map[string]any{"job_id": j.id})
}
