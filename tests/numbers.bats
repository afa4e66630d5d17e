#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# The numbers people type (issue 38): every count, size, rate and duration
# goes through one parser (cli/parse.c) that reads them as coreutils' dd,
# sort -S and numfmt do.  A table: status, arguments, and the line of the
# output that shows the value taken, or the message that refuses it.

bats_require_minimum_version 1.5.0
load helpers

# takes STATUS LINE ARGS...: bloom ARGS exits STATUS; on success LINE is a
# line of its standard output, otherwise the first line of its standard
# error, and nothing is written to the standard output.
takes() {
	local want_status=$1 want=$2

	shift 2
	run --separate-stderr bloom "$@"
	echo "bloom $*: status $status"
	echo "stdout: $output"
	echo "stderr: $stderr"
	[ "$status" -eq "$want_status" ] || return 1
	if [ "$status" -eq 0 ]; then
		grep -qxF -- "$want" <<<"$output"
	else
		[ "$output" = "" ] && [ "${stderr%%$'\n'*}" = "$want" ]
	fi
}

# n COUNT CAPACITY: create -n COUNT sizes for CAPACITY lines.
n() { takes 0 "capacity: $2" create --dry-run -n "$1" f.bf; }
n_refused() {
	takes 2 "bloom: create: -n takes a positive whole number such as 1000000, 1M or 1e6 (K, M, G: powers of 1000), not '$1'" create --dry-run -n "$1" f.bf
}
# p RATE FPR: create -p RATE sizes for FPR.
p() { takes 0 "target_fpr: $2" create --dry-run -p "$1" f.bf; }
p_refused() {
	takes 2 "bloom: create: -p takes a rate between 0 and 1 such as 0.01, 1e-3 or 1%, not '$1'$2" create --dry-run -p "$1" f.bf
}
# s SIZE BLOCKS: create -s SIZE makes BLOCKS 64-byte blocks.
s() { takes 0 "blocks: $2" create --dry-run -s "$1" f.bf; }
s_refused() {
	takes 2 "bloom: create: -s takes a size from 64 bytes to 64T, such as 64M, not '$1'" create --dry-run -s "$1" f.bf
}
# window DURATION SECONDS: create --window DURATION rotates every SECONDS.
window() {
	run -0 bloom create -n 1000 --generations 3 --window "$1" f.bf
	[ "$(stats_field window_seconds f.bf)" = "$2" ]
}
window_refused() {
	takes 2 "bloom: create: --window takes a duration such as 90s, 30m, 12h, 7d or 2w, not '$1'" create --dry-run --generations 3 --window "$1" f.bf
}

# ---- Counts: K, M, G are powers of 1000, in either case; a point and an
# exponent where the number is whole.
@test "-n 1000"		{ n 1000 1000; }
@test "-n 1k"		{ n 1k 1000; }
@test "-n 2.5M"		{ n 2.5M 2500000; }
@test "-n 2.5m"		{ n 2.5m 2500000; }
@test "-n 1e6"		{ n 1e6 1000000; }
@test "-n 2e9"		{ n 2e9 2000000000; }
@test "-n 2E+9"		{ n 2E+9 2000000000; }
@test "-n 0.5K"		{ n 0.5K 500; }
@test "-n .5k"		{ n .5k 500; }
@test "-n 1.25e3"	{ n 1.25e3 1250; }
@test "-n 200e-2"	{ n 200e-2 2; }
@test "-n 250e-2 refused: not whole"	{ n_refused 250e-2; }
@test "-n 007"		{ n 007 7; }
@test "-n 1.000"	{ n 1.000 1; }
@test "-n 0.0000001G"	{ n 0.0000001G 100; }
@test "-n 1.5 refused: not whole"	{ n_refused 1.5; }
@test "-n 2.0005K refused: not whole"	{ n_refused 2.0005K; }
@test "-n 1e-1 refused"	{ n_refused 1e-1; }
@test "-n 0.0 refused"	{ n_refused 0.0; }
@test "-n 1e refused"	{ n_refused 1e; }
@test "-n 1e+ refused"	{ n_refused 1e+; }
@test "-n 1.2.3 refused"	{ n_refused 1.2.3; }
@test "-n . refused"	{ n_refused .; }
@test "-n 0x10 refused"	{ n_refused 0x10; }
@test "-n ' 5' refused"	{ n_refused ' 5'; }
@test "-n '5 ' refused"	{ n_refused '5 '; }
@test "-n '5 K' refused"	{ n_refused '5 K'; }
@test "-n 5KiB refused: a count has no bytes"	{ n_refused 5KiB; }
@test "-n 1e20 refused: over 64 bits"	{ n_refused 1e20; }
@test "-n 18446744073709551615e0 is 2^64-1, then too large to size"	{
	takes 2 "bloom: f.bf: a filter for 18446744073709551615 items at fpr 0.01 would exceed 64 TiB" create --dry-run -n 18446744073709551615e0 f.bf
}
@test "-n 18446744073709551616 refused: over 64 bits"	{ n_refused 18446744073709551616; }
@test "-n 18446744073709551619 refused: over 64 bits in the last digit"	{ n_refused 18446744073709551619; }
@test "-n 18446744073.709551616G refused: over 64 bits"	{ n_refused 18446744073.709551616G; }
@test "-n 1e99999999999 refused"	{ n_refused 1e99999999999; }
@test "-n 1e-99999999999 refused"	{ n_refused 1e-99999999999; }
@test "add -n 2.5K"	{
	run -0 bloom add -n 2.5K f.bf </dev/null
	[ "$(stats_field capacity f.bf)" = 2500 ]
}

