package reconcile

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// TestValueProblemNumbers (review #20): a number is written as OTC and the engines take it, in
// decimal: Go's other notations (hexadecimal, binary, underscores, infinities) are refused before
// any call, never sent to OTC, nor written to a template an instance starts with.
func TestValueProblemNumbers(t *testing.T) {
	integer := cloud.Parameter{Name: "max_connections", Type: "integer", ValueRange: "10-100000"}
	float := cloud.Parameter{Name: "long_query_time", Type: "float", ValueRange: "0.03-3600"}
	unbounded := cloud.Parameter{Name: "x", Type: "float", ValueRange: ""}
	for _, v := range []string{"300", "-1", "10", "100000"} {
		if v == "-1" {
			assert.NotEmpty(t, valueProblem(integer, v), v)
			continue
		}
		assert.Empty(t, valueProblem(integer, v), v)
	}
	for _, v := range []string{"2", "2.5", "0.03", "1e2", "3.6E+3", ".5"} {
		assert.Empty(t, valueProblem(float, v), v)
	}
	for _, v := range []string{"0x3e8", "0b1111101000", "0o1750", "1_000", "+300", " 300", "300 ", "1e2", "Inf", "2.0"} {
		assert.NotEmpty(t, valueProblem(integer, v), v)
	}
	for _, v := range []string{"0x1p4", "Inf", "-Inf", "NaN", "1_0", "0x10", "1e", "."} {
		assert.NotEmpty(t, valueProblem(float, v), v)
		assert.NotEmpty(t, valueProblem(unbounded, v), v)
	}
}
