package docs

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	reconcile "github.com/mcsps/rds-lambda-controller/sync"
)

// TestInstanceNameAsDocumented keeps every page that spells out an instance name's form
// (`rds-<namespace>-<name>-<N hex digits of sha256(...)>`) true to reconcile.InstanceName and
// reconcile.LegacyInstanceName: the number of hex digits and what the hash is taken of.
func TestInstanceNameAsDocumented(t *testing.T) {
	form := regexp.MustCompile("`rds-<namespace>-<name>-<([0-9]+) hex digits of\\s+sha256\\(([^)]*)\\)>`")
	const cluster, ns, name = "c1", "shop", "db"
	inputs := map[string]string{ // the hash's input as the docs write it
		"cluster id/namespace/name": cluster + "/" + ns + "/" + name,
		"namespace/name":            ns + "/" + name,
	}
	names := map[string]string{
		"cluster id/namespace/name": reconcile.InstanceName(cluster, ns, name),
		"namespace/name":            reconcile.LegacyInstanceName(ns, name),
	}
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	files = append(files, filepath.Join(root, "README.md"))
	found := map[string]int{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range form.FindAllStringSubmatch(string(b), -1) {
			page := filepath.Base(f)
			digits, _ := strconv.Atoi(m[1])
			of := strings.Join(strings.Fields(m[2]), " ")
			in, ok := inputs[of]
			if !assert.True(t, ok, "%s: the hash of %q is not a name the code makes", page, of) {
				continue
			}
			sum := sha256.Sum256([]byte(in))
			want := "rds-" + ns + "-" + name + "-" + hex.EncodeToString(sum[:])[:digits]
			assert.Equal(t, want, names[of], "%s: `rds-<namespace>-<name>-<%d hex digits of sha256(%s)>`", page, digits, of)
			found[page]++
		}
	}
	// The pages that state the form: the status reference and tenancy (new and legacy names).
	assert.Equal(t, 1, found["reference.md"], "docs/reference.md states the name's form")
	assert.Equal(t, 2, found["tenancy.md"], "docs/tenancy.md states the new and the legacy form")
}
