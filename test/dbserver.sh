# test/dbserver.sh - what test/mariadb.sh and test/postgres.sh share; sourced, never run.
#
# The sourcing script sets STATE_DIR and defines log and die first.

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
