# mypy: ignore-errors
# ruff: noqa
# fmt: off
from raftmeta.rpc import admin_pb2 as _admin_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Listener(_message.Message):
    __slots__ = ("name", "host", "port", "security_protocol")
    NAME_FIELD_NUMBER: _ClassVar[int]
    HOST_FIELD_NUMBER: _ClassVar[int]
    PORT_FIELD_NUMBER: _ClassVar[int]
    SECURITY_PROTOCOL_FIELD_NUMBER: _ClassVar[int]
    name: str
    host: str
    port: int
    security_protocol: int
    def __init__(self, name: _Optional[str] = ..., host: _Optional[str] = ..., port: _Optional[int] = ..., security_protocol: _Optional[int] = ...) -> None: ...

class Feature(_message.Message):
    __slots__ = ("name", "min_supported_version", "max_supported_version")
    NAME_FIELD_NUMBER: _ClassVar[int]
    MIN_SUPPORTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    MAX_SUPPORTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    name: str
    min_supported_version: int
    max_supported_version: int
    def __init__(self, name: _Optional[str] = ..., min_supported_version: _Optional[int] = ..., max_supported_version: _Optional[int] = ...) -> None: ...

class RegisterBrokerRequest(_message.Message):
    __slots__ = ("broker_id", "cluster_id", "incarnation_id", "listeners", "features", "rack", "timeout_ms", "previous_broker_epoch", "combined")
    BROKER_ID_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    INCARNATION_ID_FIELD_NUMBER: _ClassVar[int]
    LISTENERS_FIELD_NUMBER: _ClassVar[int]
    FEATURES_FIELD_NUMBER: _ClassVar[int]
    RACK_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_BROKER_EPOCH_FIELD_NUMBER: _ClassVar[int]
    COMBINED_FIELD_NUMBER: _ClassVar[int]
    broker_id: int
    cluster_id: str
    incarnation_id: bytes
    listeners: _containers.RepeatedCompositeFieldContainer[Listener]
    features: _containers.RepeatedCompositeFieldContainer[Feature]
    rack: str
    timeout_ms: int
    previous_broker_epoch: int
    combined: bool
    def __init__(self, broker_id: _Optional[int] = ..., cluster_id: _Optional[str] = ..., incarnation_id: _Optional[bytes] = ..., listeners: _Optional[_Iterable[_Union[Listener, _Mapping]]] = ..., features: _Optional[_Iterable[_Union[Feature, _Mapping]]] = ..., rack: _Optional[str] = ..., timeout_ms: _Optional[int] = ..., previous_broker_epoch: _Optional[int] = ..., combined: _Optional[bool] = ...) -> None: ...

class RegisterBrokerResponse(_message.Message):
    __slots__ = ("header", "broker_epoch")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    BROKER_EPOCH_FIELD_NUMBER: _ClassVar[int]
    header: _admin_pb2.ResponseHeader
    broker_epoch: int
    def __init__(self, header: _Optional[_Union[_admin_pb2.ResponseHeader, _Mapping]] = ..., broker_epoch: _Optional[int] = ...) -> None: ...

class BrokerHeartbeatRequest(_message.Message):
    __slots__ = ("broker_id", "broker_epoch", "current_metadata_offset", "want_fence", "want_shut_down")
    BROKER_ID_FIELD_NUMBER: _ClassVar[int]
    BROKER_EPOCH_FIELD_NUMBER: _ClassVar[int]
    CURRENT_METADATA_OFFSET_FIELD_NUMBER: _ClassVar[int]
    WANT_FENCE_FIELD_NUMBER: _ClassVar[int]
    WANT_SHUT_DOWN_FIELD_NUMBER: _ClassVar[int]
    broker_id: int
    broker_epoch: int
    current_metadata_offset: int
    want_fence: bool
    want_shut_down: bool
    def __init__(self, broker_id: _Optional[int] = ..., broker_epoch: _Optional[int] = ..., current_metadata_offset: _Optional[int] = ..., want_fence: _Optional[bool] = ..., want_shut_down: _Optional[bool] = ...) -> None: ...

class BrokerHeartbeatResponse(_message.Message):
    __slots__ = ("header", "is_caught_up", "is_fenced", "should_shut_down")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    IS_CAUGHT_UP_FIELD_NUMBER: _ClassVar[int]
    IS_FENCED_FIELD_NUMBER: _ClassVar[int]
    SHOULD_SHUT_DOWN_FIELD_NUMBER: _ClassVar[int]
    header: _admin_pb2.ResponseHeader
    is_caught_up: bool
    is_fenced: bool
    should_shut_down: bool
    def __init__(self, header: _Optional[_Union[_admin_pb2.ResponseHeader, _Mapping]] = ..., is_caught_up: _Optional[bool] = ..., is_fenced: _Optional[bool] = ..., should_shut_down: _Optional[bool] = ...) -> None: ...

class IsrMember(_message.Message):
    __slots__ = ("broker_id", "broker_epoch")
    BROKER_ID_FIELD_NUMBER: _ClassVar[int]
    BROKER_EPOCH_FIELD_NUMBER: _ClassVar[int]
    broker_id: int
    broker_epoch: int
    def __init__(self, broker_id: _Optional[int] = ..., broker_epoch: _Optional[int] = ...) -> None: ...

