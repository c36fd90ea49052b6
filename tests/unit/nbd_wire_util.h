// Big-endian byte helpers for the tests that build or read NBD wire
// messages by hand (tests/unit/nbd_proto_test, tests/guest/nbd_test).
#ifndef WHARF_TESTS_UNIT_NBD_WIRE_UTIL_H
#define WHARF_TESTS_UNIT_NBD_WIRE_UTIL_H

#include <stdint.h>

#include <string>
#include <vector>

namespace nbd_wire
{

using Bytes = std::vector<uint8_t>;

// Appends the low @n bytes of @v, most significant first.
inline void Put(Bytes *b, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--)
		b->push_back((uint8_t)(v >> (8 * i)));
}

inline uint64_t Get(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

// The payload of NBD_OPT_INFO / NBD_OPT_GO: the name and the info
// requests.
inline Bytes GoPayload(const std::string &name, std::vector<uint16_t> reqs)
{
	Bytes p;
	Put(&p, name.size(), 4);
	p.insert(p.end(), name.begin(), name.end());
	Put(&p, reqs.size(), 2);
	for (uint16_t r : reqs)
		Put(&p, r, 2);
	return p;
}

} // namespace nbd_wire

#endif // WHARF_TESTS_UNIT_NBD_WIRE_UTIL_H
