#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Tests of `bloom check`: what each of -v, -c and -q writes, the exit
# status as grep(1) has it (0 selected, 1 none, 2 trouble), and how it fails.

bats_require_minimum_version 1.5.0
load helpers

# f.bf holds a and b; in has a, c, b; all has a, b; none has zz.
abc() {
	bloom create --seed 1 -n 1000 -p 0.001 f.bf
	printf 'a\nb\n' | bloom add f.bf
	printf 'a\nc\nb\n' >in
	printf 'a\nb\n' >all
	printf 'zz\n' >none
}

@test "check selects lines and exits 0 if any, 1 if none" {
	abc
	#   status stdout     stderr arguments
	row 0      $'a\nb'    ''     check f.bf in
	row 0      c          ''     check -v f.bf in
	row 0      2          ''     check -c f.bf in
	row 0      1          ''     check -c -v f.bf in
	row 0      ''         ''     check -q f.bf in
	row 0      ''         ''     check -q -v f.bf in
	row 0      zz         ''     check -v f.bf none
	row 1      ''         ''     check f.bf none
	row 1      ''         ''     check -v f.bf all
	row 1      0          ''     check -c f.bf none
	row 1      0          ''     check -cv f.bf all
	row 1      ''         ''     check -q f.bf none
	row 1      ''         ''     check -qv f.bf all
}

@test "check -c writes each file's count, after its name if there are several, as grep -c" {
	abc
	printf 'a\nb\n' >keys
	#   status stdout                      stderr arguments
	row 0      $'in:2\nin:2'               ''     check -c f.bf in in
	row 0      $'in:2\nnone:0\nall:2\nall:2' ''     check -c f.bf in none all all
	row 0      $'none:1\nin:1\nall:0\nnone:1' ''   check -c -v f.bf none in all none
	row 0      $'2\n0\n2'                  ''     check -ch f.bf in none all
	row 0      'in:2'                      ''     check -cH f.bf in
	row 0      '(standard input):2'        ''     check -cH f.bf <in
	row 0      $'in:2\n(standard input):0'  ''     check -c f.bf in - <none
	row 0      2                           ''     check -c f.bf in
	# The last of -H and -h wins.
	row 0      $'2\n2'                     ''     check -c -H -h f.bf in all
	row 0      'in:2'                      ''     check -c -h -H f.bf in
	# What grep -c -F -x -f keys writes for the same files, as the filter
	# has no false positive among them.
	for args in "in in" "in none all all" "-h in none all" "-H in" "-v none in all" "-H -h in all"; do
		# shellcheck disable=SC2086
		set -- $args
		local opts=() files=()
		for a in "$@"; do
			case $a in -*) opts+=("$a") ;; *) files+=("$a") ;; esac
		done
		[ "$(bloom check -c "${opts[@]}" f.bf "${files[@]}")" = \
		    "$(grep -c -F -x -f keys "${opts[@]}" "${files[@]}")" ]
	done
	# Without -c, lines are named only with -H.
	row 0      $'a\nb\na\nb'                ''     check f.bf in none all
	row 0      $'in:a\nin:b\nall:a\nall:b'    ''     check -H f.bf in none all
	row 0      $'(standard input):c'       ''     check -Hv f.bf <in
	row 0      $'a\nb'                     ''     check -h f.bf in
}

@test "check reads standard input, alone or as -" {
	abc
	#   status stdout        stderr arguments            input
	row 0      $'a\nb'       ''     check f.bf           <in
	row 0      $'a\nb\na\nb' ''     check f.bf all -     <in
	row 0      $'c\nzz'      ''     check -v f.bf - none <in
	row 1      0             ''     check -c f.bf        <none
}

