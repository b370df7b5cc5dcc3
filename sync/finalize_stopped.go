package reconcile

import (
	"errors"
	"log/slog"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// startBeforeDeletion starts a stopped (SHUTDOWN) instance that must run before it goes: OTC
// backs up only a running instance, and "a stopped PostgreSQL DB instance cannot be deleted"
// (DOC:rds/api_v3_recommended/db_instance_management/stopping_an_instance). A stopped MySQL
// instance deleted without a final backup is deleted as it is. It reports true with the plan to
// answer while the start is sent or runs.
func startBeforeDeletion(in finalizeInput, p finalizePlan) (finalizePlan, bool) {
	inst := in.inst
	mustRun := !in.spec.Skipfinalbackup || inst.Engine == v1alpha1.EnginePostgreSQL
	if inst.Status != cloud.StatusShutdown || !mustRun || !canStop(inst.Engine) {
		return p, false
	}
	if op := p.operation; op != nil && op.Type == OpStart {
		// NOTE: OTC lists the instance SHUTDOWN while it starts; its job tells a start that runs
		// from one that ended without starting it, which is sent again.
		switch {
		case op.JobID == "":
		case !in.jobRead:
			return finalizePlan{needJob: op.JobID}, true
		case in.jobErr != nil && !errors.Is(in.jobErr, cloud.ErrNotFound):
			p.failed = in.jobErr
			return p, true
		case in.job == nil || in.job.Status == cloud.JobRunning:
			return deleting(p, "Waiting for the stopped instance to start before it is deleted."), true
		}
		p.operation = nil
	}
	if in.answer == nil {
		return finalizePlan{act: &action{kind: actStart, instance: inst.ID}}, true
	}
	switch err := in.answer.err; {
	case errors.Is(err, cloud.ErrBusy):
		return deleting(p, "Waiting to start the stopped instance before it is deleted."), true
	case err != nil:
		p.failed = err
		return p, true
	}
	p.events = append(p.events, logLine{level: slog.LevelInfo, msg: "starting stopped instance before deletion", args: []any{"instance", inst.ID, "job", in.answer.jobID}})
	p.operation = &v1alpha1.Operation{Type: OpStart, JobID: in.answer.jobID, Generation: in.generation, Target: cloud.StatusActive}
	return deleting(p, "Starting the stopped instance before it is deleted."), true
}
