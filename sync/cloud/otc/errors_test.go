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
			want:   cloud.Error{Kind: cloud.KindNotFound, Code: "DBS.200002", Sentence: "the instance does not exist", Message: "The DB instance does not exist."},
		},
		"404 no body": {
			reason: "a bare 404 is NotFound with our sentence for the status",
			err:    golangsdk.ErrDefault404{ErrUnexpectedResponseCode: resp(404, "")},
			want:   cloud.Error{Kind: cloud.KindNotFound, Message: "OTC answered 404: not found"},
		},
		"404 DBS.200045": {
			err:  golangsdk.ErrDefault404{ErrUnexpectedResponseCode: resp(404, rdsBody("DBS.200045", "Instance not found."))},
			want: cloud.Error{Kind: cloud.KindNotFound, Code: "DBS.200045", Sentence: "the instance does not exist", Message: "Instance not found."},
		},
		"400 job unknown": {
			reason: "a job OTC has not registered yet answers 400 DBS.200543",
			err:    golangsdk.ErrDefault400{ErrUnexpectedResponseCode: resp(400, rdsBody("DBS.200543", "The job does not exist."))},
			want:   cloud.Error{Kind: cloud.KindNotFound, Code: "DBS.200543", Sentence: "the job does not exist", Message: "The job does not exist."},
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
			want: cloud.Error{Kind: cloud.KindConflict, Code: "DBS.200022", Sentence: "an instance of this name exists already", Message: "The DB instance name already exists."},
		},
		"409 backup name exists": {
			err:  golangsdk.ErrDefault409{ErrUnexpectedResponseCode: resp(409, rdsBody("DBS.201204", "The backup name already exists."))},
			want: cloud.Error{Kind: cloud.KindConflict, Code: "DBS.201204", Sentence: "a backup of this name exists already", Message: "The backup name already exists."},
		},
		"400 parameter": {
			reason: "any other 400 with a code is the spec's fault",
			err:    golangsdk.ErrDefault400{ErrUnexpectedResponseCode: resp(400, rdsBody("DBS.200001", "Parameter error."))},
			want:   cloud.Error{Kind: cloud.KindInvalid, Code: "DBS.200001", Sentence: "a parameter of the request is invalid", Message: "Parameter error."},
		},
		"400 no code": {
			reason: "a 400 without an OTC code is not known to be the spec's fault",
			err:    golangsdk.ErrDefault400{ErrUnexpectedResponseCode: resp(400, "<html>bad</html>")},
			want:   cloud.Error{Kind: cloud.KindUnknown, Message: "OTC answered 400: the request was not accepted", Detail: "an answer of 16 bytes that is not an OTC error"},
		},
		"400 sold out": {
			err:  golangsdk.ErrDefault400{ErrUnexpectedResponseCode: resp(400, rdsBody("DBS.280450", ""))},
			want: cloud.Error{Kind: cloud.KindInvalid, Code: "DBS.280450", Sentence: "the flavor is sold out in this availability zone", Message: "the flavor is sold out in this availability zone"},
		},
		"400 spec not found": {
			err:  golangsdk.ErrDefault400{ErrUnexpectedResponseCode: resp(400, rdsBody("DBS.200053", "The specification does not exist."))},
			want: cloud.Error{Kind: cloud.KindInvalid, Code: "DBS.200053", Sentence: "the flavor does not exist", Message: "The specification does not exist."},
		},
		"404 VPC": {
			reason: "an unknown VPC is the spec's fault, not a missing instance",
			err:    golangsdk.ErrDefault404{ErrUnexpectedResponseCode: resp(404, rdsBody("DBS.200503", "Either the VPC does not exist or does not belong to this user."))},
			want:   cloud.Error{Kind: cloud.KindInvalid, Code: "DBS.200503", Sentence: "the VPC does not exist or does not belong to this project", Message: "Either the VPC does not exist or does not belong to this user."},
		},
		"404 subnet": {
			err:  golangsdk.ErrDefault404{ErrUnexpectedResponseCode: resp(404, rdsBody("DBS.200501", ""))},
			want: cloud.Error{Kind: cloud.KindInvalid, Code: "DBS.200501", Sentence: "the subnet does not exist in this VPC", Message: "the subnet does not exist in this VPC"},
		},
		"404 security group": {
			err:  golangsdk.ErrDefault404{ErrUnexpectedResponseCode: resp(404, rdsBody("DBS.200050", "Security group not found."))},
			want: cloud.Error{Kind: cloud.KindInvalid, Code: "DBS.200050", Sentence: "the security group does not exist", Message: "Security group not found."},
		},
		"413 quota": {
			reason: "statuses without an ErrDefault type arrive as ErrUnexpectedResponseCode",
			err:    resp(413, rdsBody("DBS.200046", "Quota exceeded.")),
			want:   cloud.Error{Kind: cloud.KindInvalid, Code: "DBS.200046", Sentence: "the project's quota is used up", Message: "Quota exceeded."},
		},
		"429 with Retry-After": {
			err:  golangsdk.ErrDefault429{ErrUnexpectedResponseCode: resp(429, "")},
			info: callInfo{retryAfter: 7 * time.Second},
			want: cloud.Error{Kind: cloud.KindThrottled, Message: "OTC answered 429: too many requests", RetryAfter: 7 * time.Second},
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
			want: cloud.Error{Kind: cloud.KindUnavailable, Message: "OTC answered 502: bad gateway", Detail: "an answer of 24 bytes that is not an OTC error"},
		},
		"503": {
			err:  golangsdk.ErrDefault503{ErrUnexpectedResponseCode: resp(503, "")},
			want: cloud.Error{Kind: cloud.KindUnavailable, Message: "OTC answered 503: service unavailable"},
		},
		"408": {
			err:  golangsdk.ErrDefault408{ErrUnexpectedResponseCode: resp(408, "")},
			want: cloud.Error{Kind: cloud.KindUnavailable, Message: "OTC answered 408: the request timed out"},
		},
		"401 keystone": {
			err:  golangsdk.ErrDefault401{ErrUnexpectedResponseCode: resp(401, `{"error":{"code":401,"title":"Unauthorized","message":"The request you have made requires authentication."}}`)},
			want: cloud.Error{Kind: cloud.KindUnauthorized, Message: "OTC answered 401: the credentials were not accepted", Detail: "The request you have made requires authentication."},
		},
		"401 gateway": {
			err:  golangsdk.ErrDefault401{ErrUnexpectedResponseCode: resp(401, rdsBody("APIGW.0301", "Incorrect IAM authentication information: verify aksk signature fail"))},
			want: cloud.Error{Kind: cloud.KindUnauthorized, Code: "APIGW.0301", Message: "Incorrect IAM authentication information: verify aksk signature fail"},
		},
		"403": {
			err:  golangsdk.ErrDefault403{ErrUnexpectedResponseCode: resp(403, rdsBody("DBS.200044", "Resource not found or permission denied."))},
			want: cloud.Error{Kind: cloud.KindUnauthorized, Code: "DBS.200044", Sentence: "the resource does not exist or the controller may not use it", Message: "Resource not found or permission denied."},
		},
		"405": {
			err:  golangsdk.ErrDefault405{ErrUnexpectedResponseCode: resp(405, "")},
			want: cloud.Error{Kind: cloud.KindUnknown, Message: "OTC answered 405: the method is not allowed"},
		},
		"202 where 200 expected": {
			reason: "a success status outside OkCodes is not a success",
			err:    resp(202, `{"backup":{}}`),
			want:   cloud.Error{Kind: cloud.KindUnknown, Message: "OTC answered 202: a success status this request does not expect", Detail: "an answer of 13 bytes that is not an OTC error"},
		},
		"VPC v1 body": {
			err:  golangsdk.ErrDefault404{ErrUnexpectedResponseCode: resp(404, `{"code":"VPC.0003","message":"VPC does not exist."}`)},
			want: cloud.Error{Kind: cloud.KindNotFound, Code: "VPC.0003", Message: "VPC does not exist."},
		},
		"Neutron body": {
			err:  golangsdk.ErrDefault400{ErrUnexpectedResponseCode: resp(400, `{"NeutronError":{"type":"HTTPBadRequest","message":"Invalid input for filter.","detail":""}}`)},
			want: cloud.Error{Kind: cloud.KindUnknown, Message: "OTC answered 400: the request was not accepted", Detail: "Invalid input for filter."},
		},
		"reauth failed": {
			reason: "a renewal the SDK could not do: our credentials are refused",
			err:    &golangsdk.ErrUnableToReauthenticate{ErrOriginal: golangsdk.ErrDefault401{ErrUnexpectedResponseCode: resp(401, "")}},
			want:   cloud.Error{Kind: cloud.KindUnauthorized, Message: "OTC answered 401: the credentials were not accepted"},
		},
		"error after reauth": {
			reason: "after a successful renewal the retried call's own error counts",
			err:    &golangsdk.ErrErrorAfterReauthentication{ErrOriginal: golangsdk.ErrDefault409{ErrUnexpectedResponseCode: resp(409, rdsBody("DBS.200019", "busy"))}},
			want:   cloud.Error{Kind: cloud.KindBusy, Code: "DBS.200019", Message: "busy"},
		},
		"pagination wraps": {
			err:  fmt.Errorf("page: %w", golangsdk.ErrDefault503{ErrUnexpectedResponseCode: resp(503, "")}),
			want: cloud.Error{Kind: cloud.KindUnavailable, Message: "OTC answered 503: service unavailable"},
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
			reason: "the SDK formats some response errors with %s: their text is for the logs",
			err:    errors.New("first line\nsecond line " + testURL),
			want:   cloud.Error{Kind: cloud.KindUnknown, Message: "unexpected error", Detail: "first line second line <url>"},
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

// TestTranslateKeepsBodyTextOutOfMessage: text from an answer without an OTC error code can hold
// request ids and differs between calls; it may reach a condition only through Message, so it
// stays in Detail.
func TestTranslateKeepsBodyTextOutOfMessage(t *testing.T) {
	const requestID = "req-7f3c9a2e-41b8"
	cases := map[string]struct {
		reason string
		err    error
		// want is the Message; bodyText are pieces of the body it must not hold.
		want     cloud.Error
		bodyText []string
	}{
		"documented body with code": {
			reason: "OTC's documented error: its code is kept, sync/ says it in its own words",
			err:    golangsdk.ErrDefault400{ErrUnexpectedResponseCode: resp(400, rdsBody("DBS.200053", "The flavor does not exist."))},
			want:   cloud.Error{Kind: cloud.KindInvalid, Code: "DBS.200053", Sentence: "the flavor does not exist", Message: "The flavor does not exist."},
		},
		"codeless JSON 404": {
			reason:   "a codeless 404 reads as the status, its message goes to the logs",
			err:      golangsdk.ErrDefault404{ErrUnexpectedResponseCode: resp(404, `{"message":"Resource 0391e448 could not be found."}`)},
			want:     cloud.Error{Kind: cloud.KindNotFound, Message: "OTC answered 404: not found", Detail: "Resource 0391e448 could not be found."},
			bodyText: []string{"0391e448", "could not be found"},
		},
		"codeless JSON 413": {
			err:      resp(413, `{"error_code":"","error_msg":"Request body of 1048577 bytes too large"}`),
			want:     cloud.Error{Kind: cloud.KindInvalid, Message: "OTC answered 413: the request was too large", Detail: "Request body of 1048577 bytes too large"},
			bodyText: []string{"1048577", "Request body"},
		},
		"HTML gateway page": {
			reason:   "a gateway in front of OTC answers with its own page",
			err:      resp(504, `<html><head><title>504 Gateway Time-out</title></head><body><center>nginx</center><p>`+requestID+`</p></body></html>`),
			want:     cloud.Error{Kind: cloud.KindUnavailable, Message: "OTC answered 504: gateway timeout", Detail: "an answer of 120 bytes that is not an OTC error"},
			bodyText: []string{"<", "nginx", "Time-out", requestID},
		},
		"400 with a body that is not the documented JSON": {
			err:      golangsdk.ErrDefault400{ErrUnexpectedResponseCode: resp(400, `{"errors":[{"reason":"bad","request_id":"`+requestID+`"}]}`)},
			want:     cloud.Error{Kind: cloud.KindUnknown, Message: "OTC answered 400: the request was not accepted", Detail: "an answer of 62 bytes that is not an OTC error"},
			bodyText: []string{"bad", requestID},
		},
		"empty body": {
			err:  golangsdk.ErrDefault404{ErrUnexpectedResponseCode: resp(404, "")},
			want: cloud.Error{Kind: cloud.KindNotFound, Message: "OTC answered 404: not found"},
		},
		"codeless message with a request id": {
			reason:   "the request id changes on every call: Message must not",
			err:      golangsdk.ErrDefault409{ErrUnexpectedResponseCode: resp(409, `{"error":{"code":409,"message":"Conflict, request id `+requestID+`"}}`)},
			want:     cloud.Error{Kind: cloud.KindBusy, Message: "OTC answered 409: the request conflicts with the current state", Detail: "Conflict, request id " + requestID},
			bodyText: []string{"Conflict,", requestID},
		},
		"code that is not an OTC code": {
			reason:   "a code field holding free text is not trusted as a code",
			err:      golangsdk.ErrDefault404{ErrUnexpectedResponseCode: resp(404, `{"code":"not found: `+requestID+`","message":"gone"}`)},
			want:     cloud.Error{Kind: cloud.KindNotFound, Message: "OTC answered 404: not found", Detail: "not found: " + requestID + ": gone"},
			bodyText: []string{"gone", requestID},
		},
		"unknown status": {
			err:  resp(418, "I'm a teapot "+requestID),
			want: cloud.Error{Kind: cloud.KindUnknown, Message: "OTC answered 418", Detail: "an answer of 30 bytes that is not an OTC error"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := translate("Op", tc.err, callInfo{})
			tc.want.Op = "Op"
			assert.Equal(t, tc.want, *got, tc.reason)
			if got.Code == "" {
				assert.Contains(t, statusSentenceList(), got.Message, "%s: a codeless answer reads as one of our sentences", tc.reason)
			}
			for _, text := range append(tc.bodyText, requestID) {
				assert.NotContains(t, got.Message, text, tc.reason)
				assert.NotContains(t, got.Error(), text, "%s: Error leaves Detail out", tc.reason)
			}
		})
	}
}

// statusSentenceList is every Message a codeless answer may have.
func statusSentenceList() []string {
	var out []string
	for status := 100; status < 600; status++ {
		out = append(out, statusMessage(status))
	}
	return out
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
		assert.Equal(t, "token renewal failed: OTC answered 401: the credentials were not accepted", got.Message)
	})
	t.Run("renewal failed as Keystone is down", func(t *testing.T) {
		var cause error = golangsdk.ErrDefault503{ErrUnexpectedResponseCode: resp(503, "")}
		c.auth.lastErr = cause
		got := c.translate("Op", unable, callInfo{})
		require.Equal(t, cloud.KindUnavailable, got.Kind, "Keystone down is not a refusal of our credentials")
		assert.Equal(t, "token renewal failed: OTC answered 503: service unavailable", got.Message)
	})
}

