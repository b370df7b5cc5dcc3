package otcsim

import (
	"net/http"
	"strings"
	"time"
)

// tempCredential is a temporary AK/SK with its security token.
type tempCredential struct {
	access, secret, securityToken string
	expires                       time.Time
}

// Limits of duration_seconds (DOC: obtaining a temporary AK/SK).
const (
	minCredentialDuration     = 900
	maxCredentialDuration     = 86400
	defaultCredentialDuration = 900
)

// handleCreateTemporaryCredential serves POST /v3.0/OS-CREDENTIAL/securitytokens.
// NOTE: the SDK builds this URL by rewriting "v3/" to "v3.0/" in the identity URL. The token to
// exchange comes from X-Auth-Token, which wins over the (usually empty) token.id of the body.
func (s *Sim) handleCreateTemporaryCredential(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Auth struct {
			Identity struct {
				Methods []string `json:"methods"`
				Token   *struct {
					ID              string `json:"id"`
					DurationSeconds int    `json:"duration_seconds"`
				} `json:"token"`
			} `json:"identity"`
		} `json:"auth"`
	}
	if e := decodeBody(r, &req); e != nil {
		writeError(w, svcIAM, errorf(http.StatusBadRequest, "IAM.0007", "%s", e.Message))
		return
	}
	now := s.lockAt()
	defer s.mu.Unlock()

	id := req.Auth.Identity
	if len(id.Methods) != 1 || id.Methods[0] != "token" || id.Token == nil {
		writeError(w, svcIAM, errorf(http.StatusBadRequest, "IAM.0007",
			"The simulator supports only the token method for temporary credentials."))
		return
	}
	tokID := r.Header.Get("X-Auth-Token")
	if tokID == "" {
		tokID = id.Token.ID
	}
	if !s.tokens[tokID].validAt(now) {
		writeError(w, svcIAM, unauthorized(svcIAM, ""))
		return
	}
	dur := id.Token.DurationSeconds
	if dur == 0 {
		dur = defaultCredentialDuration
	}
	if dur < minCredentialDuration || dur > maxCredentialDuration {
		writeError(w, svcIAM, errorf(http.StatusBadRequest, "IAM.0007",
			"duration_seconds must be between %d and %d.", minCredentialDuration, maxCredentialDuration))
		return
	}
	c := &tempCredential{
		access:        strings.ToUpper(s.randHex(20)),
		secret:        s.randHex(40),
		securityToken: "gQpzc2ltLXNlY3VyaXR5LXRva2Vu" + s.randHex(96),
		expires:       now.Add(time.Duration(dur) * time.Second),
	}
	s.credentials[c.access] = c
	writeJSON(w, http.StatusCreated, map[string]any{"credential": map[string]any{
		"access":        c.access,
		"secret":        c.secret,
		"securitytoken": c.securityToken,
		"expires_at":    c.expires.UTC().Format("2006-01-02T15:04:05.000000Z"),
	}})
}
