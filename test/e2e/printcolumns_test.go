package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/test/testdata"
)

var updateGolden = flag.Bool("update", false, "rewrite the kubectl tables in test/testdata/kubectl from this run")

// TestKubectlGetShowsTheObservedState renders `kubectl get rds` from the CRD's printer columns,
// through the API server's own table convertor, for the status the hooks answer against the
// simulator: once the sample is ACTIVE (the table README.md shows) and in the middle of a resize
// (the table docs/day2.md shows). The tables are golden files; test/docs checks that the pages
// quote them. Run with -update to write them again after a deliberate change.
func TestKubectlGetShowsTheObservedState(t *testing.T) {
	w := newWorld(t)
	mc := w.newObject(nil)
	durations := otcsim.DefaultDurations()
	mc.sync()
	mc.sync()
	w.clock.Advance(durations.Create)
	resp := mc.sync()
	require.Equal(t, cloud.StatusActive, resp.Status.Status)

	active := kubectlGet(t, w, mc, false)
	golden(t, "get-rds.txt", active)
	assert.Contains(t, active, resp.Status.Version, "VERSION is the observed complete version")
	assert.NotEqual(t, "8.0", resp.Status.Version)

	// A resize: OTC reports the old flavor until it is done, and so does FLAVOR.
	mc.obj.Edit(func(spec map[string]any) { spec["flavorref"] = "rds.mysql.c2.large" })
	resp = mc.sync()
	require.NotNil(t, resp.Status.Operation)
	require.Equal(t, "Resize", resp.Status.Operation.Type)
	w.clock.Advance(time.Second)
	resp = mc.sync()
	require.Equal(t, cloud.StatusModifying, resp.Status.Status)
	require.Equal(t, "rds.mysql.c2.medium", resp.Status.Flavor)

	resizing := kubectlGet(t, w, mc, true)
	golden(t, "get-rds-wide-resize.txt", resizing)
	row := strings.Fields(strings.Split(resizing, "\n")[1])
	header := strings.Fields(strings.Split(resizing, "\n")[0])
	cell := func(name string) string {
		for i, h := range header {
			if h == name {
				return row[i]
			}
		}
		t.Fatalf("no column %s in %q", name, header)
		return ""
	}
	assert.Equal(t, "MODIFYING", cell("STATUS"))
	assert.Equal(t, "rds.mysql.c2.medium", cell("FLAVOR"), "the flavor OTC still reports")
	assert.Equal(t, "Resize", cell("OPERATION"))

	// Done: FLAVOR follows OTC, and the operation is gone.
	w.clock.Advance(durations.Resize)
	resp = mc.sync()
	require.Equal(t, cloud.StatusActive, resp.Status.Status)
	require.Nil(t, resp.Status.Operation)
	done := kubectlGet(t, w, mc, true)
	assert.Equal(t, 2, strings.Count(done, "rds.mysql.c2.large"), "FLAVOR and SPEC FLAVOR agree: %s", done)
	assert.NotContains(t, done, "Resize")
}

// kubectlGet prints the object as `kubectl get rds -A` (or `-o wide`) does: the CRD's columns
// evaluated by the API server's table convertor, a NAMESPACE column first, headers in upper case,
// cells aligned by kubectl's tabwriter settings. AGE is the simulated time since t0.
func kubectlGet(t *testing.T, w *world, mc *metacontroller, wide bool) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "manifests", "crd.yaml"))
	require.NoError(t, err)
	var crd apiextensionsv1.CustomResourceDefinition
	require.NoError(t, yaml.Unmarshal(raw, &crd))
	convertor, err := tableconvertor.New(crd.Spec.Versions[0].AdditionalPrinterColumns)
	require.NoError(t, err)

	obj := map[string]any{}
	require.NoError(t, yaml.Unmarshal(mustMarshal(t, mc.parent), &obj))
	md := obj["metadata"].(map[string]any)
	// The convertor measures AGE against the wall clock; the object is as old as the simulated run.
	md["creationTimestamp"] = time.Now().Add(-w.clock.Now().Sub(t0)).UTC().Format(time.RFC3339)
	table, err := convertor.ConvertToTable(context.Background(), &unstructured.Unstructured{Object: obj}, nil)
	require.NoError(t, err)
	require.Len(t, table.Rows, 1)

	var out strings.Builder
	tw := tabwriter.NewWriter(&out, 6, 4, 3, ' ', 0) // kubectl's printers.GetNewTabWriter
	header := []string{"NAMESPACE"}
	row := []string{md["namespace"].(string)}
	for i, col := range table.ColumnDefinitions {
		if col.Priority > 0 && !wide {
			continue
		}
		header = append(header, strings.ToUpper(col.Name))
		cell := table.Rows[0].Cells[i]
		if cell == nil {
			row = append(row, "")
		} else {
			row = append(row, fmt.Sprint(cell))
		}
	}
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	fmt.Fprintln(tw, strings.Join(row, "\t"))
	require.NoError(t, tw.Flush())
	return out.String()
}

// golden compares a rendered table with test/testdata/kubectl/name, or writes it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(testdata.Dir(), "kubectl", name)
	if *updateGolden {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./test/e2e/ -run TestKubectlGet -update to create it")
	assert.Equal(t, string(want), got, "%s: run with -update after a deliberate change, then update the pages that quote it", name)
}