@test "check exits 2 on trouble with an input, after the other inputs" {
	local enoent='bloom: nofile: No such file or directory'

	abc
	mkdir d
	#   status stdout  stderr   arguments
	row 2      $'a\nb' "$enoent" check f.bf in nofile
	row 2      c       "$enoent" check -v f.bf nofile in
	# A file that cannot be opened has no count, as with grep -c; one that
	# cannot be read has the count of what was read.
	row 2      in:2    "$enoent" check -c f.bf in nofile
	row 2      none:0  "$enoent" check -c f.bf nofile none
	row 2      ''      "$enoent" check -c f.bf nofile
	row 2      $'d:0\nall:2' 'bloom: d: read error: Is a directory' check -c f.bf d all
	row 2      ''      "$enoent" check f.bf nofile
	row 2      ''      "$enoent" check -v f.bf nofile
	row 2      ''      "$enoent" check -q f.bf none nofile
	row 2      ''      "$enoent" check -qv f.bf nofile all
	row 2      ''      'bloom: d: read error: Is a directory' check f.bf d
	row 2      $'a\nb'  'bloom: d: read error: Is a directory' check f.bf d all
}

@test "a filter named among the inputs is refused, its bytes not taken for lines" {
	abc
	cp f.bf before.bf
	row 2 '' 'bloom: f.bf: input file is also a filter' add f.bf f.bf
	row 2 '' 'bloom: (standard input): input file is also a filter' add --new f.bf - <f.bf
	cmp before.bf f.bf
	# The other inputs are still read: one line found, one trouble.
	printf 'a\nzz\n' >in
	run --separate-stderr bloom check -c f.bf in f.bf
	[ "$status" -eq 2 ]
	[ "$output" = in:1 ]
	[ "$stderr" = 'bloom: f.bf: input file is also a filter' ]
	# Any of a union's filters, by any name.
	bloom create -n 100 g.bf
	ln -s g.bf link.bf
	run --separate-stderr bloom check -F f.bf -F g.bf in link.bf
	[ "$status" -eq 2 ]
	[ "$output" = a ]
	[ "$stderr" = 'bloom: link.bf: input file is also a filter' ]
	row 2 '' 'bloom: f.bf: input file is also a filter' route --slices 1 f.bf f.bf
	cmp before.bf f.bf
}

@test "a filter file named as an input of add is refused before any filter is created or line written" {
	bloom create -n 1000 seen.bf
	keys 10 | bloom add seen.bf
	cp seen.bf before.bf
	# The arguments swapped: fresh.txt would be created as a filter, and
	# seen.bf's bytes written as lines.
	row 2 '' 'bloom: seen.bf: input file is a filter: nothing added (the filter comes first: bloom add [options] filter [file ...])' add --new fresh.txt seen.bf
	[ ! -e fresh.txt ]
	row 2 '' 'bloom: (standard input): input file is a filter: nothing added (the filter comes first: bloom add [options] filter [file ...])' add --new fresh.txt - <seen.bf
	[ ! -e fresh.txt ]
	# Into an existing filter, nothing is added either.
	bloom create -n 1000 other.bf
	cp other.bf other-before.bf
	keys 5 >in
	row 2 '' 'bloom: seen.bf: input file is a filter: nothing added (the filter comes first: bloom add [options] filter [file ...])' add --new other.bf in seen.bf
	cmp other.bf other-before.bf
	cmp seen.bf before.bf
	# check names it too, and reads the other inputs.
	run --separate-stderr bloom check -c other.bf in seen.bf
	[ "$status" -eq 2 ]
	[ "$output" = in:0 ]
	[ "$stderr" = 'bloom: seen.bf: input file is a filter' ]
}

@test "an input that is also the output is refused, as grep does, not read forever" {
	abc
	big_filter g.bf
	keys 20000 >big
	bloom add g.bf big all
	cp big out
	# A loop would fill the disk: the file size limit stops it instead.
	run --separate-stderr bash -c 'ulimit -f 20000; bloom check g.bf out all >>out'
	[ "$status" -eq 2 ]
	[ "$stderr" = "bloom: out: input file is also the output" ]
	[ "$(cat big all)" = "$(cat out)" ]
	cp big out
	run --separate-stderr bash -c 'ulimit -f 20000; bloom check g.bf <out >>out'
	[ "$status" -eq 2 ]
	[ "$stderr" = "bloom: (standard input): input file is also the output" ]
	cmp big out
	for args in "add --dups g.bf" "add --new g.bf" "route --slices 1 g.bf"; do
		run --separate-stderr bash -c "ulimit -f 20000; bloom $args out >>out"
		[ "$status" -eq 2 ]
		[ "$stderr" = "bloom: out: input file is also the output" ]
		cmp big out
	done
	# A count, or nothing, written to the file reads no line back.
	run --separate-stderr bash -c 'bloom check -c g.bf out >>out'
	[ "$status" -eq 0 ]
	[ "$(tail -n 1 out)" = 20000 ]
	cp big out
	bloom add g.bf out >>out
	cmp big out
}

