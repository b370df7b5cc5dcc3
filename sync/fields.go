package reconcile

// What each spec field does: the one table a field added to v1alpha1.RdsSpec must join
// (TestEveryFieldHasABehaviour walks the type and fails for a field without an entry, and for an
// entry that names no field). A field is either applied, or refused with a stable condition, or
// documented as what it is; none is silently ignored.

// fieldKind is how a spec field acts on the instance.
type fieldKind string

const (
	// inPlace: a change is applied to the running instance, a day-2 change with its guards.
	inPlace fieldKind = "applied in place"
	// atCreate: set when the instance is created; immutable afterwards, refused by the CRD (a
	// transition rule) and by the hooks (InvalidSpec, no change) against what OTC reports.
	atCreate fieldKind = "set at create, immutable afterwards"
	// immutable: never changes once the object exists (the CRD refuses it, the hooks too).
	immutable fieldKind = "immutable"
	// readAtCreate: read while the instance is created, and documented as having no effect later.
	readAtCreate fieldKind = "read at create only"
	// oneShot: each new value asks for one action (a restart, a restore, a log Job).
	oneShot fieldKind = "a request, acted on once per value"
	// control: how the controller works for the object (credentials, deletion, autopilot, SQL
	// accounts); no OTC setting of the instance.
	control fieldKind = "controls the controller"
	// deprecated: accepted for compatibility and ignored, with the reason in the CRD's description.
	deprecated fieldKind = "deprecated, accepted and ignored"
)

// fieldBehaviour is what one spec field does: its kind, and the function (plan, check or step) of
// this package that applies or refuses it. note says more where the kind alone would mislead.
type fieldBehaviour struct {
	kind fieldKind
	by   string
	note string
}

