package dbusers

import (
	"context"
	"crypto/tls"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// DefaultTimeout is Conn.Timeout when it is zero.
const DefaultTimeout = 10 * time.Second

// Conn says how to reach the server as its administrator (on OTC RDS: root).
type Conn struct {
	Host     string
	Port     int
	User     string
	Password secret.Value
	// Timeout bounds connecting and each statement (and each network read and write). Zero means
	// DefaultTimeout. The ctx given to Apply bounds the whole call.
	Timeout time.Duration
	// ConnectTimeout bounds connecting and logging in, so that a server that cannot be reached
	// costs little. Zero means Timeout.
	ConnectTimeout time.Duration
	// TLS, when set, makes the session TLS with this configuration (VerifyCA); nil: plain.
	TLS *tls.Config
}

// Addr is host:port.
func (c Conn) Addr() string { return net.JoinHostPort(c.Host, strconv.Itoa(c.Port)) }

// StatementTimeout is Timeout, or DefaultTimeout when it is zero.
func (c Conn) StatementTimeout() time.Duration {
	if c.Timeout <= 0 {
		return DefaultTimeout
	}
	return c.Timeout
}

// LoginTimeout is ConnectTimeout, or StatementTimeout when it is zero.
func (c Conn) LoginTimeout() time.Duration {
	if c.ConnectTimeout <= 0 {
		return c.StatementTimeout()
	}
	return c.ConnectTimeout
}

// Validate checks the connection's host, port and user, for every engine's Apply; a
// *ValidationError lists the problems.
func (c Conn) Validate() error {
	var problems []string
	if c.Host == "" || strings.ContainsAny(c.Host, " /\t\n") {
		problems = append(problems, "connection: host "+QuoteForMessage(c.Host)+" is not a host name or address")
	}
	if c.Port < 1 || c.Port > 65535 {
		problems = append(problems, "connection: port "+strconv.Itoa(c.Port)+" is out of range")
	}
	if c.User == "" {
		problems = append(problems, "connection: user must not be empty")
	}
	if len(problems) > 0 {
		return &ValidationError{Problems: problems}
	}
	return nil
}

// Result is what an Apply did.
type Result struct {
	// Changes made, for humans, in the order they were made; no passwords. Empty when the server
	// already matched the spec.
	Changes []string
	// Managed is the state to remember for the next Apply. It reflects what succeeded, also when
	// Apply returns an error: store it either way.
	Managed ManagedState
}

// Apply makes the server match d: it creates missing databases (CREATE DATABASE IF NOT EXISTS),
// creates missing users and corrects passwords that differ, revokes what a user holds beyond its
// grants and grants what is missing, drops the users of managed that left d, and, with
// d.PruneDatabases, drops the databases of managed that left d. It never touches a user or a
// database that is neither in d nor in managed, nor the account it connects with, nor reserved
// accounts (root, ...), nor system schemas.
//
// Apply is idempotent: applying the same d again with the returned Result.Managed makes no change.
// A spec problem returns an error matching ErrInvalid before connecting; a server that cannot be
// reached, ErrUnreachable; a refused login, ErrUnauthorized. Statements the server refuses
// (ErrRefused, one *StatementError each) do not stop the others, except that a user whose creation
// failed is left alone; a lost connection stops Apply. On error, Result still lists what was
// done and what to remember.
func Apply(ctx context.Context, conn Conn, d Desired, managed ManagedState) (Result, error) {
	res := Result{Managed: NormalizeManaged(managed)}
	if err := validateApply(conn, d, managed); err != nil {
		return res, err
	}
	d = Normalize(d)
	managed = res.Managed

	s, err := open(ctx, conn)
	if err != nil {
		return res, err
	}
	defer s.close()

	obs, err := s.observe(ctx, d, managed)
	if err != nil {
		return res, err
	}
	steps, state := plan(d, managed, obs)
	res.Managed = state

	run := make([]Step, len(steps))
	for i, st := range steps {
		run[i] = Step{Change: st.change, Opens: st.createsAccount, Effect: st.effect}
		if st.account != (account{}) {
			run[i].Group = st.account.display()
		}
		if st.query != "" {
			run[i].Exec = func(ctx context.Context) error { return s.exec(ctx, st) }
		}
	}
	return res, RunSteps(ctx, run, &res)
}

// validateApply checks everything Apply needs before it connects.
func validateApply(conn Conn, d Desired, managed ManagedState) error {
	var problems []string
	for _, err := range []error{conn.Validate(), Validate(d), validateManaged(managed, conn.User)} {
		var ve *ValidationError
		if errors.As(err, &ve) {
			problems = append(problems, ve.Problems...)
		}
	}
	for i, u := range d.Users {
		if u.Name == conn.User {
			problems = append(problems, fmt.Sprintf("users[%d]: %s is the account the controller connects with", i, QuoteForMessage(u.Name)))
		}
	}
	if len(problems) > 0 {
		return &ValidationError{Problems: problems}
	}
	return nil
}

// session is one connection to the server, used for the whole Apply.
type session struct {
	db      *sql.DB
	conn    *sql.Conn
	addr    string
	timeout time.Duration
}

// discardLogger silences the driver's own logging (it writes to stderr, bypassing our logger);
// every failure it logs also comes back as an error.
type discardLogger struct{}

func (discardLogger) Print(...any) {}

// open connects and checks the login.
func open(ctx context.Context, c Conn) (*session, error) {
	cfg := mysql.NewConfig()
	cfg.Net = "tcp"
	cfg.Addr = c.Addr()
	cfg.User = c.User
	cfg.Passwd = c.Password.Reveal()
	cfg.Timeout = c.LoginTimeout()          // dial
	cfg.ReadTimeout = c.StatementTimeout()  // each network read
	cfg.WriteTimeout = c.StatementTimeout() // each network write
	cfg.Logger = discardLogger{}
	var guards loginGuards
	if c.TLS != nil {
		cfg.TLS = c.TLS.Clone()
	} else {
		cfg.DialFunc = guards.dial // no server's RSA key for the password (login.go)
	}
	// NOTE: MySQL and MariaDB refuse placeholders in CREATE USER / ALTER USER ... IDENTIFIED BY ?
	// (error 1064 when prepared; checked on MariaDB 10.11, same grammar in MySQL 8), so a password
	// cannot travel as a server-side parameter. With InterpolateParams the driver substitutes ?
	// itself, escaping the value for the connection's sql_mode (it follows NO_BACKSLASH_ESCAPES)
	// and refusing to do so for character sets where escaping is unsafe (then it falls back to a
	// server-side prepare, which fails without executing anything). We never build a password
	// literal ourselves. All other values go through the same path, also escaped by the driver.
	cfg.InterpolateParams = true
	cfg.MultiStatements = false // one statement per call, whatever a value contains

	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", cfg.Addr, err)
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(1)
	s := &session{db: db, addr: cfg.Addr, timeout: c.StatementTimeout()}

	cctx, cancel := context.WithTimeout(ctx, c.LoginTimeout())
	defer cancel()
	conn, err := db.Conn(cctx)
	if err == nil {
		err = conn.PingContext(cctx)
		if err != nil {
			_ = conn.Close()
		}
	}
	if err != nil {
		_ = db.Close()
		if guards.refused.Load() {
			return nil, fmt.Errorf("connect to %s: %w: the server asked for the password encrypted with a key it sent, over a session without TLS", cfg.Addr, ErrUnsafeLogin)
		}
		return nil, connectError(cfg.Addr, c.User, err)
	}
	s.conn = conn
	return s, nil
}

func (s *session) close() {
	_ = s.conn.Close()
	_ = s.db.Close()
}

// connectError sorts a failed connection into ErrUntrusted, ErrUnsafeLogin, ErrUnauthorized and
// ErrUnreachable.
func connectError(addr, user string, err error) error {
	if u := UntrustedServer(err); u != nil {
		return fmt.Errorf("connect to %s: %w", addr, u)
	}
	// The driver refuses both (AllowCleartextPasswords and AllowOldPasswords are off).
	switch {
	case errors.Is(err, mysql.ErrCleartextPassword):
		return fmt.Errorf("connect to %s: %w: the server asked for the password in clear text", addr, ErrUnsafeLogin)
	case errors.Is(err, mysql.ErrOldPassword):
		return fmt.Errorf("connect to %s: %w: the server asked for the password's pre-4.1 scramble, which is broken", addr, ErrUnsafeLogin)
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1044, 1045, 1698, 1251: // access denied (db, user), unix_socket-only, auth plugin
			return fmt.Errorf("connect to %s as %s: %w: server error %d", addr, QuoteForMessage(user), ErrUnauthorized, me.Number)
		}
		return fmt.Errorf("connect to %s: %w: server error %d: %s", addr, ErrUnreachable, me.Number, me.Message)
	}
	return fmt.Errorf("connect to %s: %w: %s", addr, ErrUnreachable, plainCause(err))
}

