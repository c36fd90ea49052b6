/*
 * targets/nvmf/nqn.h - NVMe Qualified Names (NVMe Base 1.4 7.9) and the
 * other fixed-size text fields of NVMe structures: format check of a
 * configured or received NQN, bounded reads of the NQN fields in Connect
 * data, and space-padded ASCII fields (serial number, model, transport
 * address).
 */
#ifndef WHARF_TARGETS_NVMF_NQN_H
#define WHARF_TARGETS_NVMF_NQN_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * nvmf_nqn_valid() - whether a NUL-terminated string is a well-formed NQN.
 * @nqn: the string, or NULL.
 *
 * Accepted: 1..223 bytes of printable ASCII without spaces, starting with
 * "nqn." followed by a date "yyyy-mm" (month 01..12), a '.', and at least
 * one more character (the reverse domain name and optional ':' suffix).
 * That covers the UUID form ("nqn.2014-08.org.nvmexpress:uuid:...") and
 * the discovery NQN.
 *
 * Return: true if well formed.
 * Context: any thread; pure, non-blocking.
 */
bool nvmf_nqn_valid(const char *nqn);

/**
 * nvmf_nqn_field() - the length of the string in a fixed-size field.
 * @field: the field's bytes (peer data).
 * @size: the field size (256 for NQN fields).
 *
 * Return: the length before the first NUL, or -1 if the field holds no
 * NUL (not a string).
 * Context: any thread; pure, non-blocking.
 */
int nvmf_nqn_field(const char *field, size_t size);

/**
 * nvmf_ascii_field() - fill a space-padded ASCII field (no NUL).
 * @dst: the field.
 * @size: its size.
 * @src: a NUL-terminated string; truncated to @size bytes.
 *
 * Context: any thread; pure, non-blocking.
 */
void nvmf_ascii_field(char *dst, size_t size, const char *src);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_TARGETS_NVMF_NQN_H */
