"""Liveness, readiness (also SageMaker's `/ping`), the version root, and Prometheus metrics."""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from sonare.server.errors import ApiError, response
from sonare.server.service import Service

# The newest API version the protocol notes describe; any version a client sends is accepted.
API_VERSION = "2026-08-14"


def _service(request: Request) -> Service:
    return request.app.state.service


async def root(request: Request) -> Response:
    return JSONResponse({"ok": True, "version": API_VERSION})


async def live(request: Request) -> Response:
    """Alive unless start-up failed for good or the inference thread died (then an orchestrator should restart
    the process)."""
    service = _service(request)
    if service.failed is not None:
        error = ApiError(500, "startup_failed", service.failed, title="Start-up failed")
        return response(error, request.scope["state"]["request_id"])
    if service.engine is not None and not service.engine.alive and not service.draining:
        error = ApiError(500, "engine_stopped", "the inference thread is not running", title="Engine stopped")
        return response(error, request.scope["state"]["request_id"])
    return JSONResponse({"status": "live"})


async def ready(request: Request) -> Response:
    service = _service(request)
    if not service.ready:
        why = "draining before shutdown" if service.draining else "loading and warming up the models"
        return response(ApiError(503, "not_ready", why, title="Not ready"), request.scope["state"]["request_id"])
    return JSONResponse({"status": "ready", "models": sorted(service.loaded.models), "missing": service.loaded.missing})


async def metrics(request: Request) -> Response:
    return Response(generate_latest(_service(request).registry), media_type=CONTENT_TYPE_LATEST)
