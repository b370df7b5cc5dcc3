# test/dbserver.sh - what test/mariadb.sh and test/postgres.sh share; sourced, never run.
#
# The sourcing script sets STATE_DIR and ENV_FILE and defines log and die first; run_command
# calls its start, stop, print_env, server_pid and sql.

# remove_state_dir deletes the state directory, but only if everything in it is ours (the names
# given): a mistyped state directory must never delete someone's files.
remove_state_dir() {
	[[ -e $STATE_DIR ]] || return 0
	[[ $STATE_DIR == /*/* ]] || die "refusing to delete $STATE_DIR: not an absolute path below /"
	local name not_ours=() foreign
	for name in "$@"; do
		not_ours+=(! -name "$name")
	done
	foreign=$(find "$STATE_DIR" -mindepth 1 -maxdepth 1 "${not_ours[@]}" -print -quit)
	[[ -z $foreign ]] || die "refusing to delete $STATE_DIR: it holds files this script did not make ($foreign)"
	rm -rf "$STATE_DIR"
}

port_in_use() {
	# A successful connect means someone listens there.
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# pick_port prints the port asked for ($1, if not empty, and free) or the first free one of the
# hundred from $2 on.
pick_port() {
	if [[ -n $1 ]]; then
		port_in_use "$1" && die "port $1 is in use by another program"
		printf '%s\n' "$1"
		return 0
	fi
	local p
	for ((p = $2; p < $2 + 100; p++)); do
		if ! port_in_use "$p"; then
			printf '%s\n' "$p"
			return 0
		fi
	done
	die "no free port between $2 and $(($2 + 99))"
}

random_password() {
	# 24 characters from an alphabet that needs no quoting in shells or SQL. The end-to-end tests
	# use it as an OTC root password too, so it always holds a lower-case letter, an upper-case
	# letter and a digit (OTC wants three character classes).
	local pw=""
	while ((${#pw} < 21)); do
		pw+=$(head -c 64 /dev/urandom | tr -dc 'A-Za-z0-9' || true)
	done
	printf 'a%sZ7\n' "${pw:0:21}"
}

# check_password dies unless the password ($2, from the variable named $1 or made by
# random_password) is safe to put into SQL text and shell assignments.
check_password() {
	[[ $2 =~ ^[A-Za-z0-9._-]{8,64}$ ]] ||
		die "$1 must be 8 to 64 characters of A-Z, a-z, 0-9, '.', '_' and '-'"
}

# healthy says whether our server runs and takes root's login over TCP.
healthy() {
	server_pid >/dev/null && [[ -r $ENV_FILE ]] && sql 'SELECT 1' >/dev/null 2>&1
}

# run_command runs the command ($2, default start) of the script $1 (as its usage names it).
run_command() {
	case ${2:-start} in
	start) start ;;
	stop) stop ;;
	env)
		healthy || die "no server running: start one with: eval \"\$(bash $1)\""
		print_env
		;;
	status)
		if healthy; then
			log "running ($(server_pid))"
		else
			log "not running"
			exit 1
		fi
		;;
	*) die "unknown command ${2}; use start, stop, env or status" ;;
	esac
}
