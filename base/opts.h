/*
 * base/opts.h - size-versioned structs, the rule every public options and
 * output struct of every module follows (internal; below all modules).
 *
 * Public options and output structs start with `size_t size`, set by the
 * caller to sizeof the struct it was compiled against.  The library:
 *  - accepts a smaller size (an older caller): missing fields read as zero,
 *    which always means "default";
 *  - accepts a larger size only when every byte past the fields it knows is
 *    zero (a newer caller that left new fields unset), else -EINVAL;
 *  - rejects a size too small to hold the size field itself with -EINVAL.
 * Output structs are filled up to min(caller size, library size).
 */
#ifndef WHARF_BASE_OPTS_H
#define WHARF_BASE_OPTS_H

#include <errno.h>
#include <stddef.h>
#include <string.h>

/*
 * Copies the caller's options `src` (which starts with its size) into `dst`,
 * a zeroed struct of `dst_size` bytes.  NULL `src` leaves `dst` all-default.
 * Returns 0 or -EINVAL; on success dst's size field is dst_size.
 */
static inline int wbase_opts_copy(void *dst, size_t dst_size, const void *src)
{
	size_t src_size;

	memset(dst, 0, dst_size);
	if (src) {
		memcpy(&src_size, src, sizeof(src_size));
		if (src_size < sizeof(size_t))
			return -EINVAL;
		for (size_t i = dst_size; i < src_size; i++)
			if (((const unsigned char *)src)[i])
				return -EINVAL;
		memcpy(dst, src, src_size < dst_size ? src_size : dst_size);
	}
	memcpy(dst, &dst_size, sizeof(dst_size));
	return 0;
}

/*
 * Copies the library's output struct `src` (`src_size` bytes) into the
 * caller's `dst`, whose first field holds its size.  Returns 0 or -EINVAL.
 */
static inline int wbase_out_copy(void *dst, const void *src, size_t src_size)
{
	size_t dst_size;

	memcpy(&dst_size, dst, sizeof(dst_size));
	if (dst_size < sizeof(size_t))
		return -EINVAL;
	memcpy((char *)dst + sizeof(size_t), (const char *)src + sizeof(size_t),
	       (dst_size < src_size ? dst_size : src_size) - sizeof(size_t));
	if (dst_size > src_size)
		memset((char *)dst + src_size, 0, dst_size - src_size);
	return 0;
}

#endif /* WHARF_BASE_OPTS_H */
