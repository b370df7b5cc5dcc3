package manifests

import (
	"os"
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
	assert.Equal(t, mySingle, string(raw), "the file is the example byte for byte")
}
