"""The ``grpc`` plugin: the transport of ``grpc://`` targets and of cluster servers.

It provides the master service (sessions), the worker service (graphs, steps, tensors) and the
remote rendezvous over gRPC, with the versioned binary wire format of `wire` (SCHEMA.md): no
protobuf code generation and no pickle. gRPC itself is imported only when a server starts or a
``grpc://`` session connects.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine.plugin_manager import hookimpl


class GrpcTransport:
    """What the plugin registers under the scheme ``grpc``."""

    scheme = "grpc"
    priority = 0

    def connect_master(self, target: str, config: Any) -> Any:
        """A session on the master at `target`; see `master_client.RemoteMaster`."""
        from tensorweave.plugins.grpc.master_client import RemoteMaster

        return RemoteMaster(target, config)

    def create_server(self, cluster: Any, job_name: str, task_index: int, config: Any,
                      options: Any) -> Any:
        """The server of one task; see `server.GrpcServer`."""
        from tensorweave.plugins.grpc.server import GrpcServer

        return GrpcServer(cluster, job_name, task_index, config, options)


@hookimpl
def tensorweave_transports() -> list[GrpcTransport]:
    return [GrpcTransport()]