// plainCause is an error's text without the ever-changing parts: the driver and database/sql
// report timeouts and cancellations in several forms.
func plainCause(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timed out"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, mysql.ErrInvalidConn):
		// NOTE: the driver reports a read or write deadline that passed as ErrInvalidConn,
		// dropping the timeout error itself, so the two cannot be told apart here.
		return "connection lost or timed out"
	}
	return err.Error()
}

// query runs a read under its own deadline and calls scan for each row.
func (s *session) query(ctx context.Context, what, q string, args []any, scan func(*sql.Rows) error) error {
	qctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	rows, err := s.conn.QueryContext(qctx, q, args...)
	if err != nil {
		return s.readError(what, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			// Scan errors are about the data, not the connection: not worth a retry.
			return fmt.Errorf("read %s: %w", what, err)
		}
	}
	if err := rows.Err(); err != nil {
		return s.readError(what, err)
	}
	return nil
}

func (s *session) readError(what string, err error) error {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return &StatementError{Change: "read " + what, Number: me.Number, Message: me.Message}
	}
	return fmt.Errorf("read %s from %s: %w: %s", what, s.addr, ErrUnreachable, plainCause(err))
}

// exec runs one step's statement under its own deadline.
//
// NOTE: when the deadline passes, the driver closes the connection; the server may still finish
// the statement. The next Apply observes the outcome and converges.
func (s *session) exec(ctx context.Context, st step) error {
	args := make([]any, len(st.args))
	for i, a := range st.args {
		if v, ok := a.(secret.Value); ok {
			a = v.Reveal()
		}
		args[i] = a
	}
	ectx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	_, err := s.conn.ExecContext(ectx, st.query, args...)
	if err == nil {
		return nil
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		msg := me.Message
		if st.holdsPassword {
			msg = passwordErrorMessage(me.Number)
		}
		return &StatementError{Change: st.change, Number: me.Number, Message: msg}
	}
	return fmt.Errorf("%s on %s: %w: %s", st.change, s.addr, ErrUnreachable, plainCause(err))
}

