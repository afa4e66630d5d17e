#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# add -f and check -f: the key is some fields of the line, as cut(1)
# selects them; the whole line is what is written.  And add --dups.

bats_require_minimum_version 1.5.0

load helpers

# Writes N CSV lines whose second field repeats: id,user-K,payload.
csv() {
	awk -v n="$1" 'BEGIN { srand(7); for (i = 1; i <= n; i++)
		printf "%d,user-%d,%d\n", i, int(rand() * n / 4), int(rand() * 1000) }'
}

@test "add -f 2 -d , --new matches awk -F, '!seen[\$2]++' on generated CSV" {
	csv 20000 >in.csv
	awk -F, '!seen[$2]++' in.csv >want
	big_filter f.bf
	bloom add -f 2 -d , --new f.bf <in.csv >got
	[ "$(wc -l <want)" -gt 4000 ]
	cmp want got
}

@test "add -f 2 -d , --new at 1 %: a subsequence of awk's, short by at most the rate" {
	csv 20000 >in.csv
	awk -F, '!seen[$2]++' in.csv >want
	bloom create --seed 1 -n 20000 -p 0.01 f.bf
	bloom add -f 2 -d , --new f.bf <in.csv >got
	# Every line written is one awk writes, in the same order.
	python3 - want got <<'PY'
import sys
want = open(sys.argv[1]).read().splitlines()
got = open(sys.argv[2]).read().splitlines()
it = iter(want)
assert all(line in it for line in got), "not a subsequence"
lost = len(want) - len(got)
print(len(want), len(got), lost)
assert lost <= 0.01 * len(want), lost
PY
}

@test "add -D writes every repeat, as awk -F, 'seen[\$2]++'" {
	csv 20000 >in.csv
	awk -F, 'seen[$2]++' in.csv >want
	big_filter f.bf
	bloom add -f 2 -d , -D f.bf <in.csv >got
	cmp want got
}

@test "add --dups on whole lines writes every repeat but not the first (uniq -D would)" {
	printf 'a\nb\na\nc\na\nb\n' >in
	big_filter f.bf
	run bloom add --dups f.bf in
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'a\na\nb')" ]
}

@test "add --new and --dups together is a usage error" {
	run --separate-stderr bloom add --new --dups f.bf
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "bloom: add: --new and --dups do not go together" ]
	[ ! -e f.bf ]
}

@test "the key is the selected fields joined by the separator; the line is written" {
	big_filter f.bf
	printf 'x\ty\tz\n' | bloom add -f 1,3 f.bf
	# The same fields 1 and 3 with another field 2 are the same key.
	row 0 "$(printf 'a\tb\tc')" "" check -v -f 1,3 f.bf \
		<(printf 'a\tb\tc\nx\tQ\tz\n')
	row 0 "$(printf 'x\tQ\tz')" "" check -f 1,3 f.bf <(printf 'a\tb\tc\nx\tQ\tz\n')
	# As a whole line, "x<TAB>z" is that key.
	row 0 "$(printf 'x\tz')" "" check f.bf <(printf 'x\tz\n')
}

@test "missing fields are empty: a line with fewer fields has empty ones" {
	big_filter f.bf
	printf 'a,b\n' | bloom add -f 1,3 -d , f.bf
	# "a,b" and "a,b," have the key "a," (field 3 empty); "a", without
	# the separator, is its own key, as cut prints it.
	row 0 "$(printf 'a,b\na,b,')" "" check -f 1,3 -d , f.bf \
		<(printf 'a\na,b\na,b,\na,b,c\n')
	row 0 "$(printf 'a\na,b,c')" "" check -v -f 1,3 -d , f.bf <(printf 'a\na,b\na,b,\na,b,c\n')
	# A line with an empty second field has the empty key for -f 2.
	printf '' | bloom add -f 2 -d , f.bf </dev/null
	printf 'x,\n' | bloom add -f 2 -d , f.bf
	row 0 "$(printf 'y,\n,')" "" check -f 2 -d , f.bf <(printf 'lonely\ny,\n,\n')
}

# ---- A line without the separator (issue 38): the whole line is its one
# field, as cut prints it, and an input none of whose lines holds the
# separator is warned of once, naming it.

@test "issue 38: add -f 2 without -d on CSV keeps every line and says why" {
	run --separate-stderr bloom add -f 2 --new x.bf < <(printf 'id,url\n1,a\n2,b\n')
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'id,url\n1,a\n2,b')" ]
	[ "${stderr_lines[1]}" = "bloom: (standard input): no line holds the separator (TAB) of -f: each whole line was its key, as cut(1) takes it; -d sets the separator" ]
	[ "${#stderr_lines[@]}" -eq 2 ]
}

