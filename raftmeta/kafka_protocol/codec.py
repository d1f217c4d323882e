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
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import kafka.protocol.admin
import kafka.protocol.metadata  # noqa: F401  (registers the message classes walked below)
from kafka.protocol.api_message import ApiMessage
from kafka.protocol.schemas.fields.codecs import EncodeBufferPool

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
        decode_body, flexible = _request_reader(cls, version)
        request, _ = decode_body(memoryview(frame), _request_body_start(frame, flexible))
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
    for name, null_refused, kind, data_class in _null_checks(cls, version):
        value = getattr(message, name, None)
        if value is None:
            if null_refused:
                return name
            continue
        if kind is _STRUCT_ARRAY:
            for item in value:
                inner = _null_where_not_nullable(data_class, item, version)
                if inner is not None:
                    return f"{name}.{inner}"
        elif kind is _STRUCT:
            inner = _null_where_not_nullable(data_class, value, version)
            if inner is not None:
                return f"{name}.{inner}"
    return None


_PLAIN, _STRUCT, _STRUCT_ARRAY = "plain", "struct", "struct array"
"""What a field holds, as the codec walks it: a value, one nested structure, or a list of them."""

_NullCheck = tuple[str, bool, str, Any]
"""A field to look at for nulls: its name, whether a null is refused there, its kind and,
for a nested structure, its class."""
_NULL_CHECKS: dict[tuple[type[Any], int], tuple[_NullCheck, ...]] = {}


def _kind(field: Any) -> str:
    if field.is_struct_array():
        return _STRUCT_ARRAY
    return _STRUCT if field.is_struct() else _PLAIN


def _null_checks(cls: type[Any], version: int) -> tuple[_NullCheck, ...]:
    """The fields of ``cls`` at ``version`` that can hold a refused null or a nested structure,
    worked out from the schema once per class and version (every request is checked)."""
    key = (cls, version)
    checks = _NULL_CHECKS.get(key)
    if checks is None:
        found = []
        for name, field in cls.fields.items():
            if not field.for_version_q(version):
                continue
            null_refused = (
                field.is_array() or field.type_str in _NULLABLE_TYPES
            ) and not field.nullable_for_version_q(version)
            kind = _kind(field)
            if null_refused or kind is not _PLAIN:
                data_class = field.data_class if kind is not _PLAIN else None
                found.append((str(name), bool(null_refused), kind, data_class))
        checks = _NULL_CHECKS[key] = tuple(found)
    return checks


_REQUEST_HEADER_START = HEADER_PREFIX.size
"""The client id follows api_key, api_version and correlation_id."""
_INT16 = struct.Struct(">h")
_RequestReader = tuple[Callable[[memoryview, int], tuple[Any, int]], bool]
_REQUEST_READERS: dict[tuple[type[Any], int], _RequestReader] = {}


def _request_reader(cls: type[Any], version: int) -> _RequestReader:
    """The library's compiled decoder of ``cls``'s body at ``version``, and whether that
    version is flexible (header v2), looked up once per class and version."""
    key = (cls, version)
    reader = _REQUEST_READERS.get(key)
    if reader is None:
        if not 0 <= version <= cls.max_version:
            raise ValueError(f"invalid version {version}")
        flexible = bool(cls.flexible_version_q(version))
        decode_body = cls._struct.compiled_decode_from(
            version, compact=flexible, tagged=flexible, data_class=cls[None]
        )
        reader = _REQUEST_READERS[key] = (decode_body, flexible)
    return reader


def _request_body_start(frame: bytes, flexible: bool) -> int:
    """Where the body starts: after the request header (v1: the fixed prefix and a nullable
    client id; v2, for flexible versions, also tagged fields). The client id is decoded as
    the library's header reader decodes it, so a frame it refused is still refused."""
    end = len(frame)
    position = _REQUEST_HEADER_START
    if position + 2 > end:
        raise ValueError("the request header is cut short")
    (length,) = _INT16.unpack_from(frame, position)
    position += 2
    if length > 0:
        if position + length > end:
            raise ValueError("the client id is cut short")
        frame[position : position + length].decode("utf-8")
        position += length
    if flexible:
        tags, position = _uvarint(frame, position)
        for _ in range(tags):
            _, position = _uvarint(frame, position)
            size, position = _uvarint(frame, position)
            position += size
            if position > end:
                raise ValueError("a header tagged field is cut short")
    return position


