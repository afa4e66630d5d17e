#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Faults injected for real (issue 18): ext4 on loop devices, a loop device
# whose backing store fills, page-cache eviction, LD_PRELOAD shims that
# kill or fail at a chosen call, copies of a mounted loop device's backing
# file as power cuts, rlimits.  Mounts and loop devices need root (CI runs
# as root); teardown undoes them however a test ends.

load helpers
bats_require_minimum_version 1.5.0

# Under make check SANITIZE=1: the shims are preloaded ahead of ASan's
# runtime, which it refuses unless told, and LeakSanitizer cannot run
# under strace (ptrace).  ASan and UBSan still check every run.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0

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
	drop_claim_tables
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

# wait_mapped PID FILE: waits up to 60 s until process PID has FILE mapped.
wait_mapped() {
	local i

	for i in $(seq 1200); do
		grep -q "$2" "/proc/$1/maps" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "after 60 s process $1 has no $2 mapped" >&2
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

@test "out-of-core add --new --sync whose write-back fails exits 2, as plain add does (issue 33)" {
	need_root
	full_disk
	bloom create --seed 3 -s 64M mnt/f.bf
	keys 300000 >in
	run --separate-stderr bloom add --new --sync --memory 8M mnt/f.bf in
	echo "status $status, stderr: $stderr"
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "bloom: mnt/f.bf: No space left on device" ] ||
		[ "${stderr_lines[0]}" = "bloom: mnt/f.bf: Input/output error" ]
}

@test "out-of-core add --new whose write-back fails exits 2 (issue 33)" {
	need_root
	full_disk
	bloom create --seed 3 -s 64M mnt/f.bf
	keys 300000 >in
	run --separate-stderr bloom add --new --memory 8M mnt/f.bf in
	echo "status $status, stderr: $stderr"
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "bloom: mnt/f.bf: No space left on device" ] ||
		[ "${stderr_lines[0]}" = "bloom: mnt/f.bf: Input/output error" ]
}

@test "growth on a full disk: exit 2, No space left on device, the filter still whole" {
	need_root
	# Room for the first segment, not for the second.
	small_tmpfs mnt 400K
	bloom create --grow -n 100000 --seed 1 mnt/f.bf
	keys 300000 >in
	head -n 100000 in >first
	run --separate-stderr bloom add mnt/f.bf in
	echo "status $status, stderr: $stderr"
	[ "$status" -eq 2 ]
	[ "$stderr" = "bloom: mnt/f.bf: No space left on device" ]
	[ "$(stats_field segments mnt/f.bf)" = 1 ]
	run bloom check -c mnt/f.bf first
	[ "$status" -eq 0 ]
	[ "$output" = 100000 ]
}

# ==== Power cuts ====

# cut_power DIR: copies the backing file of the ext4 mounted at DIR, as a
# power cut would leave it, and mounts the copy read-only at cut.
cut_power() {
	local dev

	cp "$1.img" cut.img
	mkdir -p cut
	dev=$(losetup -f --show -r cut.img)
	echo "$dev" >>"$BATS_TEST_TMPDIR/.loops"
	mount -o ro "$dev" cut
	echo "$BATS_TEST_TMPDIR/cut" >>"$BATS_TEST_TMPDIR/.mounts"
}

@test "power cut right after add --sync exits 0: every line is on disk, in core and out of core" {
	need_root
	ext4 mnt 256M
	bloom create --seed 2 -s 16M mnt/f.bf
	bloom create --seed 2 -s 16M mnt/g.bf
	keys 100000 >in
	run bloom add --sync mnt/f.bf in
	[ "$status" -eq 0 ]
	run bloom add --sync --memory 1M mnt/g.bf in
	[ "$status" -eq 0 ]
	cut_power mnt
	run bloom check -c cut/f.bf in
	[ "$output" = 100000 ]
	run bloom check -c cut/g.bf in
	[ "$output" = 100000 ]
}

# ==== Rotation (issue 18, cases 6, 7 and 10) ====

# shim NAME: compiles tests' C source NAME.c, given on stdin, into NAME.so
# for LD_PRELOAD.
shim() {
	command -v cc >/dev/null || skip "no C compiler for the LD_PRELOAD shim"
	cat >"$1.c"
	cc -shared -fPIC -o "$1.so" "$1.c" -ldl
}

# Prints "live" or "expired" for segment I of window FILE, as stats says.
segment_state() {
	bloom stats "$1" | awk -v i="$2" '$1 == i && ($2 == "yes" || $2 == "no") {
		print $2 == "yes" ? "live" : "expired" }'
}