@test "the key of a line without the separator is the whole line, as cut -f prints it" {
	# Lines with and without the separator, keys repeating across both.
	awk 'BEGIN { srand(5); for (i = 0; i < 5000; i++) {
		k = int(rand() * 800)
		if (rand() < 0.5) printf "%d,k%d,x\n", i, k
		else printf "k%d\n", k } }' >in
	for list in 2 1,3 2- -2; do
		cut -d , -f "$list" in | paste -d '\t' - in |
			awk -F '\t' '!seen[$1]++ { print $2 }' >want
		rm -f f.bf
		big_filter f.bf
		run -0 --separate-stderr bloom add -f "$list" -d , --new f.bf in
		echo "-f $list: $(wc -l <want) lines want, ${#lines[@]} got"
		[ "$stderr" = "" ]
		[ "$output" = "$(cat want)" ]
	done
}

@test "no line holding the separator is warned of once for each such input, by name" {
	big_filter f.bf
	printf 'a b\nc d\n' >spaces
	printf 'a,b\nc d\n' >mixed
	: >empty
	printf 'e f\n' >more
	run --separate-stderr bloom add -f 1 -d , f.bf spaces mixed empty more
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	[ "$stderr" = "bloom: spaces: no line holds the separator (',') of -f: each whole line was its key, as cut(1) takes it; -d sets the separator
bloom: more: no line holds the separator (',') of -f: each whole line was its key, as cut(1) takes it; -d sets the separator" ]
	# check says the same, and its answer stands.
	run --separate-stderr bloom check -c -f 2 -d "'" f.bf spaces
	[ "$status" -eq 0 ]
	[ "$output" = 2 ]
	[ "$stderr" = "bloom: spaces: no line holds the separator (''') of -f: each whole line was its key, as cut(1) takes it; -d sets the separator" ]
	# With the separator the key is the field: "a b" and "c d" hold ' '
	# and "b" and "d" were never added.
	run --separate-stderr bloom check -c -f 2 -d ' ' f.bf spaces
	[ "$status" -eq 1 ]
	[ "$output" = 0 ]
	[ "$stderr" = "" ]
	# check -q stops at the first line it selects, before the end: no
	# warning.  A byte that is not printable is shown escaped.
	run --separate-stderr bloom check -q -f 1 -d $'\x01' f.bf spaces
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	run --separate-stderr bloom check -f 1 -d $'\x01' f.bf more
	[ "$status" -eq 0 ]
	[ "$output" = "e f" ]
	[ "$stderr" = "bloom: more: no line holds the separator ('\x01') of -f: each whole line was its key, as cut(1) takes it; -d sets the separator" ]
}

@test "no warning on a large input whose separator comes late, through the reader thread" {
	bloom create -n 1M -p 1e-6 f.bf
	{ seq 1 200000; echo 'late,key'; } >in
	[ "$(wc -c <in)" -gt 1000000 ]
	run -0 --separate-stderr bloom add -f 2 -d , f.bf in
	[ "$stderr" = "" ]
	seq 1 200000 >none
	run -0 --separate-stderr bloom add -f 2 -d , f.bf none
	[ "$stderr" = "bloom: none: no line holds the separator (',') of -f: each whole line was its key, as cut(1) takes it; -d sets the separator" ]
}

# Writes lines of which about half hold the separator ','; keys repeat
# across both kinds, and a line without it is a key no field list makes.
mixed() {
	awk 'BEGIN { srand(11); for (i = 0; i < 6000; i++) {
		k = int(rand() * 900)
		if (rand() < 0.5) printf "%d,k%d,x%d\n", i, k, i % 7
		else printf "k%d\n", k } }'
}

# Writes the lines cut -s -d , -f LIST keeps, each after its key and a tab.
cut_keyed() {
	paste -d '\t' <(cut -s -d , -f "$1" "$2") <(awk 'index($0, ",")' "$2")
}

