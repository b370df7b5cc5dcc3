package otc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	golangsdk "github.com/opentelekomcloud/gophertelekomcloud"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

const testURL = "https://rds.eu-de.otc.t-systems.com/v3/0391e4486e864c26be5654c522f440f2/instances"

// resp builds the embedded response error the SDK puts in every ErrDefaultNNN.
func resp(status int, body string) golangsdk.ErrUnexpectedResponseCode {
	return golangsdk.ErrUnexpectedResponseCode{URL: testURL, Method: "POST", Expected: []int{202}, Actual: status, Body: []byte(body)}
}

func rdsBody(code, msg string) string {
	return fmt.Sprintf(`{"error_code":%q,"error_msg":%q}`, code, msg)
}

func TestTranslate(t *testing.T) {
	cases := map[string]struct {
		reason string
		err    error
		info   callInfo
		want   cloud.Error
	}{
		"404 instance": {
			reason: "an unknown instance is NotFound",
			err:    golangsdk.ErrDefault404{ErrUnexpectedResponseCode: resp(404, rdsBody("DBS.200002", "The DB instance does not exist."))},
			want:   cloud.Error{Kind: cloud.KindNotFound, Code: "DBS.200002", Message: "The DB instance does not exist."},
		},
		"404 no body": {
			reason: "a bare 404 is NotFound with the status text",
			err:    golangsdk.ErrDefault404{ErrUnexpectedResponseCode: resp(404, "")},
			want:   cloud.Error{Kind: cloud.KindNotFound, Message: "Not Found"},
		},
		"404 DBS.200045": {
			err:  golangsdk.ErrDefault404{ErrUnexpectedResponseCode: resp(404, rdsBody("DBS.200045", "Instance not found."))},
			want: cloud.Error{Kind: cloud.KindNotFound, Code: "DBS.200045", Message: "Instance not found."},
		},
		"400 job unknown": {
			reason: "a job OTC has not registered yet answers 400 DBS.200543",
			err:    golangsdk.ErrDefault400{ErrUnexpectedResponseCode: resp(400, rdsBody("DBS.200543", "The job does not exist."))},
			want:   cloud.Error{Kind: cloud.KindNotFound, Code: "DBS.200543", Message: "The job does not exist."},
		},
		"409 busy": {
			err:  golangsdk.ErrDefault409{ErrUnexpectedResponseCode: resp(409, rdsBody("DBS.200019", "Another operation is being performed on the DB instance or the DB instance is faulty."))},
			want: cloud.Error{Kind: cloud.KindBusy, Code: "DBS.200019", Message: "Another operation is being performed on the DB instance or the DB instance is faulty."},
		},
		"409 busy 200011": {
			err:  golangsdk.ErrDefault409{ErrUnexpectedResponseCode: resp(409, rdsBody("DBS.200011", "busy"))},
			want: cloud.Error{Kind: cloud.KindBusy, Code: "DBS.200011", Message: "busy"},
		},
		"409 busy 200047": {
			err:  golangsdk.ErrDefault409{ErrUnexpectedResponseCode: resp(409, rdsBody("DBS.200047", "busy"))},
			want: cloud.Error{Kind: cloud.KindBusy, Code: "DBS.200047", Message: "busy"},
		},
		"409 busy 201202": {
			err:  golangsdk.ErrDefault409{ErrUnexpectedResponseCode: resp(409, rdsBody("DBS.201202", "busy"))},
			want: cloud.Error{Kind: cloud.KindBusy, Code: "DBS.201202", Message: "busy"},
		},
		"409 backup in progress": {
			err:  golangsdk.ErrDefault409{ErrUnexpectedResponseCode: resp(409, rdsBody("DBS.201205", "Backup is in progress, please wait."))},
			want: cloud.Error{Kind: cloud.KindBusy, Code: "DBS.201205", Message: "Backup is in progress, please wait."},
		},
		"409 storage full": {
			err:  golangsdk.ErrDefault409{ErrUnexpectedResponseCode: resp(409, rdsBody("DBS.200316", "Storage full."))},
			want: cloud.Error{Kind: cloud.KindBusy, Code: "DBS.200316", Message: "Storage full."},
		},
		"400 wrong state": {
			reason: "400 DBS.200086 is a state refusal, not a bad request",
			err:    golangsdk.ErrDefault400{ErrUnexpectedResponseCode: resp(400, rdsBody("DBS.200086", "This operation is not allowed by the DB instance status."))},
			want:   cloud.Error{Kind: cloud.KindBusy, Code: "DBS.200086", Message: "This operation is not allowed by the DB instance status."},
		},
		"400 wrong state 201014": {
			err:  golangsdk.ErrDefault400{ErrUnexpectedResponseCode: resp(400, rdsBody("DBS.201014", "not allowed"))},
			want: cloud.Error{Kind: cloud.KindBusy, Code: "DBS.201014", Message: "not allowed"},
		},
		"409 unknown code": {
			reason: "an unknown 409 is safest retried",
			err:    golangsdk.ErrDefault409{ErrUnexpectedResponseCode: resp(409, rdsBody("DBS.999999", "something"))},
			want:   cloud.Error{Kind: cloud.KindBusy, Code: "DBS.999999", Message: "something"},
		},
		"409 name exists": {
			err:  golangsdk.ErrDefault409{ErrUnexpectedResponseCode: resp(409, rdsBody("DBS.200022", "The DB instance name already exists."))},
			want: cloud.Error{Kind: cloud.KindConflict, Code: "DBS.200022", Message: "The DB instance name already exists."},
		},
		"409 backup name exists": {
			err:  golangsdk.ErrDefault409{ErrUnexpectedResponseCode: resp(409, rdsBody("DBS.201204", "The backup name already exists."))},
			want: cloud.Error{Kind: cloud.KindConflict, Code: "DBS.201204", Message: "The backup name already exists."},
		},
		"400 parameter": {
			reason: "any other 400 with a code is the spec's fault",
			err:    golangsdk.ErrDefault400{ErrUnexpectedResponseCode: resp(400, rdsBody("DBS.200001", "Parameter error."))},
			want:   cloud.Error{Kind: cloud.KindInvalid, Code: "DBS.200001", Message: "Parameter error."},
		},
		"400 no code": {
			reason: "a 400 without an OTC code is not known to be the spec's fault",
			err:    golangsdk.ErrDefault400{ErrUnexpectedResponseCode: resp(400, "<html>bad</html>")},
			want:   cloud.Error{Kind: cloud.KindUnknown, Message: "Bad Request"},
		},
		"400 sold out": {
			err:  golangsdk.ErrDefault400{ErrUnexpectedResponseCode: resp(400, rdsBody("DBS.280450", ""))},
			want: cloud.Error{Kind: cloud.KindInvalid, Code: "DBS.280450", Message: "the flavor is sold out in this availability zone"},
		},
		"400 spec not found": {
			err:  golangsdk.ErrDefault400{ErrUnexpectedResponseCode: resp(400, rdsBody("DBS.200053", "The specification does not exist."))},
			want: cloud.Error{Kind: cloud.KindInvalid, Code: "DBS.200053", Message: "The specification does not exist."},
		},
		"404 VPC": {
			reason: "an unknown VPC is the spec's fault, not a missing instance",
			err:    golangsdk.ErrDefault404{ErrUnexpectedResponseCode: resp(404, rdsBody("DBS.200503", "Either the VPC does not exist or does not belong to this user."))},
			want:   cloud.Error{Kind: cloud.KindInvalid, Code: "DBS.200503", Message: "Either the VPC does not exist or does not belong to this user."},
		},
		"404 subnet": {
			err:  golangsdk.ErrDefault404{ErrUnexpectedResponseCode: resp(404, rdsBody("DBS.200501", ""))},
			want: cloud.Error{Kind: cloud.KindInvalid, Code: "DBS.200501", Message: "the subnet does not exist in this VPC"},
		},
		"404 security group": {
			err:  golangsdk.ErrDefault404{ErrUnexpectedResponseCode: resp(404, rdsBody("DBS.200050", "Security group not found."))},
			want: cloud.Error{Kind: cloud.KindInvalid, Code: "DBS.200050", Message: "Security group not found."},
		},
		"413 quota": {
			reason: "statuses without an ErrDefault type arrive as ErrUnexpectedResponseCode",
			err:    resp(413, rdsBody("DBS.200046", "Quota exceeded.")),
			want:   cloud.Error{Kind: cloud.KindInvalid, Code: "DBS.200046", Message: "Quota exceeded."},
		},
		"429 with Retry-After": {
			err:  golangsdk.ErrDefault429{ErrUnexpectedResponseCode: resp(429, "")},
			info: callInfo{retryAfter: 7 * time.Second},
			want: cloud.Error{Kind: cloud.KindThrottled, Message: "Too Many Requests", RetryAfter: 7 * time.Second},
		},
		"429 IAM": {
			err:  golangsdk.ErrDefault429{ErrUnexpectedResponseCode: resp(429, `{"error":{"code":"IAM.0012","message":"The throttling threshold has been reached."}}`)},
			want: cloud.Error{Kind: cloud.KindThrottled, Code: "IAM.0012", Message: "The throttling threshold has been reached."},
		},
		"500": {
			err:  golangsdk.ErrDefault500{ErrUnexpectedResponseCode: resp(500, rdsBody("DBS.108000", "Internal error."))},
			want: cloud.Error{Kind: cloud.KindUnavailable, Code: "DBS.108000", Message: "Internal error."},
		},
		"502 after retry": {
			err:  resp(502, "<html>Bad Gateway</html>"),
			want: cloud.Error{Kind: cloud.KindUnavailable, Message: "Bad Gateway"},
		},
		"503": {
			err:  golangsdk.ErrDefault503{ErrUnexpectedResponseCode: resp(503, "")},
			want: cloud.Error{Kind: cloud.KindUnavailable, Message: "Service Unavailable"},
		},
		"408": {
			err:  golangsdk.ErrDefault408{ErrUnexpectedResponseCode: resp(408, "")},
			want: cloud.Error{Kind: cloud.KindUnavailable, Message: "Request Timeout"},
		},
		"401 keystone": {
			err:  golangsdk.ErrDefault401{ErrUnexpectedResponseCode: resp(401, `{"error":{"code":401,"title":"Unauthorized","message":"The request you have made requires authentication."}}`)},
			want: cloud.Error{Kind: cloud.KindUnauthorized, Message: "The request you have made requires authentication."},
		},
		"401 gateway": {
			err:  golangsdk.ErrDefault401{ErrUnexpectedResponseCode: resp(401, rdsBody("APIGW.0301", "Incorrect IAM authentication information: verify aksk signature fail"))},
			want: cloud.Error{Kind: cloud.KindUnauthorized, Code: "APIGW.0301", Message: "Incorrect IAM authentication information: verify aksk signature fail"},
		},
		"403": {
			err:  golangsdk.ErrDefault403{ErrUnexpectedResponseCode: resp(403, rdsBody("DBS.200044", "Resource not found or permission denied."))},
			want: cloud.Error{Kind: cloud.KindUnauthorized, Code: "DBS.200044", Message: "Resource not found or permission denied."},
		},
		"405": {
			err:  golangsdk.ErrDefault405{ErrUnexpectedResponseCode: resp(405, "")},
			want: cloud.Error{Kind: cloud.KindUnknown, Message: "Method Not Allowed"},
		},
		"202 where 200 expected": {
			reason: "a success status outside OkCodes is not a success",
			err:    resp(202, `{"backup":{}}`),
			want:   cloud.Error{Kind: cloud.KindUnknown, Message: "unexpected success status Accepted"},
		},
		"VPC v1 body": {
			err:  golangsdk.ErrDefault404{ErrUnexpectedResponseCode: resp(404, `{"code":"VPC.0003","message":"VPC does not exist."}`)},
			want: cloud.Error{Kind: cloud.KindNotFound, Code: "VPC.0003", Message: "VPC does not exist."},
		},
		"Neutron body": {
			err:  golangsdk.ErrDefault400{ErrUnexpectedResponseCode: resp(400, `{"NeutronError":{"type":"HTTPBadRequest","message":"Invalid input for filter.","detail":""}}`)},
			want: cloud.Error{Kind: cloud.KindUnknown, Message: "Invalid input for filter."},
		},
		"reauth failed": {
			reason: "a renewal the SDK could not do: our credentials are refused",
			err:    &golangsdk.ErrUnableToReauthenticate{ErrOriginal: golangsdk.ErrDefault401{ErrUnexpectedResponseCode: resp(401, "")}},
			want:   cloud.Error{Kind: cloud.KindUnauthorized, Message: "Unauthorized"},
		},
		"error after reauth": {
			reason: "after a successful renewal the retried call's own error counts",
			err:    &golangsdk.ErrErrorAfterReauthentication{ErrOriginal: golangsdk.ErrDefault409{ErrUnexpectedResponseCode: resp(409, rdsBody("DBS.200019", "busy"))}},
			want:   cloud.Error{Kind: cloud.KindBusy, Code: "DBS.200019", Message: "busy"},
		},
		"pagination wraps": {
			err:  fmt.Errorf("page: %w", golangsdk.ErrDefault503{ErrUnexpectedResponseCode: resp(503, "")}),
			want: cloud.Error{Kind: cloud.KindUnavailable, Message: "Service Unavailable"},
		},
		"deadline": {
			err:  context.DeadlineExceeded,
			want: cloud.Error{Kind: cloud.KindUnavailable, Message: "no answer before the deadline"},
		},
		"deadline in url.Error": {
			err:  &url.Error{Op: "Get", URL: testURL, Err: context.DeadlineExceeded},
			want: cloud.Error{Kind: cloud.KindUnavailable, Message: "no answer before the deadline"},
		},
		"canceled": {
			err:  &url.Error{Op: "Get", URL: testURL, Err: context.Canceled},
			want: cloud.Error{Kind: cloud.KindUnavailable, Message: "request canceled"},
		},
		"EOF": {
			reason: "the connection dropped after OTC got the request (commit-then-drop)",
			err:    &url.Error{Op: "Post", URL: testURL, Err: io.EOF},
			want:   cloud.Error{Kind: cloud.KindUnavailable, Message: "connection closed before the answer"},
		},
		"client timeout": {
			err:  &url.Error{Op: "Get", URL: testURL, Err: timeoutErr{}},
			want: cloud.Error{Kind: cloud.KindUnavailable, Message: "request timed out"},
		},
		"connection refused": {
			err:  &url.Error{Op: "Get", URL: testURL, Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}},
			want: cloud.Error{Kind: cloud.KindUnavailable, Message: "connection failed"},
		},
		"malformed answer": {
			err:  fmt.Errorf("error extracting {\"secret\":1} into *T: %w", &json.UnmarshalTypeError{Value: "string"}),
			want: cloud.Error{Kind: cloud.KindUnknown, Message: "unexpected answer from OTC"},
		},
		"missing input": {
			err:  golangsdk.ErrMissingInput{Argument: "Name"},
			want: cloud.Error{Kind: cloud.KindInvalid, Message: "missing value for Name"},
		},
		"our own error": {
			err:  cloud.Errorf(cloud.KindNotFound, "", "", "instance x not found"),
			want: cloud.Error{Kind: cloud.KindNotFound, Message: "instance x not found"},
		},
		"other": {
			err:  errors.New("first line\nsecond line " + testURL),
			want: cloud.Error{Kind: cloud.KindUnknown, Message: "first line second line <url>"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := translate("Op", tc.err, tc.info)
			tc.want.Op = "Op"
			assert.Equal(t, tc.want, *got, tc.reason)
			text := got.Error()
			assert.NotContains(t, text, "\n", "one line")
			assert.NotContains(t, text, "://", "no URL")
			assert.NotContains(t, text, "{", "no raw body")
		})
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "Client.Timeout exceeded while awaiting headers" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestTranslateKeepsMessagesShort(t *testing.T) {
	long := strings.Repeat("word ", 100) + "\nsee https://docs.otc.t-systems.com/x"
	got := translate("Op", golangsdk.ErrDefault400{ErrUnexpectedResponseCode: resp(400, rdsBody("DBS.200001", long))}, callInfo{})
	assert.LessOrEqual(t, len([]rune(got.Message)), maxMessage)
	assert.True(t, strings.HasSuffix(got.Message, "…"))
	assert.NotContains(t, got.Error(), "\n")
}

func TestClientTranslate(t *testing.T) {
	c := &Client{auth: &authenticator{}, retryAfter: 30 * time.Second}

	t.Run("429 without Retry-After gets the default", func(t *testing.T) {
		got := c.translate("Op", golangsdk.ErrDefault429{ErrUnexpectedResponseCode: resp(429, "")}, callInfo{})
		assert.Equal(t, cloud.KindThrottled, got.Kind)
		assert.Equal(t, 30*time.Second, got.RetryAfter)
	})

	unable := &golangsdk.ErrUnableToReauthenticate{ErrOriginal: golangsdk.ErrDefault401{ErrUnexpectedResponseCode: resp(401, "")}}
	t.Run("renewal refused", func(t *testing.T) {
		var cause error = golangsdk.ErrDefault401{ErrUnexpectedResponseCode: resp(401, `{"error":{"code":401,"message":"bad password"}}`)}
		c.auth.lastErr = cause
		got := c.translate("Op", unable, callInfo{})
		assert.Equal(t, cloud.KindUnauthorized, got.Kind)
		assert.Equal(t, "token renewal failed: Unauthorized", got.Message)
	})
	t.Run("renewal failed as Keystone is down", func(t *testing.T) {
		var cause error = golangsdk.ErrDefault503{ErrUnexpectedResponseCode: resp(503, "")}
		c.auth.lastErr = cause
		got := c.translate("Op", unable, callInfo{})
		require.Equal(t, cloud.KindUnavailable, got.Kind, "Keystone down is not a refusal of our credentials")
		assert.Equal(t, "token renewal failed: Service Unavailable", got.Message)
	})
}

func TestResultLabel(t *testing.T) {
	assert.Equal(t, "throttled", resultLabel(&cloud.Error{Kind: cloud.KindThrottled}))
	assert.Equal(t, "notfound", resultLabel(&cloud.Error{Kind: cloud.KindNotFound}))
	assert.Equal(t, "unknown", resultLabel(errors.New("x")))
}
