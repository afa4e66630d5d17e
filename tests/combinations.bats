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

@test "combinations: a slice through every path" {
	matrix slice
}

@test "combinations: a union of filters (check -F) through every path" {
	matrix union
}

@test "combinations: the matrix covers every kind and every path" {
	local kind path

	[ "$KINDS" = "fixed grow window apbf slice union" ]
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
