package reconcile

import (
	"go/ast"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// TestReasonConstantsAreNamedAsTheirValues keeps one vocabulary of reasons: every Reason constant
// of the package is named "Reason" + its value, so that a reason found in a condition is found in
// the code by its name, and no two constants name one value.
func TestReasonConstantsAreNamedAsTheirValues(t *testing.T) {
	seen := map[string]string{}
	for _, f := range parseNonTest(t, token.NewFileSet(), ".") {
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range vs.Names {
				if !strings.HasPrefix(name.Name, "Reason") || i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Errorf("%s is not a string literal", name.Name)
					continue
				}
				value, _ := strconv.Unquote(lit.Value)
				if name.Name != "Reason"+value {
					t.Errorf("%s = %q: name it Reason%s", name.Name, value, value)
				}
				if other, dup := seen[value]; dup {
					t.Errorf("%s and %s both name %q", other, name.Name, value)
				}
				seen[value] = name.Name
			}
			return true
		})
	}
	if len(seen) < 40 {
		t.Fatalf("found only %d reason constants; the parser missed some", len(seen))
	}
}
