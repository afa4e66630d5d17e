#!/usr/bin/env bats
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
	want="bats xxhash mandoc python3 groff-base zsh fish perl-base parallel rsync openssh-client strace"
	[ -x /usr/sbin/sshd ] || want="$want openssh-server"
	[ "${stderr_lines[0]}" = "make check: missing: $want" ]
	[ "${stderr_lines[1]}" = "install them with: sudo apt-get install $want" ]
}
