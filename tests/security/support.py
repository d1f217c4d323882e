"""Certificates for the security tests: one CA per test directory, leaves issued on demand."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from raftmeta.security.certs import (
    CertificateAuthority,
    NodeFiles,
    new_certificate_authority,
    write_certificate_authority,
    write_node_files,
)


@dataclass
class TestPki:
    """A CA written into ``directory``; :meth:`node` writes a node's files beside it."""

    __test__ = False  # not a test class, despite its name

    directory: Path
    ca: CertificateAuthority

    @classmethod
    def create(cls, directory: Path, name: str = "raftmeta test CA") -> TestPki:
        ca = new_certificate_authority(name)
        write_certificate_authority(ca, directory)
        return cls(directory, ca)

    def node(self, common_name: str) -> NodeFiles:
        return write_node_files(self.ca, self.directory, common_name)

    def properties(self, common_name: str, client_auth: str = "required") -> dict[str, str]:
        return self.node(common_name).properties(client_auth)