# ---- Rates: a decimal or a percentage.
@test "-p 0.01"		{ p 0.01 0.01; }
@test "-p 1e-3"		{ p 1e-3 0.001; }
@test "-p 1%"		{ p 1% 0.01; }
@test "-p 0.1%"		{ p 0.1% 0.001; }
@test "-p 5e-1%"	{ p 5e-1% 0.005; }
@test "add -p 0.1%"	{
	run -0 bloom add -p 0.1% f.bf </dev/null
	[ "$(stats_field target_fpr f.bf)" = 0.001 ]
}
@test "-p 100% refused"	{ p_refused 100%; }
@test "-p 0% refused"	{ p_refused 0%; }
@test "-p % refused"	{ p_refused %; }
@test "-p 1%% refused"	{ p_refused 1%%; }
@test "-p 0x1% refused: no hexadecimal"	{ p_refused 0x1%; }
@test "-p ' 1%' refused: no blank"	{ p_refused ' 1%'; }
@test "-p '1 %' refused: no blank"	{ p_refused '1 %'; }
@test "-p 1e-308% refused: too small" {
	p_refused 1e-308% " (too small: the smallest rate is 2.2e-308)"
}
@test "-p 99.99999% refused: too close to 1" {
	p_refused 99.99999% " (too close to 1: the largest rate is 0.999999)"
}

# ---- Sizes: K, M, G, T and KiB... are powers of 1024, KB... of 1000.
@test "-s 64"		{ s 64 1; }
@test "-s 64B"		{ s 64B 1; }
@test "-s 1K"		{ s 1K 16; }
@test "-s 1k"		{ s 1k 16; }
@test "-s 1KiB"		{ s 1KiB 16; }
@test "-s 1kib"		{ s 1kib 16; }
@test "-s 6.4KB"	{ s 6.4KB 100; }
@test "-s 6.4kb"	{ s 6.4kb 100; }
@test "-s 1.5M"		{ s 1.5M 24576; }
@test "-s 64MB"		{ s 64MB 1000000; }
@test "-s 64GB"		{ s 64GB 1000000000; }
@test "-s 1GiB"		{ s 1GiB 16777216; }
@test "-s 0.5T"		{ s 0.5T 8589934592; }
@test "-s 6.4e3"	{ s 6.4e3 100; }
@test "-s 100.5 refused: not whole bytes"	{ s_refused 100.5; }
@test "-s 1.0001K refused: not whole bytes"	{ s_refused 1.0001K; }
@test "-s 5X refused"	{ s_refused 5X; }
@test "-s 5Ki refused"	{ s_refused 5Ki; }
@test "-s 5KIBS refused"	{ s_refused 5KIBS; }
@test "-s 5PB refused"	{ s_refused 5PB; }
@test "-s 70TB"		{ s 70TB 1093750000000; }
@test "-s 71TB refused: over 64T"	{ s_refused 71TB; }
@test "--max-size 13.12KB is the window's start"	{
	run -0 bloom create -n 1000 --generations 3 --layout blocked --max-size 13.12KB f.bf
	[ "$(stats_field bytes f.bf)" = "13120 (12.8 KiB)" ]
}
@test "--max-size 13.119KB is less than the window's start"	{
	takes 2 "bloom: f.bf: --max-size 13119 (12.8 KiB) is less than the window takes at the start, 13120 bytes (12.8 KiB): no generation could ever widen" create -n 1000 --generations 3 --layout blocked --max-size 13.119KB f.bf
}
@test "--memory 1GB"	{ run -0 bloom add --memory 1GB f.bf </dev/null; }
@test "--memory 4.096KB is a page"	{
	bloom create g.bf
	run -1 bloom check --memory 4.096KB g.bf </dev/null
	[ "$output" = "" ]
}
@test "--memory 4.095KB refused: less than a page"	{
	bloom create g.bf
	takes 2 "bloom: check: --memory takes a size of 4K or more, such as 512M or 1GB, not '4.095KB'" check --memory 4.095KB g.bf
}

# ---- Durations: s, m, h, d, w in either case or spelled out; a point
# where the seconds are whole.
@test "--window 90"	{ window 90 90; }
@test "--window 90s"	{ window 90s 90; }
@test "--window 1.5m"	{ window 1.5m 90; }
@test "--window 1.5h"	{ window 1.5h 5400; }
@test "--window 7D"	{ window 7D 604800; }
@test "--window 7d"	{ window 7d 604800; }
@test "--window 2W"	{ window 2W 1209600; }
@test "--window 12H"	{ window 12H 43200; }
@test "--window 30min"	{ window 30min 1800; }
@test "--window 2weeks"	{ window 2weeks 1209600; }
@test "--window 1day"	{ window 1day 86400; }
@test "--window 3Hours"	{ window 3Hours 10800; }
@test "--window 1e3s"	{ window 1e3s 1000; }
@test "--window 0.5s refused: not whole seconds"	{ window_refused 0.5s; }
@test "--window 0d refused"	{ window_refused 0d; }
@test "--window 5y refused"	{ window_refused 5y; }
@test "--window 5mo refused"	{ window_refused 5mo; }
@test "--window 1e9w refused: over the longest window"	{ window_refused 1e9w; }
