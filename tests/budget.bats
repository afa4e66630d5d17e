#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# The memory budget bounds the whole process (issue 34): add --new in a
# memory cgroup, whose limit is then its budget, finishes with every new
# line written once; with --memory, its peak resident memory stays within
# the budget.  Memory cgroups need root; CI runs as root.

bats_require_minimum_version 1.5.0
load helpers

teardown() {
	local g
	jobs -p | xargs -r kill -9 2>/dev/null || true
	wait 2>/dev/null || true
	for g in "${groups[@]}"; do
		echo 1 >"$g/memory.force_empty" 2>/dev/null || true
		rmdir "$g" 2>/dev/null || true
	done
	if [ -n "${v2:-}" ]; then
		rmdir "$v2"/bloom-* 2>/dev/null || true
		umount "$v2" 2>/dev/null || true
		rmdir "$v2" 2>/dev/null || true
	fi
	drop_claim_tables
}

groups=()

V1=/sys/fs/cgroup/memory

# need_v1: skips unless a cgroup v1 memory controller can be used here.
need_v1() {
	[ "$(id -u)" -eq 0 ] || skip "memory cgroups need root"
	[ -w "$V1/cgroup.procs" ] && [ -e "$V1/memory.max_usage_in_bytes" ] ||
		skip "no cgroup v1 memory controller at $V1"
}

