from __future__ import annotations

import collections
import dataclasses
import struct
import zlib

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from raftmeta.raft.batch import Batch, decode_records, encode_records, make_batch
from raftmeta.storage.codec import (
    BATCH_HEADER_SIZE,
    BatchScanner,
    StopReason,
    decode_batch,
    decode_batch_header,
    decode_batches,
    encode_batch,
    encode_batches,
    encoded_size,
    scan_batches,
)
from raftmeta.storage.errors import BatchDecodeError

from .support import batch_run


def test_one_batch_round_trips_every_field() -> None:
    batch = make_batch(42, 7, [b"a", b"bc"], timestamp_ms=1_700_000_000_123, is_control=True)
    data = encode_batch(batch)
    assert len(data) == encoded_size(batch) == BATCH_HEADER_SIZE + len(batch.payload)
    assert decode_batch(data) == batch
    assert decode_batch(data).records() == [b"a", b"bc"]


def test_header_layout_is_pinned() -> None:
    """Segments and snapshots outlive the code; this fails if the byte layout ever drifts."""
    batch = Batch(base_offset=5, epoch=2, record_count=1, payload=b"\x91\xc4\x01z", timestamp_ms=9)
    data = encode_batch(batch)
    fields = struct.pack(">qiiqbi", 5, 2, 1, 9, 0, 4)
    crc = zlib.crc32(b"\x91\xc4\x01z", zlib.crc32(fields))
    assert data == b"\x01" + struct.pack(">I", crc) + fields + b"\x91\xc4\x01z"


def test_many_batches_round_trip_and_report_a_clean_end() -> None:
    batches = batch_run(10, [1, 1, 2, 5])
    data = encode_batches(batches)
    result = scan_batches(data, expected_base_offset=10)
    assert list(result.batches) == batches
    assert result.stop.clean
    assert result.valid_length == len(data)
    assert decode_batches(data, expected_base_offset=10) == batches


def test_empty_buffer_is_a_clean_end() -> None:
    result = scan_batches(b"")
    assert result.batches == ()
    assert result.stop.reason is StopReason.CLEAN_END


def _stop_for(
    data: bytes, *, expected_base_offset: int | None = None, min_epoch: int | None = None
) -> tuple[int, StopReason, int]:
    result = scan_batches(data, expected_base_offset=expected_base_offset, min_epoch=min_epoch)
    return len(result.batches), result.stop.reason, result.stop.position


def test_each_kind_of_damage_is_named_with_its_position() -> None:
    batches = batch_run(0, [1, 1])
    first = encode_batch(batches[0])
    second = encode_batch(batches[1])
    good = first + second
    n = len(first)

    assert _stop_for(good[: n + 10]) == (1, StopReason.TORN_HEADER, n)
    assert _stop_for(good[:-1]) == (1, StopReason.TORN_PAYLOAD, n)

    flipped = bytearray(good)
    flipped[n + BATCH_HEADER_SIZE] ^= 0x10
    assert _stop_for(bytes(flipped)) == (1, StopReason.CRC_MISMATCH, n)

    versioned = bytearray(good)
    versioned[n] = 9
    assert _stop_for(bytes(versioned)) == (1, StopReason.BAD_VERSION, n)

    assert _stop_for(good, expected_base_offset=1) == (0, StopReason.NOT_CONTIGUOUS, 0)
    gap = first + encode_batch(batch_run(4, [1])[0])
    assert _stop_for(gap) == (1, StopReason.NOT_CONTIGUOUS, n)

    regression = encode_batch(batch_run(0, [3])[0]) + second
    assert _stop_for(regression) == (1, StopReason.EPOCH_REGRESSION, n)
    assert _stop_for(first, min_epoch=2) == (0, StopReason.EPOCH_REGRESSION, 0)


def _forge(base: int, epoch: int, count: int, flags: int, payload: bytes = b"\x90") -> bytes:
    """A batch with a valid CRC over fields no honest encoder writes."""
    fields = struct.pack(">qiiqbi", base, epoch, count, 0, flags, len(payload))
    crc = zlib.crc32(payload, zlib.crc32(fields))
    return b"\x01" + struct.pack(">I", crc) + fields + payload


@pytest.mark.parametrize(
    ("base", "epoch", "count", "flags"),
    [(0, 1, 0, 0), (-1, 1, 1, 0), (0, -1, 1, 0), (0, 1, 1, 0x04)],
)
def test_headers_with_impossible_values_are_rejected(
    base: int, epoch: int, count: int, flags: int
) -> None:
    assert _stop_for(_forge(base, epoch, count, flags))[1] is StopReason.INVALID_HEADER


def test_negative_payload_length_is_invalid_not_torn() -> None:
    data = bytearray(encode_batch(batch_run(0, [1])[0]))
    data[30:34] = struct.pack(">i", -5)
    assert _stop_for(bytes(data))[1] is StopReason.INVALID_HEADER