// specFields maps the JSON path of every spec field (dotted into structs, slices and pointers) to
// what it does.
var specFields = map[string]fieldBehaviour{
	"datastoretype":       {kind: immutable, by: "createOnlyProblems"},
	"datastoreversion":    {kind: inPlace, by: "versionChange", note: "a newer minor version upgrades; the major version is immutable"},
	"flavorref":           {kind: inPlace, by: "flavorChange"},
	"volumetype":          {kind: inPlace, by: "storageTypeChange", note: "where OTC offers the move"},
	"volumesize":          {kind: inPlace, by: "storageChange", note: "grows only"},
	"availabilityzone":    {kind: immutable, by: "createOnlyProblems", note: "except the standby's AZ that hamode Ha adds (haChange)"},
	"region":              {kind: immutable, by: "sync", note: "a region this controller does not serve is InvalidSpec"},
	"vpc":                 {kind: immutable, by: "planNetwork"},
	"subnet":              {kind: immutable, by: "planNetwork"},
	"securitygroup":       {kind: inPlace, by: "networkChanges"},
	"port":                {kind: inPlace, by: "networkChanges", note: "empty keeps the instance's port"},
	"ssl":                 {kind: inPlace, by: "networkChanges", note: "MySQL only; unset leaves OTC's setting"},
	"timezone":            {kind: atCreate, by: "createOnlyProblems"},
	"lowercasetablenames": {kind: atCreate, by: "createOnlyProblems"},
	"diskencryptionid":    {kind: atCreate, by: "createOnlyProblems"},
	"backupstarttime":     {kind: inPlace, by: "backupChange"},
	"backupkeepdays":      {kind: inPlace, by: "backupChange"},
	"backuprestoretime":   {kind: oneShot, by: "planRestore"},
	"hamode":              {kind: inPlace, by: "haChange", note: "Single to Ha; Ha to Single is UnsupportedChange"},
	"hareplicationmode":   {kind: inPlace, by: "replicationChange", note: "HA only"},
	"maintenancewindow":   {kind: inPlace, by: "maintenanceChange"},
	"backupperiod":        {kind: inPlace, by: "backupChange", note: "kept with the backup policy"},
	"stopped":             {kind: inPlace, by: "stopChange", note: "false starts a stopped instance (startChange)"},
	"password": {kind: readAtCreate, by: "planNetwork",
		note: "the root password the instance is created with; a later change is told (UnsupportedChange): OTC's root password is not reset"},
	"passwordsecretref":            {kind: readAtCreate, by: "planNetwork", note: "as password"},
	"passwordsecretref.name":       {kind: readAtCreate, by: "desiredPassword"},
	"passwordsecretref.key":        {kind: readAtCreate, by: "desiredPassword"},
	"credentialssecret":            {kind: control, by: "credentials"},
	"databases":                    {kind: inPlace, by: "planDatabases", note: "over SQL, MySQL"},
	"users":                        {kind: inPlace, by: "planDatabases", note: "over SQL, MySQL"},
	"users.name":                   {kind: inPlace, by: "planDatabases"},
	"users.host":                   {kind: inPlace, by: "planDatabases"},
	"users.password":               {kind: inPlace, by: "userPasswords"},
	"users.privileges":             {kind: inPlace, by: "planDatabases"},
	"users.passwordsecretref":      {kind: inPlace, by: "userPasswords"},
	"users.passwordsecretref.name": {kind: inPlace, by: "userPasswords"},
	"users.passwordsecretref.key":  {kind: inPlace, by: "userPasswords"},
	"users.grants":                 {kind: inPlace, by: "planDatabases"},
	"users.grants.database":        {kind: inPlace, by: "planDatabases"},
	"users.grants.schema":          {kind: inPlace, by: "planDatabases", note: "PostgreSQL"},
	"users.grants.table":           {kind: inPlace, by: "planDatabases"},
	"users.grants.privileges":      {kind: inPlace, by: "planDatabases"},
	"deletionpolicy":               {kind: control, by: "planFinalize"},
	"skipfinalbackup":              {kind: control, by: "planFinalize"},
	"endpoint": {kind: deprecated, by: "Validate",
		note: "the original operator's autopilot webhook; autopilot needs no inbound webhook"},
	"autopilot":                     {kind: control, by: "planAutopilot"},
	"autopilotmaxvolume":            {kind: control, by: "autopilotSettingsOf"},
	"autopilotmaxflavor":            {kind: control, by: "autopilotSettingsOf"},
	"autopilotmaxvcpus":             {kind: control, by: "autopilotSettingsOf"},
	"autopilotcputhreshold":         {kind: control, by: "autopilotSettingsOf"},
	"autopilotmemorythreshold":      {kind: control, by: "autopilotSettingsOf"},
	"autopilotdiskthreshold":        {kind: control, by: "autopilotSettingsOf"},
	"autopilotwindow":               {kind: control, by: "autopilotSettingsOf"},
	"autopilotcooldown":             {kind: control, by: "autopilotSettingsOf"},
	"restorefrom":                   {kind: readAtCreate, by: "planRestorePoint", note: "the data a new instance starts from"},
	"restorefrom.instance":          {kind: readAtCreate, by: "planRestorePoint"},
	"restorefrom.backupid":          {kind: readAtCreate, by: "planRestorePoint"},
	"restorefrom.restoretime":       {kind: readAtCreate, by: "planRestorePoint"},
	"instanceid":                    {kind: immutable, by: "planAdopt", note: "adopts the instance; a change is InvalidSpec"},
	"restartrequest":                {kind: oneShot, by: "restartChange"},
	"tags":                          {kind: inPlace, by: "tagChanges"},
	"tags.key":                      {kind: inPlace, by: "tagChanges"},
	"tags.value":                    {kind: inPlace, by: "tagChanges"},
	"prunedatabases":                {kind: control, by: "planDatabases"},
	"parameters":                    {kind: inPlace, by: "planParameters", note: "engine parameters, one change for all; a restart as parametersrestart says"},
	"parametersrestart":             {kind: control, by: "planPendingRestart"},
	"readreplicas":                  {kind: inPlace, by: "planReplicas", note: "read replicas, each its own instance"},
	"readreplicas.name":             {kind: immutable, by: "planReplicas", note: "a new name is a new replica"},
	"readreplicas.flavorref":        {kind: inPlace, by: "planReplicas"},
	"readreplicas.availabilityzone": {kind: immutable, by: "planReplicas", note: "UnsupportedChange for an existing replica"},
	"readreplicas.volumesize":       {kind: inPlace, by: "planReplicas", note: "grows only"},
	"logs":                          {kind: oneShot, by: "planLogs"},
	"logs.request":                  {kind: oneShot, by: "planLogs"},
	"logs.since":                    {kind: oneShot, by: "planLogs"},
	"logs.lines":                    {kind: oneShot, by: "planLogs"},
	"logs.types":                    {kind: oneShot, by: "planLogs"},
}
