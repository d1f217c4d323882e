"""Starting, and restarting, the demo's ``raftmeta broker`` processes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from raftmeta.demo.errors import NotAvailableYet

if TYPE_CHECKING:
    from raftmeta.demo.processes import Child
    from raftmeta.demo.steps import DemoContext


def start_broker(ctx: DemoContext, broker_id: int, rack: str) -> Child:
    raise NotAvailableYet("the broker process", "raftmeta.devcluster.BrokerProcess")


def restart(ctx: DemoContext, broker_id: int) -> None:
    raise NotAvailableYet("the broker process", "raftmeta.devcluster.BrokerProcess")
