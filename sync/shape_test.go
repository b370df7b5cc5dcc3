package reconcile

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const packagePath = "github.com/mcsps/rds-lambda-controller/sync"

// TestTheCallKeepsItsShape keeps what issue #18 made of a call measurable (docs/architecture.md,
// "How a call runs"): the per-call type has at most 25 methods, at most 3 pairs of the package's
// files call each other both ways, and no step takes a cloud client: the cloud is read and changed
// through the two switches (observe and act) only.
//
// NOTE: the file graph counts every call in the package, not only those on the path of one sync:
// a bound on more is a bound on fewer.
func TestTheCallKeepsItsShape(t *testing.T) {
	fset := token.NewFileSet()
	files := parseNonTest(t, fset, ".")
	info := &types.Info{
		Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{}, Types: map[ast.Expr]types.TypeAndValue{},
	}
	typeCheck(t, fset, packagePath, files, info)

	fileOf := func(p token.Pos) string { return filepath.Base(fset.Position(p).Filename) }
	var methods []string
	calls := map[[2]string]bool{} // caller's file -> callee's file
	why := map[[2]string][]string{} // the calls behind an edge, for the message
	var takesCloud []string
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			if fn.Recv != nil && receiverName(fn.Recv.List[0].Type) == "call" {
				methods = append(methods, fn.Name.Name)
			}
			for _, p := range fn.Type.Params.List {
				if isCloudClient(info.TypeOf(p.Type)) {
					takesCloud = append(takesCloud, fmt.Sprintf("%s (%s)", fn.Name.Name, fileOf(fn.Pos())))
				}
			}
			if fn.Body == nil {
				continue
			}
			from := fileOf(fn.Pos())
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				var id *ast.Ident
				switch fun := ast.Unparen(call.Fun).(type) {
				case *ast.Ident:
					id = fun
				case *ast.SelectorExpr:
					id = fun.Sel
				case *ast.IndexExpr: // a generic function instantiated
					if x, ok := fun.X.(*ast.Ident); ok {
						id = x
					}
				}
				if id == nil {
					return true
				}
				if callee, ok := info.Uses[id].(*types.Func); ok && callee.Pkg() != nil && callee.Pkg().Path() == packagePath {
					if to := fileOf(callee.Pos()); to != from {
						calls[[2]string{from, to}] = true
						why[[2]string{from, to}] = append(why[[2]string{from, to}], fn.Name.Name+"->"+callee.Name())
					}
				}
				return true
			})
		}
	}

	var both []string
	for e := range calls {
		if e[0] < e[1] && calls[[2]string{e[1], e[0]}] {
			both = append(both, e[0]+" <-> "+e[1])
			t.Logf("%s -> %s: %v; back: %v", e[0], e[1], why[e], why[[2]string{e[1], e[0]}])
		}
	}
	slices.Sort(both)
	slices.Sort(methods)
	t.Logf("call has %d methods; %d pairs of files call each other both ways: %s", len(methods), len(both), strings.Join(both, ", "))
	if len(methods) > 25 {
		t.Errorf("the per-call type has %d methods (at most 25): %s", len(methods), strings.Join(methods, ", "))
	}
	if len(both) > 3 {
		t.Errorf("%d pairs of files call each other both ways (at most 3): %s", len(both), strings.Join(both, ", "))
	}
	if len(methods) < 5 || len(calls) < 20 {
		t.Fatalf("found %d methods of call and %d calls between files: the type check missed them", len(methods), len(calls))
	}
	// The read switch's helper may: it asks whether the client serves reads from the shared view.
	takesCloud = slices.DeleteFunc(takesCloud, func(f string) bool { return f == "viewed (observe_view.go)" })
	if len(takesCloud) > 0 {
		t.Errorf("take a cloud client: %s; read through observe (a need) and change through act (an action)", strings.Join(takesCloud, ", "))
	}
}

// receiverName is the name of a receiver's type: call for c *call.
func receiverName(e ast.Expr) string {
	if star, ok := e.(*ast.StarExpr); ok {
		e = star.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// isCloudClient says t is one of the cloud port's interfaces (cloud.Cloud and its parts).
func isCloudClient(t types.Type) bool {
	n, ok := t.(*types.Named)
	if !ok || n.Obj().Pkg() == nil || n.Obj().Pkg().Path() != cloudPath {
		return false
	}
	_, iface := n.Underlying().(*types.Interface)
	return iface
}
