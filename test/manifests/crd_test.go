package manifests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
)

// TestCRDIsAcceptedByTheAPIServer runs the API server's own CRD validation: a structural schema,
// CEL rules that compile and stay within the cost budget, valid printer columns and defaults.
func TestCRDIsAcceptedByTheAPIServer(t *testing.T) {
	crd := loadCRD(t)

	scheme := runtime.NewScheme()
	install.Install(scheme)
	scheme.Default(crd)
	var internal apiextensions.CustomResourceDefinition
	require.NoError(t, scheme.Convert(crd, &internal, nil))
	internal.Status.StoredVersions = []string{v1alpha1.Version} // as the API server's PrepareForCreate does
	errs := crdvalidation.ValidateCustomResourceDefinition(context.Background(), &internal)
	assert.Empty(t, errorText(errs))

	// The same check, spelt out: the schema is structural (the API server prunes and validates by it).
	v := newCRDValidator(t, crd, v1alpha1.Version)
	assert.Empty(t, errorText(structuralschema.ValidateStructural(nil, v.structural)))

	assert.Equal(t, "rdss.otc.mcsps.de", crd.Name)
	assert.Equal(t, v1alpha1.Group, crd.Spec.Group)
	assert.Equal(t, apiextensionsv1.NamespaceScoped, crd.Spec.Scope)
	assert.Equal(t, v1alpha1.Kind, crd.Spec.Names.Kind)
	assert.Equal(t, "rdss", crd.Spec.Names.Plural)
	assert.Equal(t, []string{"rds"}, crd.Spec.Names.ShortNames)
	require.Len(t, crd.Spec.Versions, 1)
	version := crd.Spec.Versions[0]
	assert.Equal(t, v1alpha1.Version, version.Name)
	assert.True(t, version.Served)
	assert.True(t, version.Storage)
	require.NotNil(t, version.Subresources)
	assert.NotNil(t, version.Subresources.Status, "status subresource: Metacontroller writes status through it")
	assert.Nil(t, version.Subresources.Scale)
}

// TestPrinterColumns renders an Rds in the middle of a resize as kubectl get does, through the API
// server's own table convertor: the columns show what OTC reports (the old flavor until the resize
// is done), and -o wide adds the change in flight and what the spec asks for.
func TestPrinterColumns(t *testing.T) {
	crd := loadCRD(t)
	convertor, err := tableconvertor.New(crd.Spec.Versions[0].AdditionalPrinterColumns)
	require.NoError(t, err)

	obj := toUnstructured(t, []byte(mySingle))
	obj["spec"].(map[string]any)["flavorref"] = "rds.mysql.c2.large"
	obj["status"] = map[string]any{
		"status":    "MODIFYING",
		"endpoint":  "192.168.0.71:3306",
		"version":   "8.0.28",
		"flavor":    "rds.mysql.c2.medium",
		"volume":    map[string]any{"type": "COMMON", "size": int64(40)},
		"operation": map[string]any{"type": "Resize", "target": "rds.mysql.c2.large", "generation": int64(2)},
		"conditions": []any{
			map[string]any{"type": "Synced", "status": "True", "reason": "ChangeInProgress", "lastTransitionTime": "2026-11-22T06:19:13Z"},
			map[string]any{"type": "Ready", "status": "False", "reason": "Modifying", "lastTransitionTime": "2026-11-22T06:19:13Z"},
		},
	}
	table, err := convertor.ConvertToTable(context.Background(), &unstructured.Unstructured{Object: obj}, nil)
	require.NoError(t, err)

	var names []string
	var wide []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
		if c.Priority > 0 {
			wide = append(wide, c.Name)
		}
	}
	assert.Equal(t, []string{"Name", "Status", "Ready", "Engine", "Version", "Flavor", "Volume", "Endpoint", "Operation", "Target", "Spec Flavor", "Age"}, names)
	assert.Equal(t, []string{"Operation", "Target", "Spec Flavor"}, wide, "only with -o wide")
	require.Len(t, table.Rows, 1)
	assert.Equal(t, []any{"my-rds-single", "MODIFYING", "False", "MySQL", "8.0.28", "rds.mysql.c2.medium", int64(40),
		"192.168.0.71:3306", "Resize", "rds.mysql.c2.large", "rds.mysql.c2.large"}, table.Rows[0].Cells[:11])

	// Before the first status, the observed columns are empty rather than showing the request.
	delete(obj, "status")
	table, err = convertor.ConvertToTable(context.Background(), &unstructured.Unstructured{Object: obj}, nil)
	require.NoError(t, err)
	assert.Equal(t, []any{"my-rds-single", nil, nil, "MySQL", nil, nil, nil, nil, nil, nil, "rds.mysql.c2.large"}, table.Rows[0].Cells[:11])
}

