"""The controller's operations, independent of the wire they arrive on (Kafka's
``ControllerApis``).

Takes and returns :mod:`raftmeta.common` values and the caller's principal; raises
:class:`~raftmeta.errors.KafkaError` for a request that fails as a whole
(:class:`~raftmeta.apis.host.NotActiveController` for NOT_CONTROLLER). Imports the controller,
the authorizer, the image and the common values; never a wire (no gRPC, no protobuf, no Kafka
codec): the adapters in :mod:`raftmeta.server` sit above it.
"""

from raftmeta.apis.controller_apis import ControllerApis
from raftmeta.apis.host import ControllerHost, NotActiveController
from raftmeta.apis.retries import KeptReplies

__all__ = ["ControllerApis", "ControllerHost", "KeptReplies", "NotActiveController"]
