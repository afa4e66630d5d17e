#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# More than one machine, as the README's "More than one machine" says:
# a Slurm job array on a single-node cluster started here, and GNU
# parallel over two sshd hosts on the loopback, each making its slice from
# the parameters (no template copied) and adding its routed part with
# --no-create.  Each gives exactly a serial add --new's lines and filter.

bats_require_minimum_version 1.5.0
load helpers

# The README's options, but for 30 million keys rather than 100 billion:
# still enough blocks for 5040 to divide them, so that the router, slice
# 0 of 5040, is a few kilobytes.
opts="-n 30000000 -p 0.01 --seed 42 --slices 2"

# A Slurm cluster: the one .ci/run started (BLOOM_TEST_SLURM), or one of
# this test's own; with "no-cgroup", always one of its own, started in a
# mount namespace without /sys/fs/cgroup, as in a container or a chroot.
setup_slurm() {
	[ -z "${BLOOM_TEST_LOCAL:-}" ] ||
		skip "BLOOM_TEST_LOCAL is set: the tests that start a Slurm cluster are left out"
	if [ -n "${BLOOM_TEST_SLURM:-}" ] && [ "${1:-}" != no-cgroup ]; then
		slurm=$BLOOM_TEST_SLURM
	else
		[ -x /usr/sbin/slurmctld ] && [ -x /usr/sbin/slurmd ] &&
			[ -x /usr/sbin/munged ] && command -v sbatch >/dev/null ||
			skip "needs Slurm (apt-get install slurmctld slurmd slurm-client munge): .ci/run installs it"
		slurm=$BATS_TEST_TMPDIR/slurm
		own_slurm=1
		if [ "${1:-}" = no-cgroup ]; then
			# The daemons stay in the namespace; sbatch, outside it,
			# reaches them by their port and munge socket.
			unshare -m --propagation private true 2>/dev/null ||
				skip "no mount namespace here (unshare -m refused)"
			unshare -m --propagation private sh -c \
			    'umount -R /sys/fs/cgroup 2>/dev/null || true
			    if mountpoint -q /sys/fs/cgroup; then
				echo "/sys/fs/cgroup would not unmount" >&2
				exit 1
			    fi
			    exec "$0" start "$1"' \
			    "$BATS_TEST_DIRNAME/slurm" "$slurm"
		else
			"$BATS_TEST_DIRNAME/slurm" start "$slurm"
		fi
	fi
	. "$slurm/env"
}

teardown() {
	drop_claim_tables
	teardown_hosts
	if [ -n "${own_slurm:-}" ]; then
		"$BATS_TEST_DIRNAME/slurm" stop "$slurm"
	fi
}

# The input of two days, with repeats, and what one serial add --new
# makes of each day.
serial() {
	keys 20000 u- >urls.txt
	keys 5000 u- >>urls.txt
	keys 3000 v- >>urls.txt
	# The next day: some of the first day's lines, and new ones.
	keys 10000 v- >urls2.txt
	keys 4000 w- >>urls2.txt
	bloom create $opts serial.bf
	# Into a file: to a pipe, lines tested while others wait for the
	# reader may dodge a false positive their bits would have made.
	bloom add --new serial.bf urls.txt >serial.out
	sort serial.out >serial.new
	bloom add --new serial.bf urls2.txt >serial.out
	sort serial.out >serial2.new
}

