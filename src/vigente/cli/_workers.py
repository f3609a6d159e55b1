"""``vigente serve --workers N``: N server processes on one port, each with a listening socket
of its own (``SO_REUSEPORT``), so that the kernel spreads connections over them.

uvicorn's own workers share one listening socket, and an idle worker's event loop accepts every
connection waiting at once: 16 keep-alive connections opened together went 16 to one worker and
none to the other, or 15 to 1 (seen on Linux), and that worker did all the work for as long as
they lived, which for an agent's HTTP client is the whole session. With a socket per worker the
kernel assigns each new connection to one of them by a hash of its addresses. Where
``SO_REUSEPORT`` is missing (Windows), uvicorn's shared socket is used.

A worker that exits is started again; SIGINT or SIGTERM stops them all, each finishing its
requests in flight as uvicorn does.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import socket
import time
from typing import Any

__all__ = ["serve_workers"]

#: how long a stopping worker may take to finish its requests before it is killed
STOP_SECONDS = 30


def _listening_socket(host: str, port: int) -> socket.socket:
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind(address)
    return sock


def _worker(host: str, port: int, settings: dict[str, Any]) -> None:
    """One worker process: its own socket on the shared port, the application built from
    ``$VIGENTE_SERVE_CONFIG`` (inherited from the supervisor)."""
    import uvicorn

    sock = _listening_socket(host, port)  # uvicorn listens on it
    config = uvicorn.Config("vigente.http:app_from_environment", factory=True, **settings)
    uvicorn.Server(config).run(sockets=[sock])


def _free_port(host: str) -> int:
    with _listening_socket(host, 0) as sock:
        port: int = sock.getsockname()[1]
    return port


def serve_workers(host: str, port: int, workers: int, settings: dict[str, Any]) -> None:
    """Run ``workers`` processes serving the application on ``host:port`` until SIGINT or
    SIGTERM (``settings``: uvicorn's, without host and port)."""
    if not hasattr(socket, "SO_REUSEPORT"):
        import uvicorn

        uvicorn.run("vigente.http:app_from_environment", factory=True, workers=workers,
                    host=host, port=port, **settings)
        return
    if port == 0:
        port = _free_port(host)
    spawn = multiprocessing.get_context("spawn")
    stopping = False

    def start() -> Any:
        process = spawn.Process(target=_worker, args=(host, port, settings), daemon=False)
        process.start()
        return process

    def stop(signum: int, _: Any) -> None:
        nonlocal stopping
        stopping = True

    previous = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    processes = [start() for _ in range(workers)]
    try:
        while not stopping:
            time.sleep(0.2)
            for n, process in enumerate(processes):
                if not process.is_alive() and not stopping:
                    processes[n] = start()  # a worker that died is replaced
    finally:
        for process in processes:
            if process.is_alive() and process.pid is not None:
                os.kill(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_SECONDS
        for process in processes:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
