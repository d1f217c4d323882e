"""``raftmeta log dump`` fails (exit 1, one line naming the file) for every kind of damage it
shows, and succeeds only for a log a node could replay whole. Each case builds a small log by
hand: three good batches, then one thing broken."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from raftmeta.cli.main import main
from raftmeta.raft.batch import encode_records, make_batch
from raftmeta.records import TopicRecord, encode_record, uuid_from_str
from raftmeta.storage.codec import encode_batch

RECORD = encode_record(TopicRecord("orders", uuid_from_str("AAAAAAAAAAAAAAAAAAAAAA")))
FIRST = encode_batch(make_batch(0, 1, [RECORD, RECORD]))
SECOND = encode_batch(make_batch(2, 1, [RECORD]))
THIRD = encode_batch(make_batch(3, 2, [RECORD]))
GOOD = FIRST + SECOND + THIRD


def segment(base_offset: int) -> str:
    return f"{base_offset:020d}.log"


def raw_batch(
    base_offset: int, epoch: int, count: int, payload: bytes, *, flags: int = 0, version: int = 1
) -> bytes:
    """A batch with a correct CRC over whatever header fields and payload it is given."""
    fields = struct.pack(">qiiqbi", base_offset, epoch, count, 0, flags, len(payload))
    crc = zlib.crc32(payload, zlib.crc32(fields))
    return struct.pack(">BI", version, crc) + fields + payload


def flip_last_byte(data: bytes) -> bytes:
    return data[:-1] + bytes([data[-1] ^ 1])


Files = dict[str, bytes | None]
"""Segment file name to contents; None makes a directory in the segment's place."""

DAMAGED: dict[str, Callable[[], Files]] = {
    "torn header": lambda: {segment(0): GOOD + b"\x01\x02"},
    "torn payload": lambda: {segment(0): GOOD + FIRST[:-3]},
    "CRC mismatch in the middle": lambda: {segment(0): FIRST + flip_last_byte(SECOND) + THIRD},
    "CRC mismatch at the end": lambda: {segment(0): FIRST + SECOND + flip_last_byte(THIRD)},
    "zeros after the last batch": lambda: {segment(0): GOOD + bytes(4096)},
    "a segment of zeros": lambda: {segment(0): bytes(4096)},
    "zeros in place of a batch": lambda: {segment(0): FIRST + bytes(len(SECOND)) + THIRD},
    "unknown format version": lambda: {segment(0): FIRST + b"\x07" + SECOND[1:]},
    "payload length past the end": lambda: {
        segment(0): FIRST + struct.pack(">BIqiiqbi", 1, 0, 2, 1, 1, 0, 0, 2**31 - 1)
    },
    "negative payload length": lambda: {
        segment(0): FIRST + struct.pack(">BIqiiqbi", 1, 0, 2, 1, 1, 0, 0, -1)
    },
    "record count zero": lambda: {segment(0): FIRST + raw_batch(2, 1, 0, encode_records([RECORD]))},
    "negative epoch": lambda: {segment(0): FIRST + raw_batch(2, -1, 1, encode_records([RECORD]))},
    "unknown flags": lambda: {
        segment(0): FIRST + raw_batch(2, 1, 1, encode_records([RECORD]), flags=4)
    },
    "first batch not at the segment's base": lambda: {segment(5): GOOD},
    "gap between batches": lambda: {segment(0): FIRST + THIRD},
    "batch written twice": lambda: {segment(0): FIRST + FIRST + SECOND},
    "epoch goes back": lambda: {
        segment(0): FIRST
        + encode_batch(make_batch(2, 3, [RECORD]))
        + encode_batch(make_batch(3, 1, [RECORD]))
    },
    "gap between segments": lambda: {
        segment(0): FIRST,
        segment(5): encode_batch(make_batch(5, 1, [RECORD])),
    },
    "segments overlap": lambda: {segment(0): GOOD, segment(2): SECOND + THIRD},
    "epoch goes back across segments": lambda: {
        segment(0): FIRST + encode_batch(make_batch(2, 3, [RECORD])),
        segment(3): encode_batch(make_batch(3, 1, [RECORD])),
    },
    "damage in an earlier segment": lambda: {
        segment(0): FIRST + flip_last_byte(SECOND),
        segment(3): THIRD,
    },
    "payload not msgpack": lambda: {segment(0): FIRST + raw_batch(2, 1, 1, b"\xc1\xc1xyz")},
    "payload not a list": lambda: {segment(0): FIRST + raw_batch(2, 1, 1, b"\x01")},
    "payload a list of numbers": lambda: {segment(0): FIRST + raw_batch(2, 1, 1, b"\x91\x01")},
    "fewer records than the header says": lambda: {
        segment(0): FIRST + raw_batch(2, 1, 3, encode_records([RECORD]))
    },
    "more records than the header says": lambda: {
        segment(0): FIRST + raw_batch(2, 1, 1, encode_records([RECORD, RECORD]))
    },
    "a record that does not decode": lambda: {
        segment(0): FIRST + raw_batch(2, 1, 1, encode_records([b"\xff\xff\xff"]))
    },
    "a control record that does not decode": lambda: {
        segment(0): FIRST + raw_batch(2, 1, 1, encode_records([b"\xff\xff"]), flags=1)
    },
    "a file named like a segment but not one": lambda: {segment(0): GOOD, "garbage.log": b"xx"},
    "a segment name without its padding": lambda: {segment(0): GOOD, "4.log": b""},
    "a directory in a segment's place": lambda: {segment(0): GOOD, segment(4): None},
}

INTACT: dict[str, Callable[[], Files]] = {
    "one segment": lambda: {segment(0): GOOD},
    "two segments": lambda: {segment(0): FIRST + SECOND, segment(3): THIRD},
    "an empty segment after the last batch": lambda: {segment(0): GOOD, segment(4): b""},
    "only an empty segment": lambda: {segment(0): b""},
    "a log that starts later": lambda: {segment(2): SECOND + THIRD},
}


def write_log(directory: Path, files: Files) -> None:
    directory.mkdir()
    for name, contents in files.items():
        if contents is None:
            (directory / name).mkdir()
        else:
            (directory / name).write_bytes(contents)


@pytest.mark.parametrize("case", sorted(DAMAGED))
def test_log_dump_fails_on_every_kind_of_damage(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = tmp_path / "log"
    write_log(directory, DAMAGED[case]())
    assert main(["log", "dump", str(directory)]) == 1, case
    error = capsys.readouterr().err
    assert len(error.strip().splitlines()) == 1, error
    assert str(directory) in error and "Traceback" not in error


@pytest.mark.parametrize("case", sorted(INTACT))
def test_log_dump_succeeds_on_an_intact_log(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = tmp_path / "log"
    write_log(directory, INTACT[case]())
    assert main(["log", "dump", str(directory), "--json"]) == 0, capsys.readouterr().err
    assert capsys.readouterr().err == ""
