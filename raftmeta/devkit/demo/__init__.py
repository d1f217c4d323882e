"""The machinery of ``raftmeta demo``: a quorum and six brokers through a broker failure, a
Spark audit of the skew it leaves, the preferred election that fixes it; then a seventh broker
that joins empty, the audit's reassignment plan that fills it (``moves``), and a last audit.

``runner`` runs the ``steps`` in order with a progress display (``display``) and stops every
process it started (``processes``) however the run ends; ``view`` reads the cluster through the
admin client, ``snapshots`` copies and exports what the audit (``audit``, ``spark``,
``replica_outcome``) reads, and
``tools`` runs raftmeta's one-shot commands as children. ``simulated`` is ``demo --simulated``:
the consensus core alone in the seeded simulator. The command line is :mod:`raftmeta.cli.demo`.
"""
