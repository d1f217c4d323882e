"""Request and response classes, for the codec, of the Kafka APIs the codec library knows by
key but ships no schema for: UnregisterBroker (64), AddRaftVoter (80) and RemoveRaftVoter (81).

Built by the library from the JSON schemas in :mod:`raftmeta.kafka_protocol.schemas`, so they
encode, decode and carry tagged fields exactly as the library's own classes do; importing this
module registers them (the codec walks every message class)."""

from __future__ import annotations

import types
from typing import Any

from kafka.protocol.api_message import ApiMessage

SCHEMAS = "raftmeta.kafka_protocol.schemas"
APIS = ("UnregisterBroker", "AddRaftVoter", "RemoveRaftVoter")


def _message_class(name: str) -> type[Any]:
    """The library's class for the schema ``<name>.json``."""
    made: type[Any] = types.new_class(name, (ApiMessage,), {"load_json": SCHEMAS})
    return made


MESSAGES = tuple(_message_class(f"{api}{kind}") for api in APIS for kind in ("Request", "Response"))
"""Held here for the process's life: the library keeps only weak references to them."""