// TestPrinterColumnsReadTheStatusSchema: every column's path names fields the schema has (a typo
// would print an empty column for ever), and the columns that report the instance read the status.
func TestPrinterColumnsReadTheStatusSchema(t *testing.T) {
	crd := loadCRD(t)
	v := newCRDValidator(t, crd, v1alpha1.Version)
	fromSpec := map[string]bool{"Engine": true, "Spec Flavor": true, "Age": true}
	for _, col := range crd.Spec.Versions[0].AdditionalPrinterColumns {
		if col.JSONPath == ".metadata.creationTimestamp" {
			continue // metadata is the API server's, not in the CRD's schema
		}
		assert.NoError(t, schemaPathExists(v.structural, col.JSONPath), col.Name)
		if !fromSpec[col.Name] {
			assert.True(t, strings.HasPrefix(col.JSONPath, ".status."), "%s reads %s, not the observed status", col.Name, col.JSONPath)
		}
	}
}

// pathSegment is one step of a simple JSONPath: a field, optionally followed by an index or filter.
var pathSegment = regexp.MustCompile(`^\.([A-Za-z0-9_]+)(\[[^\]]*\])?`)

// schemaPathExists follows a printer column's simple JSONPath (fields, [n], [*], [?(...)]) through
// a structural schema.
func schemaPathExists(s *structuralschema.Structural, path string) error {
	rest := path
	for rest != "" {
		m := pathSegment.FindStringSubmatch(rest)
		if m == nil {
			return fmt.Errorf("%s: cannot follow %q", path, rest)
		}
		prop, ok := s.Properties[m[1]]
		if !ok {
			return fmt.Errorf("%s: no field %q in the schema", path, m[1])
		}
		s = &prop
		if m[2] != "" {
			if s.Type != "array" || s.Items == nil {
				return fmt.Errorf("%s: %q is not a list", path, m[1])
			}
			s = s.Items
		}
		rest = rest[len(m[0]):]
	}
	return nil
}

// samples returns the Rds objects under manifests/samples/, by file name.
func samples(t *testing.T) map[string]map[string]any {
	t.Helper()
	dir := filepath.Join(manifestsDir, "samples")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	out := map[string]map[string]any{}
	for _, e := range entries {
		for _, doc := range readDocuments(t, filepath.Join(dir, e.Name())) {
			obj := toUnstructured(t, doc)
			if obj["kind"] == v1alpha1.Kind {
				out[e.Name()] = obj
			}
		}
	}
	require.Len(t, out, 3)
	return out
}

// TestSamplesAreValid: every sample passes the CRD's validation unchanged: no field is pruned,
// none is rejected; deletionpolicy defaults to Delete.
func TestSamplesAreValid(t *testing.T) {
	v := newCRDValidator(t, loadCRD(t), v1alpha1.Version)
	wantPolicy := map[string]string{
		"my-rds-single.yaml": v1alpha1.DeletionPolicyDelete,
		"my-rds-ha.yaml":     v1alpha1.DeletionPolicyDelete,
		"my-rds-retain.yaml": v1alpha1.DeletionPolicyRetain,
	}
	for name, obj := range samples(t) {
		t.Run(name, func(t *testing.T) {
			assert.Empty(t, v.admit(obj), "pruned fields")
			assert.Empty(t, errorText(v.create(obj)))
			policy, _, _ := unstructured.NestedString(obj, "spec", "deletionpolicy")
			assert.Equal(t, wantPolicy[name], policy)
		})
	}
}

// rds returns the single-instance example as an unstructured object, with changes applied to its
// spec.
func rds(t *testing.T, change func(spec map[string]any)) map[string]any {
	t.Helper()
	obj := toUnstructured(t, []byte(mySingle))
	if change != nil {
		change(obj["spec"].(map[string]any))
	}
	return obj
}

