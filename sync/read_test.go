package sync

import (
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"testing"
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
