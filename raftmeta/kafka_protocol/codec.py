"""The one door to the Kafka protocol codec library (kafka-python 3's ``kafka.protocol``).

kafka-python 3 generates its request and response classes from Kafka's own JSON message
schemas, with flexible versions, tagged fields and request header v1/v2; it is pure Python, and
it is also one of the real clients the interop tests run, so one pinned package serves both.
Nothing else in raftmeta imports it: the rest of the Kafka listener sees the functions below,
request objects with Kafka's field names in snake_case, and plain mappings for responses.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import kafka.protocol.admin
import kafka.protocol.metadata  # noqa: F401  (registers the message classes walked below)
from kafka.protocol.api_message import ApiMessage

import raftmeta.kafka_protocol.messages  # noqa: F401  (the schemas the library lacks)

API_VERSIONS_KEY = 18
HEADER_PREFIX = struct.Struct(">hhi")
"""Every request header starts with api_key, api_version and correlation_id."""


MAX_ERROR_MESSAGE_CHARS = 1024
"""The longest ``error_message`` written: a message quoting a hostile name (up to 32 KiB, or
megabytes in a compact string) would otherwise outgrow the name, and a 2-byte string length."""

NO_AUTHORIZED_OPERATIONS: Any = None
"""An ``authorized_operations`` field's value when the client did not ask for them (Kafka's
INT32_MIN; the library writes it for ``None``)."""


class CodecError(Exception):
    """A frame the codec cannot read or a response it cannot write; one line."""


@dataclass(frozen=True, slots=True)
class RequestHead:
    """The fixed start of a request header, readable before the body's schema is known."""

    api_key: int
    api_version: int
    correlation_id: int


def _message_classes() -> Iterator[type[Any]]:
    pending: list[type[Any]] = [ApiMessage]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls is not ApiMessage and getattr(cls, "_class_version", 1) is None:
            yield cls


_REQUESTS: dict[int, type[Any]] = {}
_RESPONSES: dict[int, type[Any]] = {}
for _cls in _message_classes():
    (_REQUESTS if _cls.type == "request" else _RESPONSES)[_cls.API_KEY] = _cls
del _cls


def api_name(api_key: int) -> str:
    """Kafka's name for the API ("Metadata"), or ``api_key=N`` for one the library lacks."""
    cls = _REQUESTS.get(api_key)
    return f"api_key={api_key}" if cls is None else str(cls.name).removesuffix("Request")


def peek(frame: bytes) -> RequestHead:
    """The api key, version and correlation id at the start of a request frame's payload."""
    if len(frame) < HEADER_PREFIX.size:
        raise CodecError(f"request of {len(frame)} bytes is shorter than a request header")
    return RequestHead(*HEADER_PREFIX.unpack_from(frame))


def decode_request(frame: bytes, api_key: int, version: int) -> Any:
    """The request body of ``frame`` (header included) as the library's object."""
    cls = _REQUESTS.get(api_key)
    if cls is None:
        raise CodecError(f"no schema for api_key {api_key}")
    try:
        request = cls.decode(frame, version=version, header=True)
    except Exception as error:  # the library raises many kinds on bad bytes
        raise CodecError(
            f"undecodable {api_name(api_key)} v{version} request: {type(error).__name__}"
        ) from None
    null = _null_where_not_nullable(cls, request, version)
    if null is not None:
        raise CodecError(
            f"undecodable {api_name(api_key)} v{version} request: non-nullable field {null} "
            "was serialized as null"
        )
    return request


def _null_where_not_nullable(cls: type[Any], message: Any, version: int) -> str | None:
    """The first field of ``message`` that is null where its schema, at ``version``, does not
    allow it; ``None`` when there is none.

    The library reads a length of -1 as null for any string or array, nullable or not; Kafka's
    generated readers refuse it, so the request cannot be parsed and the connection closes.
    """
    for name, field in cls.fields.items():
        if not field.for_version_q(version):
            continue
        value = getattr(message, name, None)
        if value is None:
            if (field.is_array() or field.type_str in _NULLABLE_TYPES) and not (
                field.nullable_for_version_q(version)
            ):
                return str(name)
            continue
        if field.is_struct_array():
            for item in value:
                inner = _null_where_not_nullable(field.data_class, item, version)
                if inner is not None:
                    return f"{name}.{inner}"
        elif field.is_struct():
            inner = _null_where_not_nullable(field.data_class, value, version)
            if inner is not None:
                return f"{name}.{inner}"
    return None


