#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# A release people can package (issue 37): the licence on every file, the
# builder's flags, a reproducible make dist, make check as an ordinary
# user, and the Debian package.

bats_require_minimum_version 1.5.0
load helpers

# The files of the source: git's list in a checkout, else (an unpacked
# make dist, which holds exactly those) every file but what a build makes.
source_files() {
	if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$root" ls-files
	else
		(cd "$root" && find . -type f ! -name '*.o' ! -path '*/__pycache__/*' |
			sed 's|^\./||' |
			grep -vxE 'bloom|tests/(hashsum|kernels)|bench/gen-urls|debian/.*/.*|debian/(files|debhelper-build-stamp|.*\.substvars|.*\.log)')
	fi
}

@test "release: every source file, script and the man page carries SPDX-License-Identifier: ISC" {
	[ -f "$root/LICENSE" ]
	grep -q '^Copyright (c) 2026 The bloom authors$' "$root/LICENSE"
	grep -q 'Permission to use, copy, modify, and distribute this software' "$root/LICENSE"
	missing=
	while IFS= read -r f; do
		case $f in
		# Data: filters, hash vectors, seeds of the fuzzer; and the
		# files whose format has no comment or that say the licence.
		*.bf|tests/data/*|tests/fuzz/seeds/*|LICENSE|debian/copyright|\
		debian/source/format|debian/changelog|debian/bloom.docs|\
		debian/bloom.examples|debian/control|NEWS|.gitignore)
			continue ;;
		esac
		head -n 5 "$root/$f" | grep -q 'SPDX-License-Identifier: ISC' ||
			missing="$missing $f"
	done < <(source_files)
	echo "without an SPDX line in its first 5 lines:$missing"
	[ -z "$missing" ]
	# The man page's is a roff comment, and mandoc takes it.
	head -n 1 "$root/man/bloom.1" | grep -qx '\.\\" SPDX-License-Identifier: ISC'
}

@test "release: CFLAGS, CPPFLAGS and LDFLAGS reach every compile and link, from the command line or the environment" {
	cd "$root"
	run -0 make -n -B bloom CFLAGS='-O1 -DFROM_CMDLINE' \
		CPPFLAGS=-DCPP_CMDLINE LDFLAGS=-Wl,-zFROM_CMDLINE
	compiles=$(grep -c -- ' -c -o ' <<<"$output")
	[ "$compiles" -gt 30 ]
	# Every compile has the builder's flags and bloom's own.
	[ "$(grep -- ' -c -o ' <<<"$output" | grep -- '-DFROM_CMDLINE' |
		grep -- '-DCPP_CMDLINE' | grep -- '-std=c11' |
		grep -- '-D_GNU_SOURCE' | grep -- '-pthread' |
		grep -- '-I\. ' | grep -c -- '-DBLOOM_VERSION_STRING')" -eq "$compiles" ]
	grep -- '-o bloom ' <<<"$output" | grep -q -- '-Wl,-zFROM_CMDLINE'
	# The builder's -O comes after bloom's flags, so that it wins.
	! grep -- ' -c -o ' <<<"$output" | grep -q -- '-O1 .*-std=c11'
	run -0 env CFLAGS=-DFROM_ENV CPPFLAGS=-DCPP_ENV LDFLAGS=-Wl,-zFROM_ENV \
		make -n -B bloom
	[ "$(grep -- ' -c -o ' <<<"$output" | grep -- '-DFROM_ENV' |
		grep -- '-DCPP_ENV' | grep -c -- '-std=c11')" -eq "$compiles" ]
	grep -- '-o bloom ' <<<"$output" | grep -q -- '-Wl,-zFROM_ENV'
	# Without them, -O2 -g.
	run -0 env -u CFLAGS make -n -B cli.o
	[[ $output == *"-Wstrict-prototypes -O2 -g "* ]]
}

@test "release: a build with dpkg-buildflags' hardening is hardened" {
	command -v dpkg-buildflags >/dev/null ||
		skip "dpkg-buildflags not found: install dpkg-dev"
	# A build of its own: not make check SANITIZE=1's.
	unset MAKEFLAGS MFLAGS MAKELEVEL
	cp -a "$root/." tree
	cd tree
	make clean >/dev/null
	run -0 env DEB_BUILD_MAINT_OPTIONS=hardening=+all \
		sh -c 'eval "$(dpkg-buildflags --export=sh)" && make bloom'
	[[ $output == *"-D_FORTIFY_SOURCE=2"*"-fstack-protector-strong"* ]]
	run -0 readelf -d bloom
	[[ $output == *BIND_NOW* ]]
	run -0 readelf -lW bloom
	[[ $output == *GNU_RELRO* ]]
	run -0 readelf -h bloom
	[[ $output == *"Position-Independent Executable"* ]]
	# Fortified calls are linked (__*_chk).
	nm -D bloom | grep -q '__.*_chk'
	./bloom --version
}

@test "release: make dist makes the same bytes every time, a checked sha256, and a tree that builds and runs make example without git" {
	git -C "$root" rev-parse --git-dir >/dev/null 2>&1 ||
		skip "make dist archives a git checkout; this is not one"
	unset MAKEFLAGS MFLAGS MAKELEVEL
	git clone -q "$root" clone
	version=$(sed -n 's/^VERSION = //p' clone/Makefile)
	run -0 make -C clone dist
	[[ $output == *"  bloom-$version.tar.gz"* ]]
	cp "clone/bloom-$version.tar.gz" first.tar.gz
	# Another run, later, with the files touched and another umask.
	touch clone/*.c
	sleep 1
	(umask 077 && make -C clone dist >/dev/null)
	cmp first.tar.gz "clone/bloom-$version.tar.gz"
	(cd clone && sha256sum -c "bloom-$version.tar.gz.sha256")
	# A version NEWS says nothing of is no release.
	run -2 --separate-stderr make -C clone dist VERSION=0.0.0-none
	[ "${stderr_lines[0]}" = "make dist: NEWS says nothing of 0.0.0-none" ]
	[ "$(cut -d' ' -f3 "clone/bloom-$version.tar.gz.sha256")" = "bloom-$version.tar.gz" ]
	# Exactly the tracked files, under bloom-VERSION/, owned by root.
	diff <(git -C clone ls-files | sort) \
		<(tar tzf first.tar.gz | sed -n "s|^bloom-$version/||p" | grep -v '/$' | grep -v '^$' | sort)
	tar tvzf first.tar.gz | awk '$2 != "root/root" { exit 1 }'
	# Every entry dated the commit's time.
	run -0 python3 -c 'import sys, tarfile
print(" ".join(sorted({str(m.mtime) for m in tarfile.open(sys.argv[1])})))' first.tar.gz
	[ "$output" = "$(git -C clone log -1 --format=%ct)" ]
	mkdir unpacked
	tar xzf first.tar.gz -C unpacked
	cd "unpacked/bloom-$version"
	[ ! -e .git ]
	# A git that fails and says so comes first on PATH: the build and
	# the example call none.
	mkdir shim
	printf '#!/bin/sh\necho "git called: $*" >&2\nexit 99\n' >shim/git
	chmod +x shim/git
	run -0 --separate-stderr env PATH="$PWD/shim:$PATH" make -s bloom
	[[ $stderr != *"git called"* ]]
	PATH="$PWD/shim:$PATH" run -0 --separate-stderr make example
	[[ $stderr != *"git called"* ]]
	[[ $output == *"lines in: 1000000,"* ]]
	[[ $output == *"segments: 1"* ]]
	./bloom --version
	[ "$(./bloom --version)" = "bloom $version" ]
}

@test "release: NEWS says what this version brought" {
	version=$(sed -n 's/^VERSION = //p' "$root/Makefile")
	grep -q "^$version " "$root/NEWS"
	[ "$(grep -c '^[0-9][0-9.]* ([0-9-]*)' "$root/NEWS")" -ge 1 ]
	# The newest first.
	[ "$(grep -m1 '^[0-9][0-9.]* (' "$root/NEWS" | cut -d' ' -f1)" = "$version" ]
}

# A copy of the tree an ordinary user (nobody) owns, for make check as
# one; $copy, removed by teardown.
teardown() {
	if [ -n "${copy:-}" ]; then
		rm -rf "$copy"
	fi
}

as_nobody() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups \
		env HOME="$copy/home" TMPDIR="$copy/tmp" "$@"
}

@test "release: make check as an ordinary user skips what needs root, each with its reason, and exits 0" {
	[ "$(id -u)" -eq 0 ] ||
		skip "run as an ordinary user already: the whole suite is this test"
	copy=$(mktemp -d /tmp/bloom-release-XXXXXX)
	chmod 755 "$copy"
	cp -a "$root/." "$copy/tree"
	rm -rf "$copy/tree/.git"
	mkdir "$copy/home" "$copy/tmp"
	chown -R nobody:nogroup "$copy"
	cd "$copy/tree"
	# tests/need lets an ordinary user through when nothing is missing.
	run -0 as_nobody make need layers bloom tests/hashsum tests/kernels
	# A sample of the tests that need root: loop devices, mounts, device
	# nodes, cgroups, another user, an unreadable file.
	run -0 as_nobody bats -f 'full disk|power cut right after add|refuses a FIFO|unreadable filter|sparse filter on tmpfs|without /proc|cgroup|opens the filter read-only|two hosts' \
		tests/faults.bats tests/hostile.bats tests/batch.bats tests/check.bats \
		tests/merge.bats
	echo "$output"
	! grep -q '^not ok' <<<"$output"
	# Each skip has a reason, and those of root's tests say so.
	! grep -E '^ok .* # skip *$' <<<"$output"
	[ "$(grep -c '# skip loop devices and mounts need root' <<<"$output")" -ge 2 ]
	grep -q '# skip a device node takes mknod, which fails here' <<<"$output"
	grep -q "^ok [0-9]* batch: the budget is the cgroup's limit" <<<"$output"
	# nobody has no login shell for ssh to run commands with.
	grep -q "two hosts: .* # skip ssh runs commands through the login shell, and nobody's is /usr/sbin/nologin" <<<"$output"
}

@test "release: the Debian package builds, lintian finds no error, and it installs bloom, its manual and completions" {
	command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null &&
		command -v lintian >/dev/null ||
		skip "dpkg-buildpackage, dh or lintian not found: install dpkg-dev, debhelper and lintian (.ci/run does)"
	git -C "$root" rev-parse --git-dir >/dev/null 2>&1 ||
		skip "the package is built from make dist, which archives a git checkout; this is not one"
	unset MAKEFLAGS MFLAGS MAKELEVEL
	git clone -q "$root" clone
	make -C clone dist >/dev/null
	tar xzf clone/bloom-*.tar.gz
	cd bloom-*/
	# The suite has just run: the package's build leaves it out.
	run -0 env DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -us -uc -b
	cd ..
	run -0 lintian --fail-on error bloom_*.changes
	echo "lintian: $output"
	! grep -q '^E:' <<<"$output"
	run -0 dpkg-deb -f bloom_*_*.deb Package Conflicts
	[ "$output" = "Package: bloom
Conflicts: golang-github-dcso-bloom-cli" ]
	run -0 dpkg-deb -c bloom_*_*.deb
	for f in ./usr/bin/bloom ./usr/share/man/man1/bloom.1.gz \
	    ./usr/share/bash-completion/completions/bloom \
	    ./usr/share/zsh/vendor-completions/_bloom \
	    ./usr/share/fish/vendor_completions.d/bloom.fish \
	    ./usr/share/doc/bloom/copyright; do
		grep -q " $f\$" <<<"$output"
	done
	dpkg-deb -x bloom_*_*.deb root
	[ "$(root/usr/bin/bloom --version)" = "bloom $(sed -n 's/^VERSION = //p' "$root/Makefile")" ]
	grep -q '^License: ISC' root/usr/share/doc/bloom/copyright
}
