#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
#
# Every kind of filter through every path (issue 33): the matrix of
# tests/combinations.bash, one test a kind, each looping over the paths
# and naming the ones whose promise broke.  A cell that a documented rule
# refuses asserts the refusal, so that it is updated when it lands.

bats_require_minimum_version 1.5.0
load helpers
load combinations

teardown() {
	jobs -p | xargs -r kill -9 2>/dev/null || true
	wait 2>/dev/null || true
	undo_disks
	drop_claim_tables
}

@test "combinations: a fixed filter through every path" {
	matrix fixed
}

@test "combinations: a growable filter through every path" {
	matrix grow
}

@test "combinations: a window of the blocked layout through every path" {
	matrix window
}

@test "combinations: a window of the age-partitioned layout through every path" {
	matrix apbf
}

@test "combinations: a window that does not renew (create --no-renew), blocked, through every path" {
	matrix window_once
}

@test "combinations: a window that does not renew (create --no-renew), age-partitioned, through every path" {
	matrix apbf_once
}

@test "combinations: a slice through every path" {
	matrix slice
}

@test "combinations: a union of filters (check -F) through every path" {
	matrix union
}

# Out of core, every add whose write-back fails exits 2: plain, --new,
# --sync and both, for every kind that goes out of core.
@test "combinations: out of core on a failing disk, every add path of every kind exits 2" {
	[ "$(id -u)" -eq 0 ] || skip "loop devices and mounts need root (CI runs as root)"
	command -v losetup >/dev/null && command -v mkfs.ext4 >/dev/null ||
		skip "losetup and mkfs.ext4 not found: install mount and e2fsprogs"
	local kind failed=""

	for kind in fixed grow window apbf slice; do
		for opts in "" "--new" "--sync" "--new --sync"; do
			# shellcheck disable=SC2086
			if (out_of_core "$kind" $opts) >log 2>&1; then
				echo "$kind × add $opts out of core: ok"
			else
				cat log
				failed="$failed $kind/add$opts"
			fi
			undo_disks
		done
	done
	[ -z "$failed" ]
}

# refused STDERR ARGS...: bloom ARGS exits 2 with STDERR's first line,
# and writes nothing to stdout.
refused() {
	local want=$1

	shift
	run --separate-stderr bloom "$@"
	echo "bloom $*: status $status, stderr: $stderr"
	[ "$status" -eq 2 ] && [ "$output" = "" ] &&
		[ "${stderr%%$'\n'*}" = "$want" ]
}

# The list of the manual's Combinations, each refused by the one rule:
# status 2, nothing changed, a message saying what to do instead.
@test "combinations: what does not combine is refused by the one rule, and nothing changes" {
	bloom create --seed 1 -n 1000 f.bf
	refused "bloom: f.bf: cannot rotate: a fixed filter has no generations (make one with create --generations)" rotate f.bf
	bloom create --seed 1 -s 64K --slice 1/2 s.bf
	refused "bloom: s.bf: cannot fold a slice without --by: fold every slice of the filter by the same --by n" fold s.bf out.bf
	[ ! -e out.bf ]
	# A window whose generation grew into an extra segment.
	bloom create --seed 1 -n 100 --generations 2 --layout blocked g.bf
	keys 1000 | bloom add g.bf 2>/dev/null
	bloom create --like g.bf h.bf
	before=$(cksum <h.bf)
	refused "bloom: g.bf: cannot fold a window whose generations grew past their sizing until those generations expire (bloom rotate)" fold g.bf out.bf
	[ ! -e out.bf ]
	refused "bloom: g.bf: cannot merge into h.bf: a window whose generations grew past their sizing merges only once those generations have expired" merge h.bf g.bf
	[ "$(cksum <h.bf)" = "$before" ]
	# Windows at different generations, filters of different layouts.
	bloom create --seed 1 -n 1000 --generations 3 --layout blocked v.bf
	bloom create --like v.bf w.bf
	bloom rotate w.bf
	before=$(cksum <v.bf)
	refused "bloom: w.bf: current generation differs from v.bf's (1 here, 0 there)" merge v.bf w.bf
	bloom create --seed 1 -n 1000 --generations 3 --layout apbf b.bf
	refused "bloom: b.bf: layout differs from v.bf's (apbf here, blocked there)" merge v.bf b.bf
	[ "$(cksum <v.bf)" = "$before" ]
	# Slices are of fixed filters.
	refused "bloom: create: --slice is for fixed filters" create --grow --seed 1 -n 1000 --slice 0/2 x.bf
	refused "bloom: create: --slice is for fixed filters" create --generations 3 --seed 1 -n 1000 --slice 0/2 x.bf
	[ ! -e x.bf ]
}

@test "combinations: the matrix covers every kind and every path" {
	local kind path

	[ "$KINDS" = "fixed grow window apbf window_once apbf_once slice union" ]
	for kind in $KINDS; do
		for f in make members holds generations; do
			declare -F "${f}_$kind" >/dev/null
		done
		grep -q "^@test \"combinations: .*\" {\$" "$BATS_TEST_FILENAME"
		grep -q "^	matrix $kind\$" "$BATS_TEST_FILENAME"
	done
	for path in $PATHS; do
		declare -F "path_$path" >/dev/null
	done
}
