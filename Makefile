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

CC = cc
CFLAGS = -O2 -g
WARN = -std=c11 -Wall -Wextra -Wshadow -Wconversion -Wstrict-prototypes
CPPFLAGS = -I. -D_GNU_SOURCE -DBLOOM_VERSION_STRING=\"$(VERSION)\"
LDLIBS = -lm
THREADS = -pthread

# make check SANITIZE=1 builds everything with ASan and UBSan.
ifeq ($(SANITIZE),1)
CFLAGS += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
LDFLAGS += -fsanitize=address,undefined
SANITIZE_OBJ = tests/sanitize.o
endif

# The layers, from the front end down; a file includes only headers of its
# own layer or of those below it (README.md, "Layout of the source";
# checked by .ci/layers).
CLI_OBJ = cli.o cli/cmd_create.o cli/cmd_stream.o cli/cmd_filter.o cli/msg.o \
	cli/parse.o cli/progress.o cli/report.o
STREAM_OBJ = stream/engine.o stream/batch.o stream/lines.o stream/fields.o \
	stream/union.o stream/repeats.o
FILTER_OBJ = filter/create.o filter/fold.o filter/merge.o filter/stats.o filter/sweep.o
CORE_OBJ = bloom.o
STORE_OBJ = store/format.o store/segments.o store/bits.o store/wide.o \
	store/mates.o store/holes.o store/claims.o store/locks.o \
	store/iothread.o store/apbf.o store/ages.o store/fill.o \
	store/plan.o
BASE_OBJ = params.o hash.o
LIB_OBJ = lib/clock.o lib/memory.o lib/output.o lib/quote.o lib/threads.o
OBJ = $(CLI_OBJ) $(STREAM_OBJ) $(FILTER_OBJ) $(CORE_OBJ) $(STORE_OBJ) \
	$(BASE_OBJ) $(LIB_OBJ)
HDR = *.h lib/*.h store/*.h filter/*.h stream/*.h cli/*.h
TESTBIN = tests/hashsum tests/kernels

all: bloom

bloom: $(OBJ) $(SANITIZE_OBJ)
	$(CC) $(THREADS) $(LDFLAGS) -o $@ $(OBJ) $(SANITIZE_OBJ) $(LDLIBS)

.c.o:
	$(CC) $(WARN) $(THREADS) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(OBJ): $(HDR)

tests/hashsum: tests/hashsum.c hash.o hash.h
	$(CC) $(WARN) $(CPPFLAGS) $(CFLAGS) -I. $(LDFLAGS) -o $@ \
		tests/hashsum.c hash.o

# The vector kernels of store/bits.c and store/apbf.c against their scalar
# ones.
tests/kernels: tests/kernels.c store/wide.c store/apbf.c $(HDR)
	$(CC) $(WARN) $(CPPFLAGS) $(CFLAGS) -I. $(LDFLAGS) -o $@ \
		tests/kernels.c

# A real run of the main job: a crawl of 1 M URLs, half of them repeats,
# deduplicated by bloom and compared with sort -u.
example: bloom bench/gen-urls
	@rm -f example.bf
	./bloom create -n 600000 -p 0.001 example.bf
	bench/gen-urls 1000000 >example.urls
	./bloom add --new example.bf <example.urls >example.new
	@echo "lines in: $$(wc -l <example.urls)," \
	    "new lines out of bloom add --new: $$(wc -l <example.new)," \
	    "distinct (sort -u): $$(LC_ALL=C sort -u example.urls | wc -l)"
	./bloom check -c example.bf <example.new
	./bloom stats example.bf
	@rm -f example.bf example.urls example.new

bench/gen-urls: bench/gen-urls.c store/positions.h lib/endian.h params.h
	$(CC) $(WARN) $(CPPFLAGS) $(CFLAGS) -o $@ bench/gen-urls.c

# The one-thread floor bench/run holds check -c against.
bench/floor: bench/floor.c hash.o hash.h
	$(CC) $(WARN) $(CPPFLAGS) $(CFLAGS) -I. -o $@ bench/floor.c hash.o

# The first write to each page of a just-created filter (bench/faults).
bench/faults-probe: bench/faults-probe.c
	$(CC) $(WARN) $(CPPFLAGS) $(CFLAGS) -o $@ bench/faults-probe.c

# Window layouts against a fixed filter: sizing, rates and kernel times
# (bench/README.md, "layouts").
LAYOUTS_SRC = bench/layouts.c bench/layouts-kernels.c bench/layouts-math.c

bench/layouts: $(LAYOUTS_SRC) bench/layouts.h params.o $(HDR)
	$(CC) $(WARN) $(CPPFLAGS) $(CFLAGS) -I. -o $@ $(LAYOUTS_SRC) params.o \
		$(LDLIBS)

# tests/need installs what the tests run (as root, with apt-get), or says
# how to.
check: need layers bloom $(TESTBIN)
	bats tests

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
		-fno-sanitize-recover=all $(CPPFLAGS) -I. -o $@ \
		tests/fuzz/header.c store/format.c hash.c params.c -lm

# The line reader, with a 64-byte read buffer so that short inputs reach
# long lines; and the parsers of option values.
FUZZFLAGS = -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all -pthread $(CPPFLAGS) -I.
FUZZ_LINES_SRC = tests/fuzz/lines.c stream/lines.c stream/fields.c bloom.c \
	store/bits.c store/wide.c store/mates.c store/segments.c store/holes.c \
	store/claims.c \
	store/locks.c \
	store/format.c store/apbf.c store/ages.c store/fill.c store/plan.c \
	params.c hash.c lib/clock.c lib/memory.c lib/threads.c

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
		bench/layouts bench/faults-probe
	rm -rf $(FUZZ_CORPUS) $(FUZZ_CORPUS)-lines $(FUZZ_CORPUS)-options

.PHONY: all example check need layers fuzz fuzz-header fuzz-lines fuzz-options \
	install uninstall clean
