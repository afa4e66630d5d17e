# SPDX-License-Identifier: ISC
# Shared set-up for the bats tests: load with `load helpers`.
#
# Every test runs in its own empty directory, $BATS_TEST_TMPDIR, with the
# bloom under test first on PATH as `bloom`, and without the environment
# that changes what it does: a test that wants BLOOM_NO_CREATE sets it.

setup() {
	root=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
	if [ ! -x "$root/bloom" ]; then
		echo "bloom is not built: run make" >&2
		return 1
	fi
	PATH="$root:$PATH"
	unset BLOOM_NO_CREATE
	cd "$BATS_TEST_TMPDIR" || return 1
}

# Writes the lines PREFIX1 .. PREFIXN (default prefix "key-") to stdout.
keys() {
	awk -v n="$1" -v p="${2-key-}" 'BEGIN { for (i = 1; i <= n; i++) print p i }'
}

# json FILE EXPR: prints python3's value of EXPR over FILE's stats --json,
# with the object as d.
json() {
	bloom stats --json "$1" |
		python3 -c 'import json, sys; d = json.load(sys.stdin); print(eval(sys.argv[1]))' "$2"
}

# bits FILE: a digest of the bit arrays of a v2 filter, without its header
# page, to compare two filters' bits.
bits() {
	tail -c +4097 "$1" | md5sum
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

# ---- Bytes of a filter file, for the format tests (format.bats for
# version 1, format2.bats for version 2).

# put FILE OFFSET HEX...: overwrites the bytes of FILE from OFFSET on with
# the bytes HEX spells, in pairs of hex digits ("2a 00" or "2a00").
put() {
	local file=$1 off=$2 hex

	shift 2
	hex=$(printf '%s' "$*" | tr -d ' ')
	printf "$(printf '%s' "$hex" | sed 's/../\\x&/g')" |
		dd of="$file" bs=1 seek="$off" conv=notrunc status=none
}

# Prints LEN bytes of FILE from OFFSET as one word of hex pairs.
hex_at() {
	od -An -v -tx1 -j "$2" -N "$3" "$1" | tr -d ' \n'
}

# le BYTES N: prints the unsigned number N (decimal or 0x hex) as BYTES
# little-endian bytes, one word of hex pairs.
le() {
	local hex out="" i

	hex=$(printf "%0$(($1 * 2))x" "$2")
	for ((i = ${#hex} - 2; i >= 0; i -= 2)); do
		out+=${hex:i:2}
	done
	printf '%s\n' "$out"
}

# Prints the value of the python3 expression X over the names of its math
# module (0.01, nan, inf, 0.01 * (1 - 0.8), expm1(...)) as a little-endian
# IEEE 754 double.
dbl() {
	python3 -c 'import math, struct, sys
print(struct.pack("<d", float(eval(sys.argv[1], vars(math)))).hex())' "$1"
}

# need_to_run WHAT COMMAND...: runs COMMAND, the very thing the test is
# about to rely on, and skips the test if it fails, saying WHAT the test
# needs and the first line of what COMMAND said: the real cause, whoever
# runs the test (a chroot, a container, an ordinary user).
need_to_run() {
	local what=$1 out status=0

	shift
	out=$("$@" 2>&1) || status=$?
	[ "$status" -ne 0 ] || return 0
	out=$(printf '%s\n' "$out" | head -n 1)
	skip "$what, which fails here: ${out:-exit status $status}"
}

need_xxhsum() {
	command -v xxhsum >/dev/null ||
		{ echo "xxhsum not found: install xxHash (Debian: xxhash)"; return 1; }
}

need_hashsum() {
	[ -x "$root/tests/hashsum" ] ||
		{ echo "tests/hashsum is not built: run make tests/hashsum"; return 1; }
}

# xxh3 SEED: prints XXH3-64 with SEED of stdin as its little-endian bytes,
# what a filter file stores: from the reference xxhsum for seed 0 (its
# command line takes no seed), from tests/hashsum otherwise.
xxh3() {
	local sum

	if [ "$1" = 0 ]; then
		sum=$(xxhsum -H3 --little-endian | awk '{ print $NF }')
	else
		sum=$("$root/tests/hashsum" -s "$1" | awk '{ print $1 }')
		sum=$(le 8 "0x$sum")
	fi
	[ "${#sum}" -eq 16 ] || { echo "xxh3 printed '$sum'" >&2; return 1; }
	printf '%s\n' "$sum"
}

# xxh3_at FILE OFFSET LEN SEED: XXH3-64 with SEED of LEN bytes of FILE from
# OFFSET, as xxh3 prints it.
xxh3_at() {
	tail -c +"$(($2 + 1))" "$1" | head -c "$3" | xxh3 "$4"
}

# make_v1 FILE CAPACITY FPR SEED NBITS HASHES: writes a version 1 filter
# the way bloom 1.0 wrote one (store/format.c has the layout): the 128-byte
# header with its checksum and an inserted counter of 0, then NBITS / 8
# zero bytes.
make_v1() {
	python3 - "$@" <<-'EOF' || return 1
	import struct, sys
	path, capacity, fpr, seed, nbits, hashes = sys.argv[1:]
	head = b"\x89BLOOM\r\n" + struct.pack("<IIIIQQIIQd", 1, 128, 1, 1,
	    int(seed, 0), int(nbits, 0), int(hashes, 0), 0,
	    int(capacity, 0), float(fpr))
	assert len(head) == 64
	with open(path, "wb") as f:
	    f.write(head + bytes(64) + bytes(int(nbits, 0) // 8))
	EOF
	put "$1" 64 "$(xxh3_at "$1" 0 64 0)"
}

# State of FILE to compare before and after: content, or the listing of
# what is not a regular file.
state_of() {
	if [ -f "$1" ] && [ -r "$1" ]; then
		cksum <"$1"
	else
		stat -c %F "$1" 2>&1 || true
	fi
}

# rejected FILE MESSAGE [COMMAND...]: each COMMAND (default stats, check
# and add) on FILE exits 2, prints nothing on stdout and exactly
# "bloom: FILE: MESSAGE" on stderr, and leaves FILE as it was.
rejected() {
	local file=$1 message=$2 cmd before cmds

	shift 2
	cmds=("$@")
	[ "${#cmds[@]}" -gt 0 ] || cmds=(stats check add)
	before=$(state_of "$file")
	for cmd in "${cmds[@]}"; do
		run --separate-stderr bloom "$cmd" "$file" </dev/null
		[ "$status" -eq 2 ] ||
			{ echo "$cmd: status $status, stderr: $stderr"; return 1; }
		[ "$output" = "" ] || { echo "$cmd: stdout: $output"; return 1; }
		[ "$stderr" = "bloom: $file: $message" ] ||
			{ echo "$cmd: stderr: $stderr"; return 1; }
		[ "$(state_of "$file")" = "$before" ] ||
			{ echo "$cmd changed $file"; return 1; }
	done
}

# Compares filters A and B byte for byte but for what says when they were
# made: in a version 2 file, the creation time (bytes 80 to 87), the header
# checksum that covers it (128 to 135) and each segment entry's stamp
# (entry bytes 56 to 63).  Says where they differ if they do.
same_filter() {
	python3 - "$1" "$2" <<'PYTHON'
import sys

def masked(path):
	raw = bytearray(open(path, "rb").read())
	if int.from_bytes(raw[8:12], "little") == 2:
		raw[80:88] = raw[128:136] = bytes(8)
		for i in range(int.from_bytes(raw[36:40], "little")):
			entry = 256 + 64 * i
			raw[entry + 56:entry + 64] = bytes(8)
	return raw

a, b = masked(sys.argv[1]), masked(sys.argv[2])
if a != b:
	at = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]),
	    min(len(a), len(b)))
	sys.exit("%s and %s differ at byte %d (sizes %d and %d)" %
	    (sys.argv[1], sys.argv[2], at, len(a), len(b)))
PYTHON
}

# lost FILTER IN OUT...: prints the lines of IN that no OUT holds, less
# those that are false positives: the lines a filter made like FILTER (its
# seed and geometry) holding every line of the OUTs finds.  FILTER's bits
# are those of lines of the OUTs, so a line it found only by a false
# positive is found there too; a line marked seen without being written is
# not.  Prints nothing if no line was lost.
lost() {
	local filter=$1 in=$2 dir=$BATS_TEST_TMPDIR/lost
	shift 2
	mkdir -p "$dir"
	LC_ALL=C sort -u "$@" >"$dir/written"
	LC_ALL=C sort -u "$in" | LC_ALL=C comm -23 - "$dir/written" \
	    >"$dir/unwritten"
	[ -s "$dir/unwritten" ] || return 0
	echo "$(wc -l <"$dir/unwritten") lines written by none" >&2
	bloom create -f --like "$filter" "$dir/written.bf"
	bloom add "$dir/written.bf" "$dir/written"
	bloom check -v "$dir/written.bf" "$dir/unwritten" || [ $? -eq 1 ]
}

# Sets hosts to a directory of two ssh hosts on this machine (tests/hosts):
# those .ci/run started (BLOOM_TEST_HOSTS), or two this test starts, and
# then own_hosts=1 for teardown_hosts to stop them.
setup_multi_host() {
	local shell

	[ -z "${BLOOM_TEST_LOCAL:-}" ] ||
		skip "BLOOM_TEST_LOCAL is set: the tests that start sshd hosts are left out"
	# ssh runs a command through the user's login shell, on hosts this
	# test starts and on those .ci/run started alike.
	shell=$(getent passwd "$(id -u)" | cut -d: -f7)
	case $shell in
	*/nologin|*/false)
		skip "ssh runs commands through the login shell, and $(id -un)'s is $shell" ;;
	esac
	if [ -n "${BLOOM_TEST_HOSTS:-}" ]; then
		# Hosts another user started take that user's key and files.
		[ -O "$BLOOM_TEST_HOSTS" ] ||
			skip "the ssh hosts in BLOOM_TEST_HOSTS ($BLOOM_TEST_HOSTS) belong to another user"
		hosts=$BLOOM_TEST_HOSTS
		return 0
	fi
	command -v parallel >/dev/null || skip "needs GNU parallel: .ci/run installs it"
	command -v sshd >/dev/null || [ -x /usr/sbin/sshd ] ||
		skip "needs sshd (apt-get install openssh-server): .ci/run installs it"
	hosts=$BATS_TEST_TMPDIR/hosts
	own_hosts=1
	"$BATS_TEST_DIRNAME/hosts" start "$hosts" 2
}

# For a teardown: removes what a test left on the hosts (they may be
# shared with other tests), and stops them if the test started them.
teardown_hosts() {
	if [ -n "${hosts:-}" ]; then
		rm -f "$hosts/host0/slice.bf" "$hosts/host1/slice.bf"
	fi
	if [ -n "${own_hosts:-}" ]; then
		"$BATS_TEST_DIRNAME/hosts" stop "$hosts"
	fi
}

# Prints the name of the claim table of filter f (store/claims.c): its
# device, inode and header checksum (bytes 128 to 135 of a v2 file, 64 to
# 71 of a v1 one).
claim_table() {
	python3 -c 'import os, struct, sys
with open(sys.argv[1], "rb") as f:
    head = f.read(136)
    st = os.fstat(f.fileno())
at = 64 if struct.unpack_from("<I", head, 8)[0] == 1 else 128
print("/dev/shm/bloom-claims-%x-%x-%016x" % (st.st_dev, st.st_ino,
    struct.unpack_from("<Q", head, at)[0]))' "$1"
}

# Removes the claim tables of the test's files (store/claims.c): an adder
# killed by a test leaves its filter's table in /dev/shm for the next
# adder of that filter to remove, and a test's filter has none.  Every
# teardown calls this, the default one below and those of the .bats files
# that have their own.
drop_claim_tables() {
	local t dev ino key
	local -A mine=()

	# Most tests leave no table: then nothing to list.  Else one find for
	# the device and inode of every file, matched in the shell: a test
	# with thousands of files took a stat and an rm for each.
	set -- /dev/shm/bloom-claims-*
	[ -e "$1" ] || return 0
	while read -r dev ino; do
		printf -v key '%x-%x' "$dev" "$ino"
		mine[$key]=1
	done < <(find "$BATS_TEST_TMPDIR" -type f -printf '%D %i\n' 2>/dev/null)
	for t; do
		t=${t#/dev/shm/bloom-claims-}
		[ -z "${mine[${t%-*}]:-}" ] || rm -f "/dev/shm/bloom-claims-$t"
	done
	return 0
}

# within SECONDS COMMAND...: runs COMMAND every 50 ms until it succeeds;
# fails, saying what it waited for, if it has not after SECONDS.  Waits
# for a state, not for a time: a loaded machine only takes longer.
within() {
	local end=$(($(date +%s) + $1))

	shift
	until "$@"; do
		if [ "$(date +%s)" -ge "$end" ]; then
			echo "still not so after the deadline: $*" >&2
			return 1
		fi
		sleep 0.05
	done
}

teardown() {
	drop_claim_tables
}

# Skips a test of the process's own memory under make check SANITIZE=1:
# AddressSanitizer's shadow memory and quarantine are not the program's,
# and pass a budget of tens of MiB by themselves.  The plain build's run
# of make check measures it.
not_sanitized() {
	if grep -qa __asan_init "$root/bloom"; then
		skip "bloom is built with AddressSanitizer (make check SANITIZE=1), whose shadow memory passes the budget; the plain build's run measures it"
	fi
}

# dirty FILE: how many pages of FILE the page cache holds dirty, by
# cachestat(2) (Linux 6.5 on); exits 3 where the kernel has no cachestat.
dirty() {
	python3 -c '
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
class Range(ctypes.Structure):
    _fields_ = [("off", ctypes.c_uint64), ("len", ctypes.c_uint64)]
class Stat(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in
                ("cache", "dirty", "writeback", "evicted", "recently_evicted")]
fd = os.open(sys.argv[1], os.O_RDONLY)
r, st = Range(0, 0), Stat()
if libc.syscall(451, fd, ctypes.byref(r), ctypes.byref(st), 0) != 0:
    sys.exit(3 if ctypes.get_errno() == errno.ENOSYS else 1)
print(st.dirty if len(sys.argv) < 3 else st.dirty + st.writeback)
' "$@"
}

# synced_clean FILE: syncs FILE, then fails unless the page cache holds
# none of its pages dirty; skips where the kernel has no cachestat(2).
synced_clean() {
	sync "$1"
	run dirty "$1"
	[ "$status" -ne 3 ] || skip "the kernel has no cachestat(2) (Linux 6.5 on)"
	[ "$status" -eq 0 ]
	[ "$output" -eq 0 ]
}

# mtime FILE: the file's mtime in nanoseconds.  A store into a clean page
# of a shared mapping makes the kernel update it, whether or not the page
# has been written back since.
mtime() {
	python3 -c 'import os, sys; print(os.stat(sys.argv[1]).st_mtime_ns)' "$1"
}
