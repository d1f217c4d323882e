"""Kafka's own wire protocol on a controller: a second front door onto the same controller.

Real Kafka admin clients (confluent-kafka, kafka-python, ...) bootstrap to a controller's
``KAFKA://host:port`` listener and call the Admin API. Each request is decoded into
:mod:`raftmeta.common` values and answered by :class:`raftmeta.apis.ControllerApis`, the object
the gRPC services call too, so validation, authorization, records and error codes are the same
(and written once); nothing here touches protobuf or gRPC. Only
:mod:`raftmeta.kafka_protocol.codec` touches the codec library.
"""

KAFKA_LISTENER = "KAFKA"
"""The name in ``listeners`` that asks for a Kafka-protocol listener (``KAFKA://host:port``),
and the listener name a controller registers it under (KIP-919)."""