// set returns a change that sets spec fields (nil deletes).
func set(kv ...any) func(map[string]any) {
	return func(spec map[string]any) {
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(spec, kv[i].(string))
			} else {
				spec[kv[i].(string)] = kv[i+1]
			}
		}
	}
}

func ha(spec map[string]any) {
	set("hamode", "Ha", "flavorref", "rds.mysql.c2.medium.ha", "availabilityzone", "eu-de-01,eu-de-02")(spec)
}

func postgres(spec map[string]any) {
	set("datastoretype", "PostgreSQL", "datastoreversion", "16", "flavorref", "rds.pg.n1.large.2", "port", 5432, "password", nil)(spec)
}

func sqlserver(spec map[string]any) {
	set("datastoretype", "SQLServer", "datastoreversion", "2022_SE", "flavorref", "rds.mssql.spec.se.s3.large.2", "port", 1433)(spec)
}

func both(changes ...func(map[string]any)) func(map[string]any) {
	return func(spec map[string]any) {
		for _, c := range changes {
			c(spec)
		}
	}
}

// TestCreateValidation: objects the CRD accepts, and known-bad objects it rejects with a message
// that names the problem.
func TestCreateValidation(t *testing.T) {
	cases := map[string]struct {
		reason string
		change func(spec map[string]any)
		want   string // a substring of the error; "" for a valid object
	}{
		"Example":            {reason: "the example is valid"},
		"PortNumber":         {reason: "port may be a number", change: set("port", 3306)},
		"PortEmpty":          {reason: `port "" is the engine default`, change: set("port", "")},
		"PortOmitted":        {reason: "port is optional", change: set("port", nil)},
		"EmptyOptionals":     {reason: `"" means unset for optional strings, as the original operator wrote them`, change: set("hamode", "", "hareplicationmode", "", "backupstarttime", "", "backuprestoretime", "", "password", "", "endpoint", "")},
		"BackupWindowWraps":  {reason: "23:45-00:45 is one hour", change: set("backupstarttime", "23:45-00:45")},
		"RestoreTime":        {reason: "an RFC3339 time with offset", change: set("backuprestoretime", "2022-04-20T22:08:41+00:00")},
		"RestoreTimeUTC":     {reason: "an RFC3339 time in UTC with fractions", change: set("backuprestoretime", "2026-11-22T06:19:13.5Z")},
		"HA":                 {reason: "two AZs and an .ha flavor", change: both(ha, set("hareplicationmode", "semisync"))},
		"Single":             {reason: "hamode Single is the default spelled out", change: set("hamode", "Single")},
		"PostgreSQL":         {reason: "PostgreSQL with a minor version", change: both(postgres, set("datastoreversion", "16.4"))},
		"SQLServer":          {reason: "SQL Server edition version", change: sqlserver},
		"MySQLMinor":         {reason: "MySQL with a third version part", change: set("datastoreversion", "8.0.28")},
		"PasswordSecretRef":  {reason: "a Secret instead of a password", change: set("password", nil, "passwordsecretref", map[string]any{"name": "root-pw", "key": "password"})},
		"NoPassword":         {reason: "the controller generates one", change: set("password", nil)},
		"Retain":             {reason: "deletionpolicy Retain", change: set("deletionpolicy", "Retain", "skipfinalbackup", true)},
		"DeprecatedEndpoint": {reason: "endpoint is accepted and ignored", change: set("endpoint", "https://rdsoperator.example.com/")},
		"DatabasesAndUsers": {reason: "the original operator's README example", change: set(
			"databases", []any{"project1", "project2"},
			"users", []any{map[string]any{"name": "app1", "host": "10.9.3.%", "password": "app1+Mond", "privileges": []any{"GRANT ALL ON project1.* TO 'app1'@'10.9.3.%'"}}},
		)},

		"BadEngine":             {reason: "engines are case-sensitive and few", change: set("datastoretype", "Oracle"), want: `spec.datastoretype: Unsupported value: "Oracle": supported values: "MySQL", "PostgreSQL", "SQLServer"`},
		"LowercaseEngine":       {reason: "OTC spells MySQL so", change: set("datastoretype", "mysql"), want: `spec.datastoretype: Unsupported value: "mysql"`},
		"VolumeNotMultiple":     {reason: "sizes go in steps of 10 GB", change: set("volumesize", 45), want: "spec.volumesize: Invalid value: 45: spec.volumesize in body should be a multiple of 10"},
		"VolumeTooLarge":        {reason: "at most 4000 GB", change: set("volumesize", 5000), want: "spec.volumesize: Invalid value: 5000: spec.volumesize in body should be less than or equal to 4000"},
		"VolumeTooSmall":        {reason: "at least 40 GB", change: set("volumesize", 30), want: "should be greater than or equal to 40"},
		"VolumeType":            {reason: "unknown storage type", change: set("volumetype", "SSD"), want: `spec.volumetype: Unsupported value: "SSD"`},
		"PortNotDigits":         {reason: "a string port must be digits", change: set("port", "abc"), want: `spec.port: Invalid value: "abc": port must be a number, e.g. 3306 or "3306"`},
		"PortTooLarge":          {reason: "ports end at 65535", change: set("port", 70000), want: "spec.port: Invalid value: 70000: port must be between 1 and 65535"},
		"PortStringTooLarge":    {reason: "ports end at 65535, also as strings", change: set("port", "99999"), want: "port must be between 1 and 65535"},
		"PortZero":              {reason: "port 0 is not a port", change: set("port", "0"), want: "port must be between 1 and 65535"},
		"BackupWindowTwoHours":  {reason: "the window is one hour", change: set("backupstarttime", "01:00-03:00"), want: `spec.backupstarttime: Invalid value: "01:00-03:00": backupstarttime must be a one-hour window`},
		"BackupWindowMinutes":   {reason: "minutes are 00, 15, 30 or 45", change: set("backupstarttime", "01:10-02:10"), want: "spec.backupstarttime in body should match"},
		"BackupWindowShifted":   {reason: "the same minutes on both sides", change: set("backupstarttime", "01:00-02:15"), want: "backupstarttime must be a one-hour window"},
		"BackupWindowGarbage":   {reason: "not a window at all", change: set("backupstarttime", "1am"), want: "spec.backupstarttime in body should match"},
		"BackupKeepDays":        {reason: "at most 732 days", change: set("backupkeepdays", 733), want: "spec.backupkeepdays in body should be less than or equal to 732"},
		"RestoreTimeNotRFC3339": {reason: "a date without time", change: set("backuprestoretime", "2022-04-20"), want: "backuprestoretime must be an RFC3339 time"},
		"HamodeCase":            {reason: "one spelling: Ha", change: set("hamode", "HA"), want: `spec.hamode: Unsupported value: "HA"`},
		"HaWithSingleFlavor":    {reason: "HA needs an .ha flavor", change: both(ha, set("flavorref", "rds.mysql.c2.medium")), want: "spec.flavorref: Invalid value: hamode Ha needs an HA flavorref, one that ends in .ha"},
		"HaWithOneAZ":           {reason: "HA needs two AZs", change: both(ha, set("availabilityzone", "eu-de-01")), want: "spec.availabilityzone: Invalid value: availabilityzone must name one AZ for a single instance and two (primary,standby) for hamode Ha"},
		"SingleWithHaFlavor":    {reason: "an .ha flavor needs hamode Ha", change: set("flavorref", "rds.mysql.c2.medium.ha"), want: "a flavorref ending in .ha or .rr is for HA or replica instances"},
		"SingleWithTwoAZs":      {reason: "a single instance has one node", change: set("availabilityzone", "eu-de-01,eu-de-02"), want: "availabilityzone must name one AZ"},
		"AZWithSpace":           {reason: "no spaces in the AZ list", change: both(ha, set("availabilityzone", "eu-de-01, eu-de-02")), want: "spec.availabilityzone in body should match"},
		"AZOutsideRegion":       {reason: "AZs lie in the region", change: set("availabilityzone", "eu-nl-01"), want: "every availabilityzone must lie in the region"},
		"Region":                {reason: "region names are lowercase", change: set("region", "EU-DE"), want: "spec.region in body should match"},
		"ReplicationMode":       {reason: "MySQL has no sync mode", change: both(ha, set("hareplicationmode", "sync")), want: "hareplicationmode must be async or semisync for MySQL"},
		"ReplicationModeValue":  {reason: "unknown mode", change: set("hareplicationmode", "quorum"), want: `spec.hareplicationmode: Unsupported value: "quorum"`},
		"VersionForEngine":      {reason: "16 is not a MySQL version", change: set("datastoreversion", "16"), want: "datastoreversion does not fit datastoretype"},
		"VersionShape":          {reason: "not a version", change: set("datastoreversion", "latest"), want: "spec.datastoreversion in body should match"},
		"Flavor":                {reason: "spec codes start with rds.", change: set("flavorref", "mysql.c2.medium"), want: "spec.flavorref in body should match"},
		"PasswordShort":         {reason: "OTC wants 8 to 32 characters", change: set("password", "Ab1+"), want: "spec.password: Invalid value: password must be 8 to 32 characters"},
		"PasswordLong":          {reason: "OTC wants 8 to 32 characters", change: set("password", strings.Repeat("Ab1+", 9)), want: "spec.password: Too long"},
		"PasswordClasses":       {reason: "only two character classes", change: set("password", "abcdefgh12"), want: "password must be 8 to 32 characters"},
		"PasswordCharacters":    {reason: "a character OTC does not allow", change: set("password", "Abcdefg1/"), want: "password must be 8 to 32 characters"},
		"PasswordAndSecretRef":  {reason: "two sources for one password", change: set("passwordsecretref", map[string]any{"name": "root-pw"}), want: "set password or passwordsecretref, not both"},
		"SecretRefWithoutName":  {reason: "a reference needs a name", change: set("password", nil, "passwordsecretref", map[string]any{"key": "pw"}), want: "spec.passwordsecretref.name: Required value"},
		"MissingVPC":            {reason: "vpc is required", change: set("vpc", nil), want: "spec.vpc: Required value"},
		"DuplicateDatabase":     {reason: "databases is a set", change: set("databases", []any{"a", "a"}), want: `spec.databases[1]: Duplicate value: "a"`},
		"DatabaseName":          {reason: "no quotes or spaces in database names", change: set("databases", []any{"a b"}), want: "spec.databases[0] in body should match"},
		"DuplicateUser":         {reason: "a user is name and host", change: set("users", []any{map[string]any{"name": "app", "host": "%"}, map[string]any{"name": "app", "host": "%"}}), want: "each user (name and host) may appear only once"},
		"DeletionPolicy":        {reason: "Delete or Retain", change: set("deletionpolicy", "Orphan"), want: `spec.deletionpolicy: Unsupported value: "Orphan"`},
		"VolumeSizeAsString":    {reason: "volumesize is an integer", change: set("volumesize", "40"), want: `spec.volumesize: Invalid value: "string": spec.volumesize in body must be of type integer`},
		"Parameters": {reason: "engine parameters, SQL Server's names with spaces and parentheses too", change: set(
			"parameters", map[string]any{"max_connections": "300", "max server memory (MB)": "4096"}, "parametersrestart", "Immediate")},
		"ParameterNumber":   {reason: "values are strings, as OTC takes them", change: set("parameters", map[string]any{"max_connections": 300}), want: "must be of type string"},
		"ParameterName":     {reason: "a name OTC could never have", change: set("parameters", map[string]any{"max_connections;drop": "1"}), want: "a parameter name is 1 to 64 letters"},
		"ParametersRestart": {reason: "Manual or Immediate", change: set("parametersrestart", "Sometimes"), want: `spec.parametersrestart: Unsupported value: "Sometimes"`},
	}
	v := newCRDValidator(t, loadCRD(t), v1alpha1.Version)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := rds(t, tc.change)
			assert.Empty(t, v.admit(obj), "pruned fields")
			got := errorText(v.create(obj))
			if tc.want == "" {
				assert.Empty(t, got, tc.reason)
				return
			}
			assert.Contains(t, got, tc.want, tc.reason)
			if pw, ok := obj["spec"].(map[string]any)["password"].(string); ok && pw != "" {
				assert.NotContains(t, got, pw, "errors must not echo the password")
			}
		})
	}
}

