"""What every local replay shares: a threaded HTTP server on 127.0.0.1 with a fault queue."""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class ReplayHandler(BaseHTTPRequestHandler):
    """HTTP/1.1 keep-alive like a real API server, quiet, and tolerant of clients that hang
    up (a client's timeout fires during a stall)."""

    protocol_version = "HTTP/1.1"
    # Headers and body go out as two writes; with Nagle on, the body waits for the client's
    # delayed ACK (40 ms on Linux) — a cost no real API server has.
    disable_nagle_algorithm = True

    def log_message(self, *args: object) -> None:  # keep test output quiet
        pass

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


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # a burst of new connections must not be refused


class LocalServer:
    """Subclasses give `fault_type` (built from a str by inject) and `_handler()`."""

    fault_type: type

    def __init__(self, port: int = 0) -> None:
        self.faults: deque[Any] = deque()
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", port), self._handler())
        self._thread: threading.Thread | None = None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def inject(self, *faults: Any) -> None:
        """Queue faults; each request consumes one (then the server behaves again)."""
        with self._lock:
            self.faults.extend(self.fault_type(f) if isinstance(f, str) else f for f in faults)

    def next_fault(self) -> Any:
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
