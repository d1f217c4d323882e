"""The codec's per-request shortcuts read and write exactly what the library's general path does.

``decode_request`` skips the request header itself and calls the library's compiled body decoder;
``encode_response`` writes the response header itself and builds from a per-version plan of the
schema. Here every served API at every served version is fuzzed (hostile values, odd client ids,
header tagged fields) against the library's own ``decode(header=True)`` and
``with_header``/``encode(header=True, framed=True)``, and the straightforward schema walks the
shortcuts replaced.
"""

from __future__ import annotations

import struct
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raftmeta.kafka_protocol import codec
from raftmeta.server.kafka.listener import SERVED, SESSION_APIS
from tests.kafka.test_hostile_input import primitive

EXAMPLES = 10
"""Hypothesis examples per API version and test: every served version is drawn, so the mix of
nulls, long names and extreme numbers is spread over many; a few seconds of CPU in all."""
SERVED_VERSIONS = sorted(
    {
        (api_key, version)
        for api_key, (low, high) in [
            *((key, (api.low, api.high)) for key, api in SERVED.items()),
            *SESSION_APIS.items(),
        ]
        for version in range(low, high + 1)
    }
)
CLIENT_IDS = st.one_of(st.none(), st.text(max_size=20))


def value_of(type_name: str) -> st.SearchStrategy[Any]:
    """The hostile fuzz's values, and a response's ``bitfield`` (a set of bit numbers, as
    ``authorized_operations``)."""
    if type_name == "bitfield":
        return st.one_of(st.none(), st.sets(st.integers(0, 31), max_size=4))
    return primitive(type_name)


def values_of(cls: type[Any], version: int) -> st.SearchStrategy[dict[str, Any]]:
    """Every field ``cls`` carries at ``version`` (as the hostile fuzz draws them), and some
    it does not carry, which are dropped."""
    fields: dict[str, st.SearchStrategy[Any]] = {}
    for name, field in cls.fields.items():
        if field.is_struct_array():
            items = st.lists(values_of(field.data_class, version), max_size=3)
            fields[name] = st.one_of(st.none(), items)
        elif field.is_struct():
            fields[name] = st.one_of(st.none(), values_of(field.data_class, version))
        elif field.is_array():
            inner = value_of(field.type_str.removeprefix("[]"))
            fields[name] = st.one_of(st.none(), st.lists(inner, max_size=3))
        else:
            fields[name] = value_of(field.type_str)
    return st.fixed_dictionaries(fields)


def reference_null(cls: type[Any], message: Any, version: int) -> str | None:
    """The schema walk ``decode_request`` checked nulls with before it kept a plan."""
    for name, field in cls.fields.items():
        if not field.for_version_q(version):
            continue
        value = getattr(message, name, None)
        if value is None:
            if (field.is_array() or field.type_str in ("string", "bytes", "records")) and not (
                field.nullable_for_version_q(version)
            ):
                return str(name)
            continue
        if field.is_struct_array():
            for item in value:
                inner = reference_null(field.data_class, item, version)
                if inner is not None:
                    return f"{name}.{inner}"
        elif field.is_struct():
            inner = reference_null(field.data_class, value, version)
            if inner is not None:
                return f"{name}.{inner}"
    return None


def reference_decode(frame: bytes, api_key: int, version: int) -> Any:
    """The request as the library's own header-and-body decoder reads it, or the exception."""
    cls = codec._REQUESTS[api_key]
    try:
        request = cls.decode(frame, version=version, header=True)
    except Exception as error:
        return error
    if reference_null(cls, request, version) is not None:
        return codec.CodecError("null")
    return request


def reference_build(cls: type[Any], version: int, values: Any) -> Any:
    kwargs = {}
    for name, value in values.items():
        field = cls.fields[name]
        if not field.for_version_q(version):
            continue
        if isinstance(value, str) and name == "error_message":
            value = codec.fit_message(value)
        elif value is not None and field.is_struct_array():
            value = [reference_build(field.data_class, version, item) for item in value]
        elif value is not None and field.is_struct():
            value = reference_build(field.data_class, version, value)
        kwargs[name] = value
    return cls(version=version, **kwargs)


def reference_encode(api_key: int, version: int, correlation_id: int, values: Any) -> bytes:
    message = reference_build(codec._RESPONSES[api_key], version, values)
    message.with_header(correlation_id=correlation_id)
    return bytes(message.encode(header=True, framed=True))


def with_header_tags(frame: bytes, client_id: str | None, tags: list[tuple[int, bytes]]) -> bytes:
    """``frame`` (a flexible request's payload with an empty header tag section) with
    ``tags`` written into its header instead."""
    start = codec.HEADER_PREFIX.size + 2 + len((client_id or "").encode())
    assert frame[start] == 0, "an empty tag section"

    def uvarint(value: int) -> bytes:
        out = b""
        while value >= 0x80:
            out += bytes([value & 0x7F | 0x80])
            value >>= 7
        return out + bytes([value])

    section = uvarint(len(tags)) + b"".join(
        uvarint(tag) + uvarint(len(data)) + data for tag, data in tags
    )
    return frame[:start] + section + frame[start + 1 :]


def same_request(frame: bytes, api_key: int, version: int) -> None:
    expected = reference_decode(frame, api_key, version)
    if isinstance(expected, Exception):
        with pytest.raises(codec.CodecError):
            codec.decode_request(frame, api_key, version)
    else:
        assert codec.decode_request(frame, api_key, version) == expected


@pytest.mark.parametrize(("api_key", "version"), SERVED_VERSIONS)
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), client_id=CLIENT_IDS, correlation_id=st.integers(-(2**31), 2**31 - 1))
def test_requests_decode_as_the_library_decodes_them(
    api_key: int, version: int, data: st.DataObject, client_id: str | None, correlation_id: int
) -> None:
    cls = codec._REQUESTS[api_key]
    values = data.draw(values_of(cls, version))
    message = reference_build(cls, version, values)
    message.with_header(correlation_id=correlation_id, client_id=client_id)
    try:
        frame = bytes(message.encode(header=True, framed=False))
    except Exception:
        return  # the library cannot write it (a string too long for its version)
    same_request(frame, api_key, version)
    if cls.flexible_version_q(version):
        tags = data.draw(st.lists(st.tuples(st.integers(0, 300), st.binary(max_size=200))))
        same_request(with_header_tags(frame, client_id, tags), api_key, version)
    cut = data.draw(st.integers(0, len(frame)))
    same_request(frame[:cut], api_key, version)


def test_a_client_id_that_is_not_utf8_is_refused_as_before() -> None:
    frame = struct.pack(">hhih", 19, 4, 1, 2) + b"\xff\xfe" + b"\0" * 16
    assert isinstance(reference_decode(frame, 19, 4), Exception)
    with pytest.raises(codec.CodecError):
        codec.decode_request(frame, 19, 4)


@pytest.mark.parametrize(("api_key", "version"), SERVED_VERSIONS)
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), correlation_id=st.integers(-(2**31), 2**31 - 1))
def test_responses_encode_as_the_library_encodes_them(
    api_key: int, version: int, data: st.DataObject, correlation_id: int
) -> None:
    values = data.draw(values_of(codec._RESPONSES[api_key], version))
    try:
        expected: bytes | None = reference_encode(api_key, version, correlation_id, values)
    except Exception:
        expected = None
    if expected is None:
        with pytest.raises(codec.CodecError):
            codec.encode_response(api_key, version, correlation_id, values)
    else:
        assert codec.encode_response(api_key, version, correlation_id, values) == expected
