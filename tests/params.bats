#!/usr/bin/env bats
# Tests of the sizing bloom create chooses, against an independent python3
# implementation of the false-positive rate of a blocked filter (the
# Poisson mixture of params.c):
#
#	FPR(n, B, k) = sum_i Pois(i; n / B) * (1 - (1 - 1/512)^(k i))^k
#
# and against the table in the comment at the top of params.c.

bats_require_minimum_version 1.5.0
load helpers

# The rate of n keys in B blocks of 512 bits with k bits per key.  The sum
# runs over every i that can weigh anything, with the Poisson weight in
# logs so that large i do not overflow.
fpr_py='
import json, math, sys

def fpr(n, blocks, k):
    lam = n / blocks
    keep = 1 - 1 / 512
    top = int(lam + 20 * math.sqrt(lam) + 50)
    total = 0.0
    for i in range(1, top + 1):
        weight = math.exp(i * math.log(lam) - lam - math.lgamma(i + 1))
        total += weight * (1 - keep ** (k * i)) ** k
    return total

def stats(path):
    return json.load(open(path))
'

# py PROGRAM ARGS...: runs the python3 PROGRAM with fpr() and stats()
# defined and ARGS in sys.argv[1:].
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

@test "params.c table: p=0.1"		{ table_row 0.1	4.79 3	4.83 3	0.102; }
@test "params.c table: p=0.01"		{ table_row 0.01	9.59 7	9.90 6	0.0116; }
@test "params.c table: p=0.001"		{ table_row 0.001	14.38 10 15.49 9 0.00160; }
@test "params.c table: p=0.0001"	{ table_row 0.0001	19.17 13 21.91 12 0.000279; }
@test "params.c table: p=1e-6"		{ table_row 1e-6	28.76 20 38.51 16 0.0000192; }

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