// passwordErrorMessage replaces the server's message for a statement that carried a password:
// a syntax error message quotes the statement, password included.
func passwordErrorMessage(number uint16) string {
	switch number {
	case 1819:
		return "the password does not satisfy the server's password policy"
	case 1396:
		return "the operation failed for this account (it exists already or does not exist)"
	case 1044, 1045, 1142, 1227:
		return "access denied: the controller's account lacks the privilege"
	case 1470:
		return "the user name is too long for this server"
	}
	return "the server refused the statement (its message is withheld because the statement holds a password)"
}

// privilegeNameRE is what a privilege name read from the server must look like before it is put
// into a REVOKE statement.
var privilegeNameRE = regexp.MustCompile(`^[A-Z][A-Z_]*( [A-Z][A-Z_]*)*$`)

// observe reads what plan needs: the name case rule, the databases, the accounts of d and managed,
// and the grants of the accounts of d.
func (s *session) observe(ctx context.Context, d Desired, managed ManagedState) (observed, error) {
	obs := observed{databases: stringSet{}, users: map[account]observedUser{}}

	var lctn int
	if err := s.query(ctx, "lower_case_table_names", "SELECT @@lower_case_table_names", nil, func(r *sql.Rows) error {
		return r.Scan(&lctn)
	}); err != nil {
		return obs, err
	}
	obs.lowerCaseNames = lctn != 0

	if err := s.query(ctx, "databases", "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA", nil, func(r *sql.Rows) error {
		var name string
		if err := r.Scan(&name); err != nil {
			return err
		}
		obs.databases[obs.fold(name)] = true
		return nil
	}); err != nil {
		return obs, err
	}

	wantGrants := map[account]bool{}
	var accts []account
	for _, u := range d.Users {
		a := account{u.Name, u.Host}
		accts = append(accts, a)
		wantGrants[a] = true
	}
	for _, u := range managed.Users {
		if a := (account{u.Name, u.Host}); !wantGrants[a] {
			accts = append(accts, a)
		}
	}

	for _, a := range accts {
		var u observedUser
		found := false
		// NOTE: mysql.user is a table in MySQL and a view over mysql.global_priv in MariaDB 10.4+;
		// both have User, Host, plugin and authentication_string.
		if err := s.query(ctx, "account "+a.display(),
			"SELECT plugin, authentication_string FROM mysql.user WHERE User = ? AND Host = ?",
			[]any{a.name, a.host}, func(r *sql.Rows) error {
				var plugin, auth sql.NullString
				if err := r.Scan(&plugin, &auth); err != nil {
					return err
				}
				u.plugin, u.authString, found = plugin.String, auth.String, true
				return nil
			}); err != nil {
			return obs, err
		}
		if !found {
			continue
		}
		if wantGrants[a] {
			g, err := s.grants(ctx, a)
			if err != nil {
				return obs, err
			}
			u.grants = g
		}
		obs.users[a] = u
	}
	return obs, nil
}

