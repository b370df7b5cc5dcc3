package otcsim

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Options.Endpoints back instances with real database servers. A key matches an instance by, in
// this order:
//
//  1. "NAMESPACE/NAME": the Kubernetes object that owns the instance, read from the ownership tags
//     the hooks put on the instance after creating it (OwnerNamespaceTag, OwnerNameTag);
//  2. "NAME": the OTC instance name (what the Rds status shows);
//  3. "engine:ENGINE": every other instance of that engine (MySQL, PostgreSQL, SQLServer), so that
//     a MariaDB backs the MySQL instances and a PostgreSQL the PostgreSQL ones;
//  4. "*": every other instance.
//
// NOTE: the simulator sees only OTC calls, so the Rds object's namespace/name is known from the
// ownership tags alone; the OTC name is derived by the hooks (with a hash, and a cluster id) and is
// not something to guess. Tags arrive in a call after the create, so the match is made again on every
// request: until the tags are there, the instance is backed by its name's or "*"'s server.

// Ownership tag keys the hooks write on the instances they create.
const (
	OwnerNamespaceTag = "rds-owner-namespace"
	OwnerNameTag      = "rds-owner-name"
)

// EngineKey is the Options.Endpoints key of every instance of an engine: "engine:PostgreSQL".
func EngineKey(engine string) string { return enginePrefix + engine }

const enginePrefix = "engine:"

// EndpointFlags is a flag.Value for repeated endpoint flags, the keys and "host:port" values of
// Options.Endpoints: "[NAMESPACE/NAME=|NAME=|engine:ENGINE=]HOST:PORT" (no key: "*", every
// instance).
type EndpointFlags map[string]string

func (f EndpointFlags) String() string {
	parts := make([]string, 0, len(f))
	for _, k := range slices.Sorted(maps.Keys(f)) {
		parts = append(parts, k+"="+f[k])
	}
	return strings.Join(parts, " ")
}

// Set adds one "[KEY=]HOST:PORT".
func (f EndpointFlags) Set(v string) error {
	key, ep, ok := strings.Cut(v, "=")
	if !ok {
		key, ep = "*", v
	}
	if ns, name, isObject := strings.Cut(key, "/"); key == "" || isObject && (ns == "" || name == "" || strings.Contains(name, "/")) {
		return fmt.Errorf("endpoint %q: want [NAMESPACE/NAME=|INSTANCE-NAME=|engine:ENGINE=]HOST:PORT", v)
	}
	if name, ok := strings.CutPrefix(key, enginePrefix); ok {
		e := findEngine(name)
		if e == nil {
			return fmt.Errorf("endpoint %q: no engine %q: want MySQL, PostgreSQL or SQLServer", v, name)
		}
		key = EngineKey(e.name)
	}
	if _, _, err := ParseEndpoint(ep); err != nil {
		return err
	}
	f[key] = ep
	return nil
}

// endpointOf returns the real server Options.Endpoints assigns to an instance, or "", 0.
func (s *Sim) endpointOf(in *instance) (string, int) {
	if len(s.opts.Endpoints) == 0 {
		return "", 0
	}
	tags := in.tagMap()
	if ns, name := tags[OwnerNamespaceTag], tags[OwnerNameTag]; ns != "" && name != "" {
		if ep, ok := s.opts.Endpoints[ns+"/"+name]; ok {
			return s.parseEndpointOption(ep)
		}
	}
	return s.endpointFor(in.name, in.engine.name)
}

// endpointFor returns the real server Options.Endpoints assigns to an instance name of an engine
// ("engine:ENGINE", then "*", match every name without an entry of its own).
func (s *Sim) endpointFor(name, engine string) (string, int) {
	ep, ok := s.opts.Endpoints[name]
	if !ok {
		ep, ok = s.opts.Endpoints[EngineKey(engine)]
	}
	if !ok {
		ep, ok = s.opts.Endpoints["*"]
	}
	if !ok {
		return "", 0
	}
	return s.parseEndpointOption(ep)
}

func (s *Sim) parseEndpointOption(ep string) (string, int) {
	host, port, _ := ParseEndpoint(ep) // checked by validEndpoints
	return host, port
}

// validEndpoints returns the valid entries of Options.Endpoints, warning once about the others.
func validEndpoints(eps map[string]string, log interface{ Warn(string, ...any) }) map[string]string {
	out := make(map[string]string, len(eps))
	for k, ep := range eps {
		if _, _, err := ParseEndpoint(ep); err != nil {
			log.Warn("otcsim ignores an invalid endpoint", "key", k, "err", err.Error())
			continue
		}
		out[k] = ep
	}
	return out
}
