package otc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	golangsdk "github.com/opentelekomcloud/gophertelekomcloud"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// maxMessage caps the length of an error message taken from OTC.
const maxMessage = 200

// codeInfo is what the adapter knows of one OTC error code.
type codeInfo struct {
	// kind pins the code's kind; byStatus leaves it to the HTTP status of the answer.
	kind cloud.Kind
	// sentence is our own words for the code (cloud.Error.Sentence), which conditions show instead
	// of OTC's error_msg; "" for a code no condition needs to name (busy, expired credentials).
	sentence string
}

// byStatus is the kind of a code that the HTTP status of the answer decides.
//
// NOTE: no code is pinned to cloud.KindUnknown, so its value is free to mean "not pinned".
const byStatus = cloud.KindUnknown

// codes is the one table of the OTC error codes the adapter knows (DOC:rds/appendix/error_codes;
// /work/shared/otc-api.md §4). OTC's error_msg never reaches a condition: its wording is OTC's to
// change, and a message that differs between two calls makes Metacontroller write status again
// and again. The logs keep the code and OTC's message.
var codes = map[string]codeInfo{
	// Parameters of the request.
	"DBS.200001": {byStatus, "a parameter of the request is invalid"},
	"DBS.280001": {byStatus, "a parameter of the request is invalid"},
	"DBS.200021": {byStatus, "the instance name is invalid"},
	"DBS.200025": {byStatus, "an availability zone in availabilityzone is invalid"},
	"DBS.200026": {byStatus, "the volume type is not offered for this engine or availability zone"},
	"DBS.200052": {byStatus, "the root password does not meet OTC's rules"},
	"DBS.201101": {byStatus, "the backup cycle is invalid"},
	"DBS.201103": {byStatus, "backupstarttime is invalid"},
	"DBS.201106": {byStatus, "backupkeepdays is out of range"},
	"DBS.212002": {byStatus, "a parameter value is invalid"},

	// The spec must change: no such flavor, sold out, quota, storage.
	"DBS.200053": {cloud.KindInvalid, "the flavor does not exist"},
	"DBS.290002": {cloud.KindInvalid, "the flavor does not exist"},
	"DBS.280450": {cloud.KindInvalid, "the flavor is sold out in this availability zone"},
	"DBS.200046": {cloud.KindInvalid, "the project's quota is used up"}, // 413
	"DBS.200306": {byStatus, "the volume can only grow"},
	"DBS.200027": {byStatus, "the volume size must be a multiple of 10"},
	"DBS.200023": {byStatus, "the volume size is out of range"},

	// A network that does not exist.
	// NOTE: RDS answers an unknown VPC, subnet or security group with 404; that is the user's
	// spec, not a missing instance, so it must not read as NotFound.
	"DBS.200503": {cloud.KindInvalid, "the VPC does not exist or does not belong to this project"},
	"DBS.200501": {cloud.KindInvalid, "the subnet does not exist in this VPC"},
	"DBS.200050": {cloud.KindInvalid, "the security group does not exist"},

	// Instance, backup, parameter group or job does not exist.
	"DBS.200002": {cloud.KindNotFound, "the instance does not exist"},
	"DBS.200045": {cloud.KindNotFound, "the instance does not exist"},
	"DBS.200408": {cloud.KindNotFound, "the instance does not exist"},
	"DBS.200602": {cloud.KindNotFound, "the instance does not exist"},
	"DBS.201028": {cloud.KindNotFound, "the instance does not exist"},
	"DBS.290005": {cloud.KindNotFound, "the instance does not exist"},
	"DBS.201010": {cloud.KindNotFound, "the backup does not exist"},
	"DBS.212001": {cloud.KindNotFound, "the parameter group does not exist"},
	// NOTE: a job OTC has not registered yet answers 400 DBS.200543 "The job does not exist".
	"DBS.200543": {cloud.KindNotFound, "the job does not exist"},
	"DBS.200044": {byStatus, "the resource does not exist or the controller may not use it"}, // 403

	// The name is taken.
	"DBS.200022": {cloud.KindConflict, "an instance of this name exists already"},
	"DBS.201204": {cloud.KindConflict, "a backup of this name exists already"},
	"DBS.212012": {cloud.KindConflict, "a parameter template of this name exists already"},

	// Another operation is running, or the instance's state refuses this one: try again later.
	"DBS.200019": {cloud.KindBusy, ""},
	"DBS.200011": {cloud.KindBusy, ""},
	"DBS.200047": {cloud.KindBusy, ""},
	"DBS.201202": {cloud.KindBusy, ""},
	"DBS.201205": {cloud.KindBusy, ""}, // a backup is in progress
	"DBS.200086": {cloud.KindBusy, ""}, // 400 "not allowed by the DB instance status"
	"DBS.201014": {cloud.KindBusy, ""}, // 400, same
	"DBS.200316": {cloud.KindBusy, ""}, // 409 storage full
	"DBS.280449": {cloud.KindBusy, ""}, // 400 frozen
	// Codes terraform-provider-opentelekomcloud retries on as well.
	"DBS.201015": {cloud.KindBusy, ""},
	"DBS.201206": {cloud.KindBusy, ""},
	"DBS.212033": {cloud.KindBusy, ""},
	"DBS.280011": {cloud.KindBusy, ""},
	"DBS.280343": {cloud.KindBusy, ""},
	"DBS.280816": {cloud.KindBusy, ""},

	// IAM (temporary credentials for log Jobs).
	"IAM.0007": {byStatus, "IAM refused the request for temporary credentials"},
	// NOTE: an expired temporary AK/SK answers 400 IAM.1108, not 401.
	"IAM.1108": {cloud.KindUnauthorized, ""},
}

