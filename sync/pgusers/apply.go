package pgusers

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"net"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mcsps/rds-lambda-controller/sync/dbusers"
)

// maintenanceDB is the database Apply logs in to first: every PostgreSQL server has it, and
// databases and roles are the whole server's, whichever database a session is in.
const maintenanceDB = "postgres"

// Apply makes the server match d, as dbusers.Apply does for MySQL: it creates missing databases
// (closed to PUBLIC), creates missing roles (LOGIN) and corrects passwords the remembered digest
// says differ, revokes what a role holds beyond its grants on databases, schemas and tables and
// grants what is missing, drops the roles of managed that left d (after revoking what they hold;
// never one that owns objects: ErrOwnsObjects), and, with d.PruneDatabases, drops the databases
// of managed that left d. It never touches a role or a database that is neither in d nor in
// managed, nor the role it connects with, nor reserved roles, nor system databases.
//
// Apply is idempotent: applying the same d again with the returned Result.Managed makes no
// change. A spec problem returns an error matching dbusers.ErrInvalid before connecting; a server
// that cannot be reached, dbusers.ErrUnreachable; a refused login, dbusers.ErrUnauthorized.
// Statements the server refuses (dbusers.ErrRefused, one *dbusers.StatementError each) do not stop
// the others, except the later steps of a role or database whose creation failed; a lost
// connection stops Apply. On error, Result still lists what was done and what to remember.
func Apply(ctx context.Context, conn dbusers.Conn, d dbusers.Desired, managed dbusers.ManagedState) (dbusers.Result, error) {
	res := dbusers.Result{Managed: dbusers.NormalizeManaged(managed)}
	if err := validateApply(conn, d, res.Managed); err != nil {
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

	run := make([]dbusers.Step, len(steps))
	for i, st := range steps {
		run[i] = dbusers.Step{Change: st.change, Group: st.group, Opens: st.opens, Effect: st.effect}
		switch {
		case st.refused != nil:
			run[i].Exec = func(context.Context) error { return st.refused }
		case st.query != "":
			run[i].Exec = func(ctx context.Context) error { return s.exec(ctx, st, obs.version) }
		}
	}
	return res, dbusers.RunSteps(ctx, run, &res)
}

// validateApply checks everything Apply needs before it connects.
func validateApply(conn dbusers.Conn, d dbusers.Desired, managed dbusers.ManagedState) error {
	var problems []string
	for _, err := range []error{conn.Validate(), Validate(d), validateManaged(managed, conn.User)} {
		var ve *dbusers.ValidationError
		if errors.As(err, &ve) {
			problems = append(problems, ve.Problems...)
		}
	}
	for i, u := range d.Users {
		if u.Name == conn.User {
			problems = append(problems, fmt.Sprintf("users[%d]: %s is the role the controller connects with", i, q(u.Name)))
		}
	}
	if len(problems) > 0 {
		return &dbusers.ValidationError{Problems: problems}
	}
	return nil
}

// session is the connections of one Apply: one to the maintenance database, and one to each
// other database whose schemas or tables it reads or changes, opened when first needed.
type session struct {
	c     dbusers.Conn
	addr  string
	conns map[string]*pgx.Conn
	// notice is the last notice of the statement running: PostgreSQL answers a GRANT or REVOKE
	// that changed nothing with a warning, not an error.
	notice *pgconn.Notice
}

// open connects to the maintenance database and checks the login.
func open(ctx context.Context, c dbusers.Conn) (*session, error) {
	s := &session{c: c, addr: c.Addr(), conns: map[string]*pgx.Conn{}}
	if _, err := s.conn(ctx, ""); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *session) close() {
	for db := range s.conns {
		s.closeDB(db)
	}
}

func (s *session) closeDB(db string) {
	if c := s.conns[db]; c != nil {
		ctx, cancel := context.WithTimeout(context.Background(), s.c.LoginTimeout())
		defer cancel()
		_ = c.Close(ctx)
		delete(s.conns, db)
	}
}

// conn returns the connection to db ("" the maintenance database), connecting first if needed.
func (s *session) conn(ctx context.Context, db string) (*pgx.Conn, error) {
	if c := s.conns[db]; c != nil {
		return c, nil
	}
	name := db
	if name == "" {
		name = maintenanceDB
	}
	cfg, err := s.config(name)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w: %s", s.addr, dbusers.ErrUnreachable, err)
	}
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { s.notice = n }

	cctx, cancel := context.WithTimeout(ctx, s.c.LoginTimeout())
	defer cancel()
	c, err := pgx.ConnectConfig(cctx, cfg)
	if err != nil {
		return nil, s.connectError(db, err)
	}
	s.conns[db] = c
	return c, nil
}

