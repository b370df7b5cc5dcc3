package otcsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxBodyBytes bounds every request body the simulator reads.
const maxBodyBytes = 1 << 20

// Time layouts of the OTC APIs.
const (
	rdsTimeLayout = "2006-01-02T15:04:05-0700" // instances, backups and jobs: 2018-08-20T02:33:49+0800
	logTimeLayout = "2006-01-02T15:04:05"      // error and slow logs
)

func rdsTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(rdsTimeLayout)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		http.Error(w, `{"error_code":"DBS.108000","error_msg":"System error."}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// writeEmpty answers status with no body.
func writeEmpty(w http.ResponseWriter, status int) {
	w.WriteHeader(status)
}

// decodeBody reads a JSON request body into v. Unknown fields are ignored, as on OTC: the SDK sends
// untagged fields such as "ConfigId".
func decodeBody(r *http.Request, v any) *apiError {
	data, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return errMalformedBody(err)
	}
	if len(data) > maxBodyBytes {
		return errMalformedBody(errors.New("body too large"))
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return errMalformedBody(errors.New("empty body"))
	}
	if err := json.Unmarshal(data, v); err != nil {
		return errMalformedBody(err)
	}
	return nil
}

// flexInt is an integer that arrives as a JSON number or a string ("port":"8635" from the SDK,
// "port":8635 in the docs).
type flexInt struct {
	Value int
	Set   bool
}

func (f *flexInt) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		return nil
	}
	s = strings.Trim(s, `"`)
	if s == "" {
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("not an integer: %s", b)
	}
	f.Value, f.Set = n, true
	return nil
}

// queryInt parses an optional integer query parameter.
func queryInt(r *http.Request, name string, def int) (int, *apiError) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, errParam("%s must be an integer", name)
	}
	return n, nil
}

// page returns the [offset, offset+limit) window of n items.
func page(n, offset, limit int) (int, int) {
	if offset > n {
		offset = n
	}
	end := offset + limit
	if end > n {
		end = n
	}
	return offset, end
}
