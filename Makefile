# bloom: a command-line Bloom filter.  See README.md.

VERSION = 1.0.0

PREFIX = /usr/local
MANPREFIX = $(PREFIX)/share/man

CC = cc
CFLAGS = -O2 -g
WARN = -std=c11 -Wall -Wextra -Wshadow -Wconversion -Wstrict-prototypes
CPPFLAGS = -D_GNU_SOURCE -DBLOOM_VERSION_STRING=\"$(VERSION)\"
LDLIBS = -lm
THREADS = -pthread

# make check SANITIZE=1 builds everything with ASan and UBSan.
ifeq ($(SANITIZE),1)
CFLAGS += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
LDFLAGS += -fsanitize=address,undefined
endif

OBJ = cli.o engine.o batch.o memory.o output.o stats.o merge.o lines.o \
	create.o bloom.o segments.o format.o params.o hash.o
HDR = batch.h bloom.h create.h engine.h format.h hash.h lines.h memory.h \
	output.h params.h merge.h segments.h stats.h
TESTBIN = tests/hashsum

all: bloom

bloom: $(OBJ)
	$(CC) $(THREADS) $(LDFLAGS) -o $@ $(OBJ) $(LDLIBS)

.c.o:
	$(CC) $(WARN) $(THREADS) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(OBJ): $(HDR)

tests/hashsum: tests/hashsum.c hash.o hash.h
	$(CC) $(WARN) $(CPPFLAGS) $(CFLAGS) -I. $(LDFLAGS) -o $@ \
		tests/hashsum.c hash.o

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

bench/gen-urls: bench/gen-urls.c
	$(CC) $(WARN) $(CPPFLAGS) $(CFLAGS) -o $@ bench/gen-urls.c

check: bloom $(TESTBIN)
	bats tests

# The header parser under libFuzzer (clang and its runtime needed), for
# FUZZ_SECONDS, starting from the filters in tests/fuzz/seeds.
FUZZ_SECONDS = 60
FUZZCC = clang
FUZZ_CORPUS = tests/fuzz/corpus

tests/fuzz/header: tests/fuzz/header.c format.c hash.c params.c $(HDR)
	$(FUZZCC) -g -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all $(CPPFLAGS) -I. -o $@ \
		tests/fuzz/header.c format.c hash.c params.c -lm

fuzz: tests/fuzz/header
	mkdir -p $(FUZZ_CORPUS)
	tests/fuzz/header -max_total_time=$(FUZZ_SECONDS) -max_len=4096 \
		$(FUZZ_CORPUS) tests/fuzz/seeds

install: bloom
	mkdir -p $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(MANPREFIX)/man1
	cp -f bloom $(DESTDIR)$(PREFIX)/bin/bloom
	chmod 755 $(DESTDIR)$(PREFIX)/bin/bloom
	cp -f man/bloom.1 $(DESTDIR)$(MANPREFIX)/man1/bloom.1
	chmod 644 $(DESTDIR)$(MANPREFIX)/man1/bloom.1

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/bloom $(DESTDIR)$(MANPREFIX)/man1/bloom.1

clean:
	rm -f bloom $(OBJ) $(TESTBIN) tests/fuzz/header bench/gen-urls
	rm -rf $(FUZZ_CORPUS)

.PHONY: all example check fuzz install uninstall clean