@test "rotation killed just after clearing a generation: what the file calls live holds its keys" {
	need_root
	ext4 mnt 128M
	cd mnt
	# Kills the process as soon as a rotation's clearing of a segment
	# (fallocate FALLOC_FL_ZERO_RANGE) has returned.
	shim kill_after_zero <<-'EOF'
	#define _GNU_SOURCE
	#include <dlfcn.h>
	#include <fcntl.h>
	#include <signal.h>
	#include <unistd.h>

	int
	fallocate(int fd, int mode, off_t off, off_t len)
	{
		int (*real)(int, int, off_t, off_t) =
		    (int (*)(int, int, off_t, off_t))dlsym(RTLD_NEXT, "fallocate");
		int r = real(fd, mode, off, len);

		if (mode & FALLOC_FL_ZERO_RANGE)
			kill(getpid(), SIGKILL);
		return r;
	}
	int fallocate64(int, int, off_t, off_t) __attribute__((alias("fallocate")));
	EOF
	bloom create --generations 4 --layout blocked -n 30000 --seed 6 w.bf
	keys 1000 a- | bloom add w.bf
	bloom rotate w.bf
	keys 1000 b- | bloom add w.bf
	bloom rotate w.bf
	keys 1000 c- | bloom add w.bf
	bloom rotate w.bf
	keys 1000 d- | bloom add w.bf
	[ "$(segment_state w.bf 0)" = live ]
	# The next rotation clears segment 0, generation 0 (a-).
	run env LD_PRELOAD="$PWD/kill_after_zero.so" bloom rotate w.bf
	echo "rotate: status $status"
	[ "$status" -eq 137 ]
	run bloom stats w.bf
	[ "$status" -eq 0 ]
	# Generation 0 is gone, and the file must not call it live.
	[ "$(segment_state w.bf 0)" = expired ]
	for p in b- c- d-; do
		run bloom check -c w.bf <(keys 1000 "$p")
		echo "$p: $output"
		[ "$output" = 1000 ]
	done
	# The next add mends the generation the rotation started.
	keys 1000 e- | bloom add w.bf
	run bloom check -c w.bf <(keys 1000 e-)
	[ "$output" = 1000 ]
}

@test "power cut right after an add that grew the filter, without --sync: the file is valid" {
	need_root
	ext4 mnt 256M
	bloom create --grow -n 10000 --seed 2 mnt/f.bf
	sync
	keys 100000 >in
	run bloom add mnt/f.bf in
	[ "$status" -eq 0 ]
	[ "$(stats_field segments mnt/f.bf)" -ge 3 ]
	cut_power mnt
	run --separate-stderr bloom stats cut/f.bf
	echo "stats after the cut: status $status, stderr $stderr"
	[ "$status" -eq 0 ]
	run --separate-stderr bloom check -c cut/f.bf in
	echo "check after the cut: status $status, stdout $output, stderr $stderr"
	[ "$stderr" = "" ]
}

@test "power cut after a rotation of a 64-generation window: the table's second page alone on disk is no damage" {
	need_root
	ext4 mnt 128M
	bloom create --generations 64 --layout blocked -n 63000 --seed 6 mnt/w.bf
	local i
	for i in $(seq 10); do
		bloom rotate mnt/w.bf
	done
	keys 1000 k- | bloom add mnt/w.bf
	for i in $(seq 49); do
		bloom rotate mnt/w.bf
	done
	sync
	# The header's two pages back in the page cache as a page each, not
	# one large folio that is written back whole.
	python3 - mnt/w.bf <<-'EOF'
	import os, sys
	fd = os.open(sys.argv[1], os.O_RDONLY)
	os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
	os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
	os.pread(fd, 1, 0)
	os.pread(fd, 1, 4096)
	EOF
	bloom rotate mnt/w.bf
	# Generation 60 is stamped in entry 60, on the table's second page
	# (bytes 4096 on).  Only that page reaches the disk, then the power
	# goes: a copy of the loop device's backing file.
	python3 - mnt/w.bf <<-'EOF'
	import ctypes, os, sys
	libc = ctypes.CDLL(None, use_errno=True)
	fd = os.open(sys.argv[1], os.O_RDWR)
	# SYNC_FILE_RANGE_WAIT_BEFORE | WRITE | WAIT_AFTER
	if libc.sync_file_range(fd, ctypes.c_longlong(4096),
	    ctypes.c_longlong(4096), ctypes.c_uint(7)) != 0:
	    sys.exit("sync_file_range: %s" % os.strerror(ctypes.get_errno()))
	EOF
	cut_power mnt
	run --separate-stderr bloom stats cut/w.bf
	echo "stats after the cut: status $status, stderr $stderr"
	[ "$status" -eq 0 ]
	run --separate-stderr bloom check -c cut/w.bf <(keys 1000 k-)
	echo "check after the cut: status $status, stdout $output, stderr $stderr"
	[ "$status" -eq 0 ]
	[ "$output" = 1000 ]
}

