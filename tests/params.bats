#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Tests of the sizing bloom create chooses, against an independent python3
# implementation of the false-positive rate of a blocked filter:
#
#	FPR(n, B, k) = sum_i Pois(i; n / B) * E[(X_{k i} / 512)^k]
#
# where X_j is the number of the 512 cells of a block that j balls thrown
# uniformly occupy, and against the table in the comment at the top of
# params.c.  params.c gets the distribution of X_j by a recurrence over the
# balls; the python here conditions instead on the number d of distinct
# cells the k query positions fall in (Stirling numbers) and on the chance
# that d given cells all have a ball, and a test checks it against exact
# rational arithmetic.

bats_require_minimum_version 1.5.0
load helpers

# The rate of n keys in B blocks of 512 bits with k bits per key.  The sum
# runs over every i that can weigh anything, with the Poisson weight in
# logs so that large i do not overflow.  The cells per d are tracked ball by
# ball and kept between calls, since one call needs them for every j.
fpr_py='
import json, math, sys
from fractions import Fraction

CELLS = 512
KMAX = 32

# S[a][d], Stirling numbers of the second kind: the ways to split a
# labelled query positions into d nonempty groups, those sharing a cell.
S = [[0] * (KMAX + 1) for _ in range(KMAX + 1)]
S[0][0] = 1
for a in range(1, KMAX + 1):
    for d in range(1, a + 1):
        S[a][d] = d * S[a - 1][d] + S[a - 1][d - 1]

# distinct[k][d]: the probability that k uniform positions fall in exactly
# d distinct cells, S(k, d) 512 (512 - 1) ... (512 - d + 1) / 512^k.
distinct = [[float(Fraction(S[k][d] * math.perm(CELLS, d), CELLS ** k))
             for d in range(k + 1)] for k in range(KMAX + 1)]

# chain[d][c]: the probability that c of d given cells have a ball, after
# the balls thrown so far; covered[d][j]: that all d have one after j.
chain = [[1.0] + [0.0] * d for d in range(KMAX + 1)]
covered = [[1.0 if d == 0 else 0.0] for d in range(KMAX + 1)]

def throw_until(balls):
    while len(covered[1]) <= balls:
        for d in range(KMAX + 1):
            s = chain[d]
            # A ball lands in one of the d - c empty ones w.p. (d - c) / 512.
            s = [s[0] * (CELLS - d) / CELLS] + [
                s[c] * (CELLS - d + c) / CELLS + s[c - 1] * (d - c + 1) / CELLS
                for c in range(1, d + 1)]
            chain[d] = s
            covered[d].append(s[d])

# The rate in a block of i keys: the k query positions fall in d distinct
# cells, all of which must have one of the k i balls.
def block_rate(k, i):
    throw_until(k * i)
    return sum(distinct[k][d] * covered[d][k * i] for d in range(1, k + 1))

def fpr(n, blocks, k):
    lam = n / blocks
    top = int(lam + 20 * math.sqrt(lam) + 50)
    total = 0.0
    for i in range(1, top + 1):
        weight = math.exp(i * math.log(lam) - lam - math.lgamma(i + 1))
        total += weight * block_rate(k, i)
    return total

def stats(path):
    return json.load(open(path))
'

# py PROGRAM ARGS...: runs the python3 PROGRAM with fpr(), block_rate() and
# stats() defined and ARGS in sys.argv[1:].
py() {
	python3 -c "$fpr_py$1" "${@:2}"
}

# Makes f.bf with bloom create ARGS... and writes its stats to f.json.
made_with() {
	bloom create --seed 1 "$@" f.bf
	bloom stats --json f.bf >f.json
}

# table_row P CLASSIC_BPK CLASSIC_K BLOCKED_BPK BLOCKED_K RATE: one row of the
# table in params.c, for n = 1e6 and target P.  Checks that
#  - the classic m = -n ln p / (ln 2)^2 and k = round(m / n ln 2) are
#    CLASSIC_BPK bits per key (two decimals) and CLASSIC_K;
#  - bloom create -n 1000000 -p P chooses BLOCKED_BPK bits per key and
#    BLOCKED_K hashes, and no fewer bits than the classic m;
#  - a blocked filter of the classic size, with the classic k, has the
#    rate RATE (three significant digits).
table_row() {
	made_with -n 1000000 -p "$1"
	py '
p, classic_bpk, classic_k, blocked_bpk, blocked_k, rate = sys.argv[1:]
p = float(p)
n = 10**6
d = stats("f.json")
m = -n * math.log(p) / math.log(2) ** 2
k = round(m / n * math.log(2))
assert "%.2f" % (m / n) == classic_bpk, ("classic bits per key", m / n)
assert k == int(classic_k), ("classic k", k)
assert "%.2f" % (d["bits"] / n) == blocked_bpk, ("bits per key", d["bits"] / n)
assert d["hashes"] == int(blocked_k), ("hashes", d["hashes"])
assert d["bits"] >= m, ("fewer bits than the classic size", d["bits"], m)
at_classic = fpr(n, m / 512, k)
assert float("%.3g" % at_classic) == float(rate), ("rate at classic size", at_classic)
assert d["capacity"] == n and d["target_fpr"] == p
' "$@"
}

