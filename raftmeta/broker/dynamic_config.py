"""A broker's effective config: its file, overridden by the dynamic configs in the log.

Kafka's precedence (:mod:`raftmeta.common.config_levels`): this broker's dynamic configs
(ConfigRecords for resource name its id) over the cluster-wide dynamic defaults (resource name
"") over the broker's static settings over the table's defaults. :class:`DynamicBrokerConfig`
recomputes it after each replayed batch and tells its subscribers when it changed, so code in
the broker's process (a log's retention, a throttle) follows ``kafka-configs --alter`` without
a restart.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from raftmeta.common.config_levels import (
    BrokerConfigLevels,
    effective_broker_config,
    effective_topic_defaults,
)
from raftmeta.image import MetadataImage
from raftmeta.records import ConfigResourceType

log = logging.getLogger("raftmeta.broker")

BROKER = int(ConfigResourceType.BROKER)
TOPIC = int(ConfigResourceType.TOPIC)


@dataclass(frozen=True, slots=True)
class ConfigChange:
    """The broker's effective config before and after a replayed batch, and the names whose
    value changed (added, removed or altered)."""

    before: Mapping[str, str]
    after: Mapping[str, str]
    changed: frozenset[str]


ConfigListener = Callable[[ConfigChange], None]


class DynamicBrokerConfig:
    """One broker's effective config, kept current from the image it is shown."""

    def __init__(self, broker_id: int, static: Mapping[str, str]) -> None:
        self._broker_id = str(broker_id)
        self._static = dict(static)
        self._dynamic: tuple[dict[str, str], dict[str, str]] = ({}, {})
        self._levels = BrokerConfigLevels(static=self._static)
        self._effective: Mapping[str, str] = MappingProxyType(effective_broker_config(self._levels))
        self._listeners: list[ConfigListener] = []

    @property
    def effective(self) -> Mapping[str, str]:
        """Every broker config with a value, each from the most specific level that sets it."""
        return self._effective

    @property
    def levels(self) -> BrokerConfigLevels:
        return self._levels

    def topic_config(self, image: MetadataImage, topic_name: str) -> dict[str, str]:
        """A topic's effective configs on this broker: its own values over the defaults this
        broker's config gives every topic."""
        return {
            **effective_topic_defaults(self._levels),
            **image.configs(TOPIC, topic_name),
        }

    def on_change(self, callback: ConfigListener) -> Callable[[], None]:
        self._listeners.append(callback)
        return lambda: self._listeners.remove(callback)

    def update(self, image: MetadataImage) -> None:
        """Recompute from ``image``; subscribers hear of it when a value changed."""
        dynamic = (
            dict(image.configs(BROKER, self._broker_id)),
            dict(image.configs(BROKER, "")),
        )
        if dynamic == self._dynamic:
            return
        self._dynamic = dynamic
        self._levels = BrokerConfigLevels(
            per_broker=dynamic[0], cluster_default=dynamic[1], static=self._static
        )
        before, after = self._effective, MappingProxyType(effective_broker_config(self._levels))
        self._effective = after
        changed = frozenset(
            name for name in before.keys() | after.keys() if before.get(name) != after.get(name)
        )
        if not changed:
            return
        change = ConfigChange(before, after, changed)
        for listener in list(self._listeners):
            try:
                listener(change)
            except Exception:
                log.exception("a broker config subscriber failed")
