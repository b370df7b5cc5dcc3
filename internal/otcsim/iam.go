package otcsim

import (
	"net/http"
	"strings"
	"time"
)

// tokenLifetime is how long an OTC token is valid; it cannot be shortened.
const tokenLifetime = 24 * time.Hour

// token is an issued Keystone token.
type token struct {
	id            string
	methods       []string
	issued        time.Time
	expires       time.Time
	projectScoped bool
	domainScoped  bool
	revoked       bool
}

func (t *token) validAt(now time.Time) bool {
	return t != nil && !t.revoked && now.Before(t.expires)
}

// authRequest is the body of POST /v3/auth/tokens (SDK: auth_options.go ToTokenV3CreateMap).
type authRequest struct {
	Auth struct {
		Identity struct {
			Methods  []string `json:"methods"`
			Password *struct {
				User authUser `json:"user"`
			} `json:"password"`
			Token *struct {
				ID string `json:"id"`
			} `json:"token"`
			TOTP *struct {
				User struct {
					Passcode string `json:"passcode"`
				} `json:"user"`
			} `json:"totp"`
		} `json:"identity"`
		Scope *struct {
			Project *struct {
				ID     string   `json:"id"`
				Name   string   `json:"name"`
				Domain *nameRef `json:"domain"`
			} `json:"project"`
			Domain *nameRef `json:"domain"`
		} `json:"scope"`
	} `json:"auth"`
}

type authUser struct {
	ID       string   `json:"id"`
	Name     string   `json:"name"`
	Password string   `json:"password"`
	Domain   *nameRef `json:"domain"`
}

type nameRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

func (s *Sim) domainMatches(d *nameRef) bool {
	return d != nil && (d.ID == s.domainID || d.Name == s.opts.DomainName)
}

// handleCreateToken serves POST /v3/auth/tokens.
func (s *Sim) handleCreateToken(w http.ResponseWriter, r *http.Request) {
	var req authRequest
	if e := decodeBody(r, &req); e != nil {
		writeError(w, svcIAM, errorf(http.StatusBadRequest, "", "%s", e.Message))
		return
	}
	now := s.lockAt()
	defer s.mu.Unlock()

	id := req.Auth.Identity
	if len(id.Methods) == 0 {
		writeError(w, svcIAM, errorf(http.StatusBadRequest, "", "Expecting to find identity methods in auth."))
		return
	}
	for _, m := range id.Methods {
		switch m {
		case "password":
			if id.Password == nil || !s.userMatches(id.Password.User) {
				writeError(w, svcIAM, unauthorized(svcIAM, ""))
				return
			}
		case "token":
			tokID := r.Header.Get("X-Auth-Token")
			if id.Token != nil && id.Token.ID != "" {
				tokID = id.Token.ID
			}
			if !s.tokens[tokID].validAt(now) {
				writeError(w, svcIAM, unauthorized(svcIAM, ""))
				return
			}
		case "totp":
			if id.TOTP == nil || len(id.TOTP.User.Passcode) != 6 {
				writeError(w, svcIAM, unauthorized(svcIAM, ""))
				return
			}
		default:
			writeError(w, svcIAM, errorf(http.StatusBadRequest, "", "The simulator does not support the auth method %q.", m))
			return
		}
	}

	t := &token{id: "MIIsim" + s.randHex(64), methods: id.Methods, issued: now, expires: now.Add(tokenLifetime)}
	if sc := req.Auth.Scope; sc != nil {
		switch {
		case sc.Project != nil:
			p := sc.Project
			if (p.ID != "" && p.ID != s.opts.ProjectID) ||
				(p.ID == "" && (p.Name != s.opts.ProjectName || !s.domainMatches(p.Domain))) {
				writeError(w, svcIAM, unauthorized(svcIAM, ""))
				return
			}
			t.projectScoped = true
		case sc.Domain != nil:
			if !s.domainMatches(sc.Domain) {
				writeError(w, svcIAM, unauthorized(svcIAM, ""))
				return
			}
			t.domainScoped = true
		}
	}
	s.tokens[t.id] = t

	w.Header().Set("X-Subject-Token", t.id)
	writeJSON(w, http.StatusCreated, s.tokenBody(t, s.baseURL(r), !r.URL.Query().Has("nocatalog")))
}

func (s *Sim) userMatches(u authUser) bool {
	if u.Password != s.opts.Password {
		return false
	}
	if u.ID != "" {
		return u.ID == s.userID
	}
	return u.Name == s.opts.Username && s.domainMatches(u.Domain)
}

