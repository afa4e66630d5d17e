#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Tests of the command line as a whole: help, version, a missing or unknown
# command, and help written to a full device.

bats_require_minimum_version 1.5.0
load helpers

# The SYNOPSIS of bloom(1), as usage() prints it.
usage='usage: bloom create [-f] [-k hashes] [-n capacity] [-p fpr] [-s size]
                    [--slices n] [--slice i/n | auto] [--seed n]
                    [--grow [--growth factor]]
                    [--generations count [--window duration] [--max-size size]
                     [--layout blocked | apbf] [--no-renew]] [--dry-run] filter
       bloom create --like template [-f] [--slice i/n | auto] [--slices n]
                    filter
       bloom add [-D | -N] [-z] [-f list [-d delim] [-s]] [-n capacity]
                 [-p fpr] [--memory size] [--no-create] [--pass-over]
                 [--progress] [--sync] filter [file ...]
       bloom check [-cHhqvz] [-f list [-d delim] [-s]] [--memory size]
                   [--progress] [--which] filter [file ...]
       bloom check -F filter [-F filter ...] [-cHhqvz]
                   [-f list [-d delim] [-s]] [--memory size] [--progress]
                   [--which] [file ...]
       bloom stats [--json] filter
       bloom rotate filter
       bloom merge filter source ...
       bloom fold [-f] [--by n] filter output
       bloom route [-z] [-f list [-d delim] [-s]] [-o prefix] [--slices n]
                   filter [file ...]
       bloom help [command]
       bloom --version'

# Runs bloom with ARGS and asserts its exit STATUS and the first line of its
# standard output, and that its standard error is empty.
#	first_line STATUS LINE ARGS...
first_line() {
	local want_status=$1 want_line=$2

	shift 2
	run --separate-stderr bloom "$@"
	echo "bloom $*"
	echo "  got:  status $status, first line '${lines[0]}', stderr '$stderr'"
	echo "  want: status $want_status, first line '$want_line', stderr ''"
	[ "$status" -eq "$want_status" ] && [ "${lines[0]}" = "$want_line" ] &&
		[ "$stderr" = "" ]
}

@test "bloom --help writes the usage and the help of every command" {
	run -0 --separate-stderr bloom --help
	[ "$stderr" = "" ]
	[ "$(printf '%s\n' "${lines[@]:0:23}")" = "$usage" ]
	# Then a blank line and the description, and each command's help.
	[ "${output:${#usage}:2}" = $'\n\n' ]
	[ "${lines[23]}" = "A Bloom filter in a file: add lines, then ask whether a line was seen." ]
	[[ $output == *$'\ncreate: Create an empty filter file sized for the given capacity and false-\n'* ]]
	[[ $output == *$'\nadd: Add lines to the filter.  A missing filter is created growable, for\n'* ]]
	[[ $output == *$'\ncheck: Write the lines that may be in the filter.\n'* ]]
	[[ $output == *$'\nstats: Describe the filter: size, fill, estimated items and error rate, and\n'* ]]
	[[ $output == *$'\nrotate: Start a new generation of a filter made with --generations, now:\n'* ]]
	[[ $output == *$'\nmerge: OR each source into filter, in place: filter then holds the union of\n'* ]]
	[[ $output == *$'\nfold: Write to output a smaller filter holding the same lines: blocks n i to\n'* ]]
	[[ $output == *$'\nroute: Split lines by the slice of filter that holds them: each line is\n'* ]]
}

@test "bloom help and bloom -h are bloom --help" {
	local help

	help=$(bloom --help)
	run -0 bloom help
	[ "$output" = "$help" ]
	run -0 bloom -h
	[ "$output" = "$help" ]
}

