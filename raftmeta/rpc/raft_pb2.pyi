# mypy: ignore-errors
# ruff: noqa
# fmt: off
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class LeaderIdAndEpoch(_message.Message):
    __slots__ = ("leader_id", "leader_epoch")
    LEADER_ID_FIELD_NUMBER: _ClassVar[int]
    LEADER_EPOCH_FIELD_NUMBER: _ClassVar[int]
    leader_id: int
    leader_epoch: int
    def __init__(self, leader_id: _Optional[int] = ..., leader_epoch: _Optional[int] = ...) -> None: ...

class EpochEndOffset(_message.Message):
    __slots__ = ("epoch", "end_offset")
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    END_OFFSET_FIELD_NUMBER: _ClassVar[int]
    epoch: int
    end_offset: int
    def __init__(self, epoch: _Optional[int] = ..., end_offset: _Optional[int] = ...) -> None: ...

class SnapshotId(_message.Message):
    __slots__ = ("end_offset", "epoch")
    END_OFFSET_FIELD_NUMBER: _ClassVar[int]
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    end_offset: int
    epoch: int
    def __init__(self, end_offset: _Optional[int] = ..., epoch: _Optional[int] = ...) -> None: ...

class VoteRequest(_message.Message):
    __slots__ = ("cluster_id", "candidate_epoch", "candidate_id", "last_offset_epoch", "last_offset", "pre_vote", "candidate_directory_id", "voter_directory_id")
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    CANDIDATE_EPOCH_FIELD_NUMBER: _ClassVar[int]
    CANDIDATE_ID_FIELD_NUMBER: _ClassVar[int]
    LAST_OFFSET_EPOCH_FIELD_NUMBER: _ClassVar[int]
    LAST_OFFSET_FIELD_NUMBER: _ClassVar[int]
    PRE_VOTE_FIELD_NUMBER: _ClassVar[int]
    CANDIDATE_DIRECTORY_ID_FIELD_NUMBER: _ClassVar[int]
    VOTER_DIRECTORY_ID_FIELD_NUMBER: _ClassVar[int]
    cluster_id: str
    candidate_epoch: int
    candidate_id: int
    last_offset_epoch: int
    last_offset: int
    pre_vote: bool
    candidate_directory_id: str
    voter_directory_id: str
    def __init__(self, cluster_id: _Optional[str] = ..., candidate_epoch: _Optional[int] = ..., candidate_id: _Optional[int] = ..., last_offset_epoch: _Optional[int] = ..., last_offset: _Optional[int] = ..., pre_vote: _Optional[bool] = ..., candidate_directory_id: _Optional[str] = ..., voter_directory_id: _Optional[str] = ...) -> None: ...

class VoteResponse(_message.Message):
    __slots__ = ("error_code", "leader_id", "leader_epoch", "vote_granted")
    ERROR_CODE_FIELD_NUMBER: _ClassVar[int]
    LEADER_ID_FIELD_NUMBER: _ClassVar[int]
    LEADER_EPOCH_FIELD_NUMBER: _ClassVar[int]
    VOTE_GRANTED_FIELD_NUMBER: _ClassVar[int]
    error_code: int
    leader_id: int
    leader_epoch: int
    vote_granted: bool
    def __init__(self, error_code: _Optional[int] = ..., leader_id: _Optional[int] = ..., leader_epoch: _Optional[int] = ..., vote_granted: _Optional[bool] = ...) -> None: ...

class BeginQuorumEpochRequest(_message.Message):
    __slots__ = ("cluster_id", "leader_id", "leader_epoch", "voter_directory_id")
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    LEADER_ID_FIELD_NUMBER: _ClassVar[int]
    LEADER_EPOCH_FIELD_NUMBER: _ClassVar[int]
    VOTER_DIRECTORY_ID_FIELD_NUMBER: _ClassVar[int]
    cluster_id: str
    leader_id: int
    leader_epoch: int
    voter_directory_id: str
    def __init__(self, cluster_id: _Optional[str] = ..., leader_id: _Optional[int] = ..., leader_epoch: _Optional[int] = ..., voter_directory_id: _Optional[str] = ...) -> None: ...

