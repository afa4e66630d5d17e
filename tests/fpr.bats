#!/usr/bin/env bats
# The statistical acceptance test: a filter filled to its capacity finds
# every key it holds, answers absent keys wrongly at close to its target
# rate, and estimates how many keys it holds.  Seeds are fixed, so each run
# gives the same numbers; three seeds per rate show no one seed is lucky.

bats_require_minimum_version 1.5.0
load helpers

n=200000

# The keys in the filter and the keys never added, once for the file.
setup_file() {
	keys "$n" in- >"$BATS_FILE_TMPDIR/present"
	keys "$n" out- >"$BATS_FILE_TMPDIR/absent"
}

# Succeeds if LOW <= X <= HIGH, all decimal numbers.
between() {
	awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x >= lo && x <= hi) }'
}

# Fills a filter for n keys at rate P with seed SEED and checks it:
# (a) no false negative, (b) measured false-positive rate within 0.5 and
# 1.25 times P, (c) stats --json estimated_items within 3% of n.
fill_and_measure() {
	local p=$1 seed=$2 found fp est

	rm -f f.bf
	bloom create --seed "$seed" -n "$n" -p "$p" f.bf
	bloom add f.bf "$BATS_FILE_TMPDIR/present"

	run -0 bloom check -c f.bf "$BATS_FILE_TMPDIR/present"
	found=$output
	run -0 bloom check -c f.bf "$BATS_FILE_TMPDIR/absent"
	fp=$output
	run -0 bloom stats --json f.bf
	est=$(printf '%s\n' "$output" |
		sed -n 's/.*"estimated_items":\([0-9]*\).*/\1/p')

	echo "p $p, seed $seed: found $found of $n;" \
		"false positives $fp of $n (rate $(awk -v fp="$fp" -v n="$n" \
		'BEGIN { printf "%.6f", fp / n }'));" \
		"estimated items $est"
	[ "$found" -eq "$n" ]
	between "$fp" "$(awk -v p="$p" -v n="$n" 'BEGIN { print 0.5 * p * n }')" \
		"$(awk -v p="$p" -v n="$n" 'BEGIN { print 1.25 * p * n }')"
	between "$est" "$(awk -v n="$n" 'BEGIN { print 0.97 * n }')" \
		"$(awk -v n="$n" 'BEGIN { print 1.03 * n }')"
}

@test "at p = 0.01, 200000 keys: no false negative, fpr and items on target" {
	fill_and_measure 0.01 1
	fill_and_measure 0.01 2
	fill_and_measure 0.01 0x9e3779b97f4a7c15
}

@test "at p = 0.001, 200000 keys: no false negative, fpr and items on target" {
	fill_and_measure 0.001 1
	fill_and_measure 0.001 2
	fill_and_measure 0.001 0x9e3779b97f4a7c15
}