// subjectToken returns the valid token named by X-Subject-Token of a request authenticated by a
// valid X-Auth-Token, or answers the error and returns nil. The caller holds s.mu.
func (s *Sim) subjectToken(w http.ResponseWriter, r *http.Request, now time.Time) *token {
	if !s.tokens[r.Header.Get("X-Auth-Token")].validAt(now) {
		writeError(w, svcIAM, unauthorized(svcIAM, ""))
		return nil
	}
	subject := s.tokens[r.Header.Get("X-Subject-Token")]
	if !subject.validAt(now) {
		writeError(w, svcIAM, errorf(http.StatusNotFound, "", "The token could not be found."))
		return nil
	}
	return subject
}

// handleGetToken serves GET and HEAD /v3/auth/tokens.
// NOTE: the SDK's token login (OS_TOKEN) reads the token id from the X-Subject-Token header of this
// answer; without the echo it silently ends up with an empty token.
func (s *Sim) handleGetToken(w http.ResponseWriter, r *http.Request) {
	now := s.lockAt()
	defer s.mu.Unlock()
	subject := s.subjectToken(w, r, now)
	if subject == nil {
		return
	}
	w.Header().Set("X-Subject-Token", subject.id)
	if r.Method == http.MethodHead {
		writeEmpty(w, http.StatusOK)
		return
	}
	writeJSON(w, http.StatusOK, s.tokenBody(subject, s.baseURL(r), !r.URL.Query().Has("nocatalog")))
}

// handleRevokeToken serves DELETE /v3/auth/tokens.
func (s *Sim) handleRevokeToken(w http.ResponseWriter, r *http.Request) {
	now := s.lockAt()
	defer s.mu.Unlock()
	subject := s.subjectToken(w, r, now)
	if subject == nil {
		return
	}
	subject.revoked = true
	writeEmpty(w, http.StatusNoContent)
}

// tokenBody renders a token as Keystone does.
func (s *Sim) tokenBody(t *token, base string, withCatalog bool) map[string]any {
	domain := map[string]any{"id": s.domainID, "name": s.opts.DomainName}
	body := map[string]any{
		"methods":    t.methods,
		"expires_at": t.expires.UTC().Format("2006-01-02T15:04:05.000000Z"),
		"issued_at":  t.issued.UTC().Format("2006-01-02T15:04:05.000000Z"),
		"user": map[string]any{
			"id": s.userID, "name": s.opts.Username, "domain": domain, "password_expires_at": "",
		},
		"roles": []map[string]any{{"id": "0", "name": "te_admin"}, {"id": "1", "name": "op_gated_rds"}},
	}
	if t.projectScoped {
		body["project"] = map[string]any{"id": s.opts.ProjectID, "name": s.opts.ProjectName, "domain": domain}
		if withCatalog {
			body["catalog"] = s.catalog(base)
		}
	} else if t.domainScoped {
		body["domain"] = domain
		if withCatalog {
			body["catalog"] = []any{}
		}
	}
	return map[string]any{"token": body}
}

// baseURL is the URL the catalog points back at.
func (s *Sim) baseURL(r *http.Request) string {
	if s.opts.BaseURL != "" {
		return strings.TrimSuffix(s.opts.BaseURL, "/")
	}
	return "http://" + r.Host
}

// catalog is the service catalog, laid out as the SDK needs it (see the package README):
//   - rdsv3    → <base>/rds/v3/<pid>         (NewRDSV3 uses it as is)
//   - volumev2 → <base>/evs/v2/<pid>         (NewCESClient rewrites it to <base>/ces/V1.0/<pid>/)
//   - network  → <base>/vpc/                 (NewNetworkV1 appends v1/, NewNetworkV2 appends v2.0/)
//   - vpc      → <base>/vpc/v1/<pid>         (NewVpcV3 rewrites v1 to v3 and appends vpc/: <base>/vpc/v3/<pid>/vpc/)
//   - identity → <base>/v3
func (s *Sim) catalog(base string) []map[string]any {
	pid := s.opts.ProjectID
	entry := func(typ, name, url string) map[string]any {
		return map[string]any{
			"id": stableHex("service/" + typ), "name": name, "type": typ,
			"endpoints": []map[string]any{{
				"id": stableHex("endpoint/" + typ), "interface": "public",
				"region": Region, "region_id": Region, "url": url,
			}},
		}
	}
	return []map[string]any{
		entry("rdsv3", "rdsv3", base+"/rds/v3/"+pid),
		entry("volumev2", "cinderv2", base+"/evs/v2/"+pid),
		entry("network", "neutron", base+"/vpc/"),
		entry("vpc", "vpc", base+"/vpc/v1/"+pid),
		entry("ces", "ces", base+"/ces/V1.0/"+pid),
		entry("identity", "keystone", base+"/v3"),
	}
}

// handleCatalog serves GET /v3/auth/catalog (used by the SDK's AK/SK login).
func (s *Sim) handleCatalog(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"catalog": s.catalog(s.baseURL(r)),
		"links":   map[string]any{"self": s.baseURL(r) + "/v3/auth/catalog", "next": nil, "previous": nil},
	})
}

