"""Finalized feature levels (Kafka's FeaturesImage), such as ``metadata.version``."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from raftmeta.records import FeatureLevelRecord


class FeaturesImage:
    """Each finalized feature's level; level 0 means the feature is off and is not kept."""

    __slots__ = ("_features",)

    def __init__(self) -> None:
        self._features: dict[str, int] = {}

    def copy(self) -> FeaturesImage:
        other = FeaturesImage()
        other._features = dict(self._features)
        return other

    def replay_feature_level(self, record: FeatureLevelRecord) -> None:
        if record.feature_level == 0:
            self._features.pop(record.name, None)
        else:
            self._features[record.name] = record.feature_level

    @property
    def features(self) -> Mapping[str, int]:
        return MappingProxyType(self._features)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FeaturesImage):
            return NotImplemented
        return self._features == other._features

    __hash__ = None  # type: ignore[assignment]