class PartitionIsrChange(_message.Message):
    __slots__ = ("partition_index", "leader_epoch", "new_isr", "leader_recovery_state", "partition_epoch")
    PARTITION_INDEX_FIELD_NUMBER: _ClassVar[int]
    LEADER_EPOCH_FIELD_NUMBER: _ClassVar[int]
    NEW_ISR_FIELD_NUMBER: _ClassVar[int]
    LEADER_RECOVERY_STATE_FIELD_NUMBER: _ClassVar[int]
    PARTITION_EPOCH_FIELD_NUMBER: _ClassVar[int]
    partition_index: int
    leader_epoch: int
    new_isr: _containers.RepeatedCompositeFieldContainer[IsrMember]
    leader_recovery_state: int
    partition_epoch: int
    def __init__(self, partition_index: _Optional[int] = ..., leader_epoch: _Optional[int] = ..., new_isr: _Optional[_Iterable[_Union[IsrMember, _Mapping]]] = ..., leader_recovery_state: _Optional[int] = ..., partition_epoch: _Optional[int] = ...) -> None: ...

class AlterPartitionRequest(_message.Message):
    __slots__ = ("broker_id", "broker_epoch", "topic_id", "partitions", "timeout_ms")
    BROKER_ID_FIELD_NUMBER: _ClassVar[int]
    BROKER_EPOCH_FIELD_NUMBER: _ClassVar[int]
    TOPIC_ID_FIELD_NUMBER: _ClassVar[int]
    PARTITIONS_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    broker_id: int
    broker_epoch: int
    topic_id: bytes
    partitions: _containers.RepeatedCompositeFieldContainer[PartitionIsrChange]
    timeout_ms: int
    def __init__(self, broker_id: _Optional[int] = ..., broker_epoch: _Optional[int] = ..., topic_id: _Optional[bytes] = ..., partitions: _Optional[_Iterable[_Union[PartitionIsrChange, _Mapping]]] = ..., timeout_ms: _Optional[int] = ...) -> None: ...

class AlterPartitionResult(_message.Message):
    __slots__ = ("partition_index", "error_code", "error_message", "leader_id", "leader_epoch", "isr", "partition_epoch", "leader_recovery_state")
    PARTITION_INDEX_FIELD_NUMBER: _ClassVar[int]
    ERROR_CODE_FIELD_NUMBER: _ClassVar[int]
    ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    LEADER_ID_FIELD_NUMBER: _ClassVar[int]
    LEADER_EPOCH_FIELD_NUMBER: _ClassVar[int]
    ISR_FIELD_NUMBER: _ClassVar[int]
    PARTITION_EPOCH_FIELD_NUMBER: _ClassVar[int]
    LEADER_RECOVERY_STATE_FIELD_NUMBER: _ClassVar[int]
    partition_index: int
    error_code: int
    error_message: str
    leader_id: int
    leader_epoch: int
    isr: _containers.RepeatedScalarFieldContainer[int]
    partition_epoch: int
    leader_recovery_state: int
    def __init__(self, partition_index: _Optional[int] = ..., error_code: _Optional[int] = ..., error_message: _Optional[str] = ..., leader_id: _Optional[int] = ..., leader_epoch: _Optional[int] = ..., isr: _Optional[_Iterable[int]] = ..., partition_epoch: _Optional[int] = ..., leader_recovery_state: _Optional[int] = ...) -> None: ...

class AlterPartitionResponse(_message.Message):
    __slots__ = ("header", "partitions")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    PARTITIONS_FIELD_NUMBER: _ClassVar[int]
    header: _admin_pb2.ResponseHeader
    partitions: _containers.RepeatedCompositeFieldContainer[AlterPartitionResult]
    def __init__(self, header: _Optional[_Union[_admin_pb2.ResponseHeader, _Mapping]] = ..., partitions: _Optional[_Iterable[_Union[AlterPartitionResult, _Mapping]]] = ...) -> None: ...

class UnregisterBrokerRequest(_message.Message):
    __slots__ = ("broker_id",)
    BROKER_ID_FIELD_NUMBER: _ClassVar[int]
    broker_id: int
    def __init__(self, broker_id: _Optional[int] = ...) -> None: ...

class UnregisterBrokerResponse(_message.Message):
    __slots__ = ("header",)
    HEADER_FIELD_NUMBER: _ClassVar[int]
    header: _admin_pb2.ResponseHeader
    def __init__(self, header: _Optional[_Union[_admin_pb2.ResponseHeader, _Mapping]] = ...) -> None: ...

class RegisterControllerRequest(_message.Message):
    __slots__ = ("controller_id", "cluster_id", "incarnation_id", "listeners", "features")
    CONTROLLER_ID_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    INCARNATION_ID_FIELD_NUMBER: _ClassVar[int]
    LISTENERS_FIELD_NUMBER: _ClassVar[int]
    FEATURES_FIELD_NUMBER: _ClassVar[int]
    controller_id: int
    cluster_id: str
    incarnation_id: bytes
    listeners: _containers.RepeatedCompositeFieldContainer[Listener]
    features: _containers.RepeatedCompositeFieldContainer[Feature]
    def __init__(self, controller_id: _Optional[int] = ..., cluster_id: _Optional[str] = ..., incarnation_id: _Optional[bytes] = ..., listeners: _Optional[_Iterable[_Union[Listener, _Mapping]]] = ..., features: _Optional[_Iterable[_Union[Feature, _Mapping]]] = ...) -> None: ...

class RegisterControllerResponse(_message.Message):
    __slots__ = ("header",)
    HEADER_FIELD_NUMBER: _ClassVar[int]
    header: _admin_pb2.ResponseHeader
    def __init__(self, header: _Optional[_Union[_admin_pb2.ResponseHeader, _Mapping]] = ...) -> None: ...