@test "Slurm: a job array makes its slices with --slice auto and adds its parts, as one serial add --new, two days running" {
	setup_slurm
	serial
	# The README's recipe.
	cat >slice.sh <<EOF
#!/bin/sh
# slice.sh: task i of the array makes slice i (the days after, finds it
# made as asked) and adds part i; a step that fails fails the task.
set -e
i=\$SLURM_ARRAY_TASK_ID
bloom create $opts --slice auto slice.\$i.bf
bloom add --new --no-create slice.\$i.bf part.\$i > part.\$i.new
EOF
	# The login node's daily job.
	day() {
		bloom create $opts --slice 0/5040 router.bf &&
			bloom route --slices 2 -o part. router.bf "$1" &&
			timeout 300 sbatch --array=0-1 --wait -o slurm-%a.out slice.sh
	}
	day urls.txt
	# Each task made its own slice, from its index.
	[ "$(bloom stats slice.1.bf | grep '^slice:')" = "slice: 1/2 (blocks $(( $(stat -c %s serial.bf) / 128 - 32 )) to $(( $(stat -c %s serial.bf) / 64 - 65 )) of $(( $(stat -c %s serial.bf) / 64 - 64 )))" ]
	[ ! -s slurm-0.out ] && [ ! -s slurm-1.out ]
	[ "$(sort part.0.new part.1.new)" = "$(cat serial.new)" ]
	# The next day, the same job: the slices are kept, and the new lines
	# are those of the serial filter's second day.
	day urls2.txt
	[ ! -s slurm-0.out ] && [ ! -s slurm-1.out ]
	[ "$(sort part.0.new part.1.new)" = "$(cat serial2.new)" ]
	bloom create --like slice.0.bf --slice 0/1 joined.bf
	bloom merge joined.bf slice.0.bf slice.1.bf
	[ "$(bits joined.bf)" = "$(bits serial.bf)" ]
	# A day whose job asks for other slices fails, sbatch --wait too,
	# and leaves the slices as they were.
	before=$(cksum slice.0.bf slice.1.bf)
	sed -i 's/--seed 42/--seed 43/' slice.sh
	run timeout 300 sbatch --array=0-1 --wait -o slurm-%a.out slice.sh
	[ "$status" -ne 0 ]
	[ "$(cat slurm-1.out)" = "bloom: slice.1.bf: exists and differs: --seed 42, not 43 (use -f to replace it, losing its lines)" ]
	[ "$(cksum slice.0.bf slice.1.bf)" = "$before" ]
}

@test "Slurm without a cgroup file system (a container, a chroot): the node starts and runs the array" {
	[ "$(id -u)" -eq 0 ] || skip "needs root, for a mount namespace without /sys/fs/cgroup"
	setup_slurm no-cgroup
	# slurmd runs where no cgroup file system is mounted.
	! grep -q ' /sys/fs/cgroup[ /]' "/proc/$(cat "$slurm/slurmd.pid")/mountinfo"
	grep -q ' /sys/fs/cgroup[ /]' /proc/self/mountinfo ||
		echo "# (this host has no cgroup file system either)" >&3
	[ "$(cat "$slurm/cgroup.conf")" = "CgroupPlugin=cgroup/v1" ]
	serial
	cat >slice.sh <<EOF
#!/bin/sh
i=\$SLURM_ARRAY_TASK_ID
bloom create $opts --slice auto slice.\$i.bf
bloom add --new --no-create slice.\$i.bf part.\$i > part.\$i.new
EOF
	bloom create $opts --slice 0/5040 router.bf
	bloom route --slices 2 -o part. router.bf urls.txt
	timeout 300 sbatch --array=0-1 --wait -o slurm-%a.out slice.sh
	[ ! -s slurm-0.out ] && [ ! -s slurm-1.out ]
	[ "$(sort part.0.new part.1.new)" = "$(cat serial.new)" ]
}