@test "params.c table: p=0.1"		{ table_row 0.1	4.79 3	4.84 3	0.102; }
@test "params.c table: p=0.01"		{ table_row 0.01	9.59 7	9.92 6	0.0117; }
@test "params.c table: p=0.001"		{ table_row 0.001	14.38 10 15.55 9 0.00164; }
@test "params.c table: p=0.0001"	{ table_row 0.0001	19.17 13 22.03 12 0.000291; }
@test "params.c table: p=1e-6"		{ table_row 1e-6	28.76 20 38.82 16 0.0000209; }

# fewest P [-k K]: bloom create -n 1000000 -p P picks a size that meets P
# with the k it chose, and one block fewer meets P with no k from 1 to 32
# (or, with -k, with that k).
fewest() {
	local p=$1

	shift
	made_with -n 1000000 -p "$p" "$@"
	py '
p = float(sys.argv[1])
fixed = len(sys.argv) > 2
n = 10**6
d = stats("f.json")
blocks, k = d["bits"] // 512, d["hashes"]
assert d["bits"] % 512 == 0
at = fpr(n, blocks, k)
assert at <= p, ("chosen size misses the target", at, p)
ks = [k] if fixed else range(1, 33)
for kk in ks:
    under = fpr(n, blocks - 1, kk)
    assert under > p, ("one block fewer meets the target", kk, under, p)
' "$p" "$@"
}

@test "the size for p=0.1 is the fewest blocks that meet it"	{ fewest 0.1; }
@test "the size for p=0.01 is the fewest blocks that meet it"	{ fewest 0.01; }
@test "the size for p=0.001 is the fewest blocks that meet it"	{ fewest 0.001; }
@test "the size for p=0.0001 is the fewest blocks that meet it"	{ fewest 0.0001; }
@test "the size for p=0.01 -k 3 is the fewest blocks for 3 hashes" {
	fewest 0.01 -k 3
	[ "$(py 'print(stats("f.json")["hashes"])')" -eq 3 ]
}
@test "the size for p=0.01 -k 20 is the fewest blocks for 20 hashes" {
	fewest 0.01 -k 20
	[ "$(py 'print(stats("f.json")["hashes"])')" -eq 20 ]
}

@test "create -s -p derives the most items that meet the rate" {
	made_with -s 1M -p 0.001
	py '
d = stats("f.json")
blocks, k, n, p = d["bits"] // 512, d["hashes"], d["capacity"], 0.001
assert blocks == 16384
assert d["target_fpr"] == p
assert fpr(n, blocks, k) <= p, ("capacity misses the rate", fpr(n, blocks, k))
for kk in range(1, 33):
    assert fpr(n + 1, blocks, kk) > p, ("one more item still fits", kk)
'
}

@test "create -s -n derives the best rate over every k" {
	made_with -s 64K -n 10000
	py '
d = stats("f.json")
blocks, n = d["bits"] // 512, 10000
assert blocks == 1024 and d["capacity"] == n
rates = {kk: fpr(n, blocks, kk) for kk in range(1, 33)}
best = min(rates, key=rates.get)
assert d["hashes"] == best, (d["hashes"], best)
assert math.isclose(d["target_fpr"], rates[best], rel_tol=1e-5), (d["target_fpr"], rates[best])
'
}

@test "create -s -n -k derives the rate for that k" {
	made_with -s 64K -n 10000 -k 4
	py '
d = stats("f.json")
assert d["hashes"] == 4
assert math.isclose(d["target_fpr"], fpr(10000, 1024, 4), rel_tol=1e-5)
'
}

@test "the python block rate is exact: against rational arithmetic" {
	# P(X_j = x) = C(512, x) x! S(j, x) / 512^j, with S the Stirling
	# numbers of the second kind, gives E[(X_j / 512)^k] as a fraction.
	py '
def stirling_row(j):
    row = [1]
    for _ in range(j):
        row = [0] + [x * row[x] + row[x - 1] for x in range(1, len(row))] + [row[-1]]
    return row

for k, i in [(1, 1), (1, 40), (2, 7), (3, 20), (6, 10), (7, 1), (16, 3), (32, 1), (32, 2)]:
    j = k * i
    row = stirling_row(j)
    exact = sum(Fraction(math.perm(CELLS, x) * row[x], CELLS ** j) *
                Fraction(x, CELLS) ** k for x in range(len(row)))
    got = block_rate(k, i)
    assert math.isclose(got, float(exact), rel_tol=1e-12), (k, i, got, float(exact))
'
}