@test "issue 38: add -s -f --new writes cut -s's lines, the first of each key; no other line" {
	mixed >in
	for list in 2 1,3 2- -2; do
		cut_keyed "$list" in | awk -F '\t' '!seen[$1]++ { print $2 }' >want
		rm -f f.bf
		big_filter f.bf
		run -0 --separate-stderr bloom add -s -f "$list" -d , --new f.bf in
		echo "-f $list: $(wc -l <want) lines want, ${#lines[@]} got"
		[ "$stderr" = "" ]
		[ "$output" = "$(cat want)" ]
		# The same in sorted batches.
		rm -f f.bf
		big_filter f.bf
		run -0 --separate-stderr bloom add --only-delimited -f "$list" \
		    -d , --new --memory 4K f.bf in
		[ "$output" = "$(cat want)" ]
		# --dups: the repeats among cut -s's lines only.
		cut_keyed "$list" in | awk -F '\t' 'seen[$1]++ { print $2 }' >want
		rm -f f.bf
		big_filter f.bf
		run -0 --separate-stderr bloom add -s -f "$list" -d , -D f.bf in
		[ "$output" = "$(cat want)" ]
	done
}

@test "issue 38: add -s -f adds no key of a line without the separator" {
	mixed >in
	big_filter f.bf
	run -0 --separate-stderr bloom add -s -f 2 -d , f.bf in
	[ "$stderr" = "" ]
	# Every key cut -s makes is in; the whole lines without ',' (keys
	# k0..k899 that some fields also are) only as those fields.
	cut -s -d , -f 2 in >keys
	run -0 bloom check -c f.bf keys
	[ "$output" = "$(wc -l <keys)" ]
	awk '!index($0, ",")' in | sort -u >whole
	comm -23 whole <(sort -u keys) >never
	[ -s never ]
	run -1 bloom check -c f.bf never
	[ "$output" = 0 ]
}

@test "issue 38: check -s -f selects, counts and inverts only cut -s's lines" {
	mixed >in
	big_filter f.bf
	# Keys of every third line of cut -s's.  Each line without ',' is
	# such a key or not: without -s, check or check -v would select it.
	cut -s -d , -f 2 in | awk 'NR % 3 == 0' | bloom add f.bf
	cut -s -d , -f 2 in | awk 'NR % 3 == 0' | sort -u >held
	cut_keyed 2 in | awk -F '\t' 'NR == FNR { held[$0]; next }
		($1 in held) { print $2 }' held - >want
	cut_keyed 2 in | awk -F '\t' 'NR == FNR { held[$0]; next }
		!($1 in held) { print $2 }' held - >want_v
	[ -s want ] && [ -s want_v ]
	for memory in "" "--memory 4K"; do
		run -0 --separate-stderr bloom check $memory -s -f 2 -d , f.bf in
		[ "$stderr" = "" ]
		[ "$output" = "$(cat want)" ]
		run -0 --separate-stderr bloom check $memory -v -s -f 2 -d , f.bf in
		[ "$output" = "$(cat want_v)" ]
		run -0 --separate-stderr bloom check $memory -c -s -f 2 -d , f.bf in
		[ "$output" = "$(wc -l <want)" ]
		run -0 --separate-stderr bloom check $memory -c -v -s -f 2 -d , f.bf in
		[ "$output" = "$(wc -l <want_v)" ]
	done
	# Without -s, each line without ',' is its own key.
	awk '!index($0, ",")' in >plain
	awk 'NR == FNR { held[$0]; next } ($0 in held)' held plain >plain_held
	[ -s plain_held ] && [ "$(wc -l <plain_held)" -lt "$(wc -l <plain)" ]
	run -0 bloom check -c -f 2 -d , f.bf in
	[ "$output" = "$(( $(wc -l <want) + $(wc -l <plain_held) ))" ]
	# Lines without the separator only: none selected, with -v neither;
	# exit 1, and the warning says they were skipped.
	for flags in -c "-c -v"; do
		run -1 --separate-stderr bloom check $flags -s -f 2 -d , f.bf plain
		[ "$output" = 0 ]
		[ "$stderr" = "bloom: plain: no line holds the separator (',') of -f: -s skipped every line; -d sets the separator" ]
	done
	run -1 --separate-stderr bloom check -v -s -f 2 -d , f.bf plain
	[ "$output" = "" ]
}