class BeginQuorumEpochResponse(_message.Message):
    __slots__ = ("error_code", "leader_id", "leader_epoch")
    ERROR_CODE_FIELD_NUMBER: _ClassVar[int]
    LEADER_ID_FIELD_NUMBER: _ClassVar[int]
    LEADER_EPOCH_FIELD_NUMBER: _ClassVar[int]
    error_code: int
    leader_id: int
    leader_epoch: int
    def __init__(self, error_code: _Optional[int] = ..., leader_id: _Optional[int] = ..., leader_epoch: _Optional[int] = ...) -> None: ...

class EndQuorumEpochRequest(_message.Message):
    __slots__ = ("cluster_id", "leader_id", "leader_epoch", "preferred_successors")
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    LEADER_ID_FIELD_NUMBER: _ClassVar[int]
    LEADER_EPOCH_FIELD_NUMBER: _ClassVar[int]
    PREFERRED_SUCCESSORS_FIELD_NUMBER: _ClassVar[int]
    cluster_id: str
    leader_id: int
    leader_epoch: int
    preferred_successors: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, cluster_id: _Optional[str] = ..., leader_id: _Optional[int] = ..., leader_epoch: _Optional[int] = ..., preferred_successors: _Optional[_Iterable[int]] = ...) -> None: ...

class EndQuorumEpochResponse(_message.Message):
    __slots__ = ("error_code", "leader_id", "leader_epoch")
    ERROR_CODE_FIELD_NUMBER: _ClassVar[int]
    LEADER_ID_FIELD_NUMBER: _ClassVar[int]
    LEADER_EPOCH_FIELD_NUMBER: _ClassVar[int]
    error_code: int
    leader_id: int
    leader_epoch: int
    def __init__(self, error_code: _Optional[int] = ..., leader_id: _Optional[int] = ..., leader_epoch: _Optional[int] = ...) -> None: ...

class FetchRequest(_message.Message):
    __slots__ = ("cluster_id", "replica_id", "current_leader_epoch", "fetch_offset", "last_fetched_epoch", "max_wait_ms", "max_bytes", "high_watermark", "replica_directory_id")
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    REPLICA_ID_FIELD_NUMBER: _ClassVar[int]
    CURRENT_LEADER_EPOCH_FIELD_NUMBER: _ClassVar[int]
    FETCH_OFFSET_FIELD_NUMBER: _ClassVar[int]
    LAST_FETCHED_EPOCH_FIELD_NUMBER: _ClassVar[int]
    MAX_WAIT_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_BYTES_FIELD_NUMBER: _ClassVar[int]
    HIGH_WATERMARK_FIELD_NUMBER: _ClassVar[int]
    REPLICA_DIRECTORY_ID_FIELD_NUMBER: _ClassVar[int]
    cluster_id: str
    replica_id: int
    current_leader_epoch: int
    fetch_offset: int
    last_fetched_epoch: int
    max_wait_ms: int
    max_bytes: int
    high_watermark: int
    replica_directory_id: str
    def __init__(self, cluster_id: _Optional[str] = ..., replica_id: _Optional[int] = ..., current_leader_epoch: _Optional[int] = ..., fetch_offset: _Optional[int] = ..., last_fetched_epoch: _Optional[int] = ..., max_wait_ms: _Optional[int] = ..., max_bytes: _Optional[int] = ..., high_watermark: _Optional[int] = ..., replica_directory_id: _Optional[str] = ...) -> None: ...