@test "the mean-fill formula understates the rate: 1e6 keys at 1 %" {
	# 19328 blocks and k = 6 are what the mean fill, raised to the k-th
	# power, chose for 1e6 keys at 1 %; the rate there is really 1.0092 %.
	py '
n, blocks, k = 10**6, 19328, 6
lam = n / blocks
mean_fill = sum(math.exp(i * math.log(lam) - lam - math.lgamma(i + 1)) *
                (1 - (1 - 1 / CELLS) ** (k * i)) ** k for i in range(1, 400))
assert mean_fill <= 0.01, mean_fill
assert "%.5g" % fpr(n, blocks, k) == "0.010092", fpr(n, blocks, k)
'
}

# rate_matches SIZE N K: the rate bloom create -s SIZE -n N -k K derives is
# the python one, to the six digits that stats prints.
rate_matches() {
	made_with -s "$1" -n "$2" -k "$3"
	py '
size, n, k = map(int, sys.argv[1:])
d = stats("f.json")
want = fpr(n, d["bits"] // 512, k)
print("bloom", d["target_fpr"], "python", want)
assert d["hashes"] == k
assert math.isclose(d["target_fpr"], want, rel_tol=1e-5), (d["target_fpr"], want)
' "$1" "$2" "$3"
}

@test "create -s -n -k: the rate of 100 keys in 1024 blocks, k=32" { rate_matches 65536 100 32; }
@test "create -s -n -k: the rate of 2000 keys in 1024 blocks, k=16" { rate_matches 65536 2000 16; }
@test "create -s -n -k: the rate of 30000 keys in 1024 blocks, k=1" { rate_matches 65536 30000 1; }
@test "create -s -n -k: the rate of 60000 keys in 1024 blocks, k=2" { rate_matches 65536 60000 2; }
@test "create -s -n -k: the rate of 100000 keys in 1024 blocks, k=1" { rate_matches 65536 100000 1; }

# Builds ./driver from params.c: `driver N BLOCKS K` prints params_fpr and
# `driver TOTAL PARTS` params_split_fpr, to 17 digits.  It reaches what
# bloom create cannot: rates near 1, and the split of a rate.
build_driver() {
	"${CC:-cc}" -std=c11 -D_GNU_SOURCE -I"$root" -o driver -x c - \
	    "$root/params.c" -lm <<'EOF_C'
#include <stdio.h>
#include <stdlib.h>

#include "params.h"

int
main(int argc, char **argv)
{
	if (argc == 4)
		printf("%.17g\n", params_fpr(strtoull(argv[1], NULL, 10),
		    strtoull(argv[2], NULL, 10),
		    (unsigned)strtoul(argv[3], NULL, 10)));
	else if (argc == 3)
		printf("%.17g\n", params_split_fpr(strtod(argv[1], NULL),
		    (unsigned)strtoul(argv[2], NULL, 10)));
	else
		return 2;
	return 0;
}
EOF_C
}

@test "params_fpr agrees with the python from light loads to full blocks" {
	build_driver
	py '
import subprocess
for n, blocks, k in [(1, 10**6, 32), (10**6, 19372, 6), (1024000, 1024, 1),
                     (300000, 1024, 20), (2048000, 1024, 4),
                     (21000000, 1024, 1), (30000000, 1024, 1)]:
    got = float(subprocess.run(["./driver", str(n), str(blocks), str(k)],
                capture_output=True, check=True, text=True).stdout)
    want = min(fpr(n, blocks, k), 1.0)
    print(n, blocks, k, "params.c", got, "python", want)
    # With tens of thousands of keys per block the Poisson weights, taken
    # from logs near 3e5, carry relative errors near 1e-11 on both sides.
    assert math.isclose(got, want, rel_tol=1e-10), (n, blocks, k, got, want)
'
}

@test "params_split_fpr: G parts at the rate it gives make the total" {
	build_driver
	py '
import subprocess
for total in [0.5, 0.01, 1e-6, 1e-300]:
    for parts in [1, 2, 7, 64]:
        got = float(subprocess.run(["./driver", repr(total), str(parts)],
                    capture_output=True, check=True, text=True).stdout)
        back = -math.expm1(parts * math.log1p(-got))
        print(total, parts, got, back)
        assert math.isclose(back, total, rel_tol=1e-14), (total, parts, got)
        assert got <= total and got >= total / parts
'
	[ "$(./driver 0 5)" = 0 ]
	[ "$(./driver 1 5)" = 1 ]
}
