package reconcile

import (
	"net"
	"net/url"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// Keys of the connection Secret.
const (
	KeyHost     = "host"
	KeyPort     = "port"
	KeyUsername = "username"
	KeyPassword = "password"
	KeyEngine   = "engine"
	KeyDSN      = "dsn"
	KeyURI      = "uri"
	// KeyEndpoint is the host again, under the name crossplane-contrib/provider-sql reads a
	// connection from (with port, username and password): a ProviderConfig can name the Secret
	// as it is.
	KeyEndpoint = "endpoint"
	// KeyReaderHosts: the read replicas' host:port, comma-separated (replicas.go).
	KeyReaderHosts = "readerhosts"
)

// Labels on every child.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelRds       = "otc.mcsps.de/rds"
	ManagedBy      = "rds-lambda-controller"
)

// rootUser is the administrator account OTC creates for each engine.
func rootUser(engine string) string {
	if engine == v1alpha1.EngineSQLServer {
		return "rdsuser"
	}
	return "root"
}

// connection is what the connection Secret says.
type connection struct {
	engine   string
	host     string
	port     int
	password secret.Value
	// readers are the read replicas' endpoints (readerHosts); "" for none.
	readers string
}

// connectionSecret renders the child Secret applications read. Before the instance has an
// address it holds only the password: that is how a generated password is persisted before the
// cloud uses it.
func connectionSecret(parent *v1alpha1.Rds, c connection) *corev1.Secret {
	user, password := rootUser(c.engine), c.password.Reveal()
	var dsn, uri, port string
	size := len(user) + len(password) + len(c.engine) + len(c.readers)
	withAddress := c.host != "" && c.port != 0
	if withAddress {
		port = strconv.Itoa(c.port)
		dsn, uri = connectionStrings(c.engine, c.host, c.port, user, password, "")
		size += 2*len(c.host) + len(port) + len(dsn) + len(uri)
	}
	// NOTE: every call that sees the instance renders this Secret: its values are slices of one
	// buffer, one allocation instead of one per value.
	values := valueBuffer(make([]byte, 0, size))
	data := make(map[string][]byte, 8) // NOTE: eight fit a map of one group; readerhosts make it grow
	data[KeyUsername] = values.add(user)
	data[KeyPassword] = values.add(password)
	data[KeyEngine] = values.add(c.engine)
	if withAddress {
		data[KeyHost] = values.add(c.host)
		data[KeyEndpoint] = values.add(c.host)
		data[KeyPort] = values.add(port)
		data[KeyDSN] = values.add(dsn)
		data[KeyURI] = values.add(uri)
	}
	if c.readers != "" {
		data[KeyReaderHosts] = values.add(c.readers)
	}
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      ConnectionSecretName(parent.Name),
			Namespace: parent.Namespace,
			Labels:    childLabels(parent),
		},
		Type: corev1.SecretTypeOpaque,
		Data: data,
	}
}

// valueBuffer hands out the values of a Secret as slices of one buffer, each capped at its own
// end so that no append to one can reach the next.
type valueBuffer []byte

func (b *valueBuffer) add(v string) []byte {
	start := len(*b)
	*b = append(*b, v...)
	return (*b)[start:len(*b):len(*b)]
}

// connectionStrings returns a driver DSN and a URI for the engine, for database ("": none for
// MySQL, postgres for PostgreSQL).
func connectionStrings(engine, host string, port int, user, password, database string) (dsn, uri string) {
	hostport := net.JoinHostPort(host, strconv.Itoa(port))
	u := url.URL{Host: hostport, User: url.UserPassword(user, password)}
	switch engine {
	case v1alpha1.EngineMySQL:
		u.Scheme, u.Path = "mysql", "/"+database
		// go-sql-driver/mysql format: it splits at the first ':' and the last '@' and '/', so a
		// password needs no escaping.
		dsn = user + ":" + password + "@tcp(" + hostport + ")/" + database
	case v1alpha1.EnginePostgreSQL:
		if database == "" {
			database = "postgres"
		}
		u.Scheme, u.Path, u.RawQuery = "postgresql", "/"+database, "sslmode=require"
		dsn = "host=" + host + " port=" + strconv.Itoa(port) + " user=" + pgValue(user) + " password=" + pgValue(password) +
			" dbname=" + pgValue(database) + " sslmode=require"
	case v1alpha1.EngineSQLServer:
		u.Scheme = "sqlserver"
		dsn = "server=" + host + ";port=" + strconv.Itoa(port) + ";user id=" + user + ";password=" + password
	}
	return dsn, u.String()
}

// pgValue quotes a value of a libpq keyword=value connection string: in single quotes, with
// each single quote and backslash escaped by a backslash.
func pgValue(s string) string { return "'" + pgEscaper.Replace(s) + "'" }

// pgEscaper is made once: every call that sees a PostgreSQL instance renders three such values
// (a Replacer is safe for concurrent use).
var pgEscaper = strings.NewReplacer(`\`, `\\`, `'`, `\'`)

// observedPassword returns the password in the observed connection Secret, if any.
func observedPassword(s *corev1.Secret) (secret.Value, bool) {
	if s == nil {
		return secret.Value{}, false
	}
	pw, ok := s.Data[KeyPassword]
	if !ok || len(pw) == 0 {
		return secret.Value{}, false
	}
	return secret.New(string(pw)), true
}

// echoSecret returns the observed Secret as we would have rendered it.
func echoSecret(parent *v1alpha1.Rds, observed *corev1.Secret) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: observed.Name, Namespace: parent.Namespace, Labels: childLabels(parent)},
		Type:       corev1.SecretTypeOpaque,
		Data:       observed.Data,
	}
}