def _uvarint(frame: bytes, position: int) -> tuple[int, int]:
    """An unsigned varint (at most 5 bytes) at ``position``, and the position after it."""
    value = 0
    for shift in range(0, 35, 7):
        byte = frame[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, position
    raise ValueError("a varint longer than 5 bytes")


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


_FieldPlan = tuple[bool, str, Any]
"""How :func:`_build` takes one field at one version: whether the version carries it, its
kind and, for a nested structure, its class."""


@dataclass(frozen=True, slots=True)
class _BuildPlan:
    """How :func:`_build` makes a message of one class at one version, worked out from the
    schema once per class and version (every response is built)."""

    fields: dict[str, _FieldPlan]
    defaults: tuple[tuple[str, Any], ...]
    """Each field the version carries, with the schema's default for it."""
    tagged: frozenset[str]
    """The tagged fields: a message records which of them were given."""
    api_message: bool
    """Whether the class is a whole message (it then also holds a header slot)."""


_BUILD_PLANS: dict[tuple[type[Any], int], _BuildPlan | None] = {}


def _build_plan(cls: type[Any], version: int) -> _BuildPlan | None:
    """The plan of ``cls`` at ``version``; ``None`` for a version outside the class's range,
    which the library's constructor then refuses."""
    key = (cls, version)
    if key in _BUILD_PLANS:
        return _BUILD_PLANS[key]
    struct = cls._struct
    plan = None
    if struct.min_version <= version <= struct.max_version:
        fields: dict[str, _FieldPlan] = {}
        for name, field in cls.fields.items():
            kind = _kind(field)
            data_class = field.data_class if kind is not _PLAIN else None
            fields[name] = (bool(field.for_version_q(version)), kind, data_class)
        plan = _BuildPlan(
            fields,
            tuple(
                (field.name, field.default)
                for field in struct._fields
                if field.for_version_q(version)
            ),
            frozenset(field.name for field in struct._fields if field._tag is not None),
            issubclass(cls, ApiMessage),
        )
    _BUILD_PLANS[key] = plan
    return plan


def _build(cls: type[Any], version: int, values: Mapping[str, Any]) -> Any:
    """The library's message of ``cls`` at ``version`` holding ``values``: what
    ``cls(version=version, **values)`` makes, without the constructor's walk of every field of
    every version (it cost more than encoding the message)."""
    plan = _build_plan(cls, version)
    if plan is None:
        return cls(version=version, **values)  # refused by the library, as it words it
    fields = plan.fields
    message = object.__new__(cls)
    if plan.api_message:
        message._header = message._min_version = message._max_version = None
    message._version = version
    message.unknown_tags = None
    for name, default in plan.defaults:
        setattr(message, name, default)
    tags: set[str] | None = None
    for name, value in values.items():
        carried, kind, data_class = fields[name]
        if not carried:
            continue  # a field this version does not carry
        if isinstance(value, str) and name == "error_message":
            value = fit_message(value)
        elif value is not None and kind is _STRUCT_ARRAY:
            value = [_build(data_class, version, item) for item in value]
        elif value is not None and kind is _STRUCT:
            value = _build(data_class, version, value)
        if name in plan.tagged:
            tags = {name} if tags is None else tags | {name}
        setattr(message, name, value)
    message.tags = tags
    return message


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
        encode_body, flexible = _response_writer(cls, version)
        message = _build(cls, version, values)
        with EncodeBufferPool.acquire() as out:
            encode_body(message, out)
            body = bytes(out.result())
    except Exception as error:
        raise CodecError(
            f"cannot encode {api_name(api_key)} v{version}: {type(error).__name__}: {error}"
        ) from None
    # The response header is the correlation id, then (header v1, for flexible versions
    # except ApiVersions, whose header is always v0) an empty set of tagged fields.
    flexible_header = api_key != API_VERSIONS_KEY and flexible
    tags = b"\0" if flexible_header else b""
    return _RESPONSE_PREFIX.pack(4 + len(tags) + len(body), correlation_id) + tags + body


_ResponseWriter = tuple[Callable[[Any, Any], None], bool]
_RESPONSE_WRITERS: dict[tuple[type[Any], int], _ResponseWriter] = {}


def _response_writer(cls: type[Any], version: int) -> _ResponseWriter:
    """The library's compiled encoder of ``cls``'s body at ``version`` (what the message's own
    ``encode`` looks up on every call), and whether that version is flexible; once per class
    and version."""
    key = (cls, version)
    writer = _RESPONSE_WRITERS.get(key)
    if writer is None:
        flexible = bool(cls.flexible_version_q(version))
        encode_body = cls._struct.compiled_encode_into(version, compact=flexible, tagged=flexible)
        writer = _RESPONSE_WRITERS[key] = (encode_body, flexible)
    return writer


_RESPONSE_PREFIX = struct.Struct(">ii")
"""A response frame's size and its header's correlation id."""


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
