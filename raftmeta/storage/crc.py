"""CRC-32 of a concatenation from the CRCs of its parts.

A snapshot's footer checksums the header and the body, but the header's record count is only
known after the body is written. Combining lets the writer checksum the body as it streams and
prepend the final header's CRC at the end, without reading the file back.

This is the GF(2) matrix method zlib uses for ``crc32_combine``, which Python's ``zlib`` does
not expose: appending n zero bytes to a message is a linear map on its CRC register, and
squaring that map doubles n.
"""

from __future__ import annotations

_POLYNOMIAL = 0xEDB88320  # CRC-32 (IEEE 802.3), reflected, as zlib.crc32 computes it


def _times(matrix: list[int], vector: int) -> int:
    total = 0
    row = 0
    while vector:
        if vector & 1:
            total ^= matrix[row]
        vector >>= 1
        row += 1
    return total


def _square(matrix: list[int]) -> list[int]:
    return [_times(matrix, column) for column in matrix]


def crc32_combine(crc_first: int, crc_second: int, length_second: int) -> int:
    """``zlib.crc32(a + b)`` given ``zlib.crc32(a)``, ``zlib.crc32(b)`` and ``len(b)``."""
    if length_second < 0:
        raise ValueError("length must not be negative")
    if length_second == 0:
        return crc_first
    # The operator for one zero bit, then squared to two and four zero bits.
    odd = [_POLYNOMIAL] + [1 << bit for bit in range(31)]
    even = _square(odd)
    odd = _square(even)
    crc = crc_first
    remaining = length_second
    while True:
        # Each pass squares the operator: 1, 2, 4, ... zero bytes.
        even = _square(odd)
        if remaining & 1:
            crc = _times(even, crc)
        remaining >>= 1
        if not remaining:
            break
        odd = _square(even)
        if remaining & 1:
            crc = _times(odd, crc)
        remaining >>= 1
        if not remaining:
            break
    return crc ^ crc_second
