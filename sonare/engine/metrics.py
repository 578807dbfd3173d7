"""Prometheus metrics recorded by the engine. The server exposes the registry; the engine only records."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

# Dense below 100 ms: first-audio latency is the figure users judge a voice stack by.
LATENCY_BUCKETS = (
    0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.1,
    0.125, 0.15, 0.2, 0.3, 0.5, 1.0, 2.0, 5.0,
)  # fmt: skip
STEP_BUCKETS = (0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.05, 0.1, 0.25)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


class EngineMetrics:
    def __init__(self, registry: CollectorRegistry | None = None):
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.active_streams = Gauge("sonare_active_streams", "Streams holding a slot", ["model"], registry=r)
        self.slots = Gauge("sonare_stream_slots", "Stream slots configured", ["model"], registry=r)
        self.step_seconds = Histogram(
            "sonare_step_seconds",
            "Wall time of one batched step",
            ["model"],
            buckets=STEP_BUCKETS,
            registry=r,
        )
        self.batch_size = Histogram(
            "sonare_batch_size", "Streams in one batched step", ["model"], buckets=BATCH_BUCKETS, registry=r
        )
        self.queue_wait_seconds = Histogram(
            "sonare_queue_wait_seconds",
            "Time a stream with work waited for its step",
            ["model"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.first_output_seconds = Histogram(
            "sonare_time_to_first_output_seconds",
            "Time from stream admission to its first output (first audio for TTS)",
            ["model"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.underruns = Counter(
            "sonare_underruns_total",
            "Steps served after the stream's playback deadline",
            ["model"],
            registry=r,
        )
        self.rejected = Counter("sonare_rejected_admissions_total", "Streams refused", ["model", "reason"], registry=r)
        self.stream_errors = Counter(
            "sonare_stream_errors_total", "Streams ended by a model error", ["model"], registry=r
        )