// config is the configuration of a session to the database name.
//
// NOTE: the configuration is built field by field, never from a connection string with the
// password in it. ParseConfig("") reads the PG* environment (and a service file it names), and
// whatever it fills that is not set again here is the environment's: every field that decides
// where the session goes, what it proves and sends, and how, is set below, so the environment
// changes nothing of it (TestEnvironmentCannotWeakenTheSession, TestConfigIgnoresTheEnvironment).
func (s *session) config(name string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig("")
	if err != nil {
		return nil, err
	}
	port := uint16(s.c.Port) // checked by Conn.Validate: 1..65535
	cfg.Host, cfg.Port, cfg.Database = s.c.Host, port, name
	cfg.User, cfg.Password = s.c.User, s.c.Password.Reveal()
	cfg.ConnectTimeout = s.c.LoginTimeout()
	cfg.DialFunc = (&net.Dialer{KeepAlive: 5 * time.Minute}).DialContext // pgconn's, without PGCONNECT_TIMEOUT's
	// sslmode=prefer, as libpq's default: TLS when the server offers it (OTC's instances do),
	// plain otherwise; the certificate is not verified (the instance's address is a private one
	// of the VPC, and OTC's CA is not known here). TLS is asked for as PostgreSQL has always done
	// (SSLRequest): a server older than 17 knows no other way, a newer one refuses direct TLS
	// without the ALPN this configuration has not, so with sslnegotiation=direct
	// (PGSSLNEGOTIATION) every session would fall back to plain text.
	cfg.TLSConfig = &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12} //nolint:gosec // sslmode=prefer
	cfg.SSLNegotiation, cfg.SSLCertMode = "postgres", "allow"
	cfg.Fallbacks = []*pgconn.FallbackConfig{{Host: s.c.Host, Port: port}}
	// With OTC's CA (--db-ca-file: Conn.TLS, dbusers.VerifyCA), sslmode=verify-ca instead: TLS or
	// nothing, and a server whose certificate does not chain to the CA is sent nothing, which
	// stops the man in the middle the NOTE below describes.
	if s.c.TLS != nil {
		cfg.TLSConfig, cfg.Fallbacks = s.c.TLS.Clone(), nil
	}
	// The admin's password never leaves as it is: only a server that asks for an MD5 or a
	// SCRAM-SHA-256 proof of it is answered (libpq's require_auth). One that asks for it in clear
	// text (password), which over the fallback above would cross the VPC unencrypted, or that
	// asks for nothing (trust, which OTC never configures), is something else at the instance's
	// address: the connection ends before the password or any statement is sent. Over TLS, the
	// SCRAM proof is bound to the channel when the server offers it (channel_binding=prefer,
	// libpq's default).
	//
	// NOTE: none of this stops a man in the middle who can also reach the instance: MD5 proves
	// nothing of the server, so it may answer "authenticated" itself; it may refuse TLS (the
	// fallback above) or hide SCRAM-SHA-256-PLUS, and relay the proof. Only a verified
	// certificate would (docs/users.md).
	cfg.RequireAuth, cfg.ChannelBinding = "md5,scram-sha-256", "prefer"
	cfg.MinProtocolVersion, cfg.MaxProtocolVersion = "3.0", "3.0"
	// search_path is pg_catalog alone: the roles Apply manages may create functions and operators
	// in the schemas of a default search_path ("$user", public: every role may create in public
	// up to PostgreSQL 14, in postgres too), and one named as pg_catalog's with argument types
	// that resolution prefers (pg_has_role(text, text) over pg_catalog's (name, text)) would run
	// as the admin. Names in statements are quoted, never looked up in the search_path but for
	// pg_catalog's; the startup packet's setting wins over a role's or a database's default.
	cfg.RuntimeParams = map[string]string{"application_name": "rds-lambda-controller", "search_path": "pg_catalog"}
	cfg.ValidateConnect, cfg.AfterConnect = nil, nil
	// Arguments travel as bind parameters (a service file may name another mode).
	cfg.DefaultQueryExecMode = pgx.QueryExecModeCacheStatement
	cfg.StatementCacheCapacity, cfg.DescriptionCacheCapacity = 512, 512
	return cfg, nil
}