class FetchResponse(_message.Message):
    __slots__ = ("error_code", "high_watermark", "diverging_epoch", "current_leader", "snapshot_id", "records", "log_start_offset")
    ERROR_CODE_FIELD_NUMBER: _ClassVar[int]
    HIGH_WATERMARK_FIELD_NUMBER: _ClassVar[int]
    DIVERGING_EPOCH_FIELD_NUMBER: _ClassVar[int]
    CURRENT_LEADER_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_ID_FIELD_NUMBER: _ClassVar[int]
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    LOG_START_OFFSET_FIELD_NUMBER: _ClassVar[int]
    error_code: int
    high_watermark: int
    diverging_epoch: EpochEndOffset
    current_leader: LeaderIdAndEpoch
    snapshot_id: SnapshotId
    records: bytes
    log_start_offset: int
    def __init__(self, error_code: _Optional[int] = ..., high_watermark: _Optional[int] = ..., diverging_epoch: _Optional[_Union[EpochEndOffset, _Mapping]] = ..., current_leader: _Optional[_Union[LeaderIdAndEpoch, _Mapping]] = ..., snapshot_id: _Optional[_Union[SnapshotId, _Mapping]] = ..., records: _Optional[bytes] = ..., log_start_offset: _Optional[int] = ...) -> None: ...

class FetchSnapshotRequest(_message.Message):
    __slots__ = ("cluster_id", "replica_id", "current_leader_epoch", "snapshot_id", "position", "max_bytes", "replica_directory_id")
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    REPLICA_ID_FIELD_NUMBER: _ClassVar[int]
    CURRENT_LEADER_EPOCH_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_ID_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    MAX_BYTES_FIELD_NUMBER: _ClassVar[int]
    REPLICA_DIRECTORY_ID_FIELD_NUMBER: _ClassVar[int]
    cluster_id: str
    replica_id: int
    current_leader_epoch: int
    snapshot_id: SnapshotId
    position: int
    max_bytes: int
    replica_directory_id: str
    def __init__(self, cluster_id: _Optional[str] = ..., replica_id: _Optional[int] = ..., current_leader_epoch: _Optional[int] = ..., snapshot_id: _Optional[_Union[SnapshotId, _Mapping]] = ..., position: _Optional[int] = ..., max_bytes: _Optional[int] = ..., replica_directory_id: _Optional[str] = ...) -> None: ...

class FetchSnapshotResponse(_message.Message):
    __slots__ = ("error_code", "current_leader", "snapshot_id", "size", "position", "unaligned_records", "membership")
    ERROR_CODE_FIELD_NUMBER: _ClassVar[int]
    CURRENT_LEADER_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_ID_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    UNALIGNED_RECORDS_FIELD_NUMBER: _ClassVar[int]
    MEMBERSHIP_FIELD_NUMBER: _ClassVar[int]
    error_code: int
    current_leader: LeaderIdAndEpoch
    snapshot_id: SnapshotId
    size: int
    position: int
    unaligned_records: bytes
    membership: Membership
    def __init__(self, error_code: _Optional[int] = ..., current_leader: _Optional[_Union[LeaderIdAndEpoch, _Mapping]] = ..., snapshot_id: _Optional[_Union[SnapshotId, _Mapping]] = ..., size: _Optional[int] = ..., position: _Optional[int] = ..., unaligned_records: _Optional[bytes] = ..., membership: _Optional[_Union[Membership, _Mapping]] = ...) -> None: ...

class Endpoint(_message.Message):
    __slots__ = ("name", "host", "port")
    NAME_FIELD_NUMBER: _ClassVar[int]
    HOST_FIELD_NUMBER: _ClassVar[int]
    PORT_FIELD_NUMBER: _ClassVar[int]
    name: str
    host: str
    port: int
    def __init__(self, name: _Optional[str] = ..., host: _Optional[str] = ..., port: _Optional[int] = ...) -> None: ...

