// Package testdata locates the project's test data and turns captured Metacontroller requests
// into requests for an Rds parent.
package testdata

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Dir is the absolute path of test/testdata.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// SampleRds is the original operator's example object, exactly as users apply it.
const SampleRds = `{
  "apiVersion": "otc.mcsps.de/v1alpha1",
  "kind": "Rds",
  "spec": {
    "availabilityzone": "eu-de-01",
    "backupkeepdays": 12,
    "backupstarttime": "01:00-02:00",
    "datastoretype": "MySQL",
    "datastoreversion": "8.0",
    "flavorref": "rds.mysql.c2.medium",
    "password": "A12345678+",
    "port": "3306",
    "region": "eu-de",
    "securitygroup": "golang",
    "subnet": "frank-test",
    "volumesize": 40,
    "volumetype": "COMMON",
    "vpc": "frank-test"
  }
}`

// WithRdsParent reads a captured request and swaps its Widget parent for the sample Rds object,
// keeping the parent's metadata (uid, generation, finalizers, deletionTimestamp, managedFields) as sent, with the
// sample's name and namespace.
func WithRdsParent(t testing.TB, path string) []byte {
	t.Helper()
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var req map[string]json.RawMessage
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	var widget struct {
		Metadata map[string]any `json:"metadata"`
	}
	if err := json.Unmarshal(req["parent"], &widget); err != nil {
		t.Fatal(err)
	}
	var rds map[string]any
	if err := json.Unmarshal([]byte(SampleRds), &rds); err != nil {
		t.Fatal(err)
	}
	md := widget.Metadata
	md["name"], md["namespace"] = "my-rds-single", "rds1"
	rds["metadata"] = md
	if req["parent"], err = json.Marshal(rds); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
