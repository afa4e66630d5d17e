#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""bloomfile: a reader of bloom's filter files, written from doc/FORMAT.md.

    python3 bloomfile.py check [-cqvz] FILTER [FILE ...]
    python3 bloomfile.py hash [-s SEED] [STRING ...]

check answers as `bloom check` does: the lines that may be in the filter
(with -v, those certainly not in it; with -c, their count; with -q,
nothing), exit status 0 if a line was selected, 1 if none was, 2 on an
error.  It reads fixed, growable and window filters of format versions 1
and 2, both layouts, and slices.  Python 3 standard library only; slow
(a pure-Python hash), meant to show that the format document is complete
and as a starting point for readers in other languages.

hash prints XXH3-64 of each STRING (or of each line of standard input)
with the seed, and where its bits would be in a filter (--blocks N).
"""

import os
import struct
import sys
import time

M64 = (1 << 64) - 1

# ---- XXH3-64, from the xxHash specification (doc/FORMAT.md, "The hash") --

P32_1 = 0x9E3779B1
P32_2 = 0x85EBCA77
P32_3 = 0xC2B2AE3D
P64_1 = 0x9E3779B185EBCA87
P64_2 = 0xC2B2AE3D27D4EB4F
P64_3 = 0x165667B19E3779F9
P64_4 = 0x85EBCA77C2B2AE63
P64_5 = 0x27D4EB2F165667C5
PMX_1 = 0x165667919E3779F9
PMX_2 = 0x9FB21C651E98DF25

SECRET = bytes.fromhex(
    "b8fe6c3923a44bbe7c01812cf721ad1cded46de9839097db7240a4a4b7b3671f"
    "cb79e64eccc0e578825ad07dccff7221b8084674f743248ee03590e6813a264c"
    "3c2852bb91c300cb88d0658b1b532ea371644897a20df94e3819ef46a9deacd8"
    "a8fa763fe39c343ff9dcbbc7c70b4f1d8a51e04bcdb45931c89f7ec9d9787364"
    "eac5ac8334d3ebc3c581a0fffa1363eb170ddd51b7f0da49d316552629d4689e"
    "2b16be587d47a1fc8ff8b8d17ad031ce45cb3a8f95160428afd7fbcabb4b407e")
STRIPE = 64
STRIPES_PER_BLOCK = (len(SECRET) - STRIPE) // 8
BLOCK = STRIPE * STRIPES_PER_BLOCK


def r32(b, i):
    return int.from_bytes(b[i:i + 4], "little")


def r64(b, i):
    return int.from_bytes(b[i:i + 8], "little")


def fold(a, b):
    p = a * b
    return (p & M64) ^ (p >> 64)


def avalanche(x):
    x ^= x >> 37
    x = (x * PMX_1) & M64
    return x ^ (x >> 32)


def avalanche64(x):
    x ^= x >> 33
    x = (x * P64_2) & M64
    x ^= x >> 29
    x = (x * P64_3) & M64
    return x ^ (x >> 32)


def rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M64


def bswap32(x):
    return int.from_bytes(x.to_bytes(4, "little"), "big")


def bswap64(x):
    return int.from_bytes(x.to_bytes(8, "little"), "big")


def mix16(d, i, s, j, seed):
    lo = r64(d, i) ^ ((r64(s, j) + seed) & M64)
    hi = r64(d, i + 8) ^ ((r64(s, j + 8) - seed) & M64)
    return fold(lo, hi)


def xxh3_64(d, seed=0):
    """XXH3-64 (XXH3_64bits_withSeed) of the bytes d."""
    n = len(d)
    s = SECRET
    if n == 0:
        return avalanche64(seed ^ r64(s, 56) ^ r64(s, 64))
    if n <= 3:
        c = d[n - 1] | n << 8 | d[0] << 16 | d[n >> 1] << 24
        return avalanche64((((r32(s, 0) ^ r32(s, 4)) + seed) & M64) ^ c)
    if n <= 8:
        seed ^= bswap32(seed & 0xFFFFFFFF) << 32
        flip = ((r64(s, 8) ^ r64(s, 16)) - seed) & M64
        x = (r32(d, n - 4) | r32(d, 0) << 32) ^ flip
        x ^= rotl(x, 49) ^ rotl(x, 24)
        x = (x * PMX_2) & M64
        x ^= (x >> 35) + n
        x = (x * PMX_2) & M64
        return x ^ (x >> 28)
    if n <= 16:
        lo = (((r64(s, 24) ^ r64(s, 32)) + seed) & M64) ^ r64(d, 0)
        hi = (((r64(s, 40) ^ r64(s, 48)) - seed) & M64) ^ r64(d, n - 8)
        return avalanche((n + bswap64(lo) + hi + fold(lo, hi)) & M64)
    if n <= 128:
        acc = n * P64_1
        for i in range((n - 1) // 32 + 1):
            acc += mix16(d, 16 * i, s, 32 * i, seed)
            acc += mix16(d, n - 16 * i - 16, s, 32 * i + 16, seed)
        return avalanche(acc & M64)
    if n <= 240:
        acc = n * P64_1
        for i in range(8):
            acc += mix16(d, 16 * i, s, 16 * i, seed)
        acc = avalanche(acc & M64)
        for i in range(8, n // 16):
            acc += mix16(d, 16 * i, s, 16 * (i - 8) + 3, seed)
        acc += mix16(d, n - 16, s, 119, seed)
        return avalanche(acc & M64)
    return xxh3_long(d, seed)


def accumulate(acc, d, i, s, j):
    for lane in range(8):
        v = r64(d, i + 8 * lane)
        k = v ^ r64(s, j + 8 * lane)
        acc[lane ^ 1] = (acc[lane ^ 1] + v) & M64
        acc[lane] = (acc[lane] + (k & 0xFFFFFFFF) * (k >> 32)) & M64


def xxh3_long(d, seed):
    n = len(d)
    s = SECRET
    if seed != 0:
        s = b"".join(
            ((r64(SECRET, 16 * i) + seed) & M64).to_bytes(8, "little") +
            ((r64(SECRET, 16 * i + 8) - seed) & M64).to_bytes(8, "little")
            for i in range(len(SECRET) // 16))
    acc = [P32_3, P64_1, P64_2, P64_3, P64_4, P32_2, P64_5, P32_1]
    blocks = (n - 1) // BLOCK
    for b in range(blocks):
        for k in range(STRIPES_PER_BLOCK):
            accumulate(acc, d, b * BLOCK + k * STRIPE, s, 8 * k)
        for lane in range(8):
            a = acc[lane]
            a ^= a >> 47
            a ^= r64(s, len(s) - STRIPE + 8 * lane)
            acc[lane] = (a * P32_1) & M64
    stripes = (n - 1 - blocks * BLOCK) // STRIPE
    for k in range(stripes):
        accumulate(acc, d, blocks * BLOCK + k * STRIPE, s, 8 * k)
    accumulate(acc, d, n - STRIPE, s, len(s) - STRIPE - 7)
    r = n * P64_1
    for i in range(4):
        r += fold(acc[2 * i] ^ r64(s, 11 + 16 * i),
                  acc[2 * i + 1] ^ r64(s, 11 + 16 * i + 8))
    return avalanche(r & M64)


# ---- Positions (doc/FORMAT.md, "Where a key's bits are") ----------------

GAMMA = 0x9E3779B97F4A7C15


def splitmix(h, count):
    """The first count outputs of SplitMix64 seeded with h."""
    out = []
    for j in range(count):
        z = (h + (j + 1) * GAMMA) & M64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        out.append(z ^ (z >> 31))
    return out


def blocked_positions(h, k):
    """The k bit positions, 0 to 511, of a key with hash h in its block."""
    pos = []
    for w in splitmix(h, (k + 6) // 7):
        for i in range(7):
            if len(pos) < k:
                pos.append((w >> (9 * i)) & 511)
    return pos


def apbf_positions(h, slots, width):
    """The bit, in its group, of a key with hash h in each slot."""
    words = splitmix(h, (slots + 3) // 4)
    return [j * width + (((words[j // 4] >> (16 * (j % 4))) & 0xFFFF) *
                         width >> 16) for j in range(slots)]


# ---- The file (doc/FORMAT.md, "Version 1", "Version 2") ------------------

MAGIC = b"\x89BLOOM\r\n"
PAGE = 4096
BLOCK_BYTES = 64
NBLOCKS_MAX = 1 << 40
HASHES_MAX = 32
SEGMENTS_MAX = 64
FILE_MAX = 1 << 47
EPOCH_MAX = 1 << 62


class FormatError(Exception):
    pass


def f64(b, i):
    return struct.unpack_from("<d", b, i)[0]


def need(cond, what):
    if not cond:
        raise FormatError(what)


def fpr_ok(p):
    return 0.0 < p < 1.0


class Segment:
    pass


def page_up(x):
    return (x + PAGE - 1) // PAGE * PAGE


def parse_entry(b, i, mode, epoch, min_offset, size):
    e = b[256 + 64 * i:256 + 64 * i + 64]
    s = Segment()
    s.offset, s.nblocks = r64(e, 0), r64(e, 8)
    s.hashes = r32(e, 16)
    s.capacity, s.fpr = r64(e, 24), f64(e, 32)
    s.inserted, s.stamp = r64(e, 48), r64(e, 56)
    need(r32(e, 20) == 0, "corrupt segment table (reserved bytes not zero)")
    need(0 < s.nblocks <= NBLOCKS_MAX, "invalid parameters (bit count)")
    need(0 < s.hashes <= HASHES_MAX, "invalid parameters (hash count)")
    need(s.capacity > 0, "invalid parameters (capacity)")
    need(fpr_ok(s.fpr), "invalid parameters (target fpr)")
    need(r64(e, 40) == xxh3_64(e[:40], i),
         "corrupt segment table (checksum mismatch)")
    need(s.offset % PAGE == 0,
         "corrupt segment table (segment not on a page boundary)")
    need(s.offset >= min_offset, "corrupt segment table (segments overlap)")
    need(s.offset < size and s.nblocks * BLOCK_BYTES <= size - s.offset,
         "corrupt segment table (segment past the end of file)")
    need(mode != 2 or s.stamp <= epoch + 1,
         "corrupt segment table (generation newer than the filter's)")
    return s


class Filter:
    """A filter file, its header and table checked as doc/FORMAT.md says."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = f.read()
        b = self.data
        size = len(b)
        need(size >= 8, "not a bloom filter (too short)")
        need(b[:8] == MAGIC, "not a bloom filter (bad magic)")
        need(size >= 32, "not a bloom filter (too short)")
        self.version, hdr = r32(b, 8), r32(b, 12)
        self.layout, hash_id, self.seed = r32(b, 16), r32(b, 20), r64(b, 24)
        need(self.version in (1, 2), "unsupported format version")
        need(hdr == (128 if self.version == 1 else 256),
             "corrupt header (bad header size)")
        need(size >= hdr, "not a bloom filter (too short)")
        need(self.layout == 1 or (self.layout == 2 and self.version == 2),
             "corrupt header (unknown layout)")
        need(hash_id == 1, "corrupt header (unknown hash function)")
        self.slices = 0
        if self.version == 1:
            self.parse_v1()
        else:
            self.parse_v2()

    def parse_v1(self):
        b = self.data
        s = Segment()
        nbits, s.hashes = r64(b, 32), r32(b, 40)
        s.capacity, s.fpr = r64(b, 48), f64(b, 56)
        s.offset, s.stamp = 128, 0
        need(r32(b, 44) == 0 and not any(b[80:128]),
             "corrupt header (reserved bytes not zero)")
        need(nbits and nbits % 512 == 0 and nbits // 512 <= NBLOCKS_MAX,
             "invalid parameters (bit count)")
        s.nblocks = nbits // 512
        need(0 < s.hashes <= HASHES_MAX, "invalid parameters (hash count)")
        need(s.capacity > 0, "invalid parameters (capacity)")
        need(fpr_ok(s.fpr), "invalid parameters (target fpr)")
        need(r64(b, 64) == xxh3_64(b[:64], 0),
             "corrupt header (checksum mismatch)")
        need(len(b) == 128 + nbits // 8, "size mismatch")
        self.mode, self.gens, self.segs = 0, 1, [s]

    def parse_v2(self):
        b = self.data
        size = len(b)
        mode, slots = r32(b, 32), r32(b, 36)
        capacity, fpr = r64(b, 40), f64(b, 48)
        growth, ratio = f64(b, 56), f64(b, 64)
        window, self.created = r64(b, 72), r64(b, 80)
        data_offset = r64(b, 88)
        slice_i, slices, whole = r32(b, 96), r32(b, 100), r64(b, 104)
        max_bytes, flags = r64(b, 112), r32(b, 120)
        nseg, epoch = r64(b, 136), r64(b, 144)
        base = r64(b, 152)
        need(not any(b[124:128]) and not any(b[160:256]) and
             (base == 0 or (mode == 2 and window != 0)),
             "corrupt header (reserved bytes not zero)")
        # A timed window's clock starts at base, once a rotation by hand
        # moved it; else at its creation.
        self.base = base if base != 0 else self.created
        need(not (self.layout == 2 and mode in (0, 1)),
             "corrupt header (unknown layout)")
        if mode == 0:
            need(slots == 1, "corrupt header (segment table size absurd "
                 "for the mode)")
            need(growth == 0.0 and ratio == 0.0, "invalid parameters "
                 "(growth factor or tightening ratio)")
            need(window == 0, "invalid parameters (window length)")
        elif mode == 1:
            need(2 <= slots <= SEGMENTS_MAX, "corrupt header (segment "
                 "table size absurd for the mode)")
            need(1.25 <= growth <= 16.0 and 0.0 < ratio < 1.0,
                 "invalid parameters (growth factor or tightening ratio)")
            need(window == 0, "invalid parameters (window length)")
        elif mode == 2:
            need(2 <= slots <= SEGMENTS_MAX, "corrupt header (segment "
                 "table size absurd for the mode)")
            need(growth == 0.0 and ratio == 0.0, "invalid parameters "
                 "(growth factor or tightening ratio)")
            need(window <= 1 << 52 and (window == 0 or window >= slots - 1),
                 "invalid parameters (window length)")
        else:
            raise FormatError("corrupt header (unknown mode)")
        need(mode == 2 or max_bytes == 0,
             "corrupt header (reserved bytes not zero)")
        # Flags are a window's; bit 0, no renewal, changes only adds.
        need(flags & ~1 == 0 and (mode == 2 or flags == 0),
             "corrupt header (reserved bytes not zero)")
        need(capacity > 0, "invalid parameters (capacity)")
        need(fpr_ok(fpr), "invalid parameters (target fpr)")
        need(data_offset == page_up(256 + 64 * slots), "corrupt header "
             "(data offset is not the end of the segment table)")
        if slices == 0:
            ok = slice_i == 0 and whole == 0
        else:
            ok = (mode == 0 and slice_i < slices and
                  0 < whole <= NBLOCKS_MAX and whole % slices == 0)
        need(ok, "corrupt header (slice fields absurd)")
        need(r64(b, 128) == xxh3_64(b[:128], 0),
             "corrupt header (checksum mismatch)")
        room = min(SEGMENTS_MAX, (data_offset - 256) // 64)
        if mode == 2:
            ok = slots <= nseg <= room
        else:
            ok = 0 < nseg <= slots and (mode != 0 or nseg == slots)
        need(ok, "corrupt header (segment count absurd for the table)")
        need(epoch <= EPOCH_MAX if mode == 2 else epoch == 0,
             "corrupt header (generation number)")
        segs = []
        min_offset = data_offset
        for i in range(nseg):
            if self.layout == 2 and 0 < i < slots:
                min_offset = segs[0].offset
            s = parse_entry(b, i, mode, epoch, min_offset, max(size,
                                                               FILE_MAX))
            if self.layout == 2 and i < slots:
                first = segs[0] if segs else s
                k = s.hashes
                need(s.offset == first.offset and
                     s.nblocks == first.nblocks and k == first.hashes and
                     s.nblocks % 2 == 0 and k <= 16 and
                     k + slots - 1 <= 64 and 1024 // (k + slots - 1) >= 8,
                     "corrupt segment table (age-partitioned generations "
                     "differ)")
            segs.append(s)
            end = s.offset + s.nblocks * BLOCK_BYTES
            min_offset = page_up(end)
        need(slices == 0 or segs[0].nblocks == whole // slices,
             "corrupt header (slice fields absurd)")
        need(size >= end if mode != 0 else size == end, "size mismatch")
        self.mode, self.gens, self.segs = mode, slots, segs
        self.window, self.epoch = window, epoch
        self.slice, self.slices, self.whole = slice_i, slices, whole

    # -- which segments answer -------------------------------------------

    def now_epoch(self):
        """The current generation of a window: the clock's or the
        file's, whichever is later."""
        e = 0
        now = time.time_ns() // 1000000
        if self.window != 0 and now > self.base:
            t, g = now - self.base, self.gens - 1
            e = t // self.window * g + t % self.window * g // self.window
        return max(min(e, EPOCH_MAX), self.epoch)

    def live(self, epoch):
        """The indices of the entries of a window that answer: those
        holding one of the G newest generations."""
        g = self.gens
        return [i for i, s in enumerate(self.segs) if s.stamp != 0 and
                s.stamp - 1 <= epoch and epoch - (s.stamp - 1) < g]

    def counting_ages(self, epoch, slots):
        """The ages of an age-partitioned window whose slots answer."""
        ages, g = 0, self.gens
        for a in range(slots):
            if a <= epoch:
                gen = epoch - a
                if gen > self.epoch:
                    continue
                if a < g and self.segs[gen % g].stamp != gen + 1:
                    continue
            ages |= 1 << a
        return ages

    def apbf_tester(self, epoch):
        """The test of an age-partitioned window's array at generation
        epoch."""
        b = self.data
        first = self.segs[0]
        k = first.hashes
        slots = k + self.gens - 1
        width = 1024 // slots
        ages = self.counting_ages(epoch, slots)
        newest = (-epoch) % slots
        ngroups = first.nblocks // 2
        run = (1 << k) - 1

        def test(h):
            g = first.offset + ((h * ngroups) >> 64) * 128
            m = 0
            for j, p in enumerate(apbf_positions(h, slots, width)):
                m |= (b[g + p // 8] >> (p % 8) & 1) << ((j - newest) % slots)
            m &= ages
            return any((m >> a) & run == run for a in range(slots))
        return test

    def tester(self):
        """Returns a function of a key's hash: may the filter hold it?
        None for a key of another slice."""
        b = self.data
        segs, array = self.segs, None
        if self.mode == 2:
            epoch = self.now_epoch()
            live = self.live(epoch)
            if self.layout == 2:
                # Entries 0 to G - 1 are the array's generations; the
                # others are blocked segments of generations grown.
                if any(i < self.gens for i in live):
                    array = self.apbf_tester(epoch)
                live = [i for i in live if i >= self.gens]
            segs = [self.segs[i] for i in live]

        def test(h):
            if array is not None and array(h):
                return True
            for s in segs:
                if self.slices:
                    blk = ((h * self.whole) >> 64) - self.slice * s.nblocks
                    if not 0 <= blk < s.nblocks:
                        return None
                else:
                    blk = (h * s.nblocks) >> 64
                base = s.offset + blk * BLOCK_BYTES
                if all(b[base + p // 8] >> (p % 8) & 1
                       for p in blocked_positions(h, s.hashes)):
                    return True
            return False
        return test


# ---- The command line ----------------------------------------------------

def usage():
    sys.stderr.write("usage: bloomfile.py check [-cqvz] filter [file ...]\n"
                     "       bloomfile.py hash [-s seed] [-b blocks] "
                     "[string ...]\n")
    sys.exit(2)


def records(f, sep):
    """The records of binary file f, without their separator."""
    data = f.read()
    if not data:
        return []
    parts = data.split(sep)
    if parts[-1] == b"":
        parts.pop()
    return parts


def check(args):
    opts = set()
    while args and args[0].startswith("-") and len(args[0]) > 1:
        a = args.pop(0)
        if a == "--":
            break
        for c in a[1:]:
            if c not in "cqvz":
                usage()
            opts.add(c)
    if not args:
        usage()
    path, files = args[0], args[1:] or ["-"]
    try:
        flt = Filter(path)
        test = flt.tester()
    except (OSError, FormatError) as e:
        msg = e.strerror if isinstance(e, OSError) else str(e)
        sys.stderr.write("bloomfile.py: %s: %s\n" % (path, msg))
        return 2
    sep = b"\0" if "z" in opts else b"\n"
    out = sys.stdout.buffer
    selected, status, elsewhere = 0, 0, 0
    for name in files:
        try:
            if name == "-":
                recs = records(sys.stdin.buffer, sep)
            else:
                with open(name, "rb") as f:
                    recs = records(f, sep)
        except OSError as e:
            sys.stderr.write("bloomfile.py: %s: %s\n" % (name, e.strerror))
            status = 2
            continue
        count = 0
        label = "(standard input)" if name == "-" else name
        for r in recs:
            found = test(xxh3_64(r, flt.seed))
            if found is None:   # a slice: another slice holds this key
                elsewhere += 1
                continue
            if found != ("v" in opts):
                count += 1
                if not opts & set("cq"):
                    out.write(r + sep)
        if "c" in opts and "q" not in opts:
            if len(files) > 1:
                out.write(b"%s:%d\n" % (os.fsencode(label), count))
            else:
                out.write(b"%d\n" % count)
        selected += count
    out.flush()
    if elsewhere:
        sys.stderr.write("bloomfile.py: %s: %d lines belong to other "
                         "slices of the filter and were passed over\n"
                         % (path, elsewhere))
    if selected and ("q" in opts or status == 0):
        return 0
    return status or 1


def hash_cmd(args):
    seed, blocks = 0, 0
    while args and args[0] in ("-s", "-b"):
        flag = args.pop(0)
        if not args:
            usage()
        value = int(args.pop(0), 0)
        if flag == "-s":
            seed = value
        else:
            blocks = value
    keys = [a.encode() for a in args] or records(sys.stdin.buffer, b"\n")
    for k in keys:
        h = xxh3_64(k, seed)
        line = "%016x" % h
        if blocks:
            line += " block %d bits %s" % ((h * blocks) >> 64, " ".join(
                str(p) for p in blocked_positions(h, 32)))
        print(line)
    return 0


def main():
    args = sys.argv[1:]
    if not args:
        usage()
    cmd = args.pop(0)
    if cmd == "check":
        return check(args)
    if cmd == "hash":
        return hash_cmd(args)
    usage()


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        os._exit(2)
