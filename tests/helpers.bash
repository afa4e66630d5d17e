# Shared set-up for the bats tests: load with `load helpers`.
#
# Every test runs in its own empty directory, $BATS_TEST_TMPDIR, with the
# bloom under test first on PATH as `bloom`.

setup() {
	root=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
	if [ ! -x "$root/bloom" ]; then
		echo "bloom is not built: run make" >&2
		return 1
	fi
	PATH="$root:$PATH"
	cd "$BATS_TEST_TMPDIR" || return 1
}

# Writes the lines PREFIX1 .. PREFIXN (default prefix "key-") to stdout.
keys() {
	awk -v n="$1" -v p="${2-key-}" 'BEGIN { for (i = 1; i <= n; i++) print p i }'
}

# Prints byte OFFSET of FILE as a decimal number.
byte_at() {
	od -An -tu1 -j "$2" -N 1 "$1" | tr -d ' '
}

# Overwrites byte OFFSET of FILE with the decimal VALUE.
poke() {
	printf "$(printf '\\%03o' "$3")" |
		dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# Runs "$@" without the capabilities that let root ignore file modes, so
# that a file's mode applies even in a test run as root.
unprivileged() {
	if [ "$(id -u)" -ne 0 ]; then
		"$@"
	else
		setpriv --bounding-set -dac_override,-dac_read_search "$@"
	fi
}

# Runs bloom with ARGS and asserts its exit STATUS and its whole standard
# output and standard error (as run gives them, without the final newline).
#	row STATUS STDOUT STDERR ARGS...
row() {
	local want_status=$1 want_out=$2 want_err=$3

	shift 3
	run --separate-stderr bloom "$@"
	echo "bloom $*"
	echo "  got:  status $status, stdout '$output', stderr '$stderr'"
	echo "  want: status $want_status, stdout '$want_out', stderr '$want_err'"
	[ "$status" -eq "$want_status" ] && [ "$output" = "$want_out" ] &&
		[ "$stderr" = "$want_err" ]
}

# Prints the value of field NAME in `bloom stats FILE`.
stats_field() {
	bloom stats "$2" | sed -n "s/^$1: //p"
}

# Creates filter FILE big enough that a few thousand keys give no false
# positive.
big_filter() {
	bloom create --seed 42 -n 100000 -p 1e-6 "$1"
}
