"""Dynamic configuration (Kafka's ConfigurationsImage): each resource's non-default entries."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Set
from types import MappingProxyType
from typing import TypeAlias

from raftmeta.image.errors import ReplayError
from raftmeta.records import ConfigRecord, ConfigResourceType

ConfigResource: TypeAlias = tuple[int, str]
"""(:class:`ConfigResourceType` id, resource name)."""

_KNOWN_RESOURCE_TYPES = frozenset(
    int(kind) for kind in ConfigResourceType if kind is not ConfigResourceType.UNKNOWN
)


class ConfigurationsImage:
    """Config entries by resource; a resource with no entry left is dropped, so two parts with
    equal entries are equal."""

    __slots__ = ("_configs",)

    def __init__(self) -> None:
        self._configs: dict[ConfigResource, dict[str, str]] = {}

    def copy(self) -> ConfigurationsImage:
        other = ConfigurationsImage()
        other._configs = {resource: dict(entries) for resource, entries in self._configs.items()}
        return other

    def replay_config(self, record: ConfigRecord) -> None:
        if record.resource_type not in _KNOWN_RESOURCE_TYPES:
            raise ReplayError(f"unknown config resource type {record.resource_type}")
        resource = (record.resource_type, record.resource_name)
        if record.value is None:
            configs = self._configs.get(resource)
            if configs is not None:
                configs.pop(record.name, None)
                if not configs:
                    del self._configs[resource]
        else:
            configs = self._configs.get(resource)
            if configs is None:
                self._configs[resource] = {record.name: record.value}
            else:
                configs[record.name] = record.value

    def forget(self, resource: ConfigResource) -> None:
        """Drops every entry of ``resource``: a removed topic takes its configs with it."""
        self._configs.pop(resource, None)

    def configs(self, resource_type: int, resource_name: str) -> Mapping[str, str]:
        configs = self._configs.get((resource_type, resource_name))
        return MappingProxyType({} if configs is None else configs)

    @property
    def resources(self) -> Set[ConfigResource]:
        return self._configs.keys()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ConfigurationsImage):
            return NotImplemented
        return self._configs == other._configs

    __hash__ = None  # type: ignore[assignment]


def config_records(
    resource_type: int, resource_name: str, configs: Mapping[str, str] | None
) -> Iterator[ConfigRecord]:
    """``configs`` of one resource as records, by name (the snapshot's canonical order)."""
    if configs:
        for name in sorted(configs):
            yield ConfigRecord(resource_type, resource_name, name, configs[name])