def test_all_or_nothing_decoding_raises_a_typed_error() -> None:
    data = encode_batches(batch_run(0, [1, 1]))
    with pytest.raises(BatchDecodeError) as caught:
        decode_batches(data[:-3])
    assert caught.value.stop.reason is StopReason.TORN_PAYLOAD  # type: ignore[attr-defined]
    assert "torn payload" in str(caught.value)
    with pytest.raises(BatchDecodeError):
        decode_batch(data)


@pytest.mark.parametrize(
    "batch",
    [
        Batch(base_offset=-1, epoch=0, record_count=1, payload=b""),
        Batch(base_offset=0, epoch=-1, record_count=1, payload=b""),
        Batch(base_offset=0, epoch=0, record_count=0, payload=b""),
        Batch(base_offset=0, epoch=2**31, record_count=1, payload=b""),
    ],
)
def test_encoder_refuses_values_the_layout_cannot_hold(batch: Batch) -> None:
    with pytest.raises(ValueError):
        encode_batch(batch)


def test_scanner_is_lazy_and_respects_a_window() -> None:
    batches = batch_run(0, [1, 1, 1])
    data = b"junk" + encode_batches(batches) + b"tail"
    scanner = BatchScanner(data, start=4, end=len(data) - 4)
    iterator = iter(scanner)
    assert next(iterator) == batches[0]
    assert scanner.stop is None
    assert list(iterator) == batches[1:]
    assert scanner.stop is not None and scanner.stop.clean


@settings(max_examples=200, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=6),
    data=st.data(),
)
def test_any_single_bit_flip_stops_at_the_batch_it_hit(
    sizes: list[int], data: st.DataObject
) -> None:
    batches = batch_run(0, [1] * len(sizes), records=1)
    batches = [
        make_batch(b.base_offset, b.epoch, [bytes([i]) * size], timestamp_ms=i)
        for i, (b, size) in enumerate(zip(batches, sizes, strict=True))
    ]
    encoded = [encode_batch(b) for b in batches]
    buffer = bytearray(b"".join(encoded))
    bit = data.draw(st.integers(min_value=0, max_value=len(buffer) * 8 - 1))
    buffer[bit // 8] ^= 1 << (bit % 8)
    hit, start = 0, 0
    while start + len(encoded[hit]) <= bit // 8:
        start += len(encoded[hit])
        hit += 1
    result = scan_batches(bytes(buffer), expected_base_offset=0)
    assert list(result.batches) == batches[:hit]
    assert result.valid_length == start
    assert not result.stop.clean


def test_batch_header_reads_the_fields_the_encoder_wrote() -> None:
    """The analytics planner seeks over payloads with this; it must agree with the layout."""
    batch = make_batch(41, 7, [b"a", b"bc"], timestamp_ms=5, is_control=True)
    encoded = encode_batch(batch)
    header = decode_batch_header(encoded[:BATCH_HEADER_SIZE])
    assert header.base_offset == 41
    assert header.epoch == 7
    assert header.record_count == 2
    assert header.is_control
    assert header.size == len(encoded)


def test_batches_built_without_the_dataclass_init_are_real_frozen_batches() -> None:
    """make_batch and the scanner build batches with plain slot stores; what they build must
    be indistinguishable from a Batch made the ordinary way."""
    for is_control in (False, True):
        ordinary = Batch(
            base_offset=3,
            epoch=2,
            record_count=2,
            payload=encode_records([b"a", b"b"]),
            timestamp_ms=11,
            is_control=is_control,
        )
        made = make_batch(3, 2, [b"a", b"b"], timestamp_ms=11, is_control=is_control)
        scanned = decode_batch(encode_batch(ordinary))
        for batch in (made, scanned):
            assert type(batch) is Batch
            assert batch == ordinary
            assert hash(batch) == hash(ordinary)
            assert batch.is_control is is_control
            with pytest.raises(dataclasses.FrozenInstanceError):
                batch.epoch = 9  # type: ignore[misc]


def test_records_pack_alike_from_a_list_a_tuple_or_any_sequence() -> None:
    records = [b"a", b"bc", b""]
    packed = encode_records(records)
    assert packed == msgpack.packb(records, use_bin_type=True)
    assert encode_records(tuple(records)) == packed
    assert encode_records(collections.deque(records)) == packed
    assert decode_records(packed) == records


@pytest.mark.parametrize(
    "payload",
    [
        msgpack.packb({"a": b"x"}, use_bin_type=True),
        msgpack.packb([b"x", "text"], use_bin_type=True),
        msgpack.packb([b"x", 1], use_bin_type=True),
        msgpack.packb(b"x", use_bin_type=True),
    ],
)
def test_a_payload_that_is_not_a_list_of_byte_strings_is_refused(payload: bytes) -> None:
    with pytest.raises(ValueError, match="not a list of byte strings"):
        decode_records(payload)
