# bloom: a command-line Bloom filter.  See README.md.

VERSION = 1.0.0

PREFIX = /usr/local
MANPREFIX = $(PREFIX)/share/man

CC = cc
CFLAGS = -O2 -g
WARN = -std=c11 -Wall -Wextra -Wshadow -Wconversion -Wstrict-prototypes
CPPFLAGS = -D_GNU_SOURCE -DBLOOM_VERSION_STRING=\"$(VERSION)\"
LDLIBS = -lm

# make check SANITIZE=1 builds everything with ASan and UBSan.
ifeq ($(SANITIZE),1)
CFLAGS += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
LDFLAGS += -fsanitize=address,undefined
endif

OBJ = cli.o bloom.o params.o hash.o
HDR = bloom.h hash.h params.h
TESTBIN = tests/hashsum

all: bloom

bloom: $(OBJ)
	$(CC) $(LDFLAGS) -o $@ $(OBJ) $(LDLIBS)

.c.o:
	$(CC) $(WARN) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(OBJ): $(HDR)

tests/hashsum: tests/hashsum.c hash.o hash.h
	$(CC) $(WARN) $(CPPFLAGS) $(CFLAGS) -I. $(LDFLAGS) -o $@ \
		tests/hashsum.c hash.o

check: bloom $(TESTBIN)
	bats tests

install: bloom
	mkdir -p $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(MANPREFIX)/man1
	cp -f bloom $(DESTDIR)$(PREFIX)/bin/bloom
	chmod 755 $(DESTDIR)$(PREFIX)/bin/bloom
	cp -f man/bloom.1 $(DESTDIR)$(MANPREFIX)/man1/bloom.1
	chmod 644 $(DESTDIR)$(MANPREFIX)/man1/bloom.1

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/bloom $(DESTDIR)$(MANPREFIX)/man1/bloom.1

clean:
	rm -f bloom $(OBJ) $(TESTBIN)

.PHONY: all check install uninstall clean
