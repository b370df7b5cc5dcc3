package otcsim

import (
	"log/slog"
	"time"
)

// Defaults of Options.
const (
	DefaultProjectID   = "0391e4486e864c26be5654c522f440f2"
	DefaultProjectName = "eu-de"
	DefaultDomainName  = "OTC-EU-DE-00000000001000000001"
	DefaultUsername    = "sim"
	DefaultPassword    = "sim-password"
	// Region is the only region the simulator serves.
	Region = "eu-de"
)

// NOTE: a project id must contain neither "v2" nor "evs": the SDK's NewCESClient rewrites the first
// "v2" and the first "evs" of the volumev2 catalog URL. Hex ids never contain a "v".

// Options configure a Sim. The zero value is usable: every empty field takes its default.
type Options struct {
	ProjectID   string // default DefaultProjectID
	ProjectName string // default DefaultProjectName; its prefix before "_" is the region the SDK derives
	DomainName  string // default DefaultDomainName
	Username    string // default DefaultUsername
	Password    string // default DefaultPassword
	// AccessKey and SecretKey, when set, are a permanent AK/SK pair accepted on AK/SK-signed requests.
	AccessKey, SecretKey string

	Durations Durations // how long each operation's transient state lasts; zero fields take DefaultDurations
	Clock     Clock     // default: real time
	Seed      int64     // seeds fault randomness and generated ids
	Latency   time.Duration
	// EnableControl serves the /_sim control API.
	EnableControl bool
	// UniqueNames refuses a create or restore to a new instance whose name an instance already
	// has (409 DBS.200022). Off by default, as in OTC, whose create API reference says "Instances
	// of the same type can have the same name under the same tenant".
	UniqueNames bool
	// Endpoints back instances with real database servers: an instance a key matches reports that
	// "host:port" as its private IP and port once it is ACTIVE (as SetInstanceEndpoint does). Keys
	// are "NAMESPACE/NAME" (the owner tags), the instance name, "engine:ENGINE" (EngineKey) for
	// every other instance of an engine, or "*" for every other instance (endpoints.go).
	Endpoints map[string]string
	// BaseURL, when set, is used in catalogs instead of "http://" + the request's Host.
	BaseURL string
	Logger  *slog.Logger // optional; default discards
}

// Durations are how long each operation keeps an instance (or backup) in its transient state.
// Jobs run for the same time.
type Durations struct {
	Create, Delete, Backup, Resize, Enlarge, Restart, SingleToHA, Upgrade, Restore time.Duration
}

// DefaultDurations are small but realistic values for demos.
func DefaultDurations() Durations {
	return Durations{
		Create:     20 * time.Second,
		Delete:     5 * time.Second,
		Backup:     5 * time.Second,
		Resize:     15 * time.Second,
		Enlarge:    10 * time.Second,
		Restart:    5 * time.Second,
		SingleToHA: 20 * time.Second,
		Upgrade:    10 * time.Second,
		Restore:    15 * time.Second,
	}
}

func (d Durations) withDefaults() Durations {
	def := DefaultDurations()
	pick := func(v, dv time.Duration) time.Duration {
		if v > 0 {
			return v
		}
		return dv
	}
	return Durations{
		Create:     pick(d.Create, def.Create),
		Delete:     pick(d.Delete, def.Delete),
		Backup:     pick(d.Backup, def.Backup),
		Resize:     pick(d.Resize, def.Resize),
		Enlarge:    pick(d.Enlarge, def.Enlarge),
		Restart:    pick(d.Restart, def.Restart),
		SingleToHA: pick(d.SingleToHA, def.SingleToHA),
		Upgrade:    pick(d.Upgrade, def.Upgrade),
		Restore:    pick(d.Restore, def.Restore),
	}
}

func (o Options) withDefaults() Options {
	if o.ProjectID == "" {
		o.ProjectID = DefaultProjectID
	}
	if o.ProjectName == "" {
		o.ProjectName = DefaultProjectName
	}
	if o.DomainName == "" {
		o.DomainName = DefaultDomainName
	}
	if o.Username == "" {
		o.Username = DefaultUsername
	}
	if o.Password == "" {
		o.Password = DefaultPassword
	}
	if o.Clock == nil {
		o.Clock = realClock{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.Durations = o.Durations.withDefaults()
	return o
}
