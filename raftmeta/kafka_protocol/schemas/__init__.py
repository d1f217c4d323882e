"""Kafka message schemas the codec library does not ship (UnregisterBroker, AddRaftVoter,
RemoveRaftVoter), in its JSON form: the fields, types and versions of Kafka's messages."""
