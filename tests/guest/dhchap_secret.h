// tests/guest/dhchap_secret.h - DH-HMAC-CHAP secrets for the guest tests
// of in-band authentication, in the DHHC-1 text nvme-cli and nvmet take.
#ifndef WHARF_TESTS_GUEST_DHCHAP_SECRET_H
#define WHARF_TESTS_GUEST_DHCHAP_SECRET_H

#include <stdint.h>

#include <string>

#include <gtest/gtest.h>

extern "C" {
#include "proto/nvme/auth.h"
}

namespace nvmf_guest
{

// A DHHC-1 secret of @len bytes @fill, @fill + 1, ...; transform @hash.
inline std::string DhchapSecret(uint8_t fill, uint8_t len, uint8_t hash)
{
	nvme_auth_key k = {};
	char text[NVME_AUTH_KEY_TEXT_MAX];
	k.hash = hash;
	k.len = len;
	for (uint8_t i = 0; i < len; i++)
		k.key[i] = (uint8_t)(fill + i);
	EXPECT_GT(nvme_auth_key_format(&k, text, sizeof(text)), 0);
	return text;
}

} // namespace nvmf_guest

#endif // WHARF_TESTS_GUEST_DHCHAP_SECRET_H
