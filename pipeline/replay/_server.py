"""What every local replay shares: a threaded HTTP server on 127.0.0.1, a queue of faults
(pipeline/replay/faults.py) checked against what the replay models, and the one
implementation of each HTTP-level fault (`ReplayHandler.respond`), with the body each
service sends for an error (`ReplayHandler.error_page`) the replay's own."""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self

from pipeline.replay.faults import REFUSALS, TRANSPORT, Fault, FaultKind

Answer = tuple[int, bytes, str, dict[str, str]]  # status, body, content type, headers


class ReplayHandler(BaseHTTPRequestHandler):
    """HTTP/1.1 keep-alive like a real API server, quiet, and tolerant of clients that hang
    up (a client's timeout fires during a stall)."""

    protocol_version = "HTTP/1.1"
    # Headers and body go out as two writes; with Nagle on, the body waits for the client's
    # delayed ACK (40 ms on Linux) — a cost no real API server has.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, *args: object) -> None:  # keep test output quiet
        pass

    def error_page(self, status: int, seconds: float) -> tuple[bytes, str]:
        """The body and content type the service sends with an error status; a replay
        whose service says more overrides it."""
        return {404: b"Not Found", 429: b"Too Many Requests", 500: b"Internal Server Error",
                503: b"Service Unavailable"}[status], "text/plain"

    def html_page(self) -> bytes:
        """What stands in front of the service for FaultKind.PAGE."""
        return b"<!DOCTYPE html><html><body><h1>Bad gateway</h1></body></html>"

    def respond(self, fault: Fault | None, answer: Callable[[], Answer]) -> None:
        """Answer with `answer()`, or as the fault says: the one implementation of each
        HTTP-level fault."""
        kind = fault.kind if fault else None
        if fault is None or kind not in TRANSPORT:
            self._send(*answer())
        elif kind is FaultKind.RESET:
            self._reset()
        elif kind in REFUSALS:
            status = REFUSALS[kind]
            body, ctype = self.error_page(status, fault.seconds)
            wait = status == 429 or (status == 503 and fault.seconds > 0)
            self._send(status, body, ctype, {"Retry-After": f"{fault.seconds:g}"} if wait else {})
        elif kind is FaultKind.PAGE:
            self._send(200, self.html_page(), "text/html")
        else:
            if kind is FaultKind.STALL:
                self.server.stopping.wait(fault.seconds)
            status, body, ctype, headers = answer()
            if kind is FaultKind.TRUNCATE:
                status, body = 200, body[: max(1, len(body) // 2)]
            if kind is FaultKind.TRICKLE:
                self._trickle(status, body, ctype, fault.seconds)
            else:
                self._send(status, body, ctype, headers)

    def _send(self, status: int, body: bytes, ctype: str,
              headers: dict[str, str] | None = None) -> None:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

    def _trickle(self, status: int, body: bytes, ctype: str, pause: float) -> None:
        """Headers at once, then the body one byte every `pause` seconds: no read ever
        times out, so only a deadline on the whole response ends it."""
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.flush()
            for i in range(len(body)):
                self.wfile.write(body[i:i + 1])
                self.wfile.flush()
                time.sleep(pause)

    def _reset(self) -> None:
        """Close with SO_LINGER 0: the kernel sends RST, the client reads ECONNRESET."""
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.close()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # a burst of new connections must not be refused
    stopping: threading.Event  # set by stop(): ends stalls early


class LocalServer:
    """Subclasses give `models` (the fault kinds they answer) and `_handler()`."""

    models: frozenset[FaultKind] = frozenset()

    def __init__(self, port: int = 0) -> None:
        self.faults: deque[Fault | None] = deque()
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", port), self._handler())
        self._server.stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def checked(self, faults: Iterable[Fault | FaultKind | str | None]) -> list[Fault | None]:
        """The faults as queued: None for a request that behaves; ValueError for a kind
        this replay does not model."""
        out = [f if isinstance(f, Fault) or f is None else Fault(f) for f in faults]
        for f in out:
            if f is not None and f.kind not in self.models:
                raise ValueError(f"{type(self).__name__} does not model fault {f.kind.value!r};"
                                 f" it models {', '.join(sorted(k.value for k in self.models))}")
        return out

    def inject(self, *faults: Fault | FaultKind | str | None) -> None:
        """Queue faults; each request consumes one (None: that request behaves), then the
        server behaves again."""
        queued = self.checked(faults)
        with self._lock:
            self.faults.extend(queued)

    def next_fault(self) -> Fault | None:
        with self._lock:
            return self.faults.popleft() if self.faults else None

    def start(self) -> Self:
        # A short poll interval: stop() waits up to one (the default is 0.5 s), and tests
        # stop many servers.
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,),
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.stopping.set()
        if self._thread is not None:  # shutdown() waits for a serve_forever that is running
            self._server.shutdown()
        self._server.server_close()

    def run_until_interrupted(self) -> None:
        """Serve in the foreground (the replay-* commands) until Ctrl-C."""
        self.start()
        try:
            assert self._thread is not None
            self._thread.join()
        except KeyboardInterrupt:
            self.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
