"""The ``grpc`` plugin: the transport of ``grpc://`` targets and of cluster servers.

It carries the engine's master and worker services (`tensorweave.engine.distributed`) over gRPC:
channels (`rpc.Peer`), the versioned binary wire format of `wire` (SCHEMA.md; no pickle), the
call and bulk lanes, and the server that wires the services to a port. gRPC itself is imported
only when a server starts or a ``grpc://`` session connects.
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
        from tensorweave.engine.distributed.master_client import RemoteMaster
        from tensorweave.plugins.grpc.rpc import Peer, Security, split_address

        address = target.split("://", 1)[1] if "://" in target else target
        split_address(address)
        return RemoteMaster(target, config, Peer(target, address, Security.resolve()))

    def create_server(self, cluster: Any, job_name: str, task_index: int, config: Any,
                      options: Any) -> Any:
        """The server of one task; see `server.GrpcServer`."""
        from tensorweave.plugins.grpc.server import GrpcServer

        return GrpcServer(cluster, job_name, task_index, config, options)


@hookimpl
def tensorweave_transports() -> list[GrpcTransport]:
    return [GrpcTransport()]
