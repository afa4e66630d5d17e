/*
 * libFuzzer target for the filter header parser: any bytes, as a whole
 * file, must give a status and never a crash, and a header the parser
 * accepts must be one that bloom_header_build writes for its fields.
 * Run with `make fuzz`.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bloom.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char again[BLOOM_HEADER_SIZE];
	struct bloom_header h;
	struct params p;

	if (bloom_header_parse(data, size, size, &h) != BLOOM_OK)
		return 0;
	if (h.file_size != size || h.nbits % BLOCK_BITS != 0 ||
	    h.hashes == 0 || h.hashes > HASHES_MAX)
		abort();
	p.capacity = h.capacity;
	p.target_fpr = h.target_fpr;
	p.nblocks = h.nbits / BLOCK_BITS;
	p.hashes = h.hashes;
	bloom_header_build(again, &p, h.seed);
	/* All but the inserted counter, at 72, is fixed by the fields. */
	if (memcmp(again, data, 72) != 0 ||
	    memcmp(again + 80, data + 80, BLOOM_HEADER_SIZE - 80) != 0)
		abort();
	return 0;
}
