#!/usr/bin/env bash
# test/mariadb.sh - a throwaway MariaDB server for the integration tests of sync/dbusers.
#
# Usage:
#   eval "$(bash test/mariadb.sh)"        # start (or reuse) the server and export TEST_MYSQL_*
#   bash test/mariadb.sh start            # the same; stdout holds only the export lines
#   bash test/mariadb.sh env              # print the export lines of the running server
#   bash test/mariadb.sh status           # exit 0 if the server is running and accepts logins
#   bash test/mariadb.sh stop             # stop the server and delete its data directory
#
# The server listens on 127.0.0.1 only, keeps everything (data, socket, pid, log, env file) in
# one state directory and is reached as root with a password over TCP, like the hook reaches RDS.
# stdout carries only `export NAME=value` lines so that eval works; everything else goes to stderr.
#
# Environment (all optional):
#   MARIADB_TEST_DIR       state directory            (default: ${TMPDIR:-/tmp}/rds-lambda-controller-mariadb)
#   MARIADB_TEST_PORT      TCP port                   (default: the first free port from 3307 on)
#   MARIADB_TEST_PASSWORD  root password on creation  (default: random; reused while the server lives)
#
# If no MariaDB/MySQL server binary is installed, mariadb-server is installed with apt-get
# (Debian/Ubuntu, root, no prompts).
set -euo pipefail

STATE_DIR=${MARIADB_TEST_DIR:-${TMPDIR:-/tmp}/rds-lambda-controller-mariadb}
DATA_DIR=$STATE_DIR/data
SOCKET=$STATE_DIR/mysqld.sock
PID_FILE=$STATE_DIR/mysqld.pid
LOG_FILE=$STATE_DIR/error.log
ENV_FILE=$STATE_DIR/env
# OUR_FILES are what this script keeps in STATE_DIR: nothing else is ever deleted with it.
OUR_FILES=(data mysqld.sock mysqld.sock.lock mysqld.pid error.log install.log env)
START_TIMEOUT=${MARIADB_TEST_START_TIMEOUT:-60}