// statusKind sorts an HTTP error status without a more telling error code.
func statusKind(status int, hasCode bool) cloud.Kind {
	switch {
	case status == http.StatusBadRequest && hasCode:
		return cloud.KindInvalid
	case status == http.StatusUnauthorized, status == http.StatusForbidden:
		return cloud.KindUnauthorized
	case status == http.StatusNotFound:
		return cloud.KindNotFound
	case status == http.StatusRequestTimeout:
		return cloud.KindUnavailable
	case status == http.StatusConflict:
		return cloud.KindBusy // the safe reading of an unknown 409: retry later
	case status == http.StatusRequestEntityTooLarge:
		return cloud.KindInvalid // OTC's quota errors
	case status == http.StatusTooManyRequests:
		return cloud.KindThrottled
	case status >= 500:
		return cloud.KindUnavailable
	}
	return cloud.KindUnknown
}

// translate turns an error from the SDK or the transport into a *cloud.Error. Its text never holds
// URLs, response bodies or more than one line. Its Message is OTC's error_msg only when the answer
// had an OTC error code (whose Sentence, from codes, says it in our own words); else it is a
// sentence of ours. Text taken from any other answer (a gateway's HTML page, a codeless JSON body
// with a request id) goes to Detail, for the logs.
func translate(op string, err error, info callInfo) *cloud.Error {
	var ce *cloud.Error
	if errors.As(err, &ce) {
		out := *ce
		if out.Op == "" {
			out.Op = op
		}
		return &out
	}
	if e := (*golangsdk.ErrErrorAfterReauthentication)(nil); errors.As(err, &e) {
		return translate(op, e.ErrOriginal, info)
	}
	if e := (*golangsdk.ErrUnableToReauthenticate)(nil); errors.As(err, &e) {
		out := translate(op, e.ErrOriginal, info)
		out.Kind = cloud.KindUnauthorized
		return out
	}
	if resp, ok := responseError(err); ok {
		return fromResponse(op, resp, info)
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return &cloud.Error{Kind: cloud.KindUnavailable, Op: op, Message: "no answer before the deadline"}
	case errors.Is(err, context.Canceled):
		return &cloud.Error{Kind: cloud.KindUnavailable, Op: op, Message: "request canceled"}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &cloud.Error{Kind: cloud.KindUnavailable, Op: op, Message: "connection closed before the answer"}
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return &cloud.Error{Kind: cloud.KindUnavailable, Op: op, Message: "request timed out"}
	}
	var urlErr *url.Error
	var opErr *net.OpError
	if errors.As(err, &urlErr) || errors.As(err, &opErr) {
		return &cloud.Error{Kind: cloud.KindUnavailable, Op: op, Message: "connection failed"}
	}
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &syntaxErr) || errors.As(err, &typeErr) {
		return &cloud.Error{Kind: cloud.KindUnknown, Op: op, Message: "unexpected answer from OTC"}
	}
	// Checks the SDK makes before sending (required fields); their text names only the field.
	var missing golangsdk.ErrMissingInput
	var invalid golangsdk.ErrInvalidInput
	switch {
	case errors.As(err, &invalid):
		return &cloud.Error{Kind: cloud.KindInvalid, Op: op, Message: "invalid value for " + invalid.Argument}
	case errors.As(err, &missing):
		return &cloud.Error{Kind: cloud.KindInvalid, Op: op, Message: "missing value for " + missing.Argument}
	}
	// NOTE: the SDK formats some response errors with %s (e.g. "list domains failed, err=..."),
	// which quotes the body; such a text is only fit for the logs.
	return &cloud.Error{Kind: cloud.KindUnknown, Op: op, Message: "unexpected error", Detail: oneLine(err.Error())}
}