@test "issue 38: route -f routes by the key; -s routes only cut -s's lines" {
	mixed >in
	bloom create --seed 9 -n 100000 --slices 4 --slice 0/4 s.bf
	# A line goes where its key alone would.
	awk 'index($0, ",")' in >delimited
	paste -d '\t' <(cut -d , -f 2 delimited | bloom route s.bf | cut -f 1) \
	    delimited >want
	run -0 --separate-stderr bloom route -f 2 -d , s.bf delimited
	[ "$stderr" = "" ]
	[ "$output" = "$(cat want)" ]
	# -s: the lines without ',' are written nowhere.
	run -0 --separate-stderr bloom route -s -f 2 -d , s.bf in
	[ "$stderr" = "" ]
	[ "$output" = "$(cat want)" ]
	run -0 bloom route --only-delimited -f 2 -d , --slices 4 -o part. s.bf in
	cat part.0 part.1 part.2 part.3 | sort >got
	[ "$(cut -f 2 want | sort)" = "$(cat got)" ]
	# Without -s, a line without ',' is routed as its whole line.
	run -0 bloom route -f 2 -d , s.bf in
	[ "$output" = "$(paste -d '\t' <(cut -d , -f 2 in | bloom route s.bf |
	    cut -f 1) in)" ]
	# Slices filled through route -f -s answer for every key.
	for n in 1 2 3; do bloom create --like s.bf --slice "$n/4" "s$n.bf"; done
	cp s.bf s0.bf
	for n in 0 1 2 3; do bloom add -f 2 -d , "s$n.bf" "part.$n"; done
}

@test "-s needs -f, for add, check and route" {
	for cmd in add check route; do
		run --separate-stderr bloom "$cmd" -s f.bf
		[ "$status" -eq 2 ]
		[ "${stderr_lines[0]}" = "bloom: $cmd: -s needs -f" ]
		run --separate-stderr bloom "$cmd" --only-delimited f.bf
		[ "$status" -eq 2 ]
		[ "${stderr_lines[0]}" = "bloom: $cmd: -s needs -f" ]
	done
	run --separate-stderr bloom route -d , f.bf
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "bloom: route: -d needs -f" ]
}

@test "ranges: -f 2- is field 2 to the last, -f -2 fields 1 and 2" {
	big_filter f.bf
	printf 'b,c,d\n' | bloom add -f 1- -d , f.bf
	row 0 "1,b,c,d" "" check -f 2- -d , f.bf <(printf '1,b,c,d\n2,b,c\n')
	printf '1,2\n' | bloom add -d , -f 1- f.bf
	row 0 "1,2,3,4" "" check -f -2 -d , f.bf <(printf '1,2,3,4\n1,3,3\n')
	# Order and repeats in the list do not matter, as in cut.
	row 0 "1,2,3,4" "" check -f 2,1,2 -d , f.bf <(printf '1,2,3,4\n')
}

@test "fields work with -z, -c and -q" {
	big_filter f.bf
	printf 'k1 a\0k2 b\0k1 c\0' | bloom add -z -f 1 -d ' ' --new f.bf >got
	[ "$(tr '\0' '\n' <got)" = "$(printf 'k1 a\nk2 b')" ]
	row 0 "2" "" check -c -f 1 -d ' ' f.bf <(printf 'k1 x\nk3 y\nk2 z\n')
	row 0 "" "" check -q -f 1 -d ' ' f.bf <(printf 'k3 y\nk2 z\n')
	row 1 "" "" check -q -f 1 -d ' ' f.bf <(printf 'k3 y\n')
}

@test "fields on a large input go through the reader thread the same" {
	csv 300000 >in.csv
	[ "$(wc -c <in.csv)" -gt 2000000 ]
	awk -F, '!seen[$2]++' in.csv >want
	bloom create --seed 3 -n 200000 -p 1e-7 f.bf
	bloom add -f 2 -d , --new f.bf <in.csv >got
	cmp want got
	bloom check -c -f 2 -d , f.bf in.csv >count
	[ "$(cat count)" -eq 300000 ]
}

@test "bad field lists and separators are usage errors" {
	for list in 0 '' - 1-0 3-2 a 1,,2 1, 1048577 2x; do
		run --separate-stderr bloom check -f "$list" f.bf
		echo "list '$list': $status $stderr"
		[ "$status" -eq 2 ]
		[[ "${stderr_lines[0]}" == "bloom: check: -f takes a list of fields"*"not '$list'" ]]
	done
	row 2 "" "$(printf '%s\n%s\n%s\n%s' "bloom: add: -d takes one byte, not ',,'" \
		"usage: bloom add [-D | -N] [-z] [-f list [-d delim] [-s]] [-n capacity]" \
		"                 [-p fpr] [--memory size] [--no-create] [--pass-over]" \
		"                 [--progress] [--sync] filter [file ...]")" add -f 1 -d ,, f.bf
	run --separate-stderr bloom check -d , f.bf
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "bloom: check: -d needs -f" ]
}