// connectError sorts a failed connection into ErrUnauthorized, a refused one (the database does
// not exist, or root may not connect to it), ErrUntrusted, ErrUnsafeLogin and ErrUnreachable.
func (s *session) connectError(db string, err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "28P01", "28000": // invalid_password, invalid_authorization_specification
			return fmt.Errorf("connect to %s as %s: %w: server error %s", s.addr, q(s.c.User), dbusers.ErrUnauthorized, pe.Code)
		case "3D000", "42501": // invalid_catalog_name, insufficient_privilege
			if db != "" {
				return &dbusers.StatementError{Change: "connect to database " + db, Code: pe.Code, Message: pe.Message}
			}
		}
		return fmt.Errorf("connect to %s: %w: server error %s: %s", s.addr, dbusers.ErrUnreachable, pe.Code, pe.Message)
	}
	if s.c.TLS != nil {
		// The certificate, or the server's proof of its key (dbusers.VerifyCA, crypto/tls).
		if u := dbusers.UntrustedServer(err); u != nil {
			return fmt.Errorf("connect to %s: %w", s.addr, u)
		}
		// NOTE: pgconn has no error type for it (any answer but 'S' to the SSLRequest);
		// TestVerifiedSessions holds the text.
		if strings.Contains(err.Error(), "server refused TLS connection") {
			return fmt.Errorf("connect to %s: %w: the server offers no TLS", s.addr, dbusers.ErrUntrusted)
		}
	}
	// NOTE: pgconn has no error type for it; TestAdminPasswordIsNeverSentInClear holds the text.
	if strings.Contains(err.Error(), "require_auth check failed") {
		return fmt.Errorf("connect to %s: %w: %s", s.addr, dbusers.ErrUnsafeLogin, plainCause(err))
	}
	return fmt.Errorf("connect to %s: %w: %s", s.addr, dbusers.ErrUnreachable, plainCause(err))
}

// plainCause is an error's text without the ever-changing parts.
func plainCause(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded), pgconn.Timeout(err):
		return "timed out"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return "cannot connect: " + errors.Unwrap(ce).Error()
	}
	return err.Error()
}

// query runs a read on db's session under its own deadline and calls scan for each row.
func (s *session) query(ctx context.Context, db, what, sql string, args []any, scan func(pgx.Rows) error) error {
	c, err := s.conn(ctx, db)
	if err != nil {
		return err
	}
	qctx, cancel := context.WithTimeout(ctx, s.c.StatementTimeout())
	defer cancel()
	rows, err := c.Query(qctx, sql, args...)
	if err != nil {
		return s.readError(what, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return fmt.Errorf("read %s: %w", what, err)
		}
	}
	if err := rows.Err(); err != nil {
		return s.readError(what, err)
	}
	return nil
}

func (s *session) readError(what string, err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return &dbusers.StatementError{Change: "read " + what, Code: pe.Code, Message: pe.Message}
	}
	return fmt.Errorf("read %s from %s: %w: %s", what, s.addr, dbusers.ErrUnreachable, plainCause(err))
}

// exec runs one step's statement on its database's session, under its own deadline.
//
// NOTE: when the deadline passes, the driver asks the server to cancel the statement and closes
// the connection; the server may still finish it. The next Apply observes the outcome and
// converges.
func (s *session) exec(ctx context.Context, st step, version int) error {
	if st.dropsDatabase != "" {
		s.closeDB(st.dropsDatabase) // a database with a session cannot be dropped
	}
	c, err := s.conn(ctx, st.db)
	if err != nil {
		return err
	}
	sql := st.query
	if !st.password.Empty() {
		pw, err := passwordSQL(st.password.Reveal(), st.role, version)
		if err != nil {
			return fmt.Errorf("%s: %w", st.change, err)
		}
		sql += pw
	}
	ectx, cancel := context.WithTimeout(ctx, s.c.StatementTimeout())
	defer cancel()
	s.notice = nil
	_, err = c.Exec(ectx, sql, st.args...)
	if err == nil {
		// 01007 privilege_not_granted, 01006 privilege_not_revoked: root lacks the grant option
		// (the object is another role's), and nothing changed.
		if n := s.notice; n != nil && (n.Code == "01007" || n.Code == "01006") {
			return &dbusers.StatementError{Change: st.change, Code: n.Code, Message: n.Message}
		}
		if len(st.revokes) > 0 {
			return s.checkRevoked(ctx, st)
		}
		return nil
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		msg := pe.Message
		if !st.password.Empty() {
			msg = passwordErrorMessage(pe.Code)
		}
		return &dbusers.StatementError{Change: st.change, Code: pe.Code, Message: msg}
	}
	return fmt.Errorf("%s on %s: %w: %s", st.change, s.addr, dbusers.ErrUnreachable, plainCause(err))
}