func TestResultLabel(t *testing.T) {
	assert.Equal(t, "throttled", resultLabel(&cloud.Error{Kind: cloud.KindThrottled}))
	assert.Equal(t, "notfound", resultLabel(&cloud.Error{Kind: cloud.KindNotFound}))
	assert.Equal(t, "unknown", resultLabel(errors.New("x")))
}

// TestRefusalsReadAsOurSentences: a refusal OTC answers reads in a condition as the sentence of
// codes with the code for support, and never as OTC's error_msg.
func TestRefusalsReadAsOurSentences(t *testing.T) {
	cases := map[string]struct {
		reason string
		err    error
		want   string
	}{
		"known code": {
			reason: "a code we know reads as our own sentence, with the code for support",
			err:    golangsdk.ErrDefault400{ErrUnexpectedResponseCode: resp(400, rdsBody("DBS.200053", "Spec rds.x does not exist. (request 8f2c)"))},
			want:   "OTC refused the request: the flavor does not exist (DBS.200053).",
		},
		"unknown code": {
			reason: "an unknown code shows only the code, never OTC's message",
			err:    golangsdk.ErrDefault400{ErrUnexpectedResponseCode: resp(400, rdsBody("DBS.123456", "Something odd happened at 10:41:07."))},
			want:   "OTC refused the request (code DBS.123456).",
		},
		"IAM code": {
			reason: "IAM refusals are translated too",
			err:    golangsdk.ErrDefault400{ErrUnexpectedResponseCode: resp(400, rdsBody("IAM.0007", "The request body is invalid: duration_seconds"))},
			want:   "OTC refused the request: IAM refused the request for temporary credentials (IAM.0007).",
		},
		"codeless answer": {
			reason: "an answer without a code reads as our sentence for its status",
			err:    resp(413, `{"error_msg":"Request entity too large, request id 8f2c"}`),
			want:   "OTC refused the request: OTC answered 413: the request was too large.",
		},
		"adapter's own error": {
			reason: "an error the adapter makes before sending says what it found",
			err:    cloud.Errorf(cloud.KindInvalid, "", "", `VPC %q not found`, "frank-test"),
			want:   `OTC refused the request: VPC "frank-test" not found.`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, translate("Op", tc.err, callInfo{}).Refusal(), tc.reason)
		})
	}
}

