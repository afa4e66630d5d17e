#!/usr/bin/env bats
# Faults injected for real (issue 18): ext4 on loop devices, a loop device
# whose backing store fills, page-cache eviction, LD_PRELOAD shims that
# kill or fail at a chosen call, copies of a mounted loop device's backing
# file as power cuts, rlimits.  Mounts and loop devices need root (CI runs
# as root); teardown undoes them however a test ends.

load helpers
bats_require_minimum_version 1.5.0

# Skips unless root: loop devices and mounts.
need_root() {
	[ "$(id -u)" -eq 0 ] ||
		skip "loop devices and mounts need root (CI runs as root)"
	command -v losetup >/dev/null && command -v mkfs.ext4 >/dev/null ||
		skip "losetup and mkfs.ext4 not found: install mount and e2fsprogs"
}

# ext4 DIR SIZE [IMAGE]: mounts a fresh ext4 file system of SIZE, without
# a journal so that a copy of its image mounts as is, at DIR, on a loop
# device over IMAGE (default DIR.img).
ext4() {
	local dir=$1 image=${3:-$1.img} dev

	mkdir -p "$dir"
	truncate -s "$2" "$image"
	mkfs.ext4 -q -F -O ^has_journal -E lazy_itable_init=1,nodiscard \
		"$image"
	dev=$(losetup -f --show "$image")
	echo "$dev" >>"$BATS_TEST_TMPDIR/.loops"
	mount -o errors=continue "$dev" "$dir"
	echo "$BATS_TEST_TMPDIR/$dir" >>"$BATS_TEST_TMPDIR/.mounts"
}

# small_tmpfs DIR SIZE: mounts a tmpfs of SIZE at DIR.
small_tmpfs() {
	mkdir -p "$1"
	mount -t tmpfs -o size="$2" none "$1"
	echo "$BATS_TEST_TMPDIR/$1" >>"$BATS_TEST_TMPDIR/.mounts"
}

teardown() {
	local m dev

	cd "$BATS_TEST_TMPDIR" || return 0
	jobs -p | xargs -r kill -9 2>/dev/null || true
	wait 2>/dev/null || true
	# Mounts in reverse order: a file system on a loop device over a
	# tmpfs goes before the tmpfs.
	if [ -f .mounts ]; then
		tac .mounts | while read -r m; do
			umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
			if [ -f .loops ]; then
				while read -r dev; do
					losetup -d "$dev" 2>/dev/null || true
				done <.loops
			fi
		done
	fi
	if [ -f .loops ]; then
		while read -r dev; do
			losetup -d "$dev" 2>/dev/null || true
		done <.loops
	fi
	rm -f .mounts .loops
}

# evict FILE...: writes FILE back and drops its pages from the page cache,
# as a reboot would.
evict() {
	python3 - "$@" <<-'EOF'
	import os, sys
	for path in sys.argv[1:]:
	    fd = os.open(path, os.O_RDONLY)
	    os.fsync(fd)
	    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
	    os.close(fd)
	EOF
}

# wait_mapped PID FILE: waits until process PID has FILE mapped.
wait_mapped() {
	local i

	for i in $(seq 500); do
		grep -q "$2" "/proc/$1/maps" 2>/dev/null && return 0
		sleep 0.01
	done
	echo "process $1 never mapped $2" >&2
	return 1
}

# ==== Unwritten extents are not holes (issue 18, cases 1 and 2) ====

@test "a check started on a cold filter sees the keys added after it (unwritten extents are no holes)" {
	need_root
	ext4 mnt 512M
	bloom create --seed 7 -s 64M mnt/f.bf
	# Out of the page cache, posix_fallocate's unwritten extents read
	# as holes to SEEK_HOLE.
	evict mnt/f.bf
	keys 1000 >in
	mkfifo feed
	bloom check -c mnt/f.bf <feed >count &
	local pid=$!
	exec 5>feed
	echo warmup >&5
	wait_mapped "$pid" f.bf
	run bloom add mnt/f.bf in
	[ "$status" -eq 0 ]
	cat in >&5
	exec 5>&-
	local st=0
	wait "$pid" || st=$?
	echo "check: status $st, found $(cat count) of 1000"
	[ "$st" -eq 0 ]
	[ "$(cat count)" = 1000 ]
}

@test "a cold filter is no sparse file: stats, check and add accept it after eviction" {
	need_root
	ext4 mnt 512M
	bloom create --seed 7 -s 256M mnt/f.bf
	evict mnt/f.bf
	run --separate-stderr bloom stats mnt/f.bf
	echo "$output$stderr"
	[ "$status" -eq 0 ]
	[[ "$output$stderr" != *sparse* ]]
	keys 10000 >in
	run bloom add --sync mnt/f.bf in
	[ "$status" -eq 0 ]
	# Written pages among unwritten extents: thousands of "holes".
	evict mnt/f.bf
	run --separate-stderr bloom check -c mnt/f.bf in
	echo "check: status $status, stdout $output, stderr $stderr"
	[ "$status" -eq 0 ]
	[ "$output" = 10000 ]
	[ "$stderr" = "" ]
	evict mnt/f.bf
	run --separate-stderr bloom stats mnt/f.bf
	[ "$status" -eq 0 ]
	[[ "$output$stderr" != *sparse* ]]
	[ "$(echo "$output" | sed -n 's/^inserted: //p')" = 10000 ]
}

# ==== Write-back errors out of core (issue 18, case 3) ====

# full_disk: mounts at mnt an ext4 of 256 MiB whose loop device's backing
# file lives on a tmpfs of 24 MiB: the file system takes space it cannot
# write, and write-back past the tmpfs's 24 MiB fails with EIO.
full_disk() {
	small_tmpfs back 24M
	ext4 mnt 256M back/disk.img
}

@test "out-of-core add --sync whose write-back fails exits 2" {
	need_root
	full_disk
	bloom create --seed 3 -s 64M mnt/f.bf
	keys 300000 >in
	run --separate-stderr bloom add --sync --memory 8M mnt/f.bf in
	echo "status $status, stderr: $stderr"
	[ "$status" -eq 2 ]
	# The loop device passes on its backing file's ENOSPC, or EIO; the
	# sync that follows fails too.
	[ "${stderr_lines[0]}" = "bloom: mnt/f.bf: No space left on device" ] ||
		[ "${stderr_lines[0]}" = "bloom: mnt/f.bf: Input/output error" ]
}

@test "out-of-core add without --sync whose write-back fails exits 2" {
	need_root
	full_disk
	bloom create --seed 3 -s 64M mnt/f.bf
	keys 300000 >in
	run --separate-stderr bloom add --memory 8M mnt/f.bf in
	echo "status $status, stderr: $stderr"
	[ "$status" -eq 2 ]
	# The loop device passes on its backing file's ENOSPC, or EIO.
	[ "$stderr" = "bloom: mnt/f.bf: No space left on device" ] ||
		[ "$stderr" = "bloom: mnt/f.bf: Input/output error" ]
}