@test "check -q exits 0 on a selected line despite trouble, as grep -q" {
	abc
	#   status stdout stderr                                    arguments
	row 0      ''     ''                                        check -q f.bf in nofile
	row 0      ''     'bloom: nofile: No such file or directory' check -q f.bf nofile in
	row 0      ''     'bloom: nofile: No such file or directory' check -qv f.bf nofile in
}

@test "check exits 2 on a missing or corrupt filter" {
	abc
	#   status stdout stderr arguments
	row 2      ''     'bloom: nope.bf: No such file or directory' check nope.bf in
	row 2      ''     'bloom: nope.bf: No such file or directory' check -c nope.bf in
	row 2      ''     'bloom: nope.bf: No such file or directory' check -q nope.bf in
	row 2      ''     'bloom: nope.bf: No such file or directory' check -v nope.bf in
	row 2      ''     'bloom: .: is a directory, not a filter' check . in
	row 2      ''     'bloom: .: is a directory, not a filter' check -c . in
	poke f.bf 0 0
	row 2      ''     'bloom: f.bf: not a bloom filter (bad magic)' check f.bf in
	# check never creates a filter.
	[ ! -e nope.bf ]
}

@test "check exits 2 on a usage error, with the message and synopsis" {
	local synopsis='usage: bloom check [-cHhqvz] [-f list [-d delim] [-s]] [--memory size]
                   [--progress] [--which] filter [file ...]
       bloom check -F filter [-F filter ...] [-cHhqvz]
                   [-f list [-d delim] [-s]] [--memory size] [--progress]
                   [--which] [file ...]'

	#   status stdout stderr arguments
	row 2      ''     "bloom: check: no filter named
$synopsis" check </dev/null
	row 2      ''     "bloom: check: unknown option '-x'
$synopsis" check -x f.bf </dev/null
	row 2      ''     "bloom: check: unknown option '--new'
$synopsis" check --new f.bf </dev/null
}

@test "check names an unknown option letter alone, even among known ones" {
	local synopsis='usage: bloom check [-cHhqvz] [-f list [-d delim] [-s]] [--memory size]
                   [--progress] [--which] filter [file ...]
       bloom check -F filter [-F filter ...] [-cHhqvz]
                   [-f list [-d delim] [-s]] [--memory size] [--progress]
                   [--which] [file ...]'

	abc
	#   status stdout stderr arguments
	row 2      ''     "bloom: check: unknown option '-x'
$synopsis" check -xc f.bf in
	row 2      ''     "bloom: check: unknown option '-x'
$synopsis" check -cx f.bf in
	row 2      ''     "bloom: check: unknown option '-x'
$synopsis" check -vxq f.bf in
}

@test "check opens the filter read-only" {
	abc
	chmod 444 f.bf
	cp f.bf before
	# Root may write to any file: take that power away, where we have it,
	# so that asking for write access fails here as it would for a user.
	if [ "$(id -u)" -eq 0 ] &&
	    setpriv --bounding-set=-dac_override,-dac_read_search true; then
		mkdir bin
		printf '#!/bin/sh\nexec setpriv --bounding-set=-dac_override,-dac_read_search %s "$@"\n' \
			"$root/bloom" >bin/bloom
		chmod 755 bin/bloom
		PATH="$PWD/bin:$PATH"
	fi
	#   status stdout   stderr                            arguments
	row 2      ''       'bloom: f.bf: Permission denied'  add f.bf in
	row 0      $'a\nb'  ''                                check f.bf in
	row 0      c        ''                                check -v f.bf in
	row 0      2        ''                                check -c f.bf in
	row 0      ''       ''                                check -q f.bf in
	cmp f.bf before
}

@test "check finds every key added: never a false negative" {
	keys 10000 >in
	bloom create --seed 3 -n 10000 -p 0.01 f.bf
	bloom add f.bf in
	row 0 10000 '' check -c f.bf in
	row 1 ''    '' check -v f.bf in
	run -0 bloom check f.bf in
	[ "$output" = "$(cat in)" ]
	# Not even in a filter overfilled 250 times.
	bloom create --seed 3 -s 64 -k 3 tiny.bf
	bloom add tiny.bf in
	row 0 10000 '' check -c tiny.bf in
	row 1 0     '' check -c -v tiny.bf in
}

