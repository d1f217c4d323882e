"""The pure Raft consensus core: no I/O, no clock, no randomness it was not handed."""
