package reconcile

import (
	"context"
	"fmt"
	"time"
)

// head is the part of a plan every step shares, and all the loop reads of it: the outcomes the
// step tells, the reads it needs before it can decide, its one action, and whether the call stops
// after it. A step's own plan (restorePlan, day2Plan, ...) holds the rest: the status fields it
// writes, which its render copies into the answer.
type head struct {
	// tells are the step's outcomes (and a condition it drops), in order.
	tells []finding
	// needs are the reads to make before the step can decide: the loop makes them (observe) and
	// plans again.
	needs []need
	// act is the step's one change: the loop makes it (act) and plans again on OTC's answer.
	act *action
	// sql is the step's action outside the cloud (databases): the loop makes it (actSQL) and plans
	// again on its answer, on the shared view too; it is not the call's change.
	sql *sqlAction
	// stop holds the later steps of the call.
	stop bool
	// err is a failed read, or OTC's answer to the action, sorted like any cloud error (cloudError);
	// then are outcomes told after err's (create: Ready says OTC refused it).
	err  error
	then []finding
	logs []logLine
	// ask asks to be called again as soon as the class says; within, within that long (if positive).
	ask    *class
	within time.Duration
}

// step is one step of a sync call as the loop runs it: plan is a pure function of what the step
// holds (its input, what was read, OTC's answer); saw and answered add to it; render writes the last
// plan's status fields and children into the answer. No step holds a cloud client, and render gets
// only the answer.
type step interface {
	plan() head
	saw(n need, s seen)
	answered(res acted, err error)
	render(a *answer)
}

// maxReadRounds bounds the rounds of reads one step asks for. Finalize asks for the most: the
// instance (by id, or by its two names), the object's own by its two names, its instanceid and
// the listing by tags (searchOwn), with a namespace login the same four in the controller's
// project, then the backup list: at most 2+4+4 rounds, or 2+4+1 when the instance is found.
const maxReadRounds = 10

// runStep runs one step: plan; read what the plan needs and plan again; make its one action and
// plan again on OTC's answer; render the last plan. It reports whether the call stops.
func (c *call) runStep(ctx context.Context, s step) (stop bool, err error) {
	h := s.plan()
	for round := 0; len(h.needs) > 0; round++ {
		if round == maxReadRounds {
			return true, fmt.Errorf("sync: a step asked for reads %d times", round) // a programming error
		}
		for _, n := range h.needs {
			s.saw(n, c.observe(ctx, n))
		}
		h = s.plan()
	}
	if h.act != nil {
		if c.viewed {
			// NOTE: the step decided on the shared view, which may predate a change made
			// elsewhere: no change is made on it. Sync makes the call again on a fresh read of the
			// instance by id, which decides anew (observe_view.go).
			return true, errViewStale
		}
		s.answered(c.act(ctx, *h.act))
		h = s.plan() // OTC's answer is the step's: a second action is never made
	} else if h.sql != nil {
		res, err := c.actSQL(ctx, *h.sql)
		if err != nil {
			return true, err // no password could be generated: the call fails
		}
		s.answered(res, nil)
		h = s.plan() // the answer is the step's: a second action is never made
	}
	s.render(&c.answer)
	logAll(ctx, c.log, h.logs)
	c.out.record(h)
	if h.err != nil {
		if err := c.cloudError(h.err); err != nil {
			return true, err
		}
		c.out.record(head{tells: h.then})
		return true, nil
	}
	return h.stop, nil
}