@test "check whose reader goes away ends quietly" {
	seq 2000000 >big
	bloom create --seed 1 -n 2000000 -p 0.01 f.bf
	bloom add f.bf big
	# Killed by SIGPIPE (128 + 13), not by timeout (124), and silent; or 2
	# as below if whoever started bats left SIGPIPE ignored.
	run -0 bash -c 'set +o pipefail
		timeout 20 bloom check f.bf <big 2>err | head -n 1
		echo "${PIPESTATUS[0]}"'
	[ "$output" = $'1\n141' ] || [ "$output" = $'1\n2' ]
	[ ! -s err ]
	# With SIGPIPE ignored, the EPIPE ends it with status 2, silent too.
	run -0 bash -c 'set +o pipefail; trap "" PIPE
		timeout 20 bloom check f.bf <big 2>err | head -n 1
		echo "${PIPESTATUS[0]}"'
	[ "$output" = $'1\n2' ]
	[ ! -s err ]
}

@test "check to a full device exits 2 with a write error" {
	abc
	run -2 --separate-stderr bash -c 'bloom check f.bf in >/dev/full'
	[ "$output" = "" ]
	[ "$stderr" = "bloom: write error: No space left on device" ]
	run -2 --separate-stderr bash -c 'bloom check -c f.bf in >/dev/full'
	[ "$output" = "" ]
	[ "$stderr" = "bloom: write error: No space left on device" ]
	# Nothing to write: nothing to fail.
	run -1 --separate-stderr bash -c 'bloom check f.bf none >/dev/full'
	[ "$stderr" = "" ]
	run -0 --separate-stderr bash -c 'bloom check -q f.bf in >/dev/full'
	[ "$stderr" = "" ]
}

# With one of the standard descriptors closed, the filter must not be
# opened in its place.
@test "check with standard input closed reads no lines from the filter" {
	local ebadf='bloom: (standard input): read error: Bad file descriptor'

	abc
	run -2 --separate-stderr bash -c 'bloom check -c f.bf <&-'
	[ "$output" = 0 ]
	[ "$stderr" = "$ebadf" ]
	run -2 --separate-stderr bash -c 'bloom check -v f.bf <&-'
	[ "$output" = "" ]
	[ "$stderr" = "$ebadf" ]
}

@test "check with standard output closed: a write error, but -q writes nothing" {
	abc
	run -2 --separate-stderr bash -c 'bloom check f.bf in >&-'
	[ "$stderr" = "bloom: write error: Bad file descriptor" ]
	# As grep -q: nothing to write, so nothing lost.
	run -0 --separate-stderr bash -c 'bloom check -q f.bf in >&-'
	[ "$stderr" = "" ]
	run -1 --separate-stderr bash -c 'bloom check -q f.bf none >&-'
	[ "$stderr" = "" ]
}

# ---- check -F: several filters at once.

# Three filters of other seeds, geometries and modes, each holding its own
# keys (a-N, b-N, c-N for N to 2000), big enough that a few thousand
# absent keys give no false positive.
three() {
	bloom create --seed 1 -n 10000 -p 1e-9 a.bf
	bloom create --seed 2 --grow -n 500 -p 1e-9 b.bf
	bloom create --seed 3 --generations 3 -n 10000 -p 1e-9 c.bf
	keys 2000 a- | bloom add a.bf
	keys 2000 b- | bloom add b.bf
	keys 2000 c- | bloom add c.bf
	{ keys 2000 a-; keys 2000 b-; keys 2000 c-; keys 2000 z-; } |
		awk 'NR % 3 == 0' >in
}

