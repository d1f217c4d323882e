"""Kafka's own wire protocol on a controller: a second front door onto the same controller.

Real Kafka admin clients (confluent-kafka, kafka-python, ...) bootstrap to a controller's
``KAFKA://host:port`` listener and call the Admin API; each call is answered through the same
entry points the gRPC Admin service uses, so validation, records and error codes are the same.
Only :mod:`raftmeta.kafka_protocol.codec` touches the codec library.
"""

KAFKA_LISTENER = "KAFKA"
"""The name in ``listeners`` that asks for a Kafka-protocol listener (``KAFKA://host:port``),
and the listener name a controller registers it under (KIP-919)."""
