"""The library's version, one place for the root BUILD and the programs."""

# The soname's number is its first field, raised whenever the ABI breaks
# (abi/README.md).
WHARF_VERSION = "0.1.0"
