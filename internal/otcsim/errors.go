package otcsim

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// service says which OTC service a route belongs to; it decides the shape of error bodies.
type service int

const (
	svcIAM     service = iota // Keystone style
	svcRDS                    // {"error_code","error_msg"}
	svcVPC                    // VPC v1 {"code","message"}
	svcNeutron                // {"NeutronError":{...}}
	svcCES                    // {"http_code","message":{"details","code"}}
	svcVPC3                   // VPC v3 {"request_id","error_code","error_msg"}
	svcControl                // the simulator's own API
)

// apiError is an error answer in the style of the service that produces it.
type apiError struct {
	Status  int
	Code    string // e.g. DBS.200022; empty for Keystone errors
	Message string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message) }

func errorf(status int, code, format string, args ...any) *apiError {
	return &apiError{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Frequently used RDS errors, with the texts of the OTC error code appendix.
func errParam(format string, args ...any) *apiError {
	return errorf(http.StatusBadRequest, "DBS.200001", "Parameter error: "+format, args...)
}

func errInstanceNotFound(id string) *apiError {
	return errorf(http.StatusNotFound, "DBS.200002", "The DB instance %s does not exist.", id)
}

func errInstanceBusy() *apiError {
	return errorf(http.StatusConflict, "DBS.200019",
		"Another operation is being performed on the DB instance or the DB instance is faulty.")
}

func errMalformedBody(err error) *apiError {
	return errorf(http.StatusBadRequest, "DBS.200001", "Parameter error: the request body is not valid JSON: %v", err)
}

// writeError writes e in the body style of svc.
func writeError(w http.ResponseWriter, svc service, e *apiError) {
	switch svc {
	case svcIAM:
		body := map[string]any{"error": map[string]any{
			"code": e.Status, "title": http.StatusText(e.Status), "message": e.Message,
		}}
		// NOTE: OTC IAM puts its own code (IAM.0012, IAM.1108, ...) next to the Keystone error for
		// some answers; clients that parse either shape find what they look for.
		if e.Code != "" {
			body["error_code"] = e.Code
			body["error_msg"] = e.Message
		}
		writeJSON(w, e.Status, body)
	case svcVPC:
		writeJSON(w, e.Status, map[string]any{"code": e.Code, "message": e.Message})
	case svcNeutron:
		// Code, when set, is Neutron's exception type (NetworkNotFound, ...).
		typ := e.Code
		if typ == "" {
			typ = neutronType(e.Status)
		}
		writeJSON(w, e.Status, map[string]any{"NeutronError": map[string]any{
			"type": typ, "message": e.Message, "detail": "",
		}})
	case svcVPC3:
		writeJSON(w, e.Status, map[string]any{"request_id": stableHex("request/" + e.Code + "/" + e.Message), "error_code": e.Code, "error_msg": e.Message})
	case svcCES:
		writeJSON(w, e.Status, map[string]any{
			"http_code": strconv.Itoa(e.Status),
			"message":   map[string]any{"details": e.Message, "code": e.Code},
		})
	default:
		writeJSON(w, e.Status, map[string]any{"error_code": e.Code, "error_msg": e.Message})
	}
}

func neutronType(status int) string {
	switch status {
	case http.StatusNotFound:
		return "NotFound"
	case http.StatusBadRequest:
		return "BadRequest"
	case http.StatusConflict:
		return "Conflict"
	default:
		return "NeutronError"
	}
}

// notFoundError is the answer for a path the simulator does not serve.
func notFoundError(svc service, method, path string) *apiError {
	msg := fmt.Sprintf("The API %s %s does not exist in the simulator.", method, path)
	switch svc {
	case svcRDS:
		return errorf(http.StatusNotFound, "DBS.200045", "%s", msg)
	case svcVPC, svcVPC3:
		return errorf(http.StatusNotFound, "VPC.0001", "%s", msg)
	case svcCES:
		return errorf(http.StatusNotFound, "ces.0001", "%s", msg)
	default:
		// NOTE: this is what the API gateway answers for an unknown path.
		return errorf(http.StatusNotFound, "APIGW.0101", "%s", msg)
	}
}

// unauthorized is the API gateway's answer for a missing, unknown or expired token on a service call.
func unauthorized(svc service, reason string) *apiError {
	if svc == svcIAM {
		return errorf(http.StatusUnauthorized, "", "The request you have made requires authentication.")
	}
	return errorf(http.StatusUnauthorized, "APIGW.0301", "Incorrect IAM authentication information: %s", reason)
}

// throttled is a 429 in the style of svc.
func throttled(svc service) *apiError {
	switch svc {
	case svcIAM:
		return errorf(http.StatusTooManyRequests, "IAM.0012",
			"The throttling threshold has been reached. Threshold: %d times per %d seconds", 10, 1)
	case svcCES:
		return errorf(http.StatusTooManyRequests, "ces.0429", "Concurrent requests are excessive.")
	default:
		return errorf(http.StatusTooManyRequests, "APIGW.0308",
			"The throttling threshold has been reached: policy user over ratelimit, limit:%d, time:1 minute", 50)
	}
}

// serverError is a 5xx in the style of svc.
func serverError(svc service, status int) *apiError {
	switch svc {
	case svcRDS:
		if status == http.StatusServiceUnavailable {
			return errorf(status, "DBS.108000", "Service unavailable. Try again later.")
		}
		return errorf(status, "DBS.108000", "System error.")
	case svcVPC, svcVPC3:
		return errorf(status, "VPC.0500", "System error.")
	case svcCES:
		return errorf(status, "ces.0028", "Internal service error.")
	default:
		return errorf(status, "", "%s", http.StatusText(status))
	}
}

func retryAfterSeconds(d time.Duration) string {
	secs := int((d + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	return strconv.Itoa(secs)
}
