"""Reading ``replica.placer.*`` settings, with errors that name the key and the bad value."""

from __future__ import annotations

from collections.abc import Mapping

from placement.api import PlacerConfigError


def optional_int(config: Mapping[str, str], key: str, minimum: int | None = None) -> int | None:
    raw = config.get(key)
    if raw is None or raw.strip() == "":
        return None
    try:
        value = int(raw.strip())
    except ValueError:
        raise PlacerConfigError(f"{key}={raw!r} is not an integer") from None
    if minimum is not None and value < minimum:
        raise PlacerConfigError(f"{key}={value} must be at least {minimum}")
    return value


def int_list(config: Mapping[str, str], key: str) -> tuple[int, ...]:
    """A comma-separated list of integers; blank entries are ignored so trailing commas are ok."""
    raw = config.get(key, "")
    values: list[int] = []
    for item in raw.split(","):
        item = item.strip()
        if not item:
            continue
        try:
            values.append(int(item))
        except ValueError:
            raise PlacerConfigError(f"{key}: {item!r} is not a broker id") from None
    return tuple(values)
