package otcsim

import (
	"context"
	"io"
	"net/http"
	"strings"
	"time"
)

// route is one API endpoint.
type route struct {
	pattern string // net/http pattern; {project} is checked against the credentials
	op      string
	svc     service
	auth    bool // the middleware checks the token or AK/SK
	handler http.HandlerFunc
	// opOf, when set, names the operation from the request (one path serves several operations).
	opOf func(r *http.Request) string
}

// api declares an authenticated route.
func api(pattern, op string, svc service, h http.HandlerFunc) route {
	return route{pattern: pattern, op: op, svc: svc, auth: true, handler: h}
}

// public declares a route that checks credentials itself (or needs none).
func public(pattern, op string, h http.HandlerFunc) route {
	return route{pattern: pattern, op: op, svc: svcIAM, handler: h}
}

// apiRoutes lists every simulated endpoint. Paths follow the catalog (see catalog in iam.go).
func (s *Sim) apiRoutes() []route {
	const rds = "/rds/v3/{project}"
	const inst = rds + "/instances/{id}"
	const ces = "/ces/V1.0/{project}"
	action := api("POST "+inst+"/action", OpInstanceAction, svcRDS, s.handleInstanceAction)
	action.opOf = actionOp
	create := api("POST "+rds+"/instances", OpCreateInstance, svcRDS, s.handleCreateInstance)
	create.opOf = createOp
	return []route{
		// IAM
		public("GET /{$}", OpGetVersions, s.handleVersions),
		public("GET /v3", OpGetVersions, s.handleVersions),
		public("GET /v3/{$}", OpGetVersions, s.handleVersions),
		public("POST /v3/auth/tokens", OpCreateToken, s.handleCreateToken),
		public("GET /v3/auth/tokens", OpGetToken, s.handleGetToken),
		public("HEAD /v3/auth/tokens", OpValidateToken, s.handleGetToken),
		public("DELETE /v3/auth/tokens", OpRevokeToken, s.handleRevokeToken),
		public("POST /v3.0/OS-CREDENTIAL/securitytokens", OpCreateTemporaryCredential, s.handleCreateTemporaryCredential),
		api("GET /v3/auth/catalog", OpGetCatalog, svcIAM, s.handleCatalog),
		api("GET /v3/projects", OpListProjects, svcIAM, s.handleListProjects),
		api("GET /v3/auth/projects", OpListProjects, svcIAM, s.handleListProjects),
		api("GET /v3/auth/domains", OpListDomains, svcIAM, s.handleListDomains),

		// RDS v3: instances and jobs
		api("GET "+rds+"/instances", OpListInstances, svcRDS, s.handleListInstances),
		create,
		api("DELETE "+inst, OpDeleteInstance, svcRDS, s.handleDeleteInstance),
		action,
		api("POST "+inst+"/action/db-upgrade", OpUpgradeDbVersion, svcRDS, s.handleUpgradeDbVersion),
		api("POST "+inst+"/db-upgrade", OpUpgradeDbVersion, svcRDS, s.handleUpgradeDbVersion),
		api("POST "+inst+"/major-version/upgrade", OpUpgradeMajorVersion, svcRDS, s.handleUpgradeMajorVersion),
		api("GET "+inst+"/major-version/available-version", OpGetAvailableVersion, svcRDS, s.handleAvailableMajorVersions),
		api("POST "+inst+"/major-version/inspection", OpMajorVersionPreCheck, svcRDS, s.handleMajorVersionInspection),
		api("POST "+inst+"/action/startup", OpStartupInstance, svcRDS, s.handleStartup),
		api("POST "+inst+"/action/shutdown", OpStopInstance, svcRDS, s.handleShutdown),
		api("GET "+inst+"/disk-auto-expansion", OpGetAutoScaling, svcRDS, s.handleGetAutoScaling),
		api("PUT "+inst+"/disk-auto-expansion", OpManageAutoScaling, svcRDS, s.handleManageAutoScaling),
		api("PUT "+inst+"/port", OpUpdatePort, svcRDS, s.handleUpdatePort),
		api("PUT "+inst+"/security-group", OpSetSecurityGroup, svcRDS, s.handleSetSecurityGroup),
		api("PUT "+inst+"/ssl", OpSwitchSSL, svcRDS, s.handleSwitchSSL),
		api("PUT "+inst+"/failover/mode", OpChangeFailoverMode, svcRDS, s.handleChangeFailoverMode),
		api("PUT "+inst+"/ops-window", OpChangeOpsWindow, svcRDS, s.handleChangeOpsWindow),
		api("POST "+inst+"/tags/action", OpTagsAction, svcRDS, s.handleTagsAction),
		api("GET "+inst+"/tags", OpGetTags, svcRDS, s.handleGetTags),
		api("GET "+rds+"/jobs", OpGetJob, svcRDS, s.handleGetJob),

		// RDS v3: backups and restores
		api("POST "+rds+"/backups", OpCreateBackup, svcRDS, s.handleCreateBackup),
		api("GET "+rds+"/backups", OpListBackups, svcRDS, s.handleListBackups),
		api("DELETE "+rds+"/backups/{id}", OpDeleteBackup, svcRDS, s.handleDeleteBackup),
		api("GET "+inst+"/backups/policy", OpShowBackupPolicy, svcRDS, s.handleShowBackupPolicy),
		api("PUT "+inst+"/backups/policy", OpUpdateBackupPolicy, svcRDS, s.handleUpdateBackupPolicy),
		api("POST "+rds+"/instances/recovery", OpRestorePITR, svcRDS, s.handleRestorePITR),
		api("GET "+inst+"/restore-time", OpListRestoreTimes, svcRDS, s.handleListRestoreTimes),

		// RDS v3: logs
		api("GET "+inst+"/errorlog", OpListErrorLogs, svcRDS, s.handleListErrorLogs),
		api("GET "+inst+"/slowlog", OpListSlowLogs, svcRDS, s.handleListSlowLogs),

		// RDS v3: parameter templates
		api("GET "+rds+"/configurations", OpListConfigurations, svcRDS, s.handleListConfigurations),
		api("POST "+rds+"/configurations", OpCreateConfiguration, svcRDS, s.handleCreateConfiguration),
		api("GET "+rds+"/configurations/{cid}", OpGetConfiguration, svcRDS, s.handleGetConfiguration),
		api("PUT "+rds+"/configurations/{cid}", OpUpdateConfiguration, svcRDS, s.handleUpdateConfiguration),
		api("DELETE "+rds+"/configurations/{cid}", OpDeleteConfiguration, svcRDS, s.handleDeleteConfiguration),
		api("PUT "+rds+"/configurations/{cid}/apply", OpApplyConfiguration, svcRDS, s.handleApplyConfiguration),
		api("GET "+inst+"/configurations", OpGetInstanceConfig, svcRDS, s.handleGetInstanceConfiguration),
		api("PUT "+inst+"/configurations", OpUpdateInstanceCfg, svcRDS, s.handleUpdateInstanceConfiguration),

		// RDS v3: catalogue data
		api("GET "+rds+"/flavors/{database}", OpListFlavors, svcRDS, s.handleListFlavors),
		api("GET "+rds+"/datastores/{database}", OpListDatastores, svcRDS, s.handleListDatastores),
		api("GET "+rds+"/storage-type/{database}", OpListStorageTypes, svcRDS, s.handleListStorageTypes),

		// VPC v1 and Neutron
		api("GET /vpc/v1/{project}/vpcs", OpListVpcs, svcVPC, s.handleListVpcs),
		api("GET /vpc/v1/{project}/vpcs/{id}", OpGetVpc, svcVPC, s.handleGetVpc),
		api("GET /vpc/v1/{project}/subnets", OpListSubnets, svcVPC, s.handleListSubnets),
		api("GET /vpc/v1/{project}/subnets/{id}", OpGetSubnet, svcVPC, s.handleGetSubnet),
		api("GET /vpc/v2.0/security-groups", OpListSecurityGroups, svcNeutron, s.handleListSecurityGroups),
		api("GET /vpc/v2.0/security-groups/{id}", OpGetSecurityGroup, svcNeutron, s.handleGetSecurityGroup),
		api("GET /vpc/v2.0/networks", OpListNetworks, svcNeutron, s.handleListNetworks),
		api("GET /vpc/v2.0/networks/{id}", OpGetNetwork, svcNeutron, s.handleGetNetwork),
		api("GET /vpc/v2.0/subnets", OpListNeutronSubnets, svcNeutron, s.handleListNeutronSubnets),
		api("GET /vpc/v2.0/subnets/{id}", OpGetNeutronSubnet, svcNeutron, s.handleGetNeutronSubnet),
		api("GET /vpc/v2.0/routers", OpListRouters, svcNeutron, s.handleListRouters),
		api("GET /vpc/v2.0/routers/{id}", OpGetRouter, svcNeutron, s.handleGetRouter),

		// VPC v3 (the "vpc" catalog entry, which NewVpcV3 rewrites from v1 to v3)
		api("GET /vpc/v3/{project}/vpc/vpcs", OpListVpcsV3, svcVPC3, s.handleListVpcsV3),
		api("GET /vpc/v3/{project}/vpc/vpcs/{id}", OpGetVpcV3, svcVPC3, s.handleGetVpcV3),

		// Cloud Eye v1
		api("GET "+ces+"/metric-data", OpShowMetricData, svcCES, s.handleShowMetricData),
		api("POST "+ces+"/batch-query-metric-data", OpBatchListMetricData, svcCES, s.handleBatchListMetricData),
		api("POST "+ces+"/alarms", OpCreateAlarm, svcCES, s.handleCreateAlarm),
		api("GET "+ces+"/alarms", OpListAlarms, svcCES, s.handleListAlarms),
		api("GET "+ces+"/alarms/{id}", OpShowAlarm, svcCES, s.handleShowAlarm),
		api("PUT "+ces+"/alarms/{id}/action", OpUpdateAlarmAction, svcCES, s.handleUpdateAlarmAction),
		api("DELETE "+ces+"/alarms/{id}", OpDeleteAlarm, svcCES, s.handleDeleteAlarm),
	}
}