class Voter(_message.Message):
    __slots__ = ("voter_id", "directory_id", "endpoints")
    VOTER_ID_FIELD_NUMBER: _ClassVar[int]
    DIRECTORY_ID_FIELD_NUMBER: _ClassVar[int]
    ENDPOINTS_FIELD_NUMBER: _ClassVar[int]
    voter_id: int
    directory_id: str
    endpoints: _containers.RepeatedCompositeFieldContainer[Endpoint]
    def __init__(self, voter_id: _Optional[int] = ..., directory_id: _Optional[str] = ..., endpoints: _Optional[_Iterable[_Union[Endpoint, _Mapping]]] = ...) -> None: ...

class Membership(_message.Message):
    __slots__ = ("kraft_version", "voters")
    KRAFT_VERSION_FIELD_NUMBER: _ClassVar[int]
    VOTERS_FIELD_NUMBER: _ClassVar[int]
    kraft_version: int
    voters: _containers.RepeatedCompositeFieldContainer[Voter]
    def __init__(self, kraft_version: _Optional[int] = ..., voters: _Optional[_Iterable[_Union[Voter, _Mapping]]] = ...) -> None: ...

class DescribeQuorumRequest(_message.Message):
    __slots__ = ("cluster_id",)
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    cluster_id: str
    def __init__(self, cluster_id: _Optional[str] = ...) -> None: ...

class ReplicaState(_message.Message):
    __slots__ = ("replica_id", "log_end_offset", "last_fetch_timestamp", "last_caught_up_timestamp", "replica_directory_id")
    REPLICA_ID_FIELD_NUMBER: _ClassVar[int]
    LOG_END_OFFSET_FIELD_NUMBER: _ClassVar[int]
    LAST_FETCH_TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    LAST_CAUGHT_UP_TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    REPLICA_DIRECTORY_ID_FIELD_NUMBER: _ClassVar[int]
    replica_id: int
    log_end_offset: int
    last_fetch_timestamp: int
    last_caught_up_timestamp: int
    replica_directory_id: str
    def __init__(self, replica_id: _Optional[int] = ..., log_end_offset: _Optional[int] = ..., last_fetch_timestamp: _Optional[int] = ..., last_caught_up_timestamp: _Optional[int] = ..., replica_directory_id: _Optional[str] = ...) -> None: ...

class DescribeQuorumResponse(_message.Message):
    __slots__ = ("error_code", "leader_id", "leader_epoch", "high_watermark", "voters", "observers", "leader_endpoint", "cluster_id", "kraft_version", "voter_endpoints")
    ERROR_CODE_FIELD_NUMBER: _ClassVar[int]
    LEADER_ID_FIELD_NUMBER: _ClassVar[int]
    LEADER_EPOCH_FIELD_NUMBER: _ClassVar[int]
    HIGH_WATERMARK_FIELD_NUMBER: _ClassVar[int]
    VOTERS_FIELD_NUMBER: _ClassVar[int]
    OBSERVERS_FIELD_NUMBER: _ClassVar[int]
    LEADER_ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    KRAFT_VERSION_FIELD_NUMBER: _ClassVar[int]
    VOTER_ENDPOINTS_FIELD_NUMBER: _ClassVar[int]
    error_code: int
    leader_id: int
    leader_epoch: int
    high_watermark: int
    voters: _containers.RepeatedCompositeFieldContainer[ReplicaState]
    observers: _containers.RepeatedCompositeFieldContainer[ReplicaState]
    leader_endpoint: str
    cluster_id: str
    kraft_version: int
    voter_endpoints: _containers.RepeatedCompositeFieldContainer[Voter]
    def __init__(self, error_code: _Optional[int] = ..., leader_id: _Optional[int] = ..., leader_epoch: _Optional[int] = ..., high_watermark: _Optional[int] = ..., voters: _Optional[_Iterable[_Union[ReplicaState, _Mapping]]] = ..., observers: _Optional[_Iterable[_Union[ReplicaState, _Mapping]]] = ..., leader_endpoint: _Optional[str] = ..., cluster_id: _Optional[str] = ..., kraft_version: _Optional[int] = ..., voter_endpoints: _Optional[_Iterable[_Union[Voter, _Mapping]]] = ...) -> None: ...