// checkRevoked reads, after a REVOKE ran, whether the grantee still holds what it revoked: a
// REVOKE removes only the privileges its grantor (root, or the owner root is a member of)
// granted, and says nothing when others granted them. Those are reported as not revoked (code
// 01006, privilege_not_revoked), naming their grantors: they go only when those revoke them.
func (s *session) checkRevoked(ctx context.Context, st step) error {
	var sql string
	args := []any{st.grantee}
	switch st.on.level() {
	case onDatabase:
		sql = "SELECT a.privilege_type, a.is_grantable, pg_get_userbyid(a.grantor) FROM pg_database o CROSS JOIN LATERAL aclexplode(o.datacl) a " +
			"WHERE o.datname = $2"
		args = append(args, st.on.db)
	case onSchema:
		sql = "SELECT a.privilege_type, a.is_grantable, pg_get_userbyid(a.grantor) FROM pg_namespace o CROSS JOIN LATERAL aclexplode(o.nspacl) a " +
			"WHERE o.nspname = $2"
		args = append(args, st.on.schema)
	default:
		sql = "SELECT a.privilege_type, a.is_grantable, pg_get_userbyid(a.grantor) FROM pg_class o JOIN pg_namespace n ON n.oid = o.relnamespace " +
			"CROSS JOIN LATERAL aclexplode(o.relacl) a WHERE n.nspname = $2 AND o.relname = $3 AND o.relkind IN " + relkinds
		args = append(args, st.on.schema, st.on.table)
	}
	sql += " AND a.grantee = (SELECT oid FROM pg_roles WHERE rolname = $1) ORDER BY 3, 1"
	var held []string
	if err := s.query(ctx, st.db, "what "+st.grantee+" holds on "+st.on.display(), sql, args, func(r pgx.Rows) error {
		var priv, grantor string
		var grantable bool
		if err := r.Scan(&priv, &grantable, &grantor); err != nil {
			return err
		}
		if slices.Contains(st.revokes, priv) || (grantable && slices.Contains(st.revokes, grantOption)) {
			what := priv
			if slices.Contains(st.revokes, grantOption) {
				what += " " + grantOption
			}
			held = append(held, what+" granted by "+grantor)
		}
		return nil
	}); err != nil {
		return err
	}
	if len(held) == 0 {
		return nil
	}
	return &dbusers.StatementError{Change: st.change, Code: "01006", Message: "not revoked, " + strings.Join(held, ", ") +
		": only those grantors (or a member of theirs) can revoke it"}
}

// passwordErrorMessage replaces the server's message for a statement that carried a password (or
// its verifier): a syntax error message may quote the statement.
func passwordErrorMessage(code string) string {
	switch code {
	case "42710":
		return "the role exists already"
	case "42704":
		return "the role does not exist"
	case "42501":
		return "permission denied: the controller's role lacks the privilege"
	case "28P01", "22023":
		return "the server refused the password"
	}
	return "the server refused the statement (its message is withheld because the statement holds a password)"
}

// privilegeNameRE is what a privilege name read from the server must look like before it is put
// into a REVOKE statement.
var privilegeNameRE = regexp.MustCompile(`^[A-Z]+( [A-Z]+)*$`)

// relkinds are the kinds of pg_class rows a table grant is on: tables, partitioned tables, views,
// materialized views, foreign tables.
const relkinds = "('r','p','v','m','f')"

