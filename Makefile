# SPDX-License-Identifier: ISC
# bloom: a command-line Bloom filter.  See README.md.

VERSION = 1.0.0

PREFIX = /usr/local
MANPREFIX = $(PREFIX)/share/man
BASHCOMPDIR = $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR = $(PREFIX)/share/zsh/site-functions
# fish reads vendor_completions.d under its own prefix and under each
# XDG_DATA_DIRS entry only: make install says when it would not read this
# one, and FISHCOMPDIR=/etc/fish/completions is where it always looks.
FISHCOMPDIR = $(PREFIX)/share/fish/vendor_completions.d

# CC, CFLAGS, CPPFLAGS and LDFLAGS are the builder's: from the environment
# or the command line (a distribution's hardening flags, say).  What bloom
# itself needs is in BLOOM_CPPFLAGS, WARN and THREADS, always added.
CFLAGS ?= -O2 -g
WARN = -std=c11 -Wall -Wextra -Wshadow -Wconversion -Wstrict-prototypes
BLOOM_CPPFLAGS = -I. -D_GNU_SOURCE -DBLOOM_VERSION_STRING=\"$(VERSION)\"
LDLIBS = -lm
THREADS = -pthread

# make check SANITIZE=1 builds everything with ASan and UBSan.
ifeq ($(SANITIZE),1)
SANITIZE_CFLAGS = -O1 -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
SANITIZE_LDFLAGS = -fsanitize=address,undefined
SANITIZE_OBJ = tests/sanitize.o
endif

ALL_CPPFLAGS = $(BLOOM_CPPFLAGS) $(CPPFLAGS)
ALL_CFLAGS = $(WARN) $(CFLAGS) $(SANITIZE_CFLAGS)
ALL_LDFLAGS = $(LDFLAGS) $(SANITIZE_LDFLAGS)

# The layers, from the front end down; a file includes only headers of its
# own layer or of those below it (README.md, "Layout of the source";
# checked by .ci/layers).
CLI_OBJ = cli.o cli/cmd_create.o cli/cmd_stream.o cli/cmd_filter.o cli/msg.o \
	cli/foreign.o cli/parse.o cli/progress.o cli/report.o
STREAM_OBJ = stream/engine.o stream/batch.o stream/lines.o stream/fields.o \
	stream/union.o stream/repeats.o stream/pending.o
FILTER_OBJ = filter/create.o filter/fold.o filter/merge.o filter/stats.o
CORE_OBJ = bloom.o
STORE_OBJ = store/format.o store/segments.o store/bits.o store/wide.o \
	store/mates.o store/holes.o store/claims.o store/locks.o \
	store/iothread.o store/apbf.o store/ages.o store/fill.o store/modes.o \
	store/plan.o store/timing.o store/sweep.o
BASE_OBJ = params.o hash.o
LIB_OBJ = lib/clock.o lib/memory.o lib/output.o lib/quote.o lib/threads.o
OBJ = $(CLI_OBJ) $(STREAM_OBJ) $(FILTER_OBJ) $(CORE_OBJ) $(STORE_OBJ) \
	$(BASE_OBJ) $(LIB_OBJ)