log() { printf 'mariadb.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# shellcheck source=test/dbserver.sh
source "$(dirname "${BASH_SOURCE[0]}")/dbserver.sh"

# find_bin prints the path of the first of the named programs found in PATH or the sbin dirs.
find_bin() {
	local name dir
	for name in "$@"; do
		if command -v "$name" >/dev/null 2>&1; then
			command -v "$name"
			return 0
		fi
		for dir in /usr/sbin /usr/local/sbin /sbin; do
			if [[ -x $dir/$name ]]; then
				printf '%s\n' "$dir/$name"
				return 0
			fi
		done
	done
	return 1
}

ensure_installed() {
	if find_bin mariadbd mysqld >/dev/null && find_bin mariadb-install-db mysql_install_db >/dev/null &&
		find_bin mariadb mysql >/dev/null; then
		return 0
	fi
	[[ $(id -u) -eq 0 ]] || die "mariadb-server is not installed and we are not root: install it (apt-get install mariadb-server) and retry"
	command -v apt-get >/dev/null 2>&1 || die "mariadb-server is not installed and apt-get is not available: install MariaDB and retry"
	log "installing mariadb-server with apt-get"
	# NOTE: on a machine with systemd the package's postinst starts the distribution's own server
	# on port 3306; we do not use it (ours has its own port, socket and data directory).
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >&2
	apt-get install -y -q --no-install-recommends mariadb-server mariadb-client </dev/null >&2
}

# server_pid prints the pid of our server if it is alive, else fails. The pid must belong to a
# server process started on our data directory, so that a recycled pid is never taken for ours.
server_pid() {
	[[ -r $PID_FILE ]] || return 1
	local pid
	pid=$(<"$PID_FILE")
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	[[ -r /proc/$pid/cmdline ]] || return 1
	tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "--datadir=$DATA_DIR" || return 1
	printf '%s\n' "$pid"
}

# sql runs a statement as root over TCP with the password from the env file.
sql() {
	# shellcheck disable=SC1090
	source "$ENV_FILE"
	local client
	client=$(find_bin mariadb mysql)
	MYSQL_PWD=$TEST_MYSQL_PASSWORD "$client" --no-defaults --protocol=TCP \
		--host="${TEST_MYSQL_ADDR%:*}" --port="${TEST_MYSQL_ADDR##*:}" --user="$TEST_MYSQL_USER" \
		--connect-timeout=5 --batch --skip-column-names -e "$1"
}

print_env() {
	# shellcheck disable=SC1090
	source "$ENV_FILE"
	printf 'export TEST_MYSQL_ADDR=%q\n' "$TEST_MYSQL_ADDR"
	printf 'export TEST_MYSQL_USER=%q\n' "$TEST_MYSQL_USER"
	printf 'export TEST_MYSQL_PASSWORD=%q\n' "$TEST_MYSQL_PASSWORD"
	log "MariaDB $(sql 'SELECT VERSION()' 2>/dev/null || echo '?') at $TEST_MYSQL_ADDR (user $TEST_MYSQL_USER, password authentication; data in $STATE_DIR)"
}

start() {
	if healthy; then
		log "reusing the running server"
		print_env
		return 0
	fi
	if server_pid >/dev/null; then
		# Alive but not accepting our login (still starting, or broken): start over.
		stop
	fi

	ensure_installed
	local mariadbd install_db client admin port password run_user=()
	mariadbd=$(find_bin mariadbd mysqld)
	install_db=$(find_bin mariadb-install-db mysql_install_db)
	client=$(find_bin mariadb mysql)
	admin=$(find_bin mariadb-admin mysqladmin)

	port=$(pick_port "${MARIADB_TEST_PORT:-}" 3307)
	password=${MARIADB_TEST_PASSWORD:-$(random_password)}
	check_password MARIADB_TEST_PASSWORD "$password"

	remove_state_dir "${OUR_FILES[@]}"
	mkdir -p "$DATA_DIR"
	chmod 0755 "$STATE_DIR"
	if [[ $(id -u) -eq 0 ]]; then
		# NOTE: mariadbd refuses to run as root unless told to; prefer the package's mysql user.
		if id mysql >/dev/null 2>&1; then
			chown -R mysql: "$STATE_DIR"
			run_user=(--user=mysql)
		else
			run_user=(--user=root)
		fi
	fi

	log "initialising a data directory in $DATA_DIR"
	# --auth-root-authentication-method=normal: root@localhost gets a (still empty) password
	# instead of unix_socket authentication, so the bootstrap below can log in over the socket.
	"$install_db" --no-defaults "${run_user[@]}" --datadir="$DATA_DIR" \
		--auth-root-authentication-method=normal --skip-test-db >"$STATE_DIR/install.log" 2>&1 ||
		{ cat "$STATE_DIR/install.log" >&2; die "mariadb-install-db failed"; }

	log "starting the server on 127.0.0.1:$port"
	# setsid + nohup: the server outlives this script and is not tied to its terminal.
	setsid nohup "$mariadbd" --no-defaults "${run_user[@]}" \
		--datadir="$DATA_DIR" --socket="$SOCKET" --pid-file="$PID_FILE" --log-error="$LOG_FILE" \
		--skip-networking=0 --bind-address=127.0.0.1 --port="$port" --skip-name-resolve \
		--innodb-buffer-pool-size=32M --performance-schema=OFF --skip-log-bin \
		--character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci \
		</dev/null >/dev/null 2>&1 &

	local waited=0
	until "$admin" --no-defaults --socket="$SOCKET" --user=root --connect-timeout=2 ping >/dev/null 2>&1; do
		if ((waited >= START_TIMEOUT * 2)); then
			tail -n 30 "$LOG_FILE" >&2 2>/dev/null || true
			stop
			die "the server did not accept connections within ${START_TIMEOUT}s (log: $LOG_FILE)"
		fi
		sleep 0.5
		waited=$((waited + 1))
	done

	# The hook connects with a password over TCP; so do the tests. skip-name-resolve makes a TCP
	# client from 127.0.0.1 match the account root@127.0.0.1, not root@localhost.
	# NOTE: with --auth-root-authentication-method=normal, older mariadb-install-db versions
	# create root@127.0.0.1 themselves and newer ones do not: create it if missing, then set it.
	if ! "$client" --no-defaults --socket="$SOCKET" --user=root --batch >&2 <<-SQL; then
		ALTER USER 'root'@'localhost' IDENTIFIED BY '$password';
		CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY '$password';
		ALTER USER 'root'@'127.0.0.1' IDENTIFIED BY '$password';
		GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;
	SQL
		stop
		die "setting the root password failed"
	fi

	umask 077
	cat >"$ENV_FILE" <<-EOF
		TEST_MYSQL_ADDR=127.0.0.1:$port
		TEST_MYSQL_USER=root
		TEST_MYSQL_PASSWORD=$password
	EOF
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
		kill -TERM "$pid"
		local waited=0
		while kill -0 "$pid" 2>/dev/null; do
			if ((waited >= 60)); then
				log "the server did not stop within 30s; killing it"
				kill -KILL "$pid" 2>/dev/null || true
				break
			fi
			sleep 0.5
			waited=$((waited + 1))
		done
	else
		log "no server running"
	fi
	remove_state_dir "${OUR_FILES[@]}"
}

run_command test/mariadb.sh "$@"
