"""Kafka's wire protocol as bytes and plain values, for both ends of a connection.

The controllers' Kafka listener (:mod:`raftmeta.server.kafka`) and the admin tools' Kafka
transport read and write frames with the same codec, so this package sits below both and
imports nothing of raftmeta. Only :mod:`raftmeta.kafka_protocol.codec` touches the codec library.
"""