@test "tests/slurm says why a node did not come up, not only in the daemons' logs" {
	[ -x /usr/sbin/slurmd ] && [ -x /usr/sbin/munged ] ||
		skip "needs Slurm (apt-get install slurmctld slurmd slurm-client munge): .ci/run installs it"
	# A node that cannot be: more CPUs than this host has.
	sed 's/CPUs=$cpus State=UNKNOWN/CPUs=$((cpus * 4)) Sockets=1 CoresPerSocket=$((cpus * 4)) State=UNKNOWN/' \
	    "$BATS_TEST_DIRNAME/slurm" >slurm-bad
	cp "$BATS_TEST_DIRNAME/free-port" .
	chmod +x slurm-bad
	slurm=$BATS_TEST_TMPDIR/slurm
	run --separate-stderr timeout 120 ./slurm-bad start "$slurm"
	[ "$status" -eq 1 ]
	# The state and its reason, then the daemons' errors, the controller's
	# first (slurmd may also log that the node's CPUs differ from the
	# hardware's, before or after the controller: timing).
	[[ "${stderr_lines[-1]}" == "tests/slurm: the node did not come up (inval: Low socket*core*thread count, Low CPUs); the daemons' errors: slurmctld: "*"Setting node "*" state to INVAL with reason:Low socket*core*thread count, Low CPUs"* ]]
	[ ! -e "$slurm" ]
}

@test "Slurm: a task without a slice of its own fails loudly" {
	setup_slurm
	bloom create $opts --slice 0/5040 router.bf
	keys 100 >urls.txt
	bloom route --slices 2 -o part. router.bf urls.txt
	# The array 0-2 has a task more than slices: task 2 fails, and so
	# does sbatch --wait; --no-create adds nothing anywhere else.
	cat >slice.sh <<EOF
#!/bin/sh
set -e
i=\$SLURM_ARRAY_TASK_ID
bloom create $opts --slice auto slice.\$i.bf
bloom add --new --no-create slice.\$i.bf part.\$i > part.\$i.new
EOF
	run timeout 300 sbatch --array=0-2 --wait -o slurm-%a.out slice.sh
	[ "$status" -ne 0 ]
	[ "$(cat slurm-2.out)" = "bloom: slice.2.bf: --slice auto: task 2 (SLURM_ARRAY_TASK_ID) is not one of the 2 slices (0 to 1)" ]
	[ ! -e slice.2.bf ]
	[ -s part.0.new ] && [ -s part.1.new ]
}

@test "parallel over ssh: each host makes its slice from the parameters and adds its part, as one serial add --new, two days running" {
	setup_multi_host
	serial
	# The README's recipe, with a directory of each host's own for
	# slice.bf, since these hosts share one file system.  A test before
	# may have left a slice there, killed before its teardown.
	rm -f "$hosts/host0/slice.bf" "$hosts/host1/slice.bf"
	day() {
		parallel --will-cite --hostgroups --slf "$hosts/sshlogins" \
		    "$root/bloom create $opts --slice {}/2 \$BLOOM_HOST_DIR/slice.bf" ::: 0@h0 1@h1 &&
			bloom create $opts --slice 0/5040 router.bf &&
			bloom route --slices 2 -o part. router.bf "$1" &&
			parallel --will-cite --hostgroups --slf "$hosts/sshlogins" --wd ... \
			    --transferfile {} --return {}.new --cleanup \
			    "$root/bloom add --new --no-create \$BLOOM_HOST_DIR/slice.bf {} > {}.new" \
			    ::: part.0@h0 part.1@h1
	}
	day urls.txt
	[ "$(sort part.0.new part.1.new)" = "$(cat serial.new)" ]
	day urls2.txt
	[ "$(sort part.0.new part.1.new)" = "$(cat serial2.new)" ]
	bloom create --like router.bf --slice 0/1 joined.bf
	bloom merge joined.bf "$hosts/host0/slice.bf" "$hosts/host1/slice.bf"
	[ "$(bits joined.bf)" = "$(bits serial.bf)" ]
	# A day that asks for other slices fails, and leaves them as they were.
	before=$(cksum "$hosts/host0/slice.bf" "$hosts/host1/slice.bf")
	opts=${opts/--seed 42/--seed 43}
	run day urls2.txt
	[ "$status" -ne 0 ]
	[ "$(cksum "$hosts/host0/slice.bf" "$hosts/host1/slice.bf")" = "$before" ]
}
