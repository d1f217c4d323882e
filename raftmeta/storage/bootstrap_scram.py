"""``bootstrap.scram``: the SCRAM credentials ``raftmeta format --add-scram`` chose.

Kafka writes them into ``bootstrap.checkpoint`` as UserScramCredentialRecords; raftmeta keeps
them beside ``bootstrap.features``, one JSON object a line (name, mechanism id, iterations and
the base64 salt, StoredKey and ServerKey), because storage sits below the record layer. The
controller that first leads an empty log writes them as records, which are then the truth.
The file holds no password, but its keys are as good as one against this cluster: it is
written readable by its owner only.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from raftmeta.storage.errors import StorageError
from raftmeta.storage.fsutil import write_file_atomically

BOOTSTRAP_SCRAM_FILE = "bootstrap.scram"


@dataclass(frozen=True, slots=True)
class BootstrapCredential:
    name: str
    mechanism: int
    iterations: int
    salt: bytes = field(repr=False)
    stored_key: bytes = field(repr=False)
    server_key: bytes = field(repr=False)


def write_bootstrap_scram(
    root: str | os.PathLike[str], credentials: Sequence[BootstrapCredential]
) -> None:
    lines = (
        json.dumps(
            {
                "name": c.name,
                "mechanism": c.mechanism,
                "iterations": c.iterations,
                "salt": base64.b64encode(c.salt).decode("ascii"),
                "stored_key": base64.b64encode(c.stored_key).decode("ascii"),
                "server_key": base64.b64encode(c.server_key).decode("ascii"),
            },
            sort_keys=True,
        )
        + "\n"
        for c in credentials
    )
    write_file_atomically(Path(root) / BOOTSTRAP_SCRAM_FILE, "".join(lines).encode(), 0o600)


def read_bootstrap_scram(root: str | os.PathLike[str]) -> tuple[BootstrapCredential, ...]:
    """The credentials ``format`` chose; none for a directory formatted without any."""
    path = Path(root) / BOOTSTRAP_SCRAM_FILE
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return ()
    credentials: list[BootstrapCredential] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            credentials.append(
                BootstrapCredential(
                    name=str(entry["name"]),
                    mechanism=int(entry["mechanism"]),
                    iterations=int(entry["iterations"]),
                    salt=base64.b64decode(entry["salt"], validate=True),
                    stored_key=base64.b64decode(entry["stored_key"], validate=True),
                    server_key=base64.b64decode(entry["server_key"], validate=True),
                )
            )
        except (ValueError, KeyError, TypeError, binascii.Error):
            raise StorageError(f"{path}: line {number} is not a SCRAM credential") from None
    return tuple(credentials)
