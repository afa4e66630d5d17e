#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Tests of what a line is: the key is the bytes of a line without its
# terminator (newline, or NUL with -z), whatever those bytes are and however
# long, and a selected line is written back with a terminator.

bats_require_minimum_version 1.5.0
load helpers

# Asserts that FILE holds exactly the bytes printf FORMAT writes; shows
# both with od if not.
bytes_are() {
	# shellcheck disable=SC2059
	printf "$2" >want
	if ! cmp "$1" want; then
		echo "got:"
		od -c "$1" | head -n 20
		echo "want:"
		od -c want | head -n 20
		return 1
	fi
}

@test "a carriage return is data: a\\r is not a" {
	big_filter f.bf
	printf 'a\r\n' >cr
	printf 'a\n' >a
	bloom add -N f.bf cr >out
	bytes_are out 'a\r\n'
	run -1 bloom check f.bf a
	[ "$output" = "" ]
	bloom check f.bf cr >out
	bytes_are out 'a\r\n'
	bloom add -N f.bf a >out
	bytes_are out 'a\n'
}

@test "a last line without a terminator is a line, written with one" {
	big_filter f.bf
	printf 'a\nlast' >in
	bloom add -N f.bf in >out
	bytes_are out 'a\nlast\n'
	bloom check f.bf in >out
	bytes_are out 'a\nlast\n'
	printf 'last\n' | bloom check f.bf >out
	bytes_are out 'last\n'
	printf 'other' | bloom check -v f.bf >out
	bytes_are out 'other\n'
	printf 'last' | bloom add -N f.bf >out
	bytes_are out ''
}

@test "the empty line is a key" {
	big_filter f.bf
	printf 'x\n' | bloom add f.bf
	run -1 bloom check f.bf <<<''
	run -0 bloom check -c -v f.bf <<<''
	[ "$output" = 1 ]
	printf '\n\n' | bloom add -N f.bf >out
	bytes_are out '\n'
	printf 'x\n\ny\n' | bloom check f.bf >out
	bytes_are out 'x\n\n'
	printf '\n' | bloom add -N f.bf >out
	bytes_are out ''
}

@test "a NUL inside a newline-ended line is part of the key" {
	big_filter f.bf
	printf 'x\0y\nz\n' >in
	bloom add -N f.bf in >out
	bytes_are out 'x\0y\nz\n'
	bloom check f.bf in >out
	bytes_are out 'x\0y\nz\n'
	printf 'x\nx\0\nx\0z\ny\n\0y\n' >others
	run -1 bloom check f.bf others
	[ "$output" = "" ]
	bloom check -v f.bf others >out
	cmp out others
}

@test "-z ends lines with NUL, in and out, and newlines are data" {
	big_filter f.bf
	printf 'a\0b\0p\nq\0' >in
	bloom add -Nz f.bf in >out
	bytes_are out 'a\0b\0p\nq\0'
	bloom check -z f.bf in >out
	bytes_are out 'a\0b\0p\nq\0'
	# The key p\nq is neither p nor q.
	printf 'p\0q\0a\0' | bloom check -z f.bf >out
	bytes_are out 'a\0'
	printf 'p\0q\0a\0' | bloom check -zv f.bf >out
	bytes_are out 'p\0q\0'
	printf 'p\nq' | bloom check -c -z f.bf >out
	bytes_are out '1\n'
	# The same key either way: a\0 with -z is a\n without.
	printf 'a\nb\nc\n' | bloom check f.bf >out
	bytes_are out 'a\nb\n'
	# A last line without a NUL gets one.
	printf 'c\0tail' | bloom add -zN f.bf >out
	bytes_are out 'c\0tail\0'
}

@test "a 5 MB line and a 20 MB line, longer than the read buffer, are keys" {
	big_filter f.bf
	head -c 5000000 /dev/zero | tr '\0' a >five
	printf '\n' >>five
	bloom add -N f.bf five >out
	cmp out five
	bloom check f.bf five >out
	cmp out five
	run -0 bloom check -c f.bf five
	[ "$output" = 1 ]
	# Without its last byte it is another key.
	head -c 4999999 five | bloom check -c -v f.bf >out
	bytes_are out '1\n'

	# 20 MB with no newline at the end, from a pipe.
	head -c 20000000 /dev/zero | tr '\0' b >twenty
	cat twenty | bloom add -N f.bf >out
	printf '\n' >>twenty
	cmp out twenty
	bloom check f.bf <twenty >out
	cmp out twenty
	run -0 bloom check -c f.bf five twenty
	[ "$output" = $'five:1\ntwenty:1' ]
}

@test "300000 lines across many read boundaries are all found" {
	bloom create --seed 5 -n 300000 -p 0.001 f.bf
	# Lengths 2 to 157 bytes: about 24 MB, lines straddling every block.
	awk 'BEGIN {
		pad = sprintf("%160s", ""); gsub(/ /, "x", pad)
		for (i = 1; i <= 300000; i++)
			print i "-" substr(pad, 1, (i * 7) % 151)
	}' >in
	[ "$(wc -l <in)" -eq 300000 ]
	# From a pipe, reads are short and end anywhere in a line.
	cat in | bloom add f.bf
	run -0 bloom check -c f.bf in
	[ "$output" = 300000 ]
	run -1 bloom check -c -v f.bf in
	[ "$output" = 0 ]
	cat in | bloom check f.bf >out
	cmp out in
}

@test "binary lines round-trip: add, then check writes the input back" {
	big_filter f.bf
	# 1 MiB of fixed pseudo-random bytes, so a failure can be replayed.
	perl -e 'srand(1); print map { chr int rand 256 } 1 .. 1048576' >bin
	printf '\n' >>bin
	bloom add f.bf bin
	bloom check f.bf bin >out
	cmp out bin
	cat bin | bloom check f.bf >out
	cmp out bin
	run -1 bloom check -c -v f.bf bin
	[ "$output" = 0 ]
}

@test "add --new on binary lines writes each distinct line once" {
	big_filter f.bf
	perl -e 'srand(1); print map { chr int rand 256 } 1 .. 1048576' >bin
	printf '\n' >>bin
	# Random bytes repeat short lines (the empty one first): dedupe them
	# with perl, as awk may not keep NUL bytes.
	perl -ne 'print unless $seen{$_}++' bin >want
	[ "$(wc -l <want)" -lt "$(wc -l <bin)" ]
	bloom add -N f.bf bin >out
	cmp out want
	bloom add -N f.bf bin >out
	[ ! -s out ]
}

@test "binary lines round-trip with -z" {
	big_filter f.bf
	perl -e 'srand(2); print map { chr int rand 256 } 1 .. 1048576' >bin
	printf '\0' >>bin
	bloom add -z f.bf bin
	bloom check -z f.bf bin >out
	cmp out bin
}

@test "empty input: add writes nothing and exits 0, check exits 1" {
	big_filter f.bf
	: >empty
	run -0 bloom add f.bf empty
	[ "$output" = "" ]
	run -0 bloom add -N f.bf empty
	[ "$output" = "" ]
	run -0 bloom add -N f.bf </dev/null
	[ "$output" = "" ]
	run -1 bloom check f.bf empty
	[ "$output" = "" ]
	run -1 bloom check -v f.bf empty
	[ "$output" = "" ]
	run -1 bloom check -c f.bf empty
	[ "$output" = 0 ]
	run -1 bloom check -q f.bf </dev/null
	[ "$output" = "" ]
	run -1 bloom check -z f.bf </dev/null
	[ "$output" = "" ]
	[ "$(stats_field inserted f.bf)" = 0 ]
}
