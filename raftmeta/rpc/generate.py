"""Regenerate the gRPC modules in this package from ``proto/raftmeta/*.proto``.

Run ``python -m raftmeta.rpc.generate`` after editing a ``.proto`` file and commit the result;
``tests/rpc/test_generated_fresh.py`` fails while the committed modules are stale. The generated
code is committed so that installing raftmeta needs only grpcio and protobuf at run time;
grpcio-tools, which carries protoc, is a development dependency.

protoc names a generated module, and the absolute imports between generated modules, after the
``.proto`` file's path below its include root. The include root is therefore mapped so that
``proto/raftmeta/raft.proto`` is seen as ``raftmeta/rpc/raft.proto``: its modules land in this
package as ``raftmeta.rpc.raft_pb2`` and ``raftmeta.rpc.raft_pb2_grpc`` and import each other
without any rewriting of protoc's output.

Per ``.proto`` file a run writes:

* ``<name>_pb2.py`` and ``<name>_pb2_grpc.py``: protoc's output, byte for byte.
* ``<name>_pb2.pyi``: protoc's message stubs, behind a header that keeps mypy and ruff out of
  them (they import protobuf, which ships no type information, and are not formatted to our
  style); callers still get every field's type from them.
* ``<name>_pb2_grpc.pyi``: stubs for the service module, written here from the descriptors
  because protoc's gRPC plugin emits no types. They describe the ``grpc.aio`` API, the only
  one raftmeta uses, so that servicers and callers are type-checked without a third-party
  stub package.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
PROTO_DIR = REPO_ROOT / "proto" / "raftmeta"
PACKAGE_PATH = "raftmeta/rpc"
"""Where the ``.proto`` files appear to protoc, and so where their modules are written."""

REGENERATE_COMMAND = "python -m raftmeta.rpc.generate"
GENERATED_SUFFIXES = ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py", "_pb2_grpc.pyi")

_STUB_HEADER = "# ruff: noqa\n# fmt: off\n"
"""Starts every generated stub: the layout is the generator's, not the formatter's."""
_UNCHECKED_STUB_HEADER = "# mypy: ignore-errors\n" + _STUB_HEADER

# FileDescriptorProto field numbers used to find comments in SourceCodeInfo paths.
_SERVICE_FIELD = 6
_METHOD_FIELD = 2


def proto_files(proto_dir: Path = PROTO_DIR) -> list[Path]:
    files = sorted(proto_dir.glob("*.proto"))
    if not files:
        raise FileNotFoundError(f"no .proto files in {proto_dir}; run from a source checkout")
    return files


def generated_names(proto_dir: Path = PROTO_DIR) -> list[str]:
    """File names, relative to ``raftmeta/rpc/``, that a run produces."""
    return [
        proto.stem + suffix for proto in proto_files(proto_dir) for suffix in GENERATED_SUFFIXES
    ]


def generate(out_root: Path = REPO_ROOT, proto_dir: Path = PROTO_DIR) -> list[Path]:
    """Compile every ``.proto`` file; modules go to ``out_root/raftmeta/rpc/``.

    ``out_root`` other than the repository lets a test compile into a scratch directory and
    compare the result with what is committed.
    """
    # Loaded by name: grpcio-tools is a development dependency and neither package ships types.
    protoc: Any = importlib.import_module("grpc_tools.protoc")
    descriptor_pb2: Any = importlib.import_module("google.protobuf.descriptor_pb2")

    out_dir = out_root / PACKAGE_PATH
    out_dir.mkdir(parents=True, exist_ok=True)
    sources = [f"{PACKAGE_PATH}/{proto.name}" for proto in proto_files(proto_dir)]
    with tempfile.TemporaryDirectory() as scratch:
        descriptor_set_path = Path(scratch) / "descriptors.pb"
        arguments = [
            "grpc_tools.protoc",
            f"--proto_path={PACKAGE_PATH}={proto_dir}",
            f"--proto_path={resources.files('grpc_tools') / '_proto'}",
            f"--python_out={out_root}",
            f"--pyi_out={out_root}",
            f"--grpc_python_out={out_root}",
            f"--descriptor_set_out={descriptor_set_path}",
            "--include_imports",
            "--include_source_info",
            *sources,
        ]
        status = protoc.main(arguments)
        if status != 0:
            raise RuntimeError(f"protoc failed with status {status}: {' '.join(arguments)}")
        descriptor_set = descriptor_pb2.FileDescriptorSet.FromString(
            descriptor_set_path.read_bytes()
        )

    files = list(descriptor_set.file)
    message_types = _python_message_types(files)
    for file in files:
        if file.name not in sources:
            continue
        module = _module_name(file.name)
        short_name = module.rpartition(".")[2]
        message_stub = out_dir / f"{short_name}.pyi"
        message_stub.write_text(
            _UNCHECKED_STUB_HEADER + message_stub.read_text(encoding="utf-8"), encoding="utf-8"
        )
        (out_dir / f"{short_name}_grpc.pyi").write_text(
            grpc_stub_text(file, message_types), encoding="utf-8"
        )
    return [out_dir / name for name in generated_names(proto_dir)]


def _module_name(proto_name: str) -> str:
    """The Python module protoc generates for a ``.proto`` path, e.g. ``raftmeta.rpc.raft_pb2``."""
    return proto_name.removesuffix(".proto").replace("/", ".") + "_pb2"


def _python_message_types(files: Iterable[Any]) -> dict[str, tuple[str, str]]:
    """Map each message's full proto name to (Python module, name inside the module)."""
    found: dict[str, tuple[str, str]] = {}

    def visit(messages: Iterable[Any], proto_prefix: str, python_prefix: str, module: str) -> None:
        for message in messages:
            name = str(message.name)
            found[f"{proto_prefix}.{name}"] = (module, python_prefix + name)
            visit(message.nested_type, f"{proto_prefix}.{name}", f"{python_prefix}{name}.", module)

    for file in files:
        package = f".{file.package}" if file.package else ""
        visit(file.message_type, package, "", _module_name(str(file.name)))
    return found