// handleListProjects serves GET /v3/projects and /v3/auth/projects (?name=).
func (s *Sim) handleListProjects(w http.ResponseWriter, r *http.Request) {
	projects := []map[string]any{}
	if name := r.URL.Query().Get("name"); name == "" || name == s.opts.ProjectName {
		projects = append(projects, map[string]any{
			"id": s.opts.ProjectID, "name": s.opts.ProjectName, "domain_id": s.domainID,
			"parent_id": s.domainID, "enabled": true, "is_domain": false, "description": "",
		})
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"projects": projects,
		"links":    map[string]any{"self": s.baseURL(r) + r.URL.Path, "next": nil, "previous": nil},
	})
}

// handleListDomains serves GET /v3/auth/domains (?name=).
func (s *Sim) handleListDomains(w http.ResponseWriter, r *http.Request) {
	domains := []map[string]any{}
	if name := r.URL.Query().Get("name"); name == "" || name == s.opts.DomainName {
		domains = append(domains, map[string]any{
			"id": s.domainID, "name": s.opts.DomainName, "enabled": true, "description": "",
			"links": map[string]any{"self": s.baseURL(r) + "/v3/domains/" + s.domainID},
		})
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"domains": domains,
		"links":   map[string]any{"self": s.baseURL(r) + r.URL.Path, "next": nil, "previous": nil},
	})
}

// handleVersions serves GET / and GET /v3 (identity version discovery).
func (s *Sim) handleVersions(w http.ResponseWriter, r *http.Request) {
	v3 := map[string]any{
		"id": "v3.0", "status": "stable", "updated": "2016-04-04T00:00:00Z",
		"links": []map[string]any{{"rel": "self", "href": s.baseURL(r) + "/v3/"}},
	}
	if r.URL.Path == "/v3" || r.URL.Path == "/v3/" {
		writeJSON(w, http.StatusOK, map[string]any{"version": v3})
		return
	}
	writeJSON(w, http.StatusMultipleChoices, map[string]any{"versions": map[string]any{"values": []any{v3}}})
}

// authenticate checks the credentials of a service call: an X-Auth-Token, or an AK/SK signature
// naming a known access key. project is the project id in the path ("" when the path has none).
func (s *Sim) authenticate(r *http.Request, svc service, project string, now time.Time) *apiError {
	if akskSigned(r) {
		return s.authenticateAKSK(r, svc, project, now)
	}
	tokID := r.Header.Get("X-Auth-Token")
	if tokID == "" {
		return unauthorized(svc, "the request carries no X-Auth-Token")
	}
	t := s.tokens[tokID]
	switch {
	case t == nil || t.revoked:
		return unauthorized(svc, "the token is invalid")
	case !t.validAt(now):
		return unauthorized(svc, "the token has expired")
	case svc != svcIAM && !t.projectScoped:
		return forbidden(svc, "the token is not scoped to a project")
	case project != "" && project != s.opts.ProjectID:
		return forbidden(svc, "the token's project does not match the project in the URL")
	}
	return nil
}

// forbidden is the answer for valid credentials used on the wrong project.
func forbidden(svc service, reason string) *apiError {
	if svc == svcRDS {
		return errorf(http.StatusForbidden, "DBS.200044", "Resource not found or permission denied: %s.", reason)
	}
	return errorf(http.StatusForbidden, "APIGW.0302", "The IAM user is not authorized to access the API: %s.", reason)
}

// authenticateAKSK accepts an AK/SK-signed request whose Credential names a known access key and
// whose signature verifies with its secret key (verifyAKSK). The SDK signs with an empty region and
// service scope (Credential=<AK>/<yyyymmdd>///sdk_request) and adds X-Project-Id /
// X-Security-Token unsigned.
func (s *Sim) authenticateAKSK(r *http.Request, svc service, project string, now time.Time) *apiError {
	sig, err := parseAKSK(r.Header.Get("Authorization"))
	if err != nil {
		return unauthorized(svc, err.Error())
	}
	var secret string
	switch c := s.credentials[sig.access]; {
	case s.opts.AccessKey != "" && sig.access == s.opts.AccessKey:
		secret = s.opts.SecretKey
	case c == nil:
		return unauthorized(svc, "the access key is unknown")
	case !now.Before(c.expires):
		return errorf(http.StatusBadRequest, "IAM.1108", "The security token has expired.")
	case r.Header.Get("X-Security-Token") != c.securityToken:
		return unauthorized(svc, "the security token does not match the access key")
	default:
		secret = c.secret
	}
	if err := verifyAKSK(r, sig, secret); err != nil {
		return unauthorized(svc, err.Error())
	}
	if pid := r.Header.Get("X-Project-Id"); project != "" && pid != "" && pid != s.opts.ProjectID {
		return forbidden(svc, "X-Project-Id does not match the project in the URL")
	}
	return nil
}
