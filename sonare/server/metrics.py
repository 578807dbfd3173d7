"""Server-side Prometheus metrics, registered beside the engine's in one registry."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from sonare.engine.metrics import LATENCY_BUCKETS

REQUEST_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)


class ServerMetrics:
    def __init__(self, registry: CollectorRegistry):
        r = registry
        self.requests = Counter(
            "sonare_http_requests_total", "HTTP requests answered", ["route", "method", "status"], registry=r
        )
        self.request_seconds = Histogram(
            "sonare_http_request_seconds",
            "HTTP request duration, including streamed bodies",
            ["route"],
            buckets=REQUEST_BUCKETS,
            registry=r,
        )
        self.websockets = Gauge("sonare_websocket_connections", "Open WebSocket connections", ["route"], registry=r)
        self.audio_out_seconds = Counter(
            "sonare_audio_seconds_produced_total", "Seconds of synthesised audio sent", ["route"], registry=r
        )
        self.audio_in_seconds = Counter(
            "sonare_audio_seconds_received_total",
            "Seconds of audio received for recognition",
            ["route"],
            registry=r,
        )
        self.ttfa_seconds = Histogram(
            "sonare_time_to_first_audio_seconds",
            "From the request (or a context's first text) to its first audio leaving the server",
            ["route"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.ready = Gauge("sonare_ready", "1 when the server accepts work (models loaded and warm)", registry=r)
        self.draining = Gauge("sonare_draining", "1 while the server drains before exit", registry=r)