# cgroup_v1 LIMIT: makes a v1 memory cgroup of LIMIT bytes, its path in
# $group.
cgroup_v1() {
	group=$V1/bloom-test-$$-${#groups[@]}
	mkdir "$group"
	groups+=("$group")
	echo "$1" >"$group/memory.limit_in_bytes"
}

# in_group GROUP COMMAND...: runs COMMAND in the cgroup at GROUP.
in_group() {
	local g=$1
	shift
	bash -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' bash "$g" "$@"
}

# evict FILE: writes FILE back and drops it from the page cache, so that
# its pages are charged to whoever reads them next.
evict() {
	python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.fsync(fd)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$1"
}

# once_each OUT IN: OUT holds each line of IN once, and nothing else.
once_each() {
	echo "$(wc -l <"$1") lines out, $(sort "$1" | uniq -d | wc -l) twice"
	[ "$(wc -l <"$1")" -eq "$(wc -l <"$2")" ]
	run -0 bash -c 'sort "$1" | comm -3 - <(sort "$2")' bash "$1" "$2"
	[ "$output" = "" ]
}

# budget_in_v1 LIMIT FILTER_SIZE: add --new of a million lines, from a
# pipe (the lines kept in memory), into a filter of FILTER_SIZE in a v1
# cgroup of LIMIT: exit 0, each line once, and the cgroup's peak within
# its limit.
budget_in_v1() {
	awk 'BEGIN { for (i = 1; i <= 1000000; i++) print "url-" i }' >in
	bloom create -s "$2" f.bf
	evict f.bf
	cgroup_v1 "$(numfmt --from=iec "$1")"
	run -0 --separate-stderr in_group "$group" sh -c 'cat in | bloom add -N f.bf >out'
	echo "peak $(cat "$group/memory.max_usage_in_bytes") of $(cat "$group/memory.limit_in_bytes")"
	grep -E '^(rss|shmem|mapped_file|dirty|writeback) ' "$group/memory.stat"
	[ "$stderr" = "" ]
	grep -q '^oom_kill 0$' "$group/memory.oom_control"
	[ "$(cat "$group/memory.max_usage_in_bytes")" -le "$(numfmt --from=iec "$1")" ]
	once_each out in
}

@test "budget: add --new in a 32 MiB v1 memory cgroup, 128 MiB filter: each line once" {
	need_v1
	not_sanitized
	budget_in_v1 32M 128M
}

@test "budget: add --new in a 48 MiB v1 memory cgroup, 512 MiB filter: each line once" {
	need_v1
	not_sanitized
	budget_in_v1 48M 512M
}

# The same in a cgroup v2, where the machine has its memory controller:
# a cgroup2 mount of our own, where the controller is not bound to v1.
@test "budget: add --new in a 32 MiB v2 memory cgroup, 128 MiB filter: each line once" {
	[ "$(id -u)" -eq 0 ] || skip "memory cgroups need root"
	not_sanitized
	v2=$BATS_TEST_TMPDIR/cg2
	mkdir "$v2"
	if ! mount -t cgroup2 none "$v2" 2>err; then
		skip "cannot mount cgroup2: $(cat err)"
	fi
	grep -qw memory "$v2/cgroup.controllers" ||
		skip "the memory controller is bound to cgroup v1 here: a cgroup2 mount has only '$(cat "$v2/cgroup.controllers")'"
	echo +memory >"$v2/cgroup.subtree_control" 2>/dev/null || true
	mkdir "$v2/bloom-$$"
	echo 32M >"$v2/bloom-$$/memory.max"
	awk 'BEGIN { for (i = 1; i <= 1000000; i++) print "url-" i }' >in
	bloom create -s 128M f.bf
	evict f.bf
	run -0 --separate-stderr in_group "$v2/bloom-$$" sh -c 'cat in | bloom add -N f.bf >out'
	[ "$stderr" = "" ]
	grep -q '^oom_kill 0$' "$v2/bloom-$$/memory.events"
	if [ -e "$v2/bloom-$$/memory.peak" ]; then
		echo "peak $(cat "$v2/bloom-$$/memory.peak")"
		[ "$(cat "$v2/bloom-$$/memory.peak")" -le $((32 << 20)) ]
	fi
	once_each out in
}

# Outside a cgroup, the process's peak resident memory (VmHWM: its heap,
# buffers and the filter's pages it has mapped) stays within --memory.
@test "budget: add --new --memory 32M of a 128 MiB filter peaks within 32 MiB resident" {
	not_sanitized
	awk 'BEGIN { for (i = 1; i <= 1000000; i++) print "url-" i }' >in
	bloom create -s 128M f.bf
	run -0 --separate-stderr /usr/bin/time -f '%M' -o peak \
		sh -c 'cat in | bloom add -N --memory 32M f.bf >out'
	echo "peak resident: $(cat peak) KiB"
	[ "$(cat peak)" -le $((32 << 10)) ]
	once_each out in
	bloom create -s 128M -f f.bf
	run -0 --separate-stderr /usr/bin/time -f '%M' -o peak \
		bloom add -N --memory 32M f.bf in
	echo "peak resident, lines read again from the file: $(cat peak) KiB"
	[ "$(cat peak)" -le $((32 << 10)) ]
}

# A union (check -F) of filters of four seeds, 128 MiB in all, keeps
# within --memory: its batches count each key's hashes for the other
# seeds and the union's scratch, and each filter is read by windows, not
# mapped whole (as it was line by line: 143 MB resident).
@test "budget: check -F of four 32 MiB filters of other seeds, --memory 24M, peaks within 24 MiB resident" {
	not_sanitized
	local s
	for s in 1 2 3 4; do
		bloom create --seed "$s" -s 32M "f$s.bf"
	done
	awk 'BEGIN { for (i = 1; i <= 1000000; i++) print "url-" i }' >in
	head -n 300000 in | bloom add f3.bf
	run -0 --separate-stderr /usr/bin/time -f '%M' -o peak \
		sh -c 'cat in | bloom check --which --memory 24M -F f1.bf -F f2.bf -F f3.bf -F f4.bf >out'
	echo "peak resident, lines kept from a pipe: $(cat peak) KiB"
	[ "$(cat peak)" -le $((24 << 10)) ]
	[ "$(wc -l <out)" -eq 300000 ]
	[ "$(cut -f 1 out | sort -u)" = f3.bf ]
	run -0 --separate-stderr /usr/bin/time -f '%M' -o peak \
		bloom check -c --memory 24M -F f1.bf -F f2.bf -F f3.bf -F f4.bf in
	echo "peak resident, -c: $(cat peak) KiB"
	[ "$(cat peak)" -le $((24 << 10)) ]
	[ "$output" = 300000 ]
}
