"""``raftmeta log dump`` and ``snapshot dump`` show client quota records with their entity."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analytics.synthetic import write_node_directory
from raftmeta.cli.main import main
from raftmeta.records import ClientQuotaRecord, ConfigRecord, ConfigResourceType, QuotaEntityData

QUOTA = ClientQuotaRecord(
    (QuotaEntityData("client-id", None), QuotaEntityData("user", "alice")),
    "producer_byte_rate",
    1024.0,
)
CONFIG = ConfigRecord(int(ConfigResourceType.BROKER), "", "log.cleaner.threads", "2")


def test_log_and_snapshot_dumps_show_quotas_and_configs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = write_node_directory(
        tmp_path / "node", cluster_id="c1", batches=[([QUOTA, CONFIG], 1, 1_000)], snapshot_at=2
    )
    assert main(["log", "dump", str(directory), "--json"]) == 0
    records = [
        record
        for line in capsys.readouterr().out.splitlines()
        for record in json.loads(line).get("records", [])
    ]
    assert records == [
        {
            "type": "ClientQuotaRecord",
            "entity": [
                {"entity_type": "client-id", "entity_name": None},
                {"entity_type": "user", "entity_name": "alice"},
            ],
            "key": "producer_byte_rate",
            "value": 1024.0,
            "remove": False,
        },
        {
            "type": "ConfigRecord",
            "resource_type": 4,
            "resource_name": "",
            "name": "log.cleaner.threads",
            "value": "2",
        },
    ]
    (snapshot,) = sorted((directory / "__cluster_metadata-0").glob("*.checkpoint"))
    assert main(["snapshot", "dump", str(snapshot)]) == 0
    out = capsys.readouterr().out
    assert "  ClientQuotaRecord entity=[{'entity_type': 'client-id', 'entity_name': None}" in out
    assert "key=producer_byte_rate value=1024.0 remove=False" in out
    assert "  ConfigRecord resource_type=4 resource_name= name=log.cleaner.threads value=2" in out