// responseError finds the HTTP answer in an SDK error. The SDK returns its errors as values of the
// ErrDefaultNNN types, or as a bare ErrUnexpectedResponseCode for other statuses (413, 502/504 after
// its retry, a 2xx outside OkCodes); none of them has an Unwrap.
func responseError(err error) (golangsdk.ErrUnexpectedResponseCode, bool) {
	switch e := err.(type) {
	case golangsdk.ErrDefault400:
		return e.ErrUnexpectedResponseCode, true
	case golangsdk.ErrDefault401:
		return e.ErrUnexpectedResponseCode, true
	case golangsdk.ErrDefault403:
		return e.ErrUnexpectedResponseCode, true
	case golangsdk.ErrDefault404:
		return e.ErrUnexpectedResponseCode, true
	case golangsdk.ErrDefault405:
		return e.ErrUnexpectedResponseCode, true
	case golangsdk.ErrDefault408:
		return e.ErrUnexpectedResponseCode, true
	case golangsdk.ErrDefault409:
		return e.ErrUnexpectedResponseCode, true
	case golangsdk.ErrDefault429:
		return e.ErrUnexpectedResponseCode, true
	case golangsdk.ErrDefault500:
		return e.ErrUnexpectedResponseCode, true
	case golangsdk.ErrDefault503:
		return e.ErrUnexpectedResponseCode, true
	case golangsdk.ErrUnexpectedResponseCode:
		return e, true
	case *golangsdk.ErrUnexpectedResponseCode:
		return *e, true
	}
	// Pagination wraps the page's error with %w.
	if u := errors.Unwrap(err); u != nil {
		return responseError(u)
	}
	return golangsdk.ErrUnexpectedResponseCode{}, false
}

func fromResponse(op string, resp golangsdk.ErrUnexpectedResponseCode, info callInfo) *cloud.Error {
	code, msg := parseErrorBody(resp.Body)
	out := &cloud.Error{Op: op}
	if !codePattern.MatchString(code) {
		// Without an OTC error code the body's text is not ours to show: the logs get it.
		switch {
		case code != "" || msg != "":
			out.Detail = oneLine(strings.TrimPrefix(code+": "+msg, ": "))
		case len(resp.Body) > 0:
			out.Detail = fmt.Sprintf("an answer of %d bytes that is not an OTC error", len(resp.Body))
		}
		code, msg = "", ""
	}
	known := codes[code]
	out.Kind, out.Code, out.Sentence = known.kind, code, known.sentence
	if out.Kind == byStatus {
		out.Kind = statusKind(resp.Actual, code != "")
	}
	// An empty error_msg is filled with our sentence for the code, for the logs.
	out.Message = firstNonEmpty(oneLine(msg), known.sentence, statusMessage(resp.Actual))
	if out.Kind == cloud.KindThrottled {
		out.RetryAfter = info.retryAfter
	}
	return out
}