// grants reads an account's database- and table-level privileges.
//
// NOTE: information_schema.SCHEMA_PRIVILEGES and TABLE_PRIVILEGES read mysql.db and
// mysql.tables_priv and name privileges the way GRANT does, in MySQL and MariaDB alike, which
// SHOW GRANTS (different text per server and version) does not. TABLE_SCHEMA of a database-level
// row is the stored pattern (app\_1 for an escaped name). The admin account needs SELECT on
// mysql.* to see other accounts' rows; OTC's root has it. Global, column and routine privileges
// are not read: the spec cannot express them, and revoking global ones needs rights OTC's root
// lacks.
func (s *session) grants(ctx context.Context, a account) (map[scope]stringSet, error) {
	out := map[scope]stringSet{}
	add := func(sc scope, priv, grantable string) error {
		if !privilegeNameRE.MatchString(priv) {
			return fmt.Errorf("unexpected privilege name %s", QuoteForMessage(priv))
		}
		if out[sc] == nil {
			out[sc] = stringSet{}
		}
		out[sc][priv] = true
		if strings.EqualFold(grantable, "YES") {
			out[sc][grantOption] = true
		}
		return nil
	}
	what := "grants of " + a.display()
	if err := s.query(ctx, what,
		"SELECT TABLE_SCHEMA, PRIVILEGE_TYPE, IS_GRANTABLE FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE = ?",
		[]any{grantee(a.name, a.host)}, func(r *sql.Rows) error {
			var db, priv, grantable string
			if err := r.Scan(&db, &priv, &grantable); err != nil {
				return err
			}
			return add(scope{db: db}, priv, grantable)
		}); err != nil {
		return nil, err
	}
	if err := s.query(ctx, what,
		"SELECT TABLE_SCHEMA, TABLE_NAME, PRIVILEGE_TYPE, IS_GRANTABLE FROM information_schema.TABLE_PRIVILEGES WHERE GRANTEE = ?",
		[]any{grantee(a.name, a.host)}, func(r *sql.Rows) error {
			var db, table, priv, grantable string
			if err := r.Scan(&db, &table, &priv, &grantable); err != nil {
				return err
			}
			return add(scope{db: db, table: table}, priv, grantable)
		}); err != nil {
		return nil, err
	}
	return out, nil
}
