package cloud

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRefusalNeverShowsOTCText(t *testing.T) {
	cases := map[string]struct {
		reason string
		err    *Error
		want   string
	}{
		"known code": {
			reason: "a code the adapter knows reads as its sentence, with the code for support",
			err:    &Error{Kind: KindInvalid, Code: "DBS.200053", Sentence: "the flavor does not exist", Message: "Spec rds.x does not exist. (request 8f2c)"},
			want:   "OTC refused the request: the flavor does not exist (DBS.200053).",
		},
		"unknown code": {
			reason: "an unknown code shows only the code, never OTC's message",
			err:    &Error{Kind: KindInvalid, Code: "DBS.123456", Message: "Something odd happened at 10:41:07."},
			want:   "OTC refused the request (code DBS.123456).",
		},
		"IAM code": {
			reason: "IAM refusals read as the adapter's sentence too",
			err:    &Error{Kind: KindInvalid, Code: "IAM.0007", Sentence: "IAM refused the request for temporary credentials", Message: "The request body is invalid: duration_seconds"},
			want:   "OTC refused the request: IAM refused the request for temporary credentials (IAM.0007).",
		},
		"adapter's own message": {
			reason: "a codeless error is the adapter's own stable sentence about the spec",
			err:    &Error{Kind: KindInvalid, Message: `VPC "frank-test" not found`},
			want:   `OTC refused the request: VPC "frank-test" not found.`,
		},
		"nothing to say": {
			reason: "no code and no message",
			err:    &Error{Kind: KindNotFound},
			want:   "OTC refused the request.",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.err.Refusal(), tc.reason)
		})
	}
}

func TestExplainTakesTheLead(t *testing.T) {
	e := &Error{Kind: KindNotFound, Code: "DBS.200002", Sentence: "the instance does not exist", Message: "The DB instance does not exist."}
	assert.Equal(t, "OTC does not know the instance: the instance does not exist (DBS.200002)", e.Explain("OTC does not know the instance"))
	e = &Error{Kind: KindNotFound, Code: "DBS.200823", Message: "The DB instance does not exist."}
	assert.Equal(t, "OTC does not know the instance (code DBS.200823)", e.Explain("OTC does not know the instance"))
}
