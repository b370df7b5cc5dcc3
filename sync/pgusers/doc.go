// Package pgusers makes the databases, roles and grants of a PostgreSQL server (OTC RDS for
// PostgreSQL) match an Rds object's spec: PostgreSQL's SQL layer behind the hooks' SQLAccounts
// seam, beside dbusers (MySQL). It is the only package of the project that imports the
// PostgreSQL driver (jackc/pgx). It speaks dbusers' engine-neutral types: Desired, Conn,
// ManagedState, Result, Grant and the error kinds.
//
// The flow is dbusers': Apply observes first (databases, roles, the privileges the roles hold on
// databases, schemas and tables, what they own), then plans the changes as a pure function of
// (spec, remembered state, observation), then runs them one statement at a time, each under its
// own deadline. A second identical Apply changes nothing.
//
// It runs as the instance's administrator, root, which on OTC (as on other clouds) is no
// superuser: it has CREATEROLE and CREATEDB. Nothing here needs more: roles are created with
// CREATE ROLE, databases with CREATE DATABASE (root owns them), privileges are granted by root.
//
// Safety rules:
//   - Names pass strict allow-lists before they reach SQL, and reach it only through quoteIdent
//     (quote.go); values are bind parameters. A password cannot be one (CREATE ROLE and ALTER
//     ROLE take no parameters): on PostgreSQL 10 and later it is sent as a SCRAM-SHA-256 verifier
//     computed here, before 10 as the MD5 verifier such a server stores, so the password itself
//     never reaches the server, its logs or its statistics; only a password that is not printable
//     ASCII, on 10 and later, as a literal quoted by quoteLiteral.
//   - Every session's search_path is pg_catalog alone: no function or operator that a managed
//     role created (up to PostgreSQL 14 every role may create in public) is ever resolved in
//     the admin's queries.
//   - There are no GRANT strings for PostgreSQL: only the structured grants, on a database, a
//     schema, one table, or every table of a schema.
//   - Nothing is dropped unless ManagedState says this controller created (or adopted) it;
//     databases only with PruneDatabases. System databases and schemas, reserved roles (root,
//     OTC's rds* roles, pg_*) and the role Apply connects with are never touched.
//   - A role that still owns objects (tables, schemas, databases) is not dropped: Apply reports
//     ErrOwnsObjects and keeps it managed; the next Apply drops it once the objects are gone or
//     reassigned. Nothing of the role's data is ever dropped or reassigned by the controller.
package pgusers