@test "each command's help starts with its synopsis" {
	#          status  first line                                          arguments
	first_line 0 'usage: bloom add [-D | -N] [-z] [-f list [-d delim] [-s]] [-n capacity]' help add
	first_line 0 'usage: bloom add [-D | -N] [-z] [-f list [-d delim] [-s]] [-n capacity]' add --help
	first_line 0 'usage: bloom check [-cHhqvz] [-f list [-d delim] [-s]] [--memory size]' help check
	first_line 0 'usage: bloom check [-cHhqvz] [-f list [-d delim] [-s]] [--memory size]' check --help
	first_line 0 'usage: bloom create [-f] [-k hashes] [-n capacity] [-p fpr] [-s size]' help create
	first_line 0 'usage: bloom create [-f] [-k hashes] [-n capacity] [-p fpr] [-s size]' create --help
	first_line 0 'usage: bloom stats [--json] filter'                      help stats
	first_line 0 'usage: bloom stats [--json] filter'                      stats --help
	first_line 0 'usage: bloom rotate filter'                              help rotate
	first_line 0 'usage: bloom rotate filter'                              rotate --help
	first_line 0 'usage: bloom merge filter source ...'                    help merge
	first_line 0 'usage: bloom merge filter source ...'                    merge --help
	first_line 0 'usage: bloom route [-z] [-f list [-d delim] [-s]] [-o prefix] [--slices n]' help route
	first_line 0 'usage: bloom route [-z] [-f list [-d delim] [-s]] [-o prefix] [--slices n]' route --help
	first_line 0 'usage: bloom help [command]'                             help help
}

