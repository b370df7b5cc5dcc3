package testutil

import (
	"testing"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
)

// Projects of TwoProjects: the controller's own (index 0) and two teams' (1 and 2), each with its
// own IAM user.
const (
	ProjectController = 0
	ProjectTeamA      = 1
	ProjectTeamB      = 2
)

// TwoProjects starts one simulated OTC serving three projects behind one identity endpoint: the
// controller's own (the default project and user) and two teams' projects, each with its own user
// and password. clock may be nil (real time).
func TwoProjects(t testing.TB, clock otcsim.Clock) *otcsim.MultiServer {
	t.Helper()
	opts := func(seed int64, project, name, user, password string) otcsim.Options {
		return otcsim.Options{Seed: seed, ProjectID: project, ProjectName: name, Username: user, Password: password, Clock: clock}
	}
	srv := otcsim.NewMultiServer(
		opts(1, "", "", "", ""),
		opts(2, "a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a1", "eu-de_team-a", "team-a-user", "Team-A-s3cret-pw"),
		opts(3, "b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b2", "eu-de_team-b", "team-b-user", "Team-B-s3cret-pw"),
	)
	t.Cleanup(srv.Close)
	return srv
}