HDR = *.h lib/*.h store/*.h filter/*.h stream/*.h cli/*.h
TESTBIN = tests/hashsum tests/kernels

all: bloom

bloom: $(OBJ) $(SANITIZE_OBJ)
	$(CC) $(THREADS) $(ALL_LDFLAGS) -o $@ $(OBJ) $(SANITIZE_OBJ) $(LDLIBS)

.c.o:
	$(CC) $(THREADS) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

$(OBJ): $(HDR)

tests/hashsum: tests/hashsum.c hash.o hash.h
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -I. $(ALL_LDFLAGS) -o $@ \
		tests/hashsum.c hash.o

# The vector kernels of store/bits.c and store/apbf.c against their scalar
# ones.
tests/kernels: tests/kernels.c store/wide.c store/apbf.c $(HDR)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -I. $(ALL_LDFLAGS) -o $@ \
		tests/kernels.c

# A real run of the main job: a crawl of 1 M URLs, half of them repeats,
# deduplicated by bloom and compared with sort -u.  The distinct lines add
# --new does not write are its false positives: expected, the sum over the
# distinct lines of the filter's rate when each came, that rate from bloom
# create --dry-run for the filter's bits and hashes (Simpson's rule, 16
# steps); the count is near a Poisson one, its standard deviation the root.
# EXAMPLE names the files (tests/example.bats writes them elsewhere).
EXAMPLE = example

example: bloom bench/gen-urls
	@rm -f $(EXAMPLE).bf
	./bloom create -n 600000 -p 0.001 $(EXAMPLE).bf
	bench/gen-urls 1000000 >$(EXAMPLE).urls
	./bloom add --new $(EXAMPLE).bf <$(EXAMPLE).urls >$(EXAMPLE).new
	@new=$$(wc -l <$(EXAMPLE).new) && \
	distinct=$$(LC_ALL=C sort -u $(EXAMPLE).urls | wc -l) && \
	echo "lines in: $$(wc -l <$(EXAMPLE).urls)," \
	    "new lines out of bloom add --new: $$new," \
	    "distinct (sort -u): $$distinct" && \
	bits=$$(./bloom stats $(EXAMPLE).bf | sed -n 's/^bits: //p') && \
	k=$$(./bloom stats $(EXAMPLE).bf | sed -n 's/^hashes: //p') && \
	rates=$$(for i in $$(seq 1 16); do \
		./bloom create --dry-run -n $$((distinct * i / 16)) \
		    -s $$((bits / 8)) -k $$k $(EXAMPLE).rate.bf | \
		    sed -n 's/^target_fpr: //p'; done) && \
	echo "$$rates" | awk -v lost=$$((distinct - new)) -v n=$$distinct \
	    -v k=$$k '{ sum += (NR == 16 ? 1 : NR % 2 ? 4 : 2) * $$1 } \
	    END { e = sum * n / 16 / 3; printf "the %d distinct lines" \
		" not written are false positives: lines the filter took" \
		" for ones already added, %.1f expected (standard" \
		" deviation %.1f) for %d lines in its bits with %d" \
		" hashes\n", lost, e, sqrt(e), n, k }'
	./bloom check -c $(EXAMPLE).bf <$(EXAMPLE).new
	./bloom stats $(EXAMPLE).bf
	@rm -f $(EXAMPLE).bf $(EXAMPLE).urls $(EXAMPLE).new

bench/gen-urls: bench/gen-urls.c store/positions.h lib/endian.h params.h
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ bench/gen-urls.c

# The one-thread floor bench/run holds check -c against.
bench/floor: bench/floor.c hash.o hash.h
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -I. -o $@ bench/floor.c hash.o

# The first write to each page of a just-created filter (bench/faults).
bench/faults-probe: bench/faults-probe.c bench/helper.h
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -o $@ bench/faults-probe.c

# The machine's rate of random reads, which bench/big-filters quotes.
bench/randread: bench/randread.c bench/helper.h
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -o $@ bench/randread.c

# The machine's cost of dirtying a shared mapping, which bench/big-memory
# and bench/big-filters quote.
bench/mapstore: bench/mapstore.c bench/helper.h
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -o $@ bench/mapstore.c

# The machine's cost of memory never used before, which bench/big-filters
# quotes next to a sorted batch's arrays.
bench/firsttouch: bench/firsttouch.c bench/helper.h
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -o $@ bench/firsttouch.c

# Window layouts against a fixed filter: sizing, rates and kernel times
# (bench/README.md, "layouts").
LAYOUTS_SRC = bench/layouts.c bench/layouts-kernels.c bench/layouts-math.c

bench/layouts: $(LAYOUTS_SRC) bench/layouts.h params.o $(HDR)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -I. -o $@ $(LAYOUTS_SRC) params.o \
		$(LDLIBS)

# tests/need installs what the tests run (as root, with apt-get), or says
# how to.  The test files run JOBS at a time (bats --jobs, through GNU
# parallel), each file's tests in order; then, one after the other, those
# that share the ssh hosts and the Slurm cluster .ci/run starts for them
# (merge and slurm write the same files on those hosts).  JOBS=1 runs
# every file in turn.
JOBS = 2
SHARED_TESTS = tests/merge.bats tests/slurm.bats
BATS_JOBS = $(if $(filter-out 1,$(JOBS)),--jobs $(JOBS) --no-parallelize-within-files)

check: need layers bloom $(TESTBIN)
	@status=0; \
	bats $(BATS_JOBS) $(filter-out $(SHARED_TESTS),$(sort $(wildcard tests/*.bats))) || status=1; \
	bats $(SHARED_TESTS) || status=1; \
	exit $$status

# Includes go only downward through the layers, store/ stays private to the
# core, no module cycle, no unused include, no function defined twice.
layers:
	@python3 .ci/layers

need:
	@sh tests/need

# The header parser under libFuzzer (clang and its runtime needed), for
# FUZZ_SECONDS, starting from the filters in tests/fuzz/seeds.
FUZZ_SECONDS = 60
FUZZCC = clang
FUZZ_CORPUS = tests/fuzz/corpus

tests/fuzz/header: tests/fuzz/header.c store/format.c hash.c params.c $(HDR)
	$(FUZZCC) -g -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all $(ALL_CPPFLAGS) -I. -o $@ \
		tests/fuzz/header.c store/format.c hash.c params.c -lm

# The line reader, with a 64-byte read buffer so that short inputs reach
# long lines; and the parsers of option values.
FUZZFLAGS = -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all -pthread $(ALL_CPPFLAGS) -I.
# The reader over the core and all of store/, as the product links it.
FUZZ_LINES_SRC = tests/fuzz/lines.c stream/lines.c stream/fields.c bloom.c \
	$(STORE_OBJ:.o=.c) params.c hash.c lib/clock.c lib/memory.c \
	lib/threads.c

tests/fuzz/lines: $(FUZZ_LINES_SRC) $(HDR)
	$(FUZZCC) $(FUZZFLAGS) -DREAD_SIZE=64 -o $@ $(FUZZ_LINES_SRC) -lm

tests/fuzz/options: tests/fuzz/options.c cli/parse.c $(HDR)
	$(FUZZCC) $(FUZZFLAGS) -o $@ tests/fuzz/options.c cli/parse.c

fuzz: fuzz-header fuzz-lines fuzz-options

fuzz-header: tests/fuzz/header
	mkdir -p $(FUZZ_CORPUS)
	tests/fuzz/header -max_total_time=$(FUZZ_SECONDS) -max_len=8192 \
		$(FUZZ_CORPUS) tests/fuzz/seeds

fuzz-lines: tests/fuzz/lines
	mkdir -p $(FUZZ_CORPUS)-lines
	tests/fuzz/lines -max_total_time=$(FUZZ_SECONDS) -max_len=4096 \
		$(FUZZ_CORPUS)-lines

fuzz-options: tests/fuzz/options
	mkdir -p $(FUZZ_CORPUS)-options
	tests/fuzz/options -max_total_time=$(FUZZ_SECONDS) -max_len=63 \
		$(FUZZ_CORPUS)-options

# A release: bloom-VERSION.tar.gz of the files git tracks at HEAD, the
# same bytes on every run (git archive: HEAD's commit time on every file,
# owner root, mode 644 or 755, git's order; gzip -n: no name, no time),
# and its SHA-256 for sha256sum -c.
DIST = bloom-$(VERSION)

dist:
	@git rev-parse -q --verify HEAD >/dev/null || \
		{ echo "make dist: not a git checkout" >&2; exit 1; }
	@grep -q '^$(VERSION) ' NEWS || \
		{ echo "make dist: NEWS says nothing of $(VERSION)" >&2; exit 1; }
	@git diff --quiet HEAD || echo "make dist: note: changes not" \
	    "committed are left out of $(DIST).tar.gz" >&2
	git -c tar.umask=022 archive --format=tar --prefix=$(DIST)/ \
		-o $(DIST).tar HEAD
	gzip -9nf $(DIST).tar
	sha256sum $(DIST).tar.gz >$(DIST).tar.gz.sha256
	@cat $(DIST).tar.gz.sha256

install: bloom
	mkdir -p $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(MANPREFIX)/man1
	cp -f bloom $(DESTDIR)$(PREFIX)/bin/bloom
	chmod 755 $(DESTDIR)$(PREFIX)/bin/bloom
	cp -f man/bloom.1 $(DESTDIR)$(MANPREFIX)/man1/bloom.1
	chmod 644 $(DESTDIR)$(MANPREFIX)/man1/bloom.1
	mkdir -p $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) \
		$(DESTDIR)$(FISHCOMPDIR)
	cp -f completion/bloom.bash $(DESTDIR)$(BASHCOMPDIR)/bloom
	cp -f completion/_bloom $(DESTDIR)$(ZSHCOMPDIR)/_bloom
	cp -f completion/bloom.fish $(DESTDIR)$(FISHCOMPDIR)/bloom.fish
	chmod 644 $(DESTDIR)$(BASHCOMPDIR)/bloom $(DESTDIR)$(ZSHCOMPDIR)/_bloom \
		$(DESTDIR)$(FISHCOMPDIR)/bloom.fish
	@if [ -z "$(DESTDIR)" ] && command -v fish >/dev/null 2>&1 && \
	    ! fish -c 'contains -- $$argv[1] $$fish_complete_path' \
	    '$(FISHCOMPDIR)'; then \
		echo "note: fish does not read $(FISHCOMPDIR) here" \
		    "(XDG_DATA_DIRS lacks $(PREFIX)/share): make install" \
		    "FISHCOMPDIR=/etc/fish/completions puts bloom.fish where" \
		    "it does"; \
	fi

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/bloom $(DESTDIR)$(MANPREFIX)/man1/bloom.1
	rm -f $(DESTDIR)$(BASHCOMPDIR)/bloom $(DESTDIR)$(ZSHCOMPDIR)/_bloom \
		$(DESTDIR)$(FISHCOMPDIR)/bloom.fish

clean:
	rm -f bloom $(OBJ) tests/sanitize.o $(TESTBIN) tests/fuzz/header \
		tests/fuzz/lines tests/fuzz/options bench/gen-urls bench/floor \
		bench/layouts bench/faults-probe bench/randread \
		bench/mapstore bench/firsttouch $(DIST).tar $(DIST).tar.gz \
		$(DIST).tar.gz.sha256
	rm -rf $(FUZZ_CORPUS) $(FUZZ_CORPUS)-lines $(FUZZ_CORPUS)-options

.PHONY: all example check need layers fuzz fuzz-header fuzz-lines fuzz-options \
	dist install uninstall clean
