#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# The statistical acceptance test: a filter filled to its capacity finds
# every key it holds, answers absent keys wrongly at close to its target
# rate, and estimates how many keys it holds; pooled over many seeds and
# queries, its rate is the exact expectation of params.c and within the
# target.  Seeds are fixed, so each run gives the same numbers; several
# seeds per rate show no one seed is lucky.

bats_require_minimum_version 1.5.0
load helpers

n=200000

# The pooled measurement: a filter of big_n keys for each seed, asked
# big_absent keys it never saw.  At 1 % the standard error of the pooled
# rate is 0.0013 % (see pooled), so 1.00 % and 1.01 % are 7.8 apart.
big_n=2000000
big_absent=4000000
seeds="1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16"

# The keys in the filter and the keys never added, once for the file.
setup_file() {
	keys "$big_n" in- >"$BATS_FILE_TMPDIR/present-big"
	keys "$big_absent" out- >"$BATS_FILE_TMPDIR/absent-big"
	head -n "$n" "$BATS_FILE_TMPDIR/present-big" >"$BATS_FILE_TMPDIR/present"
	head -n "$n" "$BATS_FILE_TMPDIR/absent-big" >"$BATS_FILE_TMPDIR/absent"
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

# The exact expected rate of a filter of n keys in blocks blocks with k
# hashes, and how much it varies between filters, written apart from
# params.c.  The distribution of X_j, the cells of 512 that j uniform balls
# occupy, is followed ball by ball.  A block of i keys answers an absent
# key wrongly with probability r = (X_{k i} / 512)^k, and it holds
# i ~ Poisson(lambda = n / blocks) keys: the expected rate is m1 = E[r].
# The rate of one filter is the mean of r over its blocks; as the counts
# of its blocks add up to n, the part of r that follows i linearly cancels
# out, and that mean has variance (Var r - Cov(r, i)^2 / lambda) / blocks
# (the Poisson variance, Var r / blocks, is 7 times as large at 1 %).
# Prints m1 and that variance.
moments_py='
import math, sys
n, blocks, k = map(int, sys.argv[1:])
lam = n / blocks
top = int(lam + 20 * math.sqrt(lam) + 50)
occupied = [1.0] + [0.0] * 512
m1 = m2 = m1i = 0.0
for balls in range(1, k * top + 1):
    occupied = [0.0] + [occupied[x] * x / 512 + occupied[x - 1] * (513 - x) / 512
                        for x in range(1, 513)]
    if balls % k == 0:
        i = balls // k
        weight = math.exp(i * math.log(lam) - lam - math.lgamma(i + 1))
        for x, q in enumerate(occupied):
            r = (x / 512) ** k
            m1 += weight * q * r
            m2 += weight * q * r * r
            m1i += weight * q * r * i
cov = m1i - m1 * lam
print(m1, (m2 - m1 * m1 - cov * cov / lam) / blocks)
'

# pooled P: for each seed, fills a filter of big_n keys at rate P and
# counts the false positives among the big_absent keys; then checks that
# (a) the exact expected rate is at most P, and (b) the pooled rate is
# within 3 standard errors of it and at most P + 3 standard errors.  The
# standard error counts the queries (binomial given the filter) and the
# filters (one per seed, each with its own rate around the expectation).
pooled() {
	local p=$1 seed fp total=0 nseeds=0 blocks hashes

	for seed in $seeds; do
		nseeds=$((nseeds + 1))
		rm -f f.bf
		bloom create --seed "$seed" -n "$big_n" -p "$p" f.bf
		bloom add f.bf "$BATS_FILE_TMPDIR/present-big"
		run -0 bloom check -c f.bf "$BATS_FILE_TMPDIR/absent-big"
		fp=$output
		total=$((total + fp))
		echo "p $p, seed $seed: $fp false positives of $big_absent" \
			"(this filter's rate from its fill:" \
			"$(stats_field estimated_fpr f.bf))"
	done
	blocks=$(( $(stats_field bits f.bf) / 512 ))
	hashes=$(stats_field hashes f.bf)
	run -0 python3 -c "$moments_py" "$big_n" "$blocks" "$hashes"
	echo "$output"
	awk -v p="$p" -v total="$total" -v queries="$big_absent" \
	    -v seeds="$nseeds" -v blocks="$blocks" -v hashes="$hashes" \
	    -v moments="$output" '
	BEGIN {
		split(moments, m, " ")
		expected = m[1]
		q = queries * seeds
		rate = total / q
		se = sqrt(expected * (1 - expected) / q + m[2] / seeds)
		printf "p %s, %d blocks, %d hashes: expected %.6f %%, " \
		    "measured %d / %d = %.6f %%, standard error %.6f %%, " \
		    "%+.2f standard errors\n", p, blocks, hashes,
		    100 * expected, total, q, 100 * rate, 100 * se,
		    (rate - expected) / se
		exit !(expected <= p && rate - expected <= 3 * se &&
		    expected - rate <= 3 * se && rate <= p + 3 * se)
	}'
}

@test "at p = 0.01, 16 x 2 M keys, 64 M absent: the exact rate, within p" {
	pooled 0.01
}

@test "at p = 0.001, 16 x 2 M keys, 64 M absent: the exact rate, within p" {
	pooled 0.001
}