class DescribeEndpointsRequest(_message.Message):
    __slots__ = ("cluster_id", "replica_id")
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    REPLICA_ID_FIELD_NUMBER: _ClassVar[int]
    cluster_id: str
    replica_id: int
    def __init__(self, cluster_id: _Optional[str] = ..., replica_id: _Optional[int] = ...) -> None: ...

class DescribeEndpointsResponse(_message.Message):
    __slots__ = ("error_code", "raft_stream_host", "raft_stream_port")
    ERROR_CODE_FIELD_NUMBER: _ClassVar[int]
    RAFT_STREAM_HOST_FIELD_NUMBER: _ClassVar[int]
    RAFT_STREAM_PORT_FIELD_NUMBER: _ClassVar[int]
    error_code: int
    raft_stream_host: str
    raft_stream_port: int
    def __init__(self, error_code: _Optional[int] = ..., raft_stream_host: _Optional[str] = ..., raft_stream_port: _Optional[int] = ...) -> None: ...

class AddRaftVoterRequest(_message.Message):
    __slots__ = ("cluster_id", "timeout_ms", "voter")
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    VOTER_FIELD_NUMBER: _ClassVar[int]
    cluster_id: str
    timeout_ms: int
    voter: Voter
    def __init__(self, cluster_id: _Optional[str] = ..., timeout_ms: _Optional[int] = ..., voter: _Optional[_Union[Voter, _Mapping]] = ...) -> None: ...

class RemoveRaftVoterRequest(_message.Message):
    __slots__ = ("cluster_id", "voter_id", "voter_directory_id")
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    VOTER_ID_FIELD_NUMBER: _ClassVar[int]
    VOTER_DIRECTORY_ID_FIELD_NUMBER: _ClassVar[int]
    cluster_id: str
    voter_id: int
    voter_directory_id: str
    def __init__(self, cluster_id: _Optional[str] = ..., voter_id: _Optional[int] = ..., voter_directory_id: _Optional[str] = ...) -> None: ...

class UpdateRaftVoterRequest(_message.Message):
    __slots__ = ("cluster_id", "current_leader_epoch", "voter")
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    CURRENT_LEADER_EPOCH_FIELD_NUMBER: _ClassVar[int]
    VOTER_FIELD_NUMBER: _ClassVar[int]
    cluster_id: str
    current_leader_epoch: int
    voter: Voter
    def __init__(self, cluster_id: _Optional[str] = ..., current_leader_epoch: _Optional[int] = ..., voter: _Optional[_Union[Voter, _Mapping]] = ...) -> None: ...

class UpdateKRaftVersionRequest(_message.Message):
    __slots__ = ("cluster_id", "kraft_version", "timeout_ms", "validate_only")
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    KRAFT_VERSION_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    VALIDATE_ONLY_FIELD_NUMBER: _ClassVar[int]
    cluster_id: str
    kraft_version: int
    timeout_ms: int
    validate_only: bool
    def __init__(self, cluster_id: _Optional[str] = ..., kraft_version: _Optional[int] = ..., timeout_ms: _Optional[int] = ..., validate_only: _Optional[bool] = ...) -> None: ...

class VoterChangeResponse(_message.Message):
    __slots__ = ("error_code", "error_message", "current_leader", "leader_endpoint")
    ERROR_CODE_FIELD_NUMBER: _ClassVar[int]
    ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    CURRENT_LEADER_FIELD_NUMBER: _ClassVar[int]
    LEADER_ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    error_code: int
    error_message: str
    current_leader: LeaderIdAndEpoch
    leader_endpoint: str
    def __init__(self, error_code: _Optional[int] = ..., error_message: _Optional[str] = ..., current_leader: _Optional[_Union[LeaderIdAndEpoch, _Mapping]] = ..., leader_endpoint: _Optional[str] = ...) -> None: ...
