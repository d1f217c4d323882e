"""raftmeta: cluster metadata kept in a Raft-replicated event log, in the manner of KRaft.

Packages, bottom to top (each may import only those below it; the list is checked by
``lint-imports`` from ``pyproject.toml``): ``errors``/``rpc``, ``config``, ``security``,
``raft`` (the pure consensus core), ``storage``, ``records``, ``image``/``sim``, ``common``,
``auth``, ``elections``/``placement`` (policy), ``controller``, ``quorum`` (the runtime),
``server`` (the composition root), ``channel``, ``admin``/``broker`` (clients),
``cli``.
"""

__version__ = "0.1.0"
