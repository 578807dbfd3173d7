"""Running the app under uvicorn with a graceful drain on SIGTERM (and Ctrl-C).

The first signal stops admission and flips readiness (so a balancer stops sending work), waits for
in-flight streams up to the drain timeout, then lets uvicorn shut down. A second signal exits at once.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from types import FrameType

import uvicorn

from sonare.server import logging as server_logging
from sonare.server.app import create_app
from sonare.server.config import ServerConfig
from sonare.server.service import Service

log = logging.getLogger(__name__)

# After the drain, connections still open (idle sockets) get this long to close.
CLOSE_GRACE_S = 3


class DrainingServer(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, service: Service, drain_timeout: float):
        super().__init__(config)
        self.service = service
        self.drain_timeout = drain_timeout
        self._draining = False
        self._drain_task: asyncio.Future | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def serve(self, sockets=None) -> None:
        self._loop = asyncio.get_running_loop()
        await super().serve(sockets)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self._draining or self._loop is None:
            log.warning("second signal: exiting without waiting for the drain")
            super().handle_exit(sig, frame)
            self.force_exit = True
            return
        self._draining = True
        log.info("signal %s received: draining for up to %.0f s", signal.Signals(sig).name, self.drain_timeout)
        # Signal handlers interrupt the loop's own thread; hand over through the loop's wake-up pipe.
        self._loop.call_soon_threadsafe(self._start_drain)

    def _start_drain(self) -> None:
        self._drain_task = asyncio.ensure_future(self._drain())

    async def _drain(self) -> None:
        await self.service.drain(self.drain_timeout)
        self.should_exit = True


def run(config: ServerConfig) -> int:
    server_logging.configure(config.log_level, config.log_format)
    service = Service(config)
    app = create_app(config, service)
    uv_config = uvicorn.Config(
        app,
        host=config.host,
        port=config.port,
        ws_max_size=config.max_ws_message_bytes,
        log_config=None,
        timeout_graceful_shutdown=CLOSE_GRACE_S,
    )
    server = DrainingServer(uv_config, service, config.drain_timeout)
    log.info(
        "starting on %s:%d",
        config.host,
        config.port,
        extra={"auth": "api keys" if config.api_keys else "open", "sagemaker": config.sagemaker},
    )
    server.run()
    return 0