// TestCodesCoverTheDocumentedRefusals: every refusal code otc-api.md lists for the calls the hooks
// make has a sentence of its own.
func TestCodesCoverTheDocumentedRefusals(t *testing.T) {
	for _, code := range []string{
		"DBS.200001", "DBS.200021", "DBS.200025", "DBS.200026", "DBS.200052", "DBS.200053", "DBS.290002",
		"DBS.280450", "DBS.201101", "DBS.201103", "DBS.201106", "DBS.200046", "DBS.200503", "DBS.200501",
		"DBS.200050", "DBS.200002", "DBS.201010", "DBS.212001", "DBS.200022", "DBS.201204", "DBS.200306",
		"DBS.200027", "DBS.200023",
	} {
		assert.NotEmpty(t, codes[code].sentence, "%s: a refusal OTC documents must read as our own sentence", code)
	}
}

// TestCodeSentencesAreShort: a sentence goes into a condition between "OTC refused the request: "
// and the code; it is one short clause without a full stop.
func TestCodeSentencesAreShort(t *testing.T) {
	for code, c := range codes {
		if c.sentence == "" {
			continue
		}
		assert.Equal(t, oneLine(c.sentence), c.sentence, code)
		assert.False(t, strings.HasSuffix(c.sentence, "."), "%s: the condition adds the full stop", code)
		assert.LessOrEqual(t, len(c.sentence), 80, code)
	}
}
