#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Filters in a container image's layer (overlayfs): a reader started
# before the first add, which copies the file up, sees what that add
# added (issue 34).  Mounting overlayfs needs root; CI runs as root.

bats_require_minimum_version 1.5.0
load helpers

teardown() {
	jobs -p | xargs -r kill -9 2>/dev/null || true
	wait 2>/dev/null || true
	umount "$BATS_TEST_TMPDIR/merged" 2>/dev/null || true
	drop_claim_tables
}

# overlay: mounts lower/, with upper/ over it, on merged/.
overlay() {
	mkdir -p upper work merged
	need_to_run "mounting overlayfs" \
		mount -t overlay overlay -o lowerdir=lower,upperdir=upper,workdir=work merged
}

@test "overlayfs: a check started before the add that copies the filter up finds what it added" {
	[ "$(id -u)" -eq 0 ] || skip "mounting overlayfs needs root"
	mkdir lower
	bloom create -n 10000 lower/f.bf
	echo before | bloom add lower/f.bf
	overlay
	mkfifo q
	bloom check merged/f.bf <q >out &
	local check=$! w
	exec {w}>q
	echo before >&"$w"
	within 60 test -s out
	# The first writer copies the file up to the upper layer.
	printf 'after-1\nafter-2\n' | bloom add merged/f.bf
	[ -e upper/f.bf ]
	printf 'after-1\nafter-2\nnever\n' >&"$w"
	exec {w}>&-
	wait "$check" || true
	[ "$(cat out)" = "$(printf 'before\nafter-1\nafter-2')" ]
	# And stats, as check, reads the copy.
	[ "$(json merged/f.bf 'd["inserted"]')" -eq 3 ]
}
