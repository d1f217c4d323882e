from __future__ import annotations

from pathlib import Path

import pytest

from raftmeta.config.properties import parse_properties
from raftmeta.storage.errors import MetaPropertiesError, MetaPropertiesTooLargeError
from raftmeta.storage.meta_properties import (
    MAX_META_PROPERTIES_BYTES,
    MetaProperties,
    generate_id,
    read_meta_properties,
    write_meta_properties,
)


def test_round_trip_and_text_form(tmp_path: Path) -> None:
    path = tmp_path / "meta.properties"
    properties = MetaProperties(node_id=3, cluster_id="MkU3OEVBNTcwNTJENDM2Qg", directory_id="d1")
    write_meta_properties(path, properties)
    assert read_meta_properties(path) == properties
    lines = [line for line in path.read_text().splitlines() if not line.startswith("#")]
    assert lines == [
        "version=1",
        "node.id=3",
        "cluster.id=MkU3OEVBNTcwNTJENDM2Qg",
        "directory.id=d1",
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["meta.properties"]


def test_java_properties_conventions_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "meta.properties"
    path.write_text(
        "#Tue Jan 02 10:00:00 UTC 2024\n! another comment\n\n"
        "  node.id = 7\ncluster.id:abc\nversion=1\ndirectory.id=xyz\nsome.future.key=1\n"
    )
    assert read_meta_properties(path) == MetaProperties(7, "abc", "xyz")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("version=1\ncluster.id=a\ndirectory.id=b\n", "missing node.id"),
        ("version=0\nnode.id=1\ncluster.id=a\ndirectory.id=b\n", "unsupported version 0"),
        ("version=1\nnode.id=one\ncluster.id=a\ndirectory.id=b\n", "node.id='one' is not a whole"),
        ("version=1\nnode.id=1\ncluster.id=a b\ndirectory.id=b\n", "cluster id"),
        ("version=1\nnode.id=-2\ncluster.id=a\ndirectory.id=b\n", "negative"),
        ("version=1\nnode.id\n", "node.id='' is not a whole number"),
    ],
)
def test_unusable_files_name_the_file_and_the_problem(
    tmp_path: Path, text: str, reason: str
) -> None:
    path = tmp_path / "meta.properties"
    path.write_text(text)
    with pytest.raises(MetaPropertiesError) as caught:
        read_meta_properties(path)
    assert str(path) in str(caught.value) and reason in str(caught.value)


def test_generated_ids_look_like_kafka_uuids() -> None:
    ids = {generate_id() for _ in range(2_000)}
    assert len(ids) == 2_000
    assert all(len(i) == 22 and "=" not in i for i in ids)
    # One in 64 raw encodings starts with '-'; a command line would take it for an option.
    assert not any(i.startswith("-") for i in ids)


def test_parse_keeps_the_last_value_of_a_repeated_key() -> None:
    assert parse_properties("a=1\na=2\nb=x=y") == {"a": "2", "b": "x=y"}


def test_a_directory_formatted_before_directory_ids_still_opens_as_a_static_voter(
    tmp_path: Path,
) -> None:
    path = tmp_path / "meta.properties"
    path.write_text("version=1\nnode.id=2\ncluster.id=abc\n")
    properties = read_meta_properties(path)
    assert properties == MetaProperties(2, "abc", None)
    write_meta_properties(path, properties)
    assert "directory.id" not in path.read_text()
    assert read_meta_properties(path) == properties


def test_a_file_grown_far_past_any_format_is_refused_without_reading_it_whole(
    tmp_path: Path,
) -> None:
    """A meta.properties with a gigabyte of zeros after its lines was read and parsed whole
    (minutes, and the memory) and then accepted, since the zeros make one unknown key. The
    test's file is smaller, so that the code without the limit only reads it slowly."""
    path = tmp_path / "meta.properties"
    write_meta_properties(path, MetaProperties(node_id=1, cluster_id="abc", directory_id="d"))
    with path.open("ab") as file:
        file.truncate(2**26)  # sparse: costs no disk
    with pytest.raises(MetaPropertiesTooLargeError) as raised:
        read_meta_properties(path)
    message = str(raised.value)
    assert message.startswith(f"{path}: {2**26} bytes") and "\n" not in message
    assert isinstance(raised.value, MetaPropertiesError)


def test_a_file_at_the_size_limit_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "meta.properties"
    text = MetaProperties(node_id=1, cluster_id="abc", directory_id="d").to_text()
    padding = "#" * (MAX_META_PROPERTIES_BYTES - len(text) - 1) + "\n"
    path.write_text(text + padding)
    assert path.stat().st_size == MAX_META_PROPERTIES_BYTES
    assert read_meta_properties(path).node_id == 1
    with path.open("ab") as file:
        file.write(b"\n")
    with pytest.raises(MetaPropertiesTooLargeError):
        read_meta_properties(path)