// codePattern is the form of OTC's error codes (DBS.200019, IAM.1108, APIGW.0301, VPC.0003). A
// "code" of any other form is not one of them and is not trusted to be stable.
var codePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,15}\.[A-Za-z0-9]{1,12}$`)

// statusSentences say what an HTTP error status means, for answers without an OTC error code.
var statusSentences = map[int]string{
	http.StatusBadRequest:            "the request was not accepted",
	http.StatusUnauthorized:          "the credentials were not accepted",
	http.StatusForbidden:             "the request is not permitted",
	http.StatusNotFound:              "not found",
	http.StatusMethodNotAllowed:      "the method is not allowed",
	http.StatusRequestTimeout:        "the request timed out",
	http.StatusConflict:              "the request conflicts with the current state",
	http.StatusRequestEntityTooLarge: "the request was too large",
	http.StatusTooManyRequests:       "too many requests",
	http.StatusInternalServerError:   "internal error",
	http.StatusBadGateway:            "bad gateway",
	http.StatusServiceUnavailable:    "service unavailable",
	http.StatusGatewayTimeout:        "gateway timeout",
}

// statusMessage is our fixed sentence for an HTTP status: it depends on nothing but the status, so
// that two answers that differ only in their body (request ids, a gateway's page) read the same.
func statusMessage(status int) string {
	s := "OTC answered " + strconv.Itoa(status)
	switch sentence, ok := statusSentences[status]; {
	case ok:
		return s + ": " + sentence
	case status >= 200 && status < 300:
		return s + ": a success status this request does not expect"
	}
	return s
}

// parseErrorBody reads the error code and message from the error bodies the OTC services use.
func parseErrorBody(body []byte) (code, msg string) {
	var b struct {
		// RDS v3, API gateway, VPC v3: {"error_code","error_msg"}
		ErrorCode string `json:"error_code"`
		ErrorMsg  string `json:"error_msg"`
		// VPC v1: {"code","message"}; code is sometimes a number
		Code    json.RawMessage `json:"code"`
		Message json.RawMessage `json:"message"`
		// Keystone: {"error":{"code":401,"title","message"}}
		Error *struct {
			Code    json.RawMessage `json:"code"`
			Title   string          `json:"title"`
			Message string          `json:"message"`
		} `json:"error"`
		// Neutron: {"NeutronError":{"type","message","detail"}}
		Neutron *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"NeutronError"`
		// RDS v1/Trove: {"errCode","externalMessage"}
		ErrCode         string `json:"errCode"`
		ExternalMessage string `json:"externalMessage"`
	}
	if json.Unmarshal(body, &b) != nil {
		return "", ""
	}
	switch {
	case b.ErrorCode != "" || b.ErrorMsg != "":
		return b.ErrorCode, b.ErrorMsg
	case b.Error != nil:
		c := rawString(b.Error.Code)
		if strings.HasPrefix(c, "IAM.") || strings.HasPrefix(c, "APIGW.") {
			return c, b.Error.Message
		}
		return "", firstNonEmpty(b.Error.Message, b.Error.Title)
	case b.Neutron != nil:
		return "", b.Neutron.Message
	case b.ErrCode != "":
		return b.ErrCode, b.ExternalMessage
	case len(b.Code) > 0 || len(b.Message) > 0:
		c := rawString(b.Code)
		if _, err := strconv.Atoi(c); err == nil {
			c = "" // the HTTP status repeated, not an OTC code
		}
		return c, rawString(b.Message)
	}
	return "", ""
}

// rawString reads a JSON string or number as text; anything else (an object) as "".
func rawString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

var urlPattern = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://\S+`)

// oneLine makes a message fit an *cloud.Error: one line, no URLs, at most maxMessage characters.
func oneLine(s string) string {
	s = urlPattern.ReplaceAllString(s, "<url>")
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= maxMessage {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:maxMessage-1])) + "…"
}

// resultLabel is the metric label of a call's outcome.
func resultLabel(err error) string {
	return strings.ToLower(cloud.KindOf(err).String())
}
