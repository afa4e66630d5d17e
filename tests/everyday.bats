#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Everyday use (issue 22): what a newcomer trips on, from make check's own
# set-up to the environment bloom reads.

bats_require_minimum_version 1.5.0
load helpers

@test "tests/need asks for each missing package once" {
	# Nothing on PATH but an id that says we are not root: every command
	# is missing, and need names what to install rather than install it.
	mkdir bin
	printf '#!/bin/sh\necho 1000\n' >bin/id
	chmod +x bin/id
	run --separate-stderr env PATH="$PWD/bin" /bin/sh "$root/tests/need"
	[ "$status" -eq 1 ]
	echo "$stderr"
	want="bats xxhash mandoc python3 groff-base zsh fish perl-base parallel rsync openssh-client strace mount e2fsprogs universal-ctags"
	[ -x /usr/sbin/sshd ] || want="$want openssh-server"
	[ -x /usr/sbin/slurmctld ] || want="$want slurmctld"
	[ -x /usr/sbin/slurmd ] || want="$want slurmd"
	want="$want slurm-client"
	[ -x /usr/sbin/munged ] || want="$want munge"
	[ "${stderr_lines[0]}" = "make check: missing: $want" ]
	[ "${stderr_lines[1]}" = "install them with: sudo apt-get install $want" ]
}

# skip_reasons FILE FILTER: runs the tests of FILE whose names match the
# regular expression FILTER, in a bats of their own, and prints each
# one's TAP line, numbers dropped: "ok name # skip (reason)".
skip_reasons() {
	bats -f "$2" "$root/tests/$1" | sed -n 's/^\(ok\|not ok\) [0-9]* /\1 /p'
}

@test "a test that cannot mount or make a device node says why, even as root" {
	[ "$(id -u)" -eq 0 ] || skip "the tests skipped here run only as root"
	# As in a chroot or a container: unshare and mknod fail, root or not.
	mkdir bin
	printf '#!/bin/sh\necho "unshare: unshare failed: Operation not permitted" >&2\nexit 1\n' >bin/unshare
	printf '#!/bin/sh\necho "mknod: zero: Operation not permitted" >&2\nexit 1\n' >bin/mknod
	chmod +x bin/unshare bin/mknod
	PATH="$PWD/bin:$PATH" run -0 skip_reasons hostile.bats \
		'refuses a FIFO|sparse filter on tmpfs|without /proc'
	echo "$output"
	[ "$output" = "ok create -f refuses a FIFO, a socket and a device, and opens none # skip a device node takes mknod, which fails here: mknod: zero: Operation not permitted
ok a sparse filter on tmpfs: stats and check allocate nothing, stats says sparse # skip a tmpfs of its own takes unshare -m and a mount, which fails here: unshare: unshare failed: Operation not permitted
ok without /proc, a create -f killed while it waits for the lock leaves nothing # skip a run without /proc takes unshare -m and a tmpfs mount on /proc, which fails here: unshare: unshare failed: Operation not permitted
ok without /proc, a create over the file size limit fails cleanly and leaves nothing # skip a run without /proc takes unshare -m and a tmpfs mount on /proc, which fails here: unshare: unshare failed: Operation not permitted" ]
	PATH="$PWD/bin:$PATH" run -0 skip_reasons batch.bats "cgroup's limit"
	echo "$output"
	[ "$output" = "ok batch: the budget is the cgroup's limit, v1 and v2, from an ancestor # skip faking a cgroup takes unshare -m and tmpfs mounts on /proc and /sys/fs/cgroup, which fails here: unshare: unshare failed: Operation not permitted" ]
}

@test "a test that mounts as root runs where unshare -m works but user namespaces do not" {
	[ "$(id -u)" -eq 0 ] || skip "the test run here mounts as root"
	# As root in a chroot: no user namespace (unshare -r), but unshare -m.
	mkdir bin
	cat >bin/unshare <<-EOF
	#!/bin/sh
	case \$1 in
	-r*) echo "unshare: unshare failed: Operation not permitted" >&2; exit 1 ;;
	esac
	exec $(command -v unshare) "\$@"
	EOF
	chmod +x bin/unshare
	PATH="$PWD/bin:$PATH" run -0 skip_reasons hostile.bats 'sparse filter on tmpfs'
	[ "$output" = "ok a sparse filter on tmpfs: stats and check allocate nothing, stats says sparse" ]
}