// observe reads what plan needs: the server's version, the databases, the roles of d and managed,
// what each holds on databases, and on the schemas and tables of the databases it is granted
// something in or that d's grants name, what each owns, and the tables of the schemas whose every
// table d grants on.
func (s *session) observe(ctx context.Context, d dbusers.Desired, managed dbusers.ManagedState) (observed, error) {
	obs := observed{
		databases: map[string]bool{}, roles: map[string]observedRole{}, tables: map[dbSchema][]string{},
		admin: s.c.User, owners: map[scope]string{}, memberOf: map[string]bool{}, openToPublic: map[string]bool{},
	}
	if err := s.query(ctx, "", "the server version", "SELECT current_setting('server_version_num')::int", nil, func(r pgx.Rows) error {
		return r.Scan(&obs.version)
	}); err != nil {
		return obs, err
	}
	if err := s.query(ctx, "", "databases", "SELECT datname, pg_get_userbyid(datdba), datacl IS NULL FROM pg_database WHERE NOT datistemplate", nil, func(r pgx.Rows) error {
		var name, owner string
		var open bool
		err := r.Scan(&name, &owner, &open)
		obs.databases[name] = true
		obs.owners[scope{db: name}] = owner
		obs.openToPublic[name] = open
		return err
	}); err != nil {
		return obs, err
	}

	var names []string
	for _, u := range d.Users {
		names = append(names, u.Name)
	}
	for _, u := range managed.Users {
		names = append(names, u.Name)
	}
	slices.Sort(names)
	names = slices.Compact(names)

	oids := map[uint32]string{}
	visit := map[string]bool{}
	for _, name := range names {
		var (
			oid      uint32
			canLogin bool
			found    bool
		)
		if err := s.query(ctx, "", "role "+name, "SELECT oid, rolcanlogin FROM pg_roles WHERE rolname = $1", []any{name}, func(r pgx.Rows) error {
			found = true
			return r.Scan(&oid, &canLogin)
		}); err != nil {
			return obs, err
		}
		if !found {
			continue
		}
		oids[oid] = name
		role := observedRole{canLogin: canLogin, grants: map[scope]privSet{}}
		// NOTE: pg_shdepend is the whole server's: it names, for each database, the objects a
		// role owns ('o') and those whose privileges name it ('a'), with no need to connect there.
		if err := s.query(ctx, "", "what role "+name+" owns and holds",
			"SELECT DISTINCT s.deptype::text, coalesce(d.datname, '') FROM pg_shdepend s LEFT JOIN pg_database d ON d.oid = s.dbid "+
				"WHERE s.refclassid = 'pg_authid'::regclass AND s.refobjid = $1 AND s.deptype IN ('o', 'a') ORDER BY 2",
			[]any{oid}, func(r pgx.Rows) error {
				var kind, db string
				if err := r.Scan(&kind, &db); err != nil {
					return err
				}
				switch {
				case kind == "o":
					role.owns = append(role.owns, db)
				case db != "":
					visit[db] = true
				}
				return nil
			}); err != nil {
			return obs, err
		}
		obs.roles[name] = role
	}
	if len(oids) > 0 {
		keys := slices.Collect(maps.Keys(oids))
		if err := s.query(ctx, "", "privileges on databases",
			"SELECT d.datname, a.grantee, a.privilege_type, a.is_grantable FROM pg_database d CROSS JOIN LATERAL aclexplode(d.datacl) a "+
				"WHERE NOT d.datistemplate AND a.grantee = ANY($1) AND a.grantee <> d.datdba",
			[]any{keys}, func(r pgx.Rows) error {
				var db, priv string
				var grantee uint32
				var grantable bool
				if err := r.Scan(&db, &grantee, &priv, &grantable); err != nil {
					return err
				}
				return obs.add(oids[grantee], scope{db: db}, priv, grantable)
			}); err != nil {
			return obs, err
		}
	}

	tableSchemas := map[string][]string{} // database -> schemas of table grants
	for _, u := range d.Users {
		for _, g := range u.Grants {
			if g.Schema != "" {
				visit[g.Database] = true
			}
			if g.Table != "" && !slices.Contains(tableSchemas[g.Database], g.Schema) {
				tableSchemas[g.Database] = append(tableSchemas[g.Database], g.Schema)
			}
		}
	}
	for _, db := range slices.Sorted(maps.Keys(visit)) {
		if !obs.databases[db] {
			continue // created by this apply: nothing in it yet
		}
		if err := s.observeDatabase(ctx, db, oids, tableSchemas[db], &obs); err != nil {
			return obs, err
		}
	}
	owners := map[string]bool{}
	for on, owner := range obs.owners {
		if _, ours := obs.roles[owner]; ours && owner != obs.admin && on.level() == onTable {
			owners[owner] = true
		}
	}
	for _, owner := range slices.Sorted(maps.Keys(owners)) {
		if err := s.query(ctx, "", "membership in "+owner, "SELECT pg_has_role($1, 'USAGE')", []any{owner}, func(r pgx.Rows) error {
			var member bool
			err := r.Scan(&member)
			obs.memberOf[owner] = member
			return err
		}); err != nil {
			return obs, err
		}
	}
	return obs, nil
}

