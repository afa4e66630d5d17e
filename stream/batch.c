/* SPDX-License-Identifier: ISC
 * Sorted batches: the lines a sorted sweep (bloom_sweep_new) works on at
 * once, with their hashes and answers.  Lines to be written are kept in the
 * batch, or, read from a regular file, read again from it by offset when
 * they are written: an add --new writes a batch's lines before it sets
 * any of their bits.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stream/batch.h"

#define KEYS_MAX	((size_t)1 << 31)	/* keys in a batch, at most: the
					 * sweep lists them as uint32_t */
#define REREAD		((size_t)1 << 20)	/* bytes read back at once */

int
batch_init(struct batch *t, const struct memory_plan *p, int keep_lines,
    size_t extra)
{
	size_t per_key = sizeof t->hash[0] + 2 + BLOOM_SWEEP_KEY_BYTES;
	uint64_t cap;

	memset(t, 0, sizeof *t);
	t->plan = *p;
	t->keep_lines = keep_lines;
	t->fd = -1;
	if (keep_lines)
		per_key += sizeof t->end[0];
	per_key += extra;
	t->per_key = per_key;
	cap = p->batch_bytes / per_key;
	t->cap = cap < 1 ? 1 : cap > KEYS_MAX ? KEYS_MAX : (size_t)cap;
	t->hash = memory_array(t->cap * sizeof t->hash[0]);
	t->hit = memory_array(t->cap);
	t->again = memory_array(t->cap);
	if (keep_lines) {
		t->end = memory_array(t->cap * sizeof t->end[0]);
		t->text_cap = (size_t)p->batch_bytes;
		t->text = memory_array(t->text_cap);
	}
	if (t->hash == NULL || t->hit == NULL || t->again == NULL ||
	    (keep_lines && (t->end == NULL || t->text == NULL)) ||
	    (t->sweep = bloom_sweep_new(p, t->cap)) == NULL) {
		batch_free(t);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void
batch_free(struct batch *t)
{
	free(t->hash);
	free(t->hit);
	free(t->again);
	free(t->end);
	free(t->text);
	free(t->back);
	bloom_sweep_free(t->sweep);
	memset(t, 0, sizeof *t);
	t->fd = -1;
}

void
batch_source(struct batch *t, int fd)
{
	struct stat st;
	off_t at;

	t->fd = -1;
	t->back_len = 0;
	if (!t->keep_lines || fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    (at = lseek(fd, 0, SEEK_CUR)) == -1)
		return;
	t->fd = fd;
	t->pos = (uint64_t)at;
}

void
batch_clear(struct batch *t)
{
	t->n = 0;
	t->bytes = 0;
	t->text_len = 0;
}

/* Returns 1 if a line of len bytes more fits in the batch: its key, and
 * its bytes if kept, within the batch's share of the budget. */
static int
has_room(const struct batch *t, size_t len)
{
	uint64_t used = (uint64_t)(t->n + 1) * t->per_key + t->text_len;

	if (t->n == t->cap)
		return 0;
	return !t->keep_lines || t->fd >= 0 || (len <= t->text_cap - t->text_len &&
	    len <= t->plan.batch_bytes - used);
}

int
batch_take(struct batch *t, const struct line_group *g, size_t *from)
{
	size_t i;

	if (*from == 0)
		t->group_bytes = 0;
	for (i = *from; i < g->nlines; i++) {
		const struct line *l = &g->line[i];

		if (t->n == 0)
			t->first = t->pos;
		if (!has_room(t, l->len)) {
			if (t->n > 0)
				break;
			/* One line longer than the whole batch. */
			free(t->text);
			t->text_cap = l->len;
			if ((t->text = malloc(t->text_cap)) == NULL)
				return -1;
		}
		t->hash[t->n] = g->hash[i];
		if (t->fd >= 0) {
			/* Lines lie one after another in the file, each but
			 * the input's last followed by the terminator. */
			t->end[t->n] = t->pos + l->len;
			t->pos += (uint64_t)l->len + 1;
		} else if (t->keep_lines) {
			memcpy(t->text + t->text_len, l->data, l->len);
			t->text_len += l->len;
			t->end[t->n] = t->text_len;
		}
		t->n++;
		t->bytes += (uint64_t)l->len + 1;
		t->group_bytes += (uint64_t)l->len + 1;
	}
	/* A line with its terminator, but for the input's last: the group
	 * knows its bytes exactly. */
	if (i == g->nlines)
		t->bytes = t->bytes + g->bytes - t->group_bytes;
	*from = i;
	return 0;
}

/* Returns the len bytes of the file at offset from, reading a large
 * piece of it back if they are not in t->back yet; NULL if the read
 * fails (errno set) or the file ends before them (ESTALE). */
static const unsigned char *
read_back(struct batch *t, uint64_t from, size_t len)
{
	size_t want = len > REREAD ? len : REREAD, done = 0;
	ssize_t got;

	if (from >= t->back_off && from - t->back_off <= t->back_len &&
	    len <= t->back_len - (from - t->back_off))
		return t->back + (from - t->back_off);
	if (want > t->back_cap) {
		unsigned char *p = realloc(t->back, want);

		if (p == NULL)
			return NULL;
		t->back = p;
		t->back_cap = want;
	}
	t->back_len = 0;
	while (done < want) {
		got = pread(t->fd, t->back + done, want - done,
		    (off_t)(from + done));
		if (got == -1 && errno == EINTR)
			continue;
		if (got == -1)
			return NULL;
		if (got == 0)
			break;
		done += (size_t)got;
	}
	if (done < len) {
		errno = ESTALE;
		return NULL;
	}
	t->back_off = from;
	t->back_len = done;
	return t->back;
}

const unsigned char *
batch_line(struct batch *t, const struct bloom *b, size_t i, size_t *len)
{
	const unsigned char *line;
	uint64_t from;

	if (t->fd < 0) {
		from = i == 0 ? 0 : t->end[i - 1];
		*len = (size_t)(t->end[i] - from);
		return t->text + from;
	}
	from = i == 0 ? t->first : t->end[i - 1] + 1;
	*len = (size_t)(t->end[i] - from);
	if ((line = read_back(t, from, *len)) == NULL)
		return NULL;
	/* A file rewritten since it was read would give other lines than
	 * the ones decided on: it is told, not written. */
	if (bloom_hash(b, line, *len) != t->hash[i]) {
		errno = ESTALE;
		return NULL;
	}
	return line;
}