@test "check -F, repeated, selects the lines any of the filters may hold; -v those none does" {
	three
	grep -v '^z-' in >want
	grep '^z-' in >want-v
	run -0 bloom check -F a.bf -F b.bf -F c.bf in
	[ "$output" = "$(cat want)" ]
	run -0 bloom check -v -F a.bf -F b.bf -F c.bf in
	[ "$output" = "$(cat want-v)" ]
	row 0 "$(wc -l <want)" '' check -c -F a.bf -F b.bf -F c.bf in
	row 0 '' '' check -q -F c.bf -F a.bf in
	# Standard input when no file is named; one -F is the filter alone.
	row 0 "$(grep '^a-' in)" '' check -F a.bf <in
	row 1 '' '' check -F a.bf -F b.bf <<<"c-1"
	# The same with the key from fields, with NUL ends, and through the
	# reader thread of a large input.
	sed 's/^/x,/' in >in.csv
	row 0 "$(sed 's/^/x,/' want)" '' check -f 2 -d , -F a.bf -F b.bf -F c.bf in.csv
	tr '\n' '\0' <in >in.z
	bloom check -z -v -F a.bf -F b.bf -F c.bf in.z >got.z || true
	[ "$(tr '\0' '\n' <got.z)" = "$(cat want-v)" ]
	for i in $(seq 120); do cat in; done >big
	[ "$(wc -c <big)" -gt $((1 << 20)) ]
	[ "$(bloom check -F a.bf -F b.bf -F c.bf big | cksum)" = \
	    "$(grep -v '^z-' big | cksum)" ]
}

@test "check --which writes the first filter that may hold each line, and a tab" {
	three
	bloom create --like a.bf a2.bf
	keys 2000 b- | bloom add a2.bf
	run -0 bloom check --which -F a.bf -F b.bf -F c.bf in
	[ "$output" = "$(awk -F- '$1 != "z" { print $1 ".bf\t" $0 }' in)" ]
	# The first in the order given: a2.bf, of a.bf's seed, holds b- too.
	run -0 bloom check --which -F a.bf -F a2.bf -F b.bf in
	[ "$output" = "$(awk -F- '$1 == "a" { print "a.bf\t" $0 } $1 == "b" { print "a2.bf\t" $0 }' in)" ]
	run -0 bloom check --which -F b.bf -F a2.bf -F a.bf in
	[ "$output" = "$(awk -F- '$1 == "a" { print "a.bf\t" $0 } $1 == "b" { print "b.bf\t" $0 }' in)" ]
	# One filter, named as its operand; after the file's name with -H.
	row 0 "$(printf 'a.bf\ta-3\na.bf\ta-6')" '' check --which a.bf <(head -n 2 in)
	head -n 3 in >in3
	row 0 "$(printf 'in3:a.bf\ta-3\nin3:a.bf\ta-6\nin3:a.bf\ta-9')" '' check -H --which -F c.bf -F a.bf in3
}

@test "check -F: the slices of a filter together answer for all of it" {
	bloom create --seed 9 -n 10000 -p 1e-9 --slices 2 whole.bf
	bloom create --like whole.bf --slice 0/2 s0.bf
	bloom create --like whole.bf --slice 1/2 s1.bf
	keys 3000 >k
	bloom route s0.bf k | awk -F '\t' '$1 == 0 { print $2 }' | bloom add s0.bf
	bloom route s0.bf k | awk -F '\t' '$1 == 1 { print $2 }' | bloom add s1.bf
	{ keys 3000; keys 1000 z-; } >in
	row 0 "$(keys 3000)" '' check -F s0.bf -F s1.bf in
	row 0 "$(keys 1000 z-)" '' check -v -F s1.bf -F s0.bf in
	# One slice alone passes over the other's lines, and says so.
	run -0 --separate-stderr bloom check -F s0.bf in
	[[ "$stderr" == "bloom: s0.bf: "*" lines belong to other slices of the filter and were passed over (bloom route splits a stream by slice)" ]]
}