@test "bloom help add is bloom add --help, in full" {
	run -0 bloom help add
	[ "$output" = 'usage: bloom add [-D | -N] [-z] [-f list [-d delim] [-s]] [-n capacity]
                 [-p fpr] [--memory size] [--no-create] [--pass-over]
                 [--progress] [--sync] filter [file ...]

Add lines to the filter.  A missing filter is created growable, for
8000000 lines at first (-n) and a rate of 0.01 (-p), unless
--no-create is given or BLOOM_NO_CREATE is set to 1, yes, true or on.
  -N, --new    write the lines that were not yet in the filter; a
               line is added only once written (to a pipe, once its
               reader took it), and written as soon as the input
               stops coming
  -D, --dups   write the lines that were already in it: every repeat,
               not the first occurrence (as awk '\''seen[$0]++'\'')
  -f list      the key is these fields (1,3 or 2- as in cut), not the
               whole line; missing fields are empty; a line without
               the separator is one field, as in cut
  -d delim     the field separator, one byte (default TAB)
  -s, --only-delimited
               skip a line without the separator, as cut -s: no
               key, not added, not written (not even with -N or -D)
  -z           lines end with NUL, not newline
  -n capacity  a missing filter'\''s first segment is for this many
               lines (K, M, G: powers of 1000); an existing filter
               must have this capacity
  -p fpr       a missing filter'\''s rate (0.01 or 1%); an existing one
               must have it
  --memory S   bytes bloom may use (512M, 1GB); default: the cgroup
               limit or available memory
  --no-create  fail if the filter does not exist
  --pass-over  a slice passes over the lines of other slices and
               says so; without it they are an error (exit 2)
  --progress   a status line on standard error as it goes
  --sync       write the filter to stable storage before exiting;
               with -N or -D, sync the output before adding its lines
SIGUSR1 prints one status line.' ]
	[ "$output" = "$(bloom add --help)" ]
	run -0 bloom help create
	[ "${lines[1]}" = '                    [--slices n] [--slice i/n | auto] [--seed n]' ]
	[ "${lines[2]}" = '                    [--grow [--growth factor]]' ]
	[ "${lines[3]}" = '                    [--generations count [--window duration] [--max-size size]' ]
	[ "${lines[4]}" = '                     [--layout blocked | apbf] [--no-renew]] [--dry-run] filter' ]
	[ "${lines[5]}" = '       bloom create --like template [-f] [--slice i/n | auto] [--slices n]' ]
	[ "${lines[6]}" = '                    filter' ]
	[ "$output" = "$(bloom create --help)" ]
	[ "$(bloom help check)" = "$(bloom check --help)" ]
	[ "$(bloom help stats)" = "$(bloom stats --help)" ]
	run -0 bloom help rotate
	[ "$output" = 'usage: bloom rotate filter

Start a new generation of a filter made with --generations, now:
the oldest generation is forgotten.' ]
	[ "$output" = "$(bloom rotate --help)" ]
	[ "$(bloom help merge)" = "$(bloom merge --help)" ]
	[ "$(bloom help route)" = "$(bloom route --help)" ]
}

@test "bloom help of an unknown command exits 2 with the usage" {
	run -2 --separate-stderr bloom help nosuch
	[ "$output" = "" ]
	[ "$stderr" = "bloom: help: unknown command 'nosuch'
$usage" ]
	run -2 --separate-stderr bloom help add check
	[ "$output" = "" ]
	[ "$stderr" = "bloom: help: one command at a time
$usage" ]
}

@test "bloom --version writes the version" {
	run -0 --separate-stderr bloom --version
	[ "$output" = "bloom 1.0.0" ]
	[ "$stderr" = "" ]
}

@test "bloom alone exits 2 with the usage on standard error" {
	run -2 --separate-stderr bloom
	[ "$output" = "" ]
	[ "$stderr" = "bloom: no command given
$usage" ]
}

@test "an unknown command exits 2 with the usage on standard error" {
	run -2 --separate-stderr bloom nosuch
	[ "$output" = "" ]
	[ "$stderr" = "bloom: unknown command 'nosuch'
$usage" ]
	run -2 --separate-stderr bloom --nosuch
	[ "$output" = "" ]
	[ "$stderr" = "bloom: unknown command '--nosuch'
$usage" ]
	[ ! -e nosuch ]
}

@test "rotate: usage errors exit 2 with the message and its synopsis" {
	local synopsis='usage: bloom rotate filter'

	row 2 '' "bloom: rotate: no filter named
$synopsis" rotate
	row 2 '' "bloom: rotate: one filter at a time
$synopsis" rotate a.bf b.bf
	row 2 '' "bloom: rotate: unknown option '-x'
$synopsis" rotate -x a.bf
	row 2 '' "bloom: rotate: unknown option '--bogus'
$synopsis" rotate --bogus a.bf
	# rotate never creates a filter.
	row 2 '' 'bloom: nope.bf: No such file or directory' rotate nope.bf
	[ ! -e nope.bf ]
	[ ! -e a.bf ]
}

@test "help and version to a full device exit 2 with a write error" {
	local args

	for args in '--help' 'help' 'help add' 'add --help' 'check --help' \
	    'create --help' 'stats --help' 'rotate --help' 'help rotate' \
	    'merge --help' 'fold --help' 'route --help' '--version'; do
		run -2 --separate-stderr bash -c "bloom $args >/dev/full"
		echo "bloom $args: status $status, stderr '$stderr'"
		[ "$output" = "" ]
		[ "$stderr" = "bloom: write error: No space left on device" ]
	done
}

@test "a message is one write, so that those of processes sharing standard error do not interleave" {
	command -v strace >/dev/null || skip "strace not found: install strace"
	# LeakSanitizer cannot run under ptrace (make check SANITIZE=1).
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	bloom create --generations 3 --seed 1 -n 100 -p 0.01 w.bf
	keys 500 >in
	run -0 strace -o trace -e trace=write bloom add w.bf in
	grep 'write(2, ' trace
	[ "$(grep -c 'write(2, ' trace)" = 1 ]
	grep -q 'write(2, "bloom: w.bf: warning: a gener' trace
	run -2 strace -o trace -e trace=write bloom stats "$(printf 'no\033such')"
	[ "$(grep -c 'write(2, ' trace)" = 1 ]
	[ "$output" = 'bloom: no\x1bsuch: No such file or directory' ]
}
