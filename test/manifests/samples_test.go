package manifests

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// mySingle is the example every user of the original operator knows; it must apply unchanged.
const mySingle = `apiVersion: otc.mcsps.de/v1alpha1
kind: Rds
metadata:
  name: my-rds-single
  namespace: rds1
spec:
  availabilityzone: eu-de-01
  backupkeepdays: 12
  backupstarttime: 01:00-02:00
  datastoretype: MySQL
  datastoreversion: "8.0"
  flavorref: rds.mysql.c2.medium
  password: A12345678+
  port: "3306"
  region: eu-de
  securitygroup: golang
  subnet: frank-test
  volumesize: 40
  volumetype: COMMON
  vpc: frank-test
`

// TestSingleSampleIsTheExample: samples/my-rds-single.yaml is the example, value for value.
func TestSingleSampleIsTheExample(t *testing.T) {
	docs := readDocuments(t, manifestsDir+"/samples/my-rds-single.yaml")
	require.Len(t, docs, 1)
	var got, want map[string]any
	require.NoError(t, yaml.Unmarshal(docs[0], &got))
	require.NoError(t, yaml.Unmarshal([]byte(mySingle), &want))
	assert.Equal(t, want, got)
	raw, err := os.ReadFile(manifestsDir + "/samples/my-rds-single.yaml")
	require.NoError(t, err)
	// The file is the example byte for byte, after a header of comment lines (the billing warning).
	header, body, found := strings.Cut(string(raw), "apiVersion:")
	require.True(t, found)
	assert.Equal(t, mySingle, "apiVersion:"+body, "the file is the example byte for byte after its header")
	for _, line := range strings.Split(strings.TrimSuffix(header, "\n"), "\n") {
		assert.True(t, strings.HasPrefix(line, "#"), "only comment lines precede the example: %q", line)
	}
	assert.Contains(t, header, "billed", "the header warns that the sample creates billed resources")
}
