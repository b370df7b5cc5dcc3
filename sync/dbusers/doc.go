// Package dbusers makes the databases, users and grants of a MySQL server (OTC RDS for MySQL,
// MySQL 5.7/8.0, MariaDB) match an Rds object's spec. It is the only package of the project that
// imports the MySQL driver.
//
// The flow, for the hook:
//
//	grant, err := dbusers.ParseGrant(stmt, user.Name, user.Host) // each spec.users[].privileges[]
//	err = dbusers.Validate(desired)                               // all spec problems at once
//	res, err := dbusers.Apply(ctx, conn, desired, managed)       // managed: from status
//	// store res.Managed (also on error) and dbusers.Fingerprint(desired) in status
//
// Apply observes first (databases, accounts, password hashes, grants), then plans the changes as
// a pure function of (spec, remembered state, observation) and runs them one statement at a time,
// each under its own deadline. It is idempotent: a second identical call changes nothing.
//
// Safety rules:
//   - Names pass strict allow-lists before they reach SQL, and reach it only through the quoting
//     helpers in quote.go; values (passwords) are never written into SQL by this package.
//   - GRANT statements from the spec are parsed, never executed: only database- and table-level
//     privileges, for exactly the spec's account.
//   - Nothing is dropped unless ManagedState says this controller created (or adopted) it;
//     databases only with PruneDatabases. System schemas, reserved accounts (root, OTC's rds*
//     accounts) and the account Apply connects with are never touched.
package dbusers
