package otcsim

import (
	"net/http"
	"slices"
)

// tag rules (DOC: tag management): keys 1–36, values 0–43 characters; at most 20 tags.
const maxTags = 20

func validTag(t tag) bool {
	ok := func(s string, min, max int) bool {
		if len(s) < min || len(s) > max {
			return false
		}
		for _, c := range s {
			if !(c == '-' || c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
				return false
			}
		}
		return true
	}
	return ok(t.Key, 1, 36) && ok(t.Value, 0, 43)
}

// handleTagsAction serves POST /instances/{id}/tags/action (create upserts, delete removes by key).
// NOTE: it answers 200 with no body (the SDK accepts 200 and 204, not 202). CreateRdsOpts of
// SDK v0.9.8 has no tags: clients tag after create.
func (s *Sim) handleTagsAction(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Action string `json:"action"`
		Tags   []tag  `json:"tags"`
	}
	if e := decodeBody(r, &req); e != nil {
		writeError(w, svcRDS, e)
		return
	}
	if (req.Action != "create" && req.Action != "delete") || len(req.Tags) == 0 {
		writeError(w, svcRDS, errParam("action must be create or delete, with at least one tag"))
		return
	}
	for _, t := range req.Tags {
		if !validTag(t) {
			writeError(w, svcRDS, errParam("invalid tag %q=%q", t.Key, t.Value))
			return
		}
	}
	in, _ := s.lockInstance(w, r, nil)
	if in == nil {
		return
	}
	defer s.mu.Unlock()
	if in.deleting() {
		writeError(w, svcRDS, errInstanceBusy())
		return
	}
	tags := slices.Clone(in.tags)
	for _, t := range req.Tags {
		i := slices.IndexFunc(tags, func(x tag) bool { return x.Key == t.Key })
		switch {
		case req.Action == "delete" && i >= 0:
			tags = slices.Delete(tags, i, i+1)
		case req.Action == "create" && i >= 0:
			tags[i].Value = t.Value
		case req.Action == "create":
			tags = append(tags, t)
		}
	}
	if len(tags) > maxTags {
		writeError(w, svcRDS, errorf(http.StatusBadRequest, "DBS.200001", "An instance can have at most %d tags.", maxTags))
		return
	}
	in.tags = tags
	// The ownership tags name the object an endpoint key "NAMESPACE/NAME" backs (endpoints.go).
	if !in.endpointPinned {
		in.endpointHost, in.endpointPort = s.endpointOf(in)
	}
	writeEmpty(w, http.StatusOK)
}

// handleGetTags serves GET /instances/{id}/tags.
func (s *Sim) handleGetTags(w http.ResponseWriter, r *http.Request) {
	in, _ := s.lockInstance(w, r, nil)
	if in == nil {
		return
	}
	defer s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"tags": in.tags})
}
