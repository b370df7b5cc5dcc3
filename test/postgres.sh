#!/usr/bin/env bash
# test/postgres.sh - a throwaway PostgreSQL server for the integration tests of sync/pgusers.
#
# Usage:
#   eval "$(bash test/postgres.sh)"       # start (or reuse) the server and export TEST_PG_*
#   bash test/postgres.sh start           # the same; stdout holds only the export lines
#   bash test/postgres.sh env             # print the export lines of the running server
#   bash test/postgres.sh status          # exit 0 if the server is running and accepts logins
#   bash test/postgres.sh stop            # stop the server and delete its data directory
#
# The server listens on 127.0.0.1 only, with TLS (a self-signed certificate, made with openssl),
# and keeps everything (data, certificate, socket, log, env file) in one state directory. The tests log in over TCP with a password as `root`, the administrator OTC
# gives RDS for PostgreSQL instances, which like OTC's is no superuser: it has LOGIN, CREATEROLE
# and CREATEDB only. stdout carries only `export NAME=value` lines so that eval works; everything
# else goes to stderr.
#
# Environment (all optional):
#   POSTGRES_TEST_DIR       state directory            (default: ${TMPDIR:-/tmp}/rds-lambda-controller-postgres)
#   POSTGRES_TEST_PORT      TCP port                   (default: the first free port from 5433 on)
#   POSTGRES_TEST_PASSWORD  root's password on creation (default: random; reused while the server lives)
#
# If no PostgreSQL server binary (or psql, or openssl) is installed, Debian's postgresql is
# installed with apt-get (Debian/Ubuntu, root, no prompts). The server runs as the package's postgres user when the
# script runs as root (PostgreSQL refuses to run as root).
set -euo pipefail

STATE_DIR=${POSTGRES_TEST_DIR:-${TMPDIR:-/tmp}/rds-lambda-controller-postgres}
DATA_DIR=$STATE_DIR/data
LOG_FILE=$STATE_DIR/server.log
ENV_FILE=$STATE_DIR/env
# OUR_FILES are what this script keeps in STATE_DIR: nothing else is ever deleted with it.
OUR_FILES=(data server.log env pwfile '.s.PGSQL.*')
START_TIMEOUT=${POSTGRES_TEST_START_TIMEOUT:-60}

log() { printf 'postgres.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# shellcheck source=test/dbserver.sh
source "$(dirname "${BASH_SOURCE[0]}")/dbserver.sh"

# bin_dir prints the directory of the newest installed server binaries (Debian keeps them in
# /usr/lib/postgresql/VERSION/bin), or of those in PATH.
bin_dir() {
	local d
	d=$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -n 1)
	if [[ -n $d && -x $d/postgres && -x $d/initdb && -x $d/pg_ctl ]]; then
		printf '%s\n' "$d"
		return 0
	fi
	if command -v postgres >/dev/null 2>&1 && command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
		dirname "$(command -v initdb)"
		return 0
	fi
	return 1
}

ensure_installed() {
	if bin_dir >/dev/null && command -v psql >/dev/null 2>&1 && command -v openssl >/dev/null 2>&1; then
		return 0
	fi
	[[ $(id -u) -eq 0 ]] || die "postgresql is not installed and we are not root: install it (apt-get install postgresql) and retry"
	command -v apt-get >/dev/null 2>&1 || die "postgresql is not installed and apt-get is not available: install PostgreSQL and retry"
	log "installing postgresql with apt-get"
	# NOTE: on a machine with systemd the package's postinst starts the distribution's own cluster
	# on port 5432; we do not use it (ours has its own port, socket and data directory).
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >&2
	apt-get install -y -q --no-install-recommends postgresql postgresql-client openssl </dev/null >&2
}