def grpc_stub_text(file: Any, message_types: dict[str, tuple[str, str]]) -> str:
    """The ``<name>_pb2_grpc.pyi`` stub for one file's services."""
    comments = {
        tuple(location.path): str(location.leading_comments).strip()
        for location in file.source_code_info.location
        if location.leading_comments
    }
    modules: set[str] = set()

    def python_type(proto_type: str) -> str:
        module, name = message_types[proto_type]
        modules.add(module)
        return f"{module.rpartition('.')[2]}.{name}"

    body: list[str] = []
    for service_index, service in enumerate(file.service):
        service_path = (_SERVICE_FIELD, service_index)
        stub_lines: list[str] = []
        servicer_lines: list[str] = []
        for method_index, method in enumerate(service.method):
            if method.client_streaming or method.server_streaming:
                raise NotImplementedError(
                    f"{service.name}.{method.name} streams; extend grpc_stub_text first"
                )
            request = python_type(method.input_type)
            response = python_type(method.output_type)
            comment = comments.get((*service_path, _METHOD_FIELD, method_index), "")
            stub_lines += [
                f"    {method.name}: _UnaryUnary[{request}, {response}]",
                *_docstring(comment, "    "),
            ]
            servicer_lines += [
                f"    def {method.name}(",
                "        self,",
                f"        request: {request},",
                "        context: Any,",
                f"    ) -> {response} | Awaitable[{response}]:",
                *(
                    _docstring(comment, "        ")
                    or ['        """Not implemented unless overridden."""']
                ),
                "        ...",
                "",
            ]
        service_doc = _docstring(comments.get(service_path, ""), "    ")
        body += [
            "",
            f"class {service.name}Stub:",
            *service_doc,
            "    def __init__(self, channel: Any) -> None: ...",
            *stub_lines,
            "",
            f"class {service.name}Servicer:",
            *service_doc,
            *servicer_lines,
            f"def add_{service.name}Servicer_to_server(",
            f"    servicer: {service.name}Servicer,",
            "    server: Any,",
            ") -> None: ...",
        ]

    imports = [
        f"from {module.rpartition('.')[0]} import {module.rpartition('.')[2]}"
        for module in sorted(modules)
    ]
    head = [
        _STUB_HEADER.rstrip("\n"),
        f"# Generated by `{REGENERATE_COMMAND}` from {file.name}. DO NOT EDIT!",
        '"""Types for the module protoc\'s gRPC plugin writes without annotations.',
        "",
        "Calls return awaitables and servicer methods may be coroutines, as with grpc.aio. The",
        "module's experimental static helper classes are left out.",
        '"""',
        "",
        "from collections.abc import Awaitable, Sequence",
        "from typing import Any, Generic, TypeVar",
        "",
        *imports,
        "",
        '_Request = TypeVar("_Request", contravariant=True)',
        '_Response = TypeVar("_Response", covariant=True)',
        "",
        "class _UnaryUnary(Generic[_Request, _Response]):",
        "    def __call__(",
        "        self,",
        "        request: _Request,",
        "        *,",
        "        timeout: float | None = ...,",
        "        metadata: Sequence[tuple[str, str | bytes]] | None = ...,",
        "        credentials: Any = ...,",
        "        wait_for_ready: bool | None = ...,",
        "        compression: Any = ...,",
        "    ) -> Awaitable[_Response]: ...",
    ]
    return "\n".join(head + body) + "\n"


def _docstring(comment: str, indent: str) -> list[str]:
    if not comment:
        return []
    lines = [
        line.strip() for line in comment.replace("\\", "\\\\").replace('"""', "'''").split("\n")
    ]
    if len(lines) == 1:
        return [f'{indent}"""{lines[0]}"""']
    return [f'{indent}"""{lines[0]}', *(f"{indent}{line}" for line in lines[1:]), f'{indent}"""']


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=REGENERATE_COMMAND, description=__doc__.split("\n")[0])
    parser.add_argument(
        "--out-root",
        type=Path,
        default=REPO_ROOT,
        help="directory that receives raftmeta/rpc/*_pb2* (default: the repository)",
    )
    options = parser.parse_args(argv)
    for path in generate(options.out_root):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
