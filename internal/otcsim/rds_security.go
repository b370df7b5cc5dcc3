package otcsim

import (
	"net/http"
	"regexp"
	"strconv"
	"time"
)

// opKindSecurityGroup and opKindSSL are the security group change and the SSL switch.
const (
	opKindSecurityGroup = "security-group"
	opKindSSL           = "ssl"
)

// handleSetSecurityGroup serves PUT /instances/{id}/security-group (SDK: security.SetSecurityGroup):
// 200 with {"workflowId"}, as for the port. The instance stays ACTIVE while the job runs, but takes
// no other change; the listing shows the new group once the job completes
// (DOC:rds/api_v3_recommended/database_security/changing_a_security_group).
func (s *Sim) handleSetSecurityGroup(w http.ResponseWriter, r *http.Request) {
	var req struct {
		SecurityGroupID string `json:"security_group_id"`
	}
	in, now := s.lockInstance(w, r, &req)
	if in == nil {
		return
	}
	defer s.mu.Unlock()
	if req.SecurityGroupID == "" {
		writeError(w, svcRDS, errParam("security_group_id is required"))
		return
	}
	if s.findSecGroup(req.SecurityGroupID) == nil {
		writeError(w, svcRDS, errorf(http.StatusNotFound, "DBS.200050", "The security group does not exist."))
		return
	}
	if err := in.checkIdle(); err != nil {
		writeError(w, svcRDS, err)
		return
	}
	group := req.SecurityGroupID
	d := s.opts.Durations.Restart
	j := s.newJob("Modify"+in.engine.jobName+"SecurityGroup", in, now, d)
	j.entities = map[string]any{"old_security_group_id": in.secGroupID, "new_security_group_id": group}
	// NOTE: no transitional status: OTC lists the instance ACTIVE while the group changes.
	in.startOp(opKindSecurityGroup, "", now, d, j, func(in *instance, _ time.Time) { in.secGroupID = group })
	writeJSON(w, http.StatusOK, map[string]any{"workflowId": j.id})
}

// handleSwitchSSL serves PUT /instances/{id}/ssl (SDK: security.SwitchSsl): MySQL only. OTC's API
// reference answers 200 with {"job_id"} (the SDK v0.9.8 reads no body). The simulator restarts the
// database to load the certificate (REBOOTING), the slower of what OTC may do; the listing's
// enable_ssl shows the new setting once it is done
// (DOC:rds/api_v3_recommended/database_security/configuring_ssl).
func (s *Sim) handleSwitchSSL(w http.ResponseWriter, r *http.Request) {
	var req struct {
		SSLOption *bool `json:"ssl_option"`
	}
	in, now := s.lockInstance(w, r, &req)
	if in == nil {
		return
	}
	defer s.mu.Unlock()
	if req.SSLOption == nil {
		writeError(w, svcRDS, errParam("ssl_option is required"))
		return
	}
	if in.engine.short != "mysql" {
		writeError(w, svcRDS, errorf(http.StatusBadRequest, "DBS.200080", "This API is supported only for RDS for MySQL instances."))
		return
	}
	if err := in.checkIdle(); err != nil {
		writeError(w, svcRDS, err)
		return
	}
	on := *req.SSLOption
	d := s.opts.Durations.Restart
	j := s.newJob("Switch"+in.engine.jobName+"SSL", in, now, d)
	j.entities = map[string]any{"ssl_option": on}
	in.startOp(opKindSSL, StatusRebooting, now, d, j, func(in *instance, _ time.Time) {
		in.ssl = on
		in.status = StatusActive
	})
	writeJSON(w, http.StatusOK, map[string]any{"job_id": j.id})
}

var (
	// timeZoneRe is OTC's time_zone for MySQL and PostgreSQL: UTC, or UTC±hh:mm.
	timeZoneRe = regexp.MustCompile(`^UTC([+-](0[0-9]|1[0-4]):(00|30|45))?$`)
	// kmsKeyRe is a KMS key id.
	kmsKeyRe = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

// createOnlyOptions checks the create options OTC sets once, time_zone, unchangeable_param and
// disk_encryption_id, and returns the parameter values they give the instance.
func createOnlyOptions(req *createRequest, e *engine) (map[string]string, *apiError) {
	values := map[string]string{}
	if tz := req.TimeZone; tz != "" {
		if e.short == "mssql" || !timeZoneRe.MatchString(tz) {
			return nil, errParam("time_zone %q is not a time zone for %s", tz, e.name)
		}
		if e.short == "mysql" {
			values["time_zone"] = tz[3:] // NOTE: MySQL shows the offset alone, e.g. +08:00
		}
	}
	if p := req.UnchangeableParam; p != nil {
		if e.short != "mysql" {
			return nil, errParam("unchangeable_param is for MySQL only")
		}
		if n, err := strconv.Atoi(p.LowerCaseTableNames); err != nil || (n != 0 && n != 1) {
			return nil, errParam("lower_case_table_names must be \"0\" or \"1\"")
		}
		values["lower_case_table_names"] = p.LowerCaseTableNames
	}
	if id := req.DiskEncryptionID; id != "" && !kmsKeyRe.MatchString(id) {
		return nil, errorf(http.StatusBadRequest, "DBS.200062", "The KMS key %s does not exist or is not enabled.", id)
	}
	return values, nil
}
