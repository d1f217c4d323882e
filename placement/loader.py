"""Turning ``replica.placer.class.name`` into a placer, or into one line saying why not.

The setting is read once at start-up, by people editing a properties file; a wrong value must stop
the node with a message that names the setting, the value and the fix, not with a traceback from
importlib. Both spellings Python users meet are accepted: ``package.module:Class`` (entry-point
style, unambiguous) and ``package.module.Class`` (Kafka's style for class names).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Mapping
from types import ModuleType

from placement.api import ConfigurablePlacer, PlacerLoadError, ReplicaPlacer

PLACER_CLASS_KEY = "replica.placer.class.name"
DEFAULT_PLACER_CLASS = "placement.striped.StripedReplicaPlacer"


def load_placer(
    dotted_path: str, config: Mapping[str, str], *, key: str = PLACER_CLASS_KEY
) -> ReplicaPlacer:
    """Import, construct (no arguments) and configure the placer ``dotted_path`` names.

    ``config`` holds settings under their full names (``replica.placer.cordoned.brokers``, not
    ``cordoned.brokers``): pass the node's settings, or
    ``RaftmetaConfig.originals_with_prefix("replica.placer.", strip=False)``.
    ``key`` is the setting being read, for messages; a wrapping placer that loads a delegate
    passes its own key. Raises :class:`PlacerLoadError` (or its subclass PlacerConfigError, when
    ``configure`` rejects a setting), always with a one-line message.
    """
    path = dotted_path.strip()
    where = f"{key}={path!r}"
    if not path:
        raise PlacerLoadError(f"{key} is empty; expected 'package.module.Class'")
    factory = _resolve(path, where)
    if not inspect.isclass(factory):
        raise PlacerLoadError(
            f"{where} names {_describe(factory)}, not a class; name the placer class itself"
        )
    if not callable(getattr(factory, "place", None)):
        raise PlacerLoadError(
            f"{where}: {factory.__qualname__} is not a replica placer: "
            "it has no place(spec, cluster) method"
        )
    try:
        placer = factory()
    except Exception as error:
        raise PlacerLoadError(
            f"{where}: {factory.__qualname__}() failed: {_one_line(error)}"
        ) from None
    if not isinstance(placer, ReplicaPlacer):  # pragma: no cover - the class check runs first
        raise PlacerLoadError(f"{where}: {factory.__qualname__} is not a replica placer")
    try:
        inspect.signature(placer.place).bind(None, None)
    except TypeError:
        raise PlacerLoadError(
            f"{where}: {factory.__qualname__}.place must take two arguments (spec, cluster)"
        ) from None
    except ValueError:
        pass  # no introspectable signature (a builtin); let it prove itself when called
    if isinstance(placer, ConfigurablePlacer):
        try:
            placer.configure(config)
        except PlacerLoadError as error:
            raise type(error)(f"{where}: {_one_line(error, with_type=False)}") from None
        except Exception as error:
            raise PlacerLoadError(
                f"{where}: {factory.__qualname__}.configure failed: {_one_line(error)}"
            ) from None
    return placer


def _resolve(path: str, where: str) -> object:
    if ":" in path:
        module_name, _, attribute_path = path.partition(":")
        if not module_name or not attribute_path or ":" in attribute_path:
            raise PlacerLoadError(f"{where} is malformed; expected 'package.module:Class'")
        return _attribute(_import(module_name, where), attribute_path, where)
    parts = path.split(".")
    if len(parts) < 2 or not all(parts):
        raise PlacerLoadError(f"{where} is malformed; expected 'package.module.Class'")
    # The longest importable prefix is the module; what follows names the class, possibly nested.
    first_failure: PlacerLoadError | None = None
    for split in range(len(parts) - 1, 0, -1):
        module_name = ".".join(parts[:split])
        try:
            module = _import(module_name, where)
        except _ModuleMissingError as missing:
            first_failure = first_failure or missing
            continue
        try:
            return _attribute(module, ".".join(parts[split:]), where)
        except PlacerLoadError as error:
            raise (first_failure or error) from None
    assert first_failure is not None
    raise first_failure


class _ModuleMissingError(PlacerLoadError):
    """The module itself (not something it imports) does not exist."""


def _import(module_name: str, where: str) -> ModuleType:
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        missing = error.name or ""
        if missing == module_name or module_name.startswith(missing + "."):
            raise _ModuleMissingError(f"{where}: no module named {missing!r}") from None
        raise PlacerLoadError(
            f"{where}: importing {module_name!r} failed: {_one_line(error)}"
        ) from None
    except Exception as error:
        raise PlacerLoadError(
            f"{where}: importing {module_name!r} failed: {_one_line(error)}"
        ) from None


def _attribute(module: ModuleType, attribute_path: str, where: str) -> object:
    target: object = module
    owner = module.__name__
    for name in attribute_path.split("."):
        if not hasattr(target, name):
            raise PlacerLoadError(f"{where}: {owner!r} has no attribute {name!r}")
        target = getattr(target, name)
        owner = f"{owner}.{name}"
    return target


def _describe(value: object) -> str:
    if inspect.ismodule(value):
        return f"module {value.__name__!r}"
    if inspect.isroutine(value):
        return f"function {getattr(value, '__qualname__', value)!r}"
    return f"a {type(value).__name__} object"


def _one_line(error: BaseException, with_type: bool = True) -> str:
    text = " ".join(str(error).split())
    if not with_type:
        return text
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