// routes builds the handler: every API route behind the middleware, the control API if enabled,
// and JSON 404s in the style of the service a path belongs to.
func (s *Sim) routes() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range s.apiRoutes() {
		mux.Handle(rt.pattern, s.middleware(rt))
	}
	if s.opts.EnableControl {
		s.controlRoutes(mux)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern == "" {
			writeError(w, serviceOf(r.URL.Path), notFoundError(serviceOf(r.URL.Path), r.Method, r.URL.Path))
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func serviceOf(path string) service {
	switch {
	case strings.HasPrefix(path, "/rds/"):
		return svcRDS
	case strings.HasPrefix(path, "/vpc/v1/"):
		return svcVPC
	case strings.HasPrefix(path, "/vpc/v3/"):
		return svcVPC3
	case strings.HasPrefix(path, "/vpc/"):
		return svcNeutron
	case strings.HasPrefix(path, "/ces/"):
		return svcCES
	case strings.HasPrefix(path, "/_sim/"):
		return svcControl
	}
	return svcIAM
}

// middleware counts the call, adds latency, injects faults and authenticates, then serves.
func (s *Sim) middleware(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op := rt.op
		if rt.opOf != nil {
			op = rt.opOf(r)
		}
		s.countCall(op)
		rec := &statusRecorder{ResponseWriter: w}
		start := time.Now()
		defer func() {
			s.log.Debug("otcsim request", "op", op, "method", r.Method, "path", r.URL.Path,
				"status", rec.status, "elapsed", time.Since(start))
		}()

		plan := s.pickFaults(op)
		if !sleep(r.Context(), s.opts.Latency+plan.delay) {
			return // the client gave up
		}
		if plan.terminal != nil {
			s.log.Info("otcsim fault", "op", op, "kind", plan.terminal.Kind.String())
			s.applyTerminal(rec, r, rt.svc, plan.terminal)
			return
		}
		if rt.auth {
			if err := bufferSignedBody(r); err != nil { // read before the lock: a body arrives at the client's pace
				writeError(rec, rt.svc, unauthorized(rt.svc, err.Error()))
				return
			}
			s.mu.Lock()
			err := s.authenticate(r, rt.svc, r.PathValue("project"), s.now())
			s.mu.Unlock()
			if err != nil {
				writeError(rec, rt.svc, err)
				return
			}
		}
		if plan.commitThenD {
			s.log.Info("otcsim fault", "op", op, "kind", FaultCommitThenDrop.String())
			dw := &discardWriter{header: http.Header{}}
			rt.handler(dw, r)
			rec.status = dw.status // logged: what the request did, though its answer is dropped
			dropConnection(w)
			return
		}
		rt.handler(rec, r)
	})
}

// sleep waits d or until ctx ends; it reports whether the full time passed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// statusRecorder remembers the status for the request log.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (for dropConnection).
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// discardWriter swallows the answer of a request whose connection is dropped afterwards.
type discardWriter struct {
	header http.Header
	status int // the status the handler answered, for the log
}

func (d *discardWriter) Header() http.Header         { return d.header }
func (d *discardWriter) Write(b []byte) (int, error) { return io.Discard.Write(b) }
func (d *discardWriter) WriteHeader(code int) {
	if d.status == 0 {
		d.status = code
	}
}