# as_owner runs a command as the user that owns the data directory.
as_owner() {
	if [[ $(id -u) -eq 0 ]]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

# server_pid prints the pid of our server if it is alive, else fails: the first line of
# postmaster.pid, a process whose command line names our data directory.
server_pid() {
	[[ -r $DATA_DIR/postmaster.pid ]] || return 1
	local pid
	pid=$(head -n 1 "$DATA_DIR/postmaster.pid")
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	[[ -r /proc/$pid/cmdline ]] || return 1
	tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$DATA_DIR" || return 1
	printf '%s\n' "$pid"
}

# sql runs a statement as root over TCP with the password from the env file.
sql() {
	# shellcheck disable=SC1090
	source "$ENV_FILE"
	PGPASSWORD=$TEST_PG_PASSWORD PGCONNECT_TIMEOUT=5 psql --no-psqlrc -X -q -t -A \
		-h "${TEST_PG_ADDR%:*}" -p "${TEST_PG_ADDR##*:}" -U "$TEST_PG_USER" -d postgres -v ON_ERROR_STOP=1 -c "$1"
}

print_env() {
	# shellcheck disable=SC1090
	source "$ENV_FILE"
	printf 'export TEST_PG_ADDR=%q\n' "$TEST_PG_ADDR"
	printf 'export TEST_PG_USER=%q\n' "$TEST_PG_USER"
	printf 'export TEST_PG_PASSWORD=%q\n' "$TEST_PG_PASSWORD"
	log "PostgreSQL $(sql 'SHOW server_version' 2>/dev/null || echo '?') at $TEST_PG_ADDR (user $TEST_PG_USER: no superuser, CREATEROLE CREATEDB; data in $STATE_DIR)"
}

start() {
	if healthy; then
		log "reusing the running server"
		print_env
		return 0
	fi
	if server_pid >/dev/null; then
		stop
	fi

	ensure_installed
	local bin port password
	bin=$(bin_dir) || die "no PostgreSQL server binaries found"
	port=$(pick_port "${POSTGRES_TEST_PORT:-}" 5433)
	password=${POSTGRES_TEST_PASSWORD:-$(random_password)}
	check_password POSTGRES_TEST_PASSWORD "$password"

	remove_state_dir "${OUR_FILES[@]}"
	mkdir -p "$DATA_DIR"
	chmod 0700 "$DATA_DIR"
	chmod 0755 "$STATE_DIR"
	# The bootstrap superuser's password is used once, below, to create root, and kept nowhere.
	local superpw
	superpw=$(random_password)
	(umask 077 && printf '%s\n' "$superpw" >"$STATE_DIR/pwfile")
	if [[ $(id -u) -eq 0 ]]; then
		id postgres >/dev/null 2>&1 || die "no postgres user to run the server as (install postgresql)"
		chown -R postgres: "$STATE_DIR"
	fi

	log "initialising a data directory in $DATA_DIR"
	as_owner "$bin/initdb" -D "$DATA_DIR" -U postgres --pwfile="$STATE_DIR/pwfile" \
		--auth-local=scram-sha-256 --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >&2 ||
		die "initdb failed"
	rm -f "$STATE_DIR/pwfile"

	# TLS with a throwaway self-signed certificate, as OTC's instances offer it: the Secrets'
	# connection strings say sslmode=require.
	command -v openssl >/dev/null 2>&1 || die "openssl is needed for the server's certificate (apt-get install openssl)"
	openssl req -new -x509 -days 2 -nodes -subj /CN=127.0.0.1 -newkey rsa:2048 \
		-keyout "$DATA_DIR/server.key" -out "$DATA_DIR/server.crt" >/dev/null 2>&1 || die "making the server's certificate failed"
	chmod 0600 "$DATA_DIR/server.key"
	if [[ $(id -u) -eq 0 ]]; then
		chown postgres: "$DATA_DIR/server.key" "$DATA_DIR/server.crt"
	fi

	log "starting the server on 127.0.0.1:$port"
	as_owner "$bin/pg_ctl" -D "$DATA_DIR" -l "$LOG_FILE" -w -t "$START_TIMEOUT" \
		-o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$STATE_DIR -c shared_buffers=32MB -c fsync=off -c max_connections=50 -c ssl=on -c ssl_cert_file=$DATA_DIR/server.crt -c ssl_key_file=$DATA_DIR/server.key" \
		start >&2 || { tail -n 30 "$LOG_FILE" >&2 2>/dev/null || true; die "the server did not start (log: $LOG_FILE)"; }

	# root as OTC makes it: no superuser, LOGIN CREATEROLE CREATEDB. The bootstrap superuser
	# creates it over the socket.
	if ! PGPASSWORD=$superpw psql --no-psqlrc -X -q -h "$STATE_DIR" -p "$port" -U postgres -d postgres \
		-v ON_ERROR_STOP=1 -c "CREATE ROLE root LOGIN CREATEROLE CREATEDB NOSUPERUSER PASSWORD '$password'" >&2; then
		stop
		die "creating the root role failed"
	fi
	umask 077
	cat >"$ENV_FILE" <<-ENV
		TEST_PG_ADDR=127.0.0.1:$port
		TEST_PG_USER=root
		TEST_PG_PASSWORD=$password
	ENV
	healthy || {
		stop
		die "the server runs but refuses the root login over TCP"
	}
	print_env
}

stop() {
	local pid
	if pid=$(server_pid); then
		log "stopping the server (pid $pid)"
		local bin
		bin=$(bin_dir)
		as_owner "$bin/pg_ctl" -D "$DATA_DIR" -m fast -w -t 30 stop >&2 || kill -KILL "$pid" 2>/dev/null || true
	else
		log "no server running"
	fi
	remove_state_dir "${OUR_FILES[@]}"
}

run_command test/postgres.sh "$@"
