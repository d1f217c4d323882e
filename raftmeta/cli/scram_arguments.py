"""``--add-scram`` values, as ``kafka-storage format`` takes them:
``SCRAM-SHA-256=[name=alice,password=alice-secret]`` or
``SCRAM-SHA-512=[name=alice,iterations=8192,salt="N3E=",saltedpassword="YCE="]``.

Inside the brackets: ``name`` (required), then either ``password`` or ``saltedpassword`` (which
needs ``salt``), and optionally ``iterations`` (4096 to 16384, default 4096) and ``salt``
(base64; a random one when left out). A value may be double-quoted, and must be when it holds
a comma or a bracket. The password becomes a credential at once; only the salted, iterated keys
are written.
"""

from __future__ import annotations

import base64
import binascii

from raftmeta.security.scram import (
    DEFAULT_ITERATIONS,
    ScramCredential,
    ScramMechanism,
    credential_from_password,
    credential_from_salted_password,
    iterations_problem,
)

KEYS = ("name", "password", "iterations", "salt", "saltedpassword")


class ScramArgumentError(ValueError):
    """A malformed ``--add-scram`` value; the message quotes no password."""


def _pairs(body: str) -> dict[str, str]:
    """``k=v,k="v, with commas"`` as a dict."""
    pairs: dict[str, str] = {}
    position = 0
    while position < len(body):
        equals = body.find("=", position)
        if equals < 0:
            raise ScramArgumentError("expected key=value inside the brackets")
        key = body[position:equals].strip()
        position = equals + 1
        if body[position : position + 1] == '"':
            end = body.find('"', position + 1)
            if end < 0:
                raise ScramArgumentError(f"the value of {key} has no closing quote")
            value = body[position + 1 : end]
            position = end + 1
            if position < len(body) and body[position] != ",":
                raise ScramArgumentError(f"expected a comma after the value of {key}")
        else:
            end = body.find(",", position)
            end = len(body) if end < 0 else end
            value = body[position:end]
            position = end
        position += 1  # past the comma
        if key not in KEYS:
            raise ScramArgumentError(f"unknown key {key[:40]!r}; expected {', '.join(KEYS)}")
        if key in pairs:
            raise ScramArgumentError(f"{key} is given twice")
        pairs[key] = value
    return pairs


def _base64(key: str, value: str) -> bytes:
    try:
        decoded = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ScramArgumentError(f"{key} is not base64") from None
    if not decoded:
        raise ScramArgumentError(f"{key} is empty")
    return decoded


def parse_add_scram(text: str) -> tuple[str, ScramMechanism, ScramCredential]:
    """The user, mechanism and credential an ``--add-scram`` value describes."""
    mechanism_name, equals, rest = text.partition("=")
    mechanism = ScramMechanism.from_name(mechanism_name.strip())
    if not equals or mechanism is ScramMechanism.UNKNOWN:
        raise ScramArgumentError(
            f"expected SCRAM-SHA-256=[...] or SCRAM-SHA-512=[...], got {mechanism_name[:40]!r}"
        )
    rest = rest.strip()
    if not rest.startswith("[") or not rest.endswith("]"):
        raise ScramArgumentError("the settings must be in [brackets]")
    pairs = _pairs(rest[1:-1])
    name = pairs.get("name", "")
    if not name:
        raise ScramArgumentError("name is required")
    iterations_text = pairs.get("iterations", str(DEFAULT_ITERATIONS)).strip()
    if not iterations_text.isdigit():
        raise ScramArgumentError("iterations must be a whole number")
    iterations = int(iterations_text)
    problem = iterations_problem(iterations)
    if problem is not None:
        raise ScramArgumentError(f"{problem}: iterations must be 4096 to 16384")
    salt = _base64("salt", pairs["salt"]) if "salt" in pairs else None
    if "saltedpassword" in pairs:
        if "password" in pairs:
            raise ScramArgumentError("give password or saltedpassword, not both")
        if salt is None:
            raise ScramArgumentError("saltedpassword needs salt")
        salted = _base64("saltedpassword", pairs["saltedpassword"])
        return name, mechanism, credential_from_salted_password(mechanism, salt, salted, iterations)
    if not pairs.get("password"):
        raise ScramArgumentError("password or saltedpassword is required")
    return (
        name,
        mechanism,
        credential_from_password(mechanism, pairs["password"], salt=salt, iterations=iterations),
    )