// observeDatabase reads, in one database, what the roles hold on its schemas and tables, and the
// tables of the schemas listed, with their owners.
//
// NOTE: an owner's own privileges are part of an object's ACL once anything was granted on it;
// they are an owner's, not a grant, and are never read (or revoked), as in observe's databases.
func (s *session) observeDatabase(ctx context.Context, db string, oids map[uint32]string, schemas []string, obs *observed) error {
	if len(oids) > 0 {
		keys := slices.Collect(maps.Keys(oids))
		if err := s.query(ctx, db, "privileges on the schemas of "+db,
			"SELECT n.nspname, a.grantee, a.privilege_type, a.is_grantable FROM pg_namespace n CROSS JOIN LATERAL aclexplode(n.nspacl) a "+
				"WHERE a.grantee = ANY($1) AND a.grantee <> n.nspowner",
			[]any{keys}, func(r pgx.Rows) error {
				var schema, priv string
				var grantee uint32
				var grantable bool
				if err := r.Scan(&schema, &grantee, &priv, &grantable); err != nil {
					return err
				}
				return obs.add(oids[grantee], scope{db: db, schema: schema}, priv, grantable)
			}); err != nil {
			return err
		}
		if err := s.query(ctx, db, "the schemas the roles own in "+db,
			"SELECT nspname, pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspowner = ANY($1)",
			[]any{keys}, func(r pgx.Rows) error {
				var schema, owner string
				err := r.Scan(&schema, &owner)
				obs.owners[scope{db: db, schema: schema}] = owner
				return err
			}); err != nil {
			return err
		}
		if err := s.query(ctx, db, "privileges on the tables of "+db,
			"SELECT n.nspname, c.relname, pg_get_userbyid(c.relowner), a.grantee, a.privilege_type, a.is_grantable FROM pg_class c "+
				"JOIN pg_namespace n ON n.oid = c.relnamespace CROSS JOIN LATERAL aclexplode(c.relacl) a "+
				"WHERE c.relkind IN "+relkinds+" AND a.grantee = ANY($1) AND a.grantee <> c.relowner",
			[]any{keys}, func(r pgx.Rows) error {
				var schema, table, owner, priv string
				var grantee uint32
				var grantable bool
				if err := r.Scan(&schema, &table, &owner, &grantee, &priv, &grantable); err != nil {
					return err
				}
				s := scope{db: db, schema: schema, table: table}
				obs.owners[s] = owner
				return obs.add(oids[grantee], s, priv, grantable)
			}); err != nil {
			return err
		}
	}
	if len(schemas) > 0 {
		if err := s.query(ctx, db, "the tables of "+db,
			"SELECT n.nspname, c.relname, pg_get_userbyid(c.relowner) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "+
				"WHERE c.relkind IN "+relkinds+" AND n.nspname = ANY($1) ORDER BY 1, 2",
			[]any{schemas}, func(r pgx.Rows) error {
				var schema, table, owner string
				if err := r.Scan(&schema, &table, &owner); err != nil {
					return err
				}
				obs.owners[scope{db: db, schema: schema, table: table}] = owner
				k := dbSchema{db, schema}
				obs.tables[k] = append(obs.tables[k], table)
				return nil
			}); err != nil {
			return err
		}
	}
	return nil
}

// add records that role holds priv on s.
func (o *observed) add(role string, s scope, priv string, grantable bool) error {
	if !privilegeNameRE.MatchString(priv) {
		return fmt.Errorf("unexpected privilege name %s", q(priv))
	}
	r, ok := o.roles[role]
	if !ok {
		return nil
	}
	if r.grants[s] == nil {
		r.grants[s] = privSet{}
	}
	r.grants[s][priv] = true
	if grantable {
		r.grants[s][grantOption] = true
	}
	return nil
}
