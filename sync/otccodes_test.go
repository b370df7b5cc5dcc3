package reconcile

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const cloudPath = "github.com/mcsps/rds-lambda-controller/sync/cloud"

// TestDecisionsNeverReadOTCCodes keeps OTC's error codes in the adapter (sync/cloud/otc), which
// sorts them into kinds and says them in our words: the package's code reads the Code of a
// cloud.Error only to log it, and names no OTC code.
func TestDecisionsNeverReadOTCCodes(t *testing.T) {
	fset := token.NewFileSet()
	files := parseNonTest(t, fset, ".")
	info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}, Uses: map[*ast.Ident]types.Object{}}
	typeCheck(t, fset, "github.com/mcsps/rds-lambda-controller/sync", files, info)

	code := regexp.MustCompile(`\b(DBS|IAM|APIGW|VPC)\.[0-9]{4,6}\b`)
	logged := 0
	for _, f := range files {
		var stack []ast.Node
		ast.Inspect(f, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			stack = append(stack, n)
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if n.Sel.Name != "Code" || !isCloudError(info.Selections[n]) {
					return true
				}
				if inLogCall(stack, info) {
					logged++
					return true
				}
				t.Errorf("%s: reads the Code of a cloud.Error: decide by its Kind and show Refusal or Explain; the adapter owns the codes", fset.Position(n.Pos()))
			case *ast.BasicLit:
				if s, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING && code.MatchString(s) {
					t.Errorf("%s: names the OTC error code %s; the adapter owns the codes", fset.Position(n.Pos()), code.FindString(s))
				}
			}
			return true
		})
	}
	// The logs of clouderror.go and logs_port.go read Code: if none is found, the type check failed.
	if logged < 2 {
		t.Fatalf("found only %d logged reads of a cloud.Error's Code; the check no longer sees cloud.Error", logged)
	}
}

// parseNonTest parses the files of dir that are not tests.
func parseNonTest(t *testing.T, fset *token.FileSet, dir string) []*ast.File {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// typeCheck type-checks files well enough to know which selectors are fields of cloud.Error and
// which calls go to log/slog: the standard library and sync/cloud are checked for real, every
// other package is an empty stand-in.
//
// NOTE: the stand-ins make type errors (their names are undefined); they are ignored, as go/types
// still resolves everything that does not depend on them.
func typeCheck(t *testing.T, fset *token.FileSet, path string, files []*ast.File, info *types.Info) {
	t.Helper()
	cloudFiles := parseNonTest(t, fset, "cloud")
	imp := &standIns{std: stdImporter(t, fset, append(files, cloudFiles...)), pkgs: map[string]*types.Package{}}
	conf := types.Config{Importer: imp, Error: func(error) {}}
	cloudPkg, _ := conf.Check(cloudPath, fset, cloudFiles, nil)
	if cloudPkg.Scope().Lookup("Error") == nil {
		t.Fatal("sync/cloud has no type Error")
	}
	imp.pkgs[cloudPath] = cloudPkg
	_, _ = conf.Check(path, fset, files, info)
}

// stdImporter imports the standard library packages files import, from the export data of the
// build cache.
//
// NOTE: importer.Default asks the go command once per package; one go list for all is seconds
// faster.
func stdImporter(t *testing.T, fset *token.FileSet, files []*ast.File) types.Importer {
	t.Helper()
	paths := map[string]bool{}
	for _, f := range files {
		for _, spec := range f.Imports {
			if p, _ := strconv.Unquote(spec.Path.Value); isStd(p) {
				paths[p] = true
			}
		}
	}
	args := []string{"list", "-export", "-deps", "-f", "{{.ImportPath}}={{.Export}}"}
	for p := range paths {
		args = append(args, p)
	}
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	exports := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if p, file, ok := strings.Cut(line, "="); ok {
			exports[p] = file
		}
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	})
}

// isStd reports whether path is a package of the standard library (no dot in its first element).
func isStd(path string) bool {
	return !strings.Contains(strings.SplitN(path, "/", 2)[0], ".")
}

// standIns imports the standard library, the packages it was given, and an empty package for
// anything else.
type standIns struct {
	std  types.Importer
	pkgs map[string]*types.Package
}

func (s *standIns) Import(path string) (*types.Package, error) {
	if p, ok := s.pkgs[path]; ok {
		return p, nil
	}
	var p *types.Package
	if isStd(path) {
		var err error
		if p, err = s.std.Import(path); err != nil {
			return nil, err
		}
	} else {
		p = types.NewPackage(path, filepath.Base(path))
		p.MarkComplete()
	}
	s.pkgs[path] = p
	return p, nil
}

// isCloudError reports whether sel selects a field of cloud.Error.
func isCloudError(sel *types.Selection) bool {
	if sel == nil || sel.Kind() != types.FieldVal {
		return false
	}
	recv := sel.Recv()
	if p, ok := recv.(*types.Pointer); ok {
		recv = p.Elem()
	}
	named, ok := recv.(*types.Named)
	return ok && named.Obj().Name() == "Error" && named.Obj().Pkg() != nil && named.Obj().Pkg().Path() == cloudPath
}

// inLogCall reports whether the innermost node of stack is an argument of a call to log/slog.
func inLogCall(stack []ast.Node, info *types.Info) bool {
	for i := len(stack) - 2; i >= 0; i-- {
		call, ok := stack[i].(*ast.CallExpr)
		if !ok {
			continue
		}
		var id *ast.Ident
		switch fun := call.Fun.(type) {
		case *ast.SelectorExpr:
			id = fun.Sel
		case *ast.Ident:
			id = fun
		}
		if id == nil {
			continue
		}
		if obj := info.Uses[id]; obj != nil && obj.Pkg() != nil && obj.Pkg().Path() == "log/slog" {
			return true
		}
	}
	return false
}
