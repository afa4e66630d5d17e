#!/usr/bin/env bats
# Tests of the command line as a whole: help, version, a missing or unknown
# command, and help written to a full device.

bats_require_minimum_version 1.5.0
load helpers

# The SYNOPSIS of bloom(1), as usage() prints it.
usage='usage: bloom create [-f] [-k hashes] [-n capacity] [-p fpr] [-s size]
                    [--seed n] filter
       bloom add [-Nz] [--memory size] [--sync] filter [file ...]
       bloom check [-cqvz] [--memory size] filter [file ...]
       bloom stats [--json] filter
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
	[ "$(printf '%s\n' "${lines[@]:0:7}")" = "$usage" ]
	# Then a blank line and the description, and each command's help.
	[ "${output:${#usage}:2}" = $'\n\n' ]
	[ "${lines[7]}" = "A Bloom filter in a file: add lines, then ask whether a line was seen." ]
	[[ $output == *$'\nadd: Add lines to the filter, creating it with the defaults if missing.\n'* ]]
	[[ $output == *$'\ncheck: Write the lines that may be in the filter.\n'* ]]
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
	first_line 0 'usage: bloom add [-Nz] [--memory size] [--sync] filter [file ...]'       help add
	first_line 0 'usage: bloom add [-Nz] [--memory size] [--sync] filter [file ...]'       add --help
	first_line 0 'usage: bloom check [-cqvz] [--memory size] filter [file ...]'            help check
	first_line 0 'usage: bloom check [-cqvz] [--memory size] filter [file ...]'            check --help
	first_line 0 'usage: bloom create [-f] [-k hashes] [-n capacity] [-p fpr] [-s size]' help create
	first_line 0 'usage: bloom create [-f] [-k hashes] [-n capacity] [-p fpr] [-s size]' create --help
	first_line 0 'usage: bloom stats [--json] filter'                      help stats
	first_line 0 'usage: bloom stats [--json] filter'                      stats --help
	first_line 0 'usage: bloom help [command]'                             help help
}

@test "bloom help add is bloom add --help, in full" {
	run -0 bloom help add
	[ "$output" = 'usage: bloom add [-Nz] [--memory size] [--sync] filter [file ...]

Add lines to the filter, creating it with the defaults if missing.
  -N, --new    write the lines that were not yet in the filter
  -z           lines end with NUL, not newline
  --sync       write the filter to stable storage before exiting' ]
	[ "$output" = "$(bloom add --help)" ]
	run -0 bloom help create
	[ "${lines[1]}" = '                    [--seed n] filter' ]
	[ "$output" = "$(bloom create --help)" ]
	[ "$(bloom help check)" = "$(bloom check --help)" ]
	[ "$(bloom help stats)" = "$(bloom stats --help)" ]
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

@test "help and version to a full device exit 2 with a write error" {
	local args

	for args in '--help' 'help' 'help add' 'add --help' 'check --help' \
	    'create --help' 'stats --help' '--version'; do
		run -2 --separate-stderr bash -c "bloom $args >/dev/full"
		echo "bloom $args: status $status, stderr '$stderr'"
		[ "$output" = "" ]
		[ "$stderr" = "bloom: write error: No space left on device" ]
	done
}