@test "a window at its last generation (2^62): add and rotate refuse, no spin" {
	# --max-size the starting size: a generation that fills cannot grow,
	# only close.
	size=$(bloom create --dry-run --generations 4 --layout blocked -n 1000 --seed 2 w.bf |
		awk '$1 == "bytes:" { print $2 }')
	bloom create --generations 4 --layout blocked -n 1000 --max-size "$size" --seed 2 w.bf
	# The generation field is outside the checksum: 2^62, the cap.
	put w.bf 144 "$(le 8 0x4000000000000000)"
	keys 2000 >in
	run --separate-stderr timeout 20 bloom add w.bf in
	echo "add: status $status, stderr $stderr"
	[ "$status" -eq 2 ]
	[ "$stderr" = "bloom: w.bf: the window has reached its last generation (2^62)" ]
	row 2 "" "bloom: w.bf: cannot rotate: the window has reached its last generation (2^62)" rotate w.bf
	# What it took before it filled is there.
	run bloom check -c w.bf in
	[ "$output" -ge 334 ]
}

@test "a window at its last generation (2^62) grows rather than fails while it may" {
	bloom create --generations 4 --layout blocked -n 1000 --seed 2 w.bf
	put w.bf 144 "$(le 8 0x4000000000000000)"
	keys 2000 >in
	run -0 --separate-stderr timeout 20 bloom add w.bf in
	[[ $stderr == *"took more room"* ]]
	run -1 bloom check -v w.bf in
	[ "$output" = "" ]
}

# ==== Merge into a window that rotates (issue 18, case 5) ====

@test "merge into a window while it rotates brings no expired generation back" {
	# Makes merge pause as it starts ORing its first segment (bits_or's
	# madvise MADV_SEQUENTIAL), after its checks, saying so in a file,
	# until a file "go" exists (up to 60 s).
	shim pause_merge <<-'EOF'
	#define _GNU_SOURCE
	#include <sys/mman.h>
	#include <dlfcn.h>
	#include <fcntl.h>
	#include <unistd.h>

	int
	madvise(void *addr, size_t len, int advice)
	{
		static int paused;
		int (*real)(void *, size_t, int) =
		    (int (*)(void *, size_t, int))dlsym(RTLD_NEXT, "madvise");

		if (advice == MADV_SEQUENTIAL && !paused) {
			paused = 1;
			close(open("paused", O_WRONLY | O_CREAT, 0644));
			while (paused++ < 600 && access("go", F_OK) != 0)
				usleep(100000);
		}
		return real(addr, len, advice);
	}
	EOF
	bloom create --generations 4 --layout blocked -n 30000 --seed 5 t.bf
	bloom create --like t.bf s.bf
	keys 1000 old- >old
	bloom add t.bf old
	bloom add s.bf old
	local i
	for i in 1 2 3; do
		bloom rotate t.bf
		bloom rotate s.bf
	done
	# Generation 0, the old lines, is the oldest live one of both.
	run bloom check -c t.bf old
	[ "$output" = 1000 ]
	LD_PRELOAD="$PWD/pause_merge.so" bloom merge t.bf s.bf 2>merge.err &
	local merge=$!
	# Up to 60 s for merge to start and pause.
	for i in $(seq 1200); do
		[ -e paused ] && break
		sleep 0.05
	done
	[ -e paused ]
	# Forgets generation 0 while the merge is under way: the rotation
	# waits for the merge, which goes on only once it does.
	bloom rotate t.bf >rotate.out 2>rotate.err &
	local rotate=$!
	within 60 grep -q 'waiting for a lock' rotate.err
	touch go
	local st=0
	wait "$rotate" || st=$?
	echo "rotate: status $st, $(cat rotate.out rotate.err)"
	[ "$st" -eq 0 ]
	st=0
	wait "$merge" || st=$?
	echo "merge: status $st, $(cat merge.err)"
	[ "$st" -eq 0 ]
	run bloom check -c t.bf old
	echo "old lines found after the rotation: $output"
	[ "$output" -le 20 ]
}

# ==== Out-of-core check of a sparse filter (issue 18, case 11) ====

@test "out-of-core check reads no window that lies in a hole" {
	need_root
	command -v strace >/dev/null || skip "strace not found: install strace"
	command -v fallocate >/dev/null || skip "fallocate not found: install util-linux"
	ext4 mnt 6G
	bloom create --seed 9 -s 4G mnt/f.bf
	keys 300 >in
	# All of its bits a hole but the first page's: copied sparse, or
	# made to hurt.
	fallocate --punch-hole -o 8192 -l 4G mnt/f.bf
	run -1 strace -f -o trace -e trace=pread64 bloom check -c --memory 64M \
		mnt/f.bf in
	[ "${lines[-1]}" = 0 ]
	run awk -F' = ' '/pread64/ && $NF > 0 { n += $NF } END { print n + 0 }' trace
	echo "bytes read: $output"
	[ "$output" -lt 1048576 ]
}
