#!/usr/bin/env bash
# test/run.sh - every test of the project, as `make test` and CI run them.
#
# It starts (installing them first if needed) a throwaway MariaDB and a throwaway PostgreSQL on
# 127.0.0.1 for the SQL tests (test/mariadb.sh, test/postgres.sh), vets the code and runs all Go tests; among them test/image builds and runs the
# container image with podman (test/image.sh, installing podman and runc if needed). Extra
# arguments go to `go test` (e.g. `bash test/run.sh -run TestE2E ./test/e2e/`); without any, all
# packages are tested.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf 'test/run.sh: %s\n' "$*" >&2; }

# A server that was running before is left running; one started here is stopped at the end.
stop_at_exit=()
trap 'for s in "${stop_at_exit[@]}"; do bash "$s" stop >/dev/null 2>&1 || true; done' EXIT

if [[ -z ${TEST_MYSQL_ADDR:-} ]]; then
	if ! bash test/mariadb.sh status >/dev/null 2>&1; then
		stop_at_exit+=(test/mariadb.sh)
	fi
	log "starting the test MariaDB (test/mariadb.sh)"
	eval "$(bash test/mariadb.sh start)"
fi
export TEST_MYSQL_ADDR TEST_MYSQL_USER TEST_MYSQL_PASSWORD

if [[ -z ${TEST_PG_ADDR:-} ]]; then
	if ! bash test/postgres.sh status >/dev/null 2>&1; then
		stop_at_exit+=(test/postgres.sh)
	fi
	log "starting the test PostgreSQL (test/postgres.sh)"
	eval "$(bash test/postgres.sh start)"
fi
export TEST_PG_ADDR TEST_PG_USER TEST_PG_PASSWORD

log "go vet ./..."
go vet ./...

if [[ $# -eq 0 ]]; then
	set -- ./...
fi
log "go test $*"
go test -race -count=1 "$@"