_NULLABLE_TYPES = frozenset({"string", "bytes", "records"})
"""Types whose wire form can say null; the others always carry a value."""


def can_encode(api_key: int, version: int) -> bool:
    cls = _RESPONSES.get(api_key)
    return cls is not None and 0 <= version <= cls.max_version


def has_top_level_error(api_key: int, version: int) -> bool:
    """Whether the response of this API and version has a top-level ``error_code``."""
    cls = _RESPONSES.get(api_key)
    field = None if cls is None else cls.fields.get("error_code")
    return field is not None and bool(field.for_version_q(version))


def _build(cls: type[Any], version: int, values: Mapping[str, Any]) -> Any:
    fields = cls.fields
    kwargs: dict[str, Any] = {}
    for name, value in values.items():
        field = fields[name]
        if not field.for_version_q(version):
            continue  # a field this version does not carry
        if isinstance(value, str) and name == "error_message":
            value = fit_message(value)
        elif value is not None and field.is_struct_array():
            value = [_build(field.data_class, version, item) for item in value]
        elif value is not None and field.is_struct():
            value = _build(field.data_class, version, value)
        kwargs[name] = value
    return cls(version=version, **kwargs)


def fit_message(message: str) -> str:
    """``message`` cut to ``MAX_ERROR_MESSAGE_CHARS``, marked as cut."""
    if len(message) <= MAX_ERROR_MESSAGE_CHARS:
        return message
    return message[: MAX_ERROR_MESSAGE_CHARS - 3] + "..."


def encode_response(
    api_key: int, version: int, correlation_id: int, values: Mapping[str, Any]
) -> bytes:
    """A framed response (size, header v0/v1 as the version asks, body) from plain values:
    nested structures are mappings and lists of mappings, UUIDs are 16 bytes or ``None``.
    Fields the version does not carry are dropped, as Kafka's generated code does."""
    cls = _RESPONSES.get(api_key)
    if cls is None or not 0 <= version <= cls.max_version:
        raise CodecError(f"cannot encode {api_name(api_key)} v{version}")
    try:
        message = _build(cls, version, values)
        message.with_header(correlation_id=correlation_id)
        return bytes(message.encode(header=True, framed=True))
    except Exception as error:
        raise CodecError(
            f"cannot encode {api_name(api_key)} v{version}: {type(error).__name__}: {error}"
        ) from None


def uuid_value(raw: bytes | None) -> uuid.UUID:
    """A topic id as the codec writes it (all zeros for none)."""
    return uuid.UUID(bytes=raw) if raw and len(raw) == 16 else uuid.UUID(int=0)


# ---------------------------------------------------------------------------- the client side


def encode_request(
    api_key: int, version: int, correlation_id: int, client_id: str, values: Mapping[str, Any]
) -> bytes:
    """A framed request (size, header v1/v2 as the version asks, body) from plain values, as
    :func:`encode_response` takes them; for raftmeta's own tools talking to a KAFKA listener."""
    cls = _REQUESTS.get(api_key)
    if cls is None or not 0 <= version <= cls.max_version:
        raise CodecError(f"cannot encode {api_name(api_key)} v{version} requests")
    try:
        message = _build(cls, version, values)
        message.with_header(correlation_id=correlation_id, client_id=client_id)
        return bytes(message.encode(header=True, framed=True))
    except Exception as error:
        raise CodecError(
            f"cannot encode {api_name(api_key)} v{version}: {type(error).__name__}: {error}"
        ) from None


def decode_response(frame: bytes, api_key: int, version: int) -> Any:
    """A response frame's payload (header included) as the library's object."""
    cls = _RESPONSES.get(api_key)
    if cls is None:
        raise CodecError(f"no schema for api_key {api_key}")
    try:
        return cls.decode(frame, version=version, header=True)
    except Exception as error:
        raise CodecError(
            f"undecodable {api_name(api_key)} v{version} response: {type(error).__name__}"
        ) from None


def correlation_id_of(frame: bytes) -> int:
    """The correlation id that starts every response header."""
    if len(frame) < 4:
        raise CodecError(f"response of {len(frame)} bytes is shorter than a response header")
    return int(struct.unpack_from(">i", frame)[0])