@test "check -F: a slice with another filter passes over its other slices' lines, never certainly absent" {
	bloom create --seed 9 -n 10000 -p 1e-9 --slices 2 whole.bf
	bloom create --like whole.bf --slice 0/2 s0.bf
	bloom create --like whole.bf --slice 1/2 s1.bf
	bloom create --seed 10 -n 10000 -p 1e-9 other.bf
	keys 3000 >k
	bloom route s0.bf k | awk -F '\t' '$1 == 0 { print $2 }' >k0
	bloom route s0.bf k | awk -F '\t' '$1 == 1 { print $2 }' >k1
	bloom add s0.bf k0
	bloom add s1.bf k1
	keys 10 o- | bloom add other.bf
	{ cat k; keys 10 o-; keys 1000 z-; } >in
	bloom route s0.bf in | awk -F '\t' '$1 == 0 { print $2 }' | grep '^z-' >z0
	bloom route s0.bf in | awk -F '\t' '$1 == 1 { print $2 }' | grep -v '^o-' >p1
	bloom route s0.bf in | awk -F '\t' '$1 == 1 && /^.\to-/ { print $2 }' >o1
	n=$(wc -l <p1)
	# Slice 1's lines are none of s0.bf's to answer and other.bf does
	# not hold them: passed over, whichever filter comes first.
	row 0 "$(cat z0)" "bloom: s0.bf: $n lines belong to other slices of the filter and were passed over (bloom route splits a stream by slice)" check -v -F s0.bf -F other.bf in
	row 0 "$(cat z0)" "bloom: s0.bf: $n lines belong to other slices of the filter and were passed over (bloom route splits a stream by slice)" check -v -F other.bf -F s0.bf in
	# What other.bf holds is selected whatever slice it falls in.
	row 0 "$(cat k0; keys 10 o-)" "bloom: s0.bf: $n lines belong to other slices of the filter and were passed over (bloom route splits a stream by slice)" check -F s0.bf -F other.bf in
	# With both slices, the whole filter answers: nothing passed over.
	row 0 "$(keys 1000 z-)" '' check -v -F s1.bf -F other.bf -F s0.bf in
	[ -s o1 ]
	# Slices of other counts of the same whole filter answer with them:
	# slice 0 of 2 and slices 2 and 3 of 4 make up the whole.
	bloom create --like whole.bf --slice 2/4 q2.bf
	bloom create --like whole.bf --slice 3/4 q3.bf
	bloom add --pass-over q2.bf k1 2>/dev/null
	bloom add --pass-over q3.bf k1 2>/dev/null
	row 0 "$(keys 1000 z-)" '' check -v -F q3.bf -F s0.bf -F q2.bf -F other.bf in
	row 0 "$(cat k; keys 10 o-)" '' check -F q3.bf -F s0.bf -F q2.bf -F other.bf in
}

@test "check -F: usage errors, and a filter that cannot be opened" {
	three
	local synopsis='usage: bloom check [-cHhqvz] [-f list [-d delim] [-s]] [--memory size]
                   [--progress] [--which] filter [file ...]
       bloom check -F filter [-F filter ...] [-cHhqvz]
                   [-f list [-d delim] [-s]] [--memory size] [--progress]
                   [--which] [file ...]'
	local msg="bloom: check: --which names the filter that holds each line written: not with -v, -c or -q"
	row 2 '' "$msg
$synopsis" check --which -v -F a.bf in
	row 2 '' "$msg
$synopsis" check --which -c a.bf in
	row 2 '' "$msg
$synopsis" check -q --which -F a.bf -F b.bf in
	row 2 '' "bloom: check: option '-F' needs a value
$synopsis" check -F
	row 2 '' 'bloom: nope.bf: No such file or directory' check -F a.bf -F nope.bf in
	mkdir d.bf
	row 2 '' 'bloom: d.bf: is a directory, not a filter' check -F d.bf -F a.bf in
	# A filter that is also the output is refused, as one alone is.
	run -2 --separate-stderr bash -c 'bloom check -F a.bf -F b.bf in >>b.bf'
	[ "$stderr" = "bloom: b.bf: is also the standard output: refusing to write into the filter" ]
}

# Where the processor has AVX-512, a key's bits are tested with vector
# instructions (store/bits.c); tests/kernels checks them against the
# scalar test, which every other test here runs only on a processor
# without them.
@test "the vector test of a key's bits answers as the scalar one" {
	[ -x "$root/tests/kernels" ] ||
		{ echo "tests/kernels is not built: run make tests/kernels"; return 1; }
	run "$root/tests/kernels"
	echo "$output"
	if [ "$status" -eq 2 ]; then
		skip "no AVX-512 on this processor: only the scalar test runs"
	fi
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == "kernels: apbf 200000 keys, "*" found, "*" not: the same slots" ]]
	[[ ${lines[1]} == "kernels: 200000 keys, "*" found, "*" not: the same answers" ]]
}
