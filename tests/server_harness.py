"""Runs a real Sonare server (uvicorn on a free port, in a thread) on the small test models."""

from __future__ import annotations

import dataclasses
import threading
import time
from pathlib import Path

import httpx
import uvicorn

from sonare.server.app import create_app
from sonare.server.config import ServerConfig
from sonare.server.service import Service

TEST_MODELS = {"tts_module": "tts_tone_model", "stt_module": "stt_tone_model"}
ALTO = "6f1d7a52-tone-alto"


@dataclasses.dataclass
class RunningServer:
    service: Service
    port: int
    _server: uvicorn.Server
    _thread: threading.Thread

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)


def start_server(data_dir: Path, **settings) -> RunningServer:
    config = ServerConfig(data_dir=data_dir, threads=1, **{**TEST_MODELS, **settings})
    config.validate()
    service = Service(config)
    app = create_app(config, service)
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_config=None, ws_max_size=config.max_ws_message_bytes)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not (server.started and service.ready):
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not become ready")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    running = RunningServer(service, port, server, thread)
    assert httpx.get(f"{running.http}/ready").status_code == 200
    return running
