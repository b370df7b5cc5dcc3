#!/usr/bin/env bash
# test/run.sh - every test of the project, as `make test` and CI run them.
#
# It starts (installing it first if needed) a throwaway MariaDB on 127.0.0.1 for the SQL tests
# (test/mariadb.sh), vets the code and runs all Go tests; among them test/image builds and runs the
# container image with podman (test/image.sh, installing podman and runc if needed). Extra
# arguments go to `go test` (e.g. `bash test/run.sh -run TestE2E ./test/e2e/`); without any, all
# packages are tested.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf 'test/run.sh: %s\n' "$*" >&2; }

if [[ -z ${TEST_MYSQL_ADDR:-} ]]; then
	# A server that was running before is left running; one started here is stopped at the end.
	if ! bash test/mariadb.sh status >/dev/null 2>&1; then
		trap 'bash test/mariadb.sh stop >/dev/null 2>&1 || true' EXIT
	fi
	log "starting the test MariaDB (test/mariadb.sh)"
	eval "$(bash test/mariadb.sh start)"
fi
export TEST_MYSQL_ADDR TEST_MYSQL_USER TEST_MYSQL_PASSWORD

log "go vet ./..."
go vet ./...

if [[ $# -eq 0 ]]; then
	set -- ./...
fi
log "go test $*"
go test -race -count=1 "$@"