// TestUpdateValidation: the transition rules (oldSelf) keep what OTC cannot change from changing.
func TestUpdateValidation(t *testing.T) {
	cases := map[string]struct {
		reason   string
		old, new func(spec map[string]any)
		want     string // a substring of the error; "" for an allowed change
	}{
		"Resize":           {reason: "the flavor can change", new: set("flavorref", "rds.mysql.c2.large")},
		"Grow":             {reason: "volumes grow", new: set("volumesize", 50)},
		"Shrink":           {reason: "volumes never shrink", old: set("volumesize", 100), new: set("volumesize", 50), want: "spec.volumesize: Invalid value: 50: volumesize can only grow"},
		"Engine":           {reason: "the engine is fixed", new: postgres, want: `spec.datastoretype: Invalid value: "PostgreSQL": datastoretype is immutable`},
		"AZ":               {reason: "the AZ is fixed", new: set("availabilityzone", "eu-de-02"), want: `spec.availabilityzone: Invalid value: "eu-de-02": availabilityzone is immutable`},
		"MinorMoreExact":   {reason: "8.0 -> 8.0.28 names the same major", new: set("datastoreversion", "8.0.28")},
		"MinorLessExact":   {reason: "8.0.28 -> 8.0 names the same major", old: set("datastoreversion", "8.0.28"), new: set("datastoreversion", "8.0")},
		"MinorUpgrade":     {reason: "8.0.28 -> 8.0.30 is a minor upgrade", old: set("datastoreversion", "8.0.28"), new: set("datastoreversion", "8.0.30")},
		"MySQLMajor":       {reason: "5.7 -> 8.0 is a major upgrade", old: set("datastoreversion", "5.7"), new: set("datastoreversion", "8.0"), want: "spec.datastoreversion: Invalid value: the major version in datastoreversion cannot change"},
		"PostgresMinor":    {reason: "15 -> 15.4 names the same major", old: both(postgres, set("datastoreversion", "15")), new: both(postgres, set("datastoreversion", "15.4"))},
		"PostgresMajor":    {reason: "15 -> 16 is a major upgrade", old: both(postgres, set("datastoreversion", "15")), new: postgres, want: "the major version in datastoreversion cannot change"},
		"SQLServerEdition": {reason: "2019_SE -> 2022_SE is a major upgrade", old: both(sqlserver, set("datastoreversion", "2019_SE")), new: sqlserver, want: "the major version in datastoreversion cannot change"},
		"PasswordToSecret": {reason: "moving the password into a Secret", new: set("password", nil, "passwordsecretref", map[string]any{"name": "root-pw"})},
		"DeletionPolicy":   {reason: "deletionpolicy can change at any time", new: set("deletionpolicy", "Retain")},
		"SingleToHa":       {reason: "a single instance becomes a pair: the standby's AZ is appended", new: ha},
		"SingleToHaSameAZ": {reason: "the standby needs another AZ", new: both(ha, set("availabilityzone", "eu-de-01,eu-de-01")), want: "availabilityzone is immutable, except"},
		"SingleToHaMoved":  {reason: "the primary's AZ stays first", new: both(ha, set("availabilityzone", "eu-de-02,eu-de-01")), want: "availabilityzone is immutable, except"},
		"HaToSingle":       {reason: "OTC cannot remove a standby", old: ha, new: set("hamode", "Single", "flavorref", "rds.mysql.c2.medium", "availabilityzone", "eu-de-01"), want: "availabilityzone is immutable, except"},
		"Restart":          {reason: "restartrequest takes any new value", new: set("restartrequest", "2026-11-23T10-00")},
		"Tags":             {reason: "tags can change", new: set("tags", []any{map[string]any{"key": "team", "value": "a"}})},
		"DuplicateTag":     {reason: "a tag key appears once", new: set("tags", []any{map[string]any{"key": "team", "value": "a"}, map[string]any{"key": "team", "value": "b"}}), want: "Duplicate value"},
		"BadTag":           {reason: "OTC's tag characters", new: set("tags", []any{map[string]any{"key": "a b"}}), want: "spec.tags[0].key"},
	}
	v := newCRDValidator(t, loadCRD(t), v1alpha1.Version)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			old := rds(t, tc.old)
			require.Empty(t, v.admit(old))
			require.Empty(t, errorText(v.create(old)), "the old object is valid")
			obj := rds(t, both(func(spec map[string]any) {
				if tc.old != nil {
					tc.old(spec)
				}
			}, func(spec map[string]any) {
				if tc.new != nil {
					tc.new(spec)
				}
			}))
			require.Empty(t, v.admit(obj))
			got := errorText(v.update(obj, old))
			if tc.want == "" {
				assert.Empty(t, got, tc.reason)
				return
			}
			assert.Contains(t, got, tc.want, tc.reason)
		})
	}
}
