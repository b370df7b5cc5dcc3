package reconcile

import (
	"context"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/cloudtest"
)

// TestOnlyObserveAndActCallTheCloud keeps the two switches the only doors to OTC: a method of the
// cloud port (sync/cloud's interfaces) is called only in read.go (observe: every read) and act.go
// (act: every change). The exceptions say why.
func TestOnlyObserveAndActCallTheCloud(t *testing.T) {
	allowed := map[string]string{
		"read.go":         "observe: the one switch over reads",
		"act.go":          "act: the one switch over changes",
		"observe_view.go": "readOnly passes the reads of the client it wraps through",
		"logs_port.go":    "the logs port reads the logs for a log Job, outside any hook call",
	}
	// Methods that read nothing of an instance: the client's own region and project, and the
	// login to a namespace's project (cloudFor, credentials.go).
	local := map[string]bool{"Region": true, "Project": true, "For": true}

	fset := token.NewFileSet()
	files := parseNonTest(t, fset, ".")
	info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}, Uses: map[*ast.Ident]types.Object{}}
	typeCheck(t, fset, "github.com/mcsps/rds-lambda-controller/sync", files, info)
	calls := 0
	for _, f := range files {
		name := filepath.Base(fset.Position(f.Pos()).Filename)
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			s := info.Selections[sel]
			if s == nil || s.Kind() != types.MethodVal || local[sel.Sel.Name] {
				return true
			}
			fn, ok := s.Obj().(*types.Func)
			if !ok || fn.Pkg() == nil || fn.Pkg().Path() != cloudPath || !types.IsInterface(s.Recv()) {
				return true
			}
			calls++
			if _, ok := allowed[name]; !ok {
				t.Errorf("%s: calls the cloud port's %s: name the read (need, observe) or the change (action, act) instead", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
	if calls < 20 {
		t.Fatalf("found only %d calls of the cloud port; the check no longer sees sync/cloud's interfaces", calls)
	}
}

// TestObserveWithTheControllersLogin: a read marked need.controller is made with the controller's
// own client (Config.Cloud), whatever client the call uses (a namespace's login); any other read
// with the call's. Finalize's look in the controller's project depends on it.
func TestObserveWithTheControllersLogin(t *testing.T) {
	own, ns := &cloudtest.Fake{}, &cloudtest.Fake{}
	found := func(id string) func(context.Context, string) ([]*cloud.Instance, error) {
		return func(context.Context, string) ([]*cloud.Instance, error) { return []*cloud.Instance{{ID: id}}, nil }
	}
	own.FindInstancesByNameFn, ns.FindInstancesByNameFn = found("in-controller"), found("in-namespace")
	r := New(Config{Cloud: own})
	c := r.begin(context.Background(), request(sampleSpec(), v1alpha1.RdsStatus{}))
	c.cloud = ns

	s := c.observe(context.Background(), need{kind: readInstancesName, name: "db", controller: true})
	require.NoError(t, s.err)
	require.Len(t, s.instances, 1)
	assert.Equal(t, "in-controller", s.instances[0].ID)
	assert.Empty(t, ns.Calls(), "the call's client is not asked")

	s = c.observe(context.Background(), need{kind: readInstancesName, name: "db"})
	require.NoError(t, s.err)
	assert.Equal(t, "in-namespace", s.instances[0].ID)
	assert.Equal(t, []string{"FindInstancesByName"}, own.Calls(), "the controller's client is asked once, for the marked read")

	r = New(Config{})
	c = r.begin(context.Background(), request(sampleSpec(), v1alpha1.RdsStatus{}))
	c.cloud = ns
	s = c.observe(context.Background(), need{kind: readInstancesName, name: "db", controller: true})
	assert.ErrorIs(t, s.err, errNoControllerLogin, "without a login of its own the read is refused, never made with the call's")
}
