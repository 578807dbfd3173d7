#!/usr/bin/env python3
"""Rolling restart of local Sonare replicas behind nginx, under streaming load, accounting for every stream.

Starts N `sonare serve` replicas and nginx in front (least connections, WebSocket upgrade; config from
deploy/local/nginx.conf.template), runs TTS streams through nginx over the real WebSocket protocol with
real-time pacing, and restarts every replica one at a time the way an orchestrator does:

  1. take it out of the balancer (`--lb-mode deregister`, as a failing readiness probe removes a pod's
     endpoint) and pause like a preStop hook; `--lb-mode direct` skips this, so nginx keeps sending new
     connections to the draining replica and the server's own refusals are exercised;
  2. SIGTERM, and wait for the replica to drain its in-flight streams and exit;
  3. start a new replica on the same port and wait until `/ready` answers 200; put it back.

Every stream attempt ends as one of:
  completed - `done` arrived and the audio is as long as the reference stream's (not truncated);
  refused   - a clean refusal before any audio: an error frame with status 429/503, a WebSocket close
              1013/1012/1001, or a handshake answered 429/503; the client waits and retries;
  lb_error  - nginx itself could not reach a replica (handshake 502/504, connection refused); retried;
  dropped   - anything else: an error or a closed socket once audio flowed, no `done`, short audio.

Exit status 0 only when nothing was dropped, nginx never failed to reach a replica, and every replica
drained and exited with status 0. A JSON summary goes to stdout (and to --json-out).

    python scripts/rolling_restart.py                      # CI form: 3 replicas, one restart each
    python scripts/rolling_restart.py --cycles 3 --concurrency 12 --lb-mode direct
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NGINX_TEMPLATE = REPO / "deploy" / "local" / "nginx.conf.template"
TONE_MODEL_DIR = REPO / "tests"  # tts_tone_model: a real streaming model with trivial compute
# About 2.5 s of speech from the tone model (more from a real voice): long enough that streams are still
# in flight when a replica is told to stop, after the balancer change and preStop pause.
DEFAULT_TEXT = (
    "Thanks for calling. I can help you with your booking today, so let me look up the details "
    "and read them back to you. Your flight leaves on Friday morning and lands just after noon, "
    "with one checked bag included."
)
SAMPLE_RATE = 24000
REFUSAL_STATUSES = (429, 503)
# 1013 try again later (Sonare at capacity or draining), 1012 service restart, 1001 going away.
REFUSAL_CLOSE_CODES = (1013, 1012, 1001)
# A stream this much shorter than the reference lost audio (the tolerance absorbs frame rounding).
TRUNCATION_TOLERANCE = 0.02


# -- one stream -----------------------------------------------------------------------------------------


@dataclass
class Attempt:
    kind: str  # completed | refused | lb_error | dropped
    detail: str = ""
    audio_s: float = 0.0
    first_audio_s: float | None = None
    underruns: int = 0


async def tts_stream(url: str, text: str, word_interval_s: float, timeout_s: float) -> Attempt:
    """One TTS context on /tts/websocket: words sent at `word_interval_s`, audio played back in simulated real time."""
    import base64

    import websockets
    from websockets.exceptions import ConnectionClosed, InvalidStatus

    message = {
        "context_id": uuid.uuid4().hex,
        "model_id": "sonare",
        "output_format": {"container": "raw", "encoding": "pcm_s16le", "sample_rate": SAMPLE_RATE},
        "max_buffer_delay_ms": 0,
    }
    started = time.monotonic()
    got = Attempt("dropped")
    playback_ends: float | None = None

    async def send_words(ws) -> None:
        for word in text.split(" "):
            await ws.send(json.dumps(message | {"transcript": word + " ", "continue": True}))
            await asyncio.sleep(word_interval_s)
        await ws.send(json.dumps(message | {"transcript": "", "continue": False}))

    def ended(kind: str, detail: str) -> Attempt:
        got.kind, got.detail = kind, detail
        return got

    def closed(code: int | None) -> Attempt:
        if got.audio_s == 0 and code in REFUSAL_CLOSE_CODES:
            return ended("refused", f"close {code}")
        return ended("dropped", f"socket closed ({code}) after {got.audio_s:.2f} s of audio, before done")

    try:
        async with asyncio.timeout(timeout_s), websockets.connect(f"{url}/tts/websocket", open_timeout=10) as ws:
            sender = asyncio.create_task(send_words(ws))
            try:
                async for raw in ws:
                    frame = json.loads(raw)
                    now = time.monotonic()
                    if frame["type"] == "chunk":
                        seconds = len(base64.b64decode(frame["data"])) / 2 / SAMPLE_RATE
                        if playback_ends is None:
                            got.first_audio_s = now - started
                            playback_ends = now
                        elif now > playback_ends:
                            got.underruns += 1
                        playback_ends = max(playback_ends, now) + seconds
                        got.audio_s += seconds
                    elif frame["type"] == "error":
                        status = frame.get("status_code")
                        if got.audio_s == 0 and status in REFUSAL_STATUSES:
                            return ended("refused", f"error {status} {frame.get('error_code') or ''}".strip())
                        return ended("dropped", f"error {status}: {frame.get('message')}")
                    elif frame["type"] == "done":
                        return ended("completed", "")
                return closed(ws.close_code)
            finally:
                sender.cancel()
                with contextlib.suppress(asyncio.CancelledError, ConnectionClosed):
                    await sender
    except InvalidStatus as exc:
        status = exc.response.status_code
        return ended("refused" if status in REFUSAL_STATUSES else "lb_error", f"handshake {status}")
    except ConnectionClosed as exc:
        return closed(exc.rcvd.code if exc.rcvd else None)
    except TimeoutError:
        return ended("dropped", f"no done within {timeout_s:.0f} s")
    except OSError as exc:  # nginx itself unreachable
        return ended("lb_error", f"{type(exc).__name__}: {exc}")


# -- load -----------------------------------------------------------------------------------------------


@dataclass
class LoadStats:
    completed: list[Attempt] = field(default_factory=list)
    dropped: list[Attempt] = field(default_factory=list)
    refusals: Counter = field(default_factory=Counter)
    lb_errors: Counter = field(default_factory=Counter)
    streams_started: int = 0


async def stream_until_done(url: str, args: argparse.Namespace, stats: LoadStats) -> None:
    """One logical stream: retried after refusals, as a client following Retry-After would."""
    stats.streams_started += 1
    while True:
        attempt = await tts_stream(url, args.text, args.word_interval, args.stream_timeout)
        if attempt.kind == "completed":
            stats.completed.append(attempt)
            return
        if attempt.kind == "dropped":
            stats.dropped.append(attempt)
            return
        (stats.refusals if attempt.kind == "refused" else stats.lb_errors)[attempt.detail] += 1
        await asyncio.sleep(args.retry_pause * (0.5 + random.random()))


async def load_worker(url: str, args: argparse.Namespace, stats: LoadStats, stop: asyncio.Event) -> None:
    while not stop.is_set():
        await stream_until_done(url, args, stats)


# -- replicas and the balancer ----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_status(url: str, timeout: float = 2.0) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return None


def active_streams(port: int) -> int:
    """Streams holding a slot on one replica, from its Prometheus endpoint (the metric KEDA scales on)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as r:
            text = r.read().decode()
    except OSError:
        return -1
    samples = [line for line in text.splitlines() if line.startswith("sonare_active_streams{")]
    return int(sum(float(line.rsplit(" ", 1)[1]) for line in samples))


class Replica:
    def __init__(self, index: int, port: int, work: Path, env: dict[str, str], drain_timeout: float):
        self.index, self.port, self.work, self.env, self.drain_timeout = index, port, work, env, drain_timeout
        self.proc: subprocess.Popen | None = None
        self.generation = 0

    def start(self) -> None:
        self.generation += 1
        data_dir = self.work / f"replica-{self.index}"
        data_dir.mkdir(exist_ok=True)
        log = open(data_dir / f"server-{self.generation}.log", "wb")  # noqa: SIM115 - the child owns it
        # Exec'd by nice, so the signal goes straight to the server process, as with an exec-form ENTRYPOINT.
        command = ["nice", "-n", "5", sys.executable, "-m", "sonare.cli", "serve", "--host", "127.0.0.1"]
        command += ["--port", str(self.port), "--drain-timeout", str(self.drain_timeout), "--data-dir", str(data_dir)]
        self.proc = subprocess.Popen(command, env=self.env, stdout=log, stderr=subprocess.STDOUT, cwd=self.work)
        log.close()

    def wait_ready(self, timeout: float) -> float:
        assert self.proc is not None
        t0 = time.monotonic()
        while http_status(f"http://127.0.0.1:{self.port}/ready") != 200:
            if self.proc.poll() is not None:
                raise RuntimeError(f"replica {self.index} exited with {self.proc.returncode}; see {self.log_path}")
            if time.monotonic() - t0 > timeout:
                raise RuntimeError(f"replica {self.index} not ready after {timeout:.0f} s; see {self.log_path}")
            time.sleep(0.1)
        return time.monotonic() - t0

    @property
    def log_path(self) -> Path:
        return self.work / f"replica-{self.index}" / f"server-{self.generation}.log"

    def terminate(self) -> tuple[int, float]:
        """SIGTERM and wait for the drain and exit: (exit status, seconds)."""
        assert self.proc is not None
        t0 = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=self.drain_timeout + 30)
        return code, time.monotonic() - t0

    def drain_report(self) -> int | None:
        """Streams the server's own log says were unfinished when its drain ended."""
        for line in self.log_path.read_text(errors="replace").splitlines():
            with contextlib.suppress(ValueError):
                record = json.loads(line)
                if record.get("message", record.get("msg")) == "drain finished":
                    return record.get("unfinished")
        return None

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class Nginx:
    def __init__(self, binary: str, prefix: Path, port: int):
        self.binary, self.prefix, self.port = binary, prefix, port
        self.conf = prefix / "nginx.conf"
        self.proc: subprocess.Popen | None = None

    def render(self, ports: list[int], down: set[int]) -> None:
        servers = "\n".join(
            f"        server 127.0.0.1:{p} max_fails=1 fail_timeout=2s{' down' if p in down else ''};" for p in ports
        )
        text = NGINX_TEMPLATE.read_text()
        for key, value in {"prefix": str(self.prefix), "listen": f"127.0.0.1:{self.port}", "servers": servers}.items():
            text = text.replace("{{" + key + "}}", value)
        self.conf.write_text(text)

    def _run(self, *extra: str) -> list[str]:
        return [self.binary, "-p", str(self.prefix), "-c", str(self.conf), *extra]

    def start(self) -> None:
        subprocess.run(self._run("-t", "-q"), check=True)
        self.proc = subprocess.Popen(self._run("-g", "daemon off;"))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return
            time.sleep(0.05)
        raise RuntimeError("nginx did not start listening")

    def reload(self) -> None:
        """Graceful reload: old workers keep the connections they proxy until those close."""
        subprocess.run(self._run("-t", "-q"), check=True)
        subprocess.run(self._run("-s", "reload"), check=True, stderr=subprocess.DEVNULL)
        time.sleep(0.3)  # the master forks new workers asynchronously

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)  # graceful
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


@dataclass
class Restart:
    replica: int
    streams_in_flight_at_deregister: int | None  # None in --lb-mode direct
    streams_in_flight_at_sigterm: int
    exit_code: int
    drain_and_exit_s: float
    unfinished_after_drain: int | None
    start_to_ready_s: float


def rolling_restart(replicas: list[Replica], nginx: Nginx, args: argparse.Namespace, ports: list[int]) -> list[Restart]:
    done = []
    for _ in range(args.cycles):
        for replica in replicas:
            at_deregister = None
            if args.lb_mode == "deregister":
                at_deregister = active_streams(replica.port)
                nginx.render(ports, down={replica.port})
                nginx.reload()
                time.sleep(args.prestop)  # the preStop pause: let the balancer's change take effect
            in_flight = active_streams(replica.port)
            code, drain_s = replica.terminate()
            unfinished = replica.drain_report()
            replica.start()
            ready_s = replica.wait_ready(args.ready_timeout)
            if args.lb_mode == "deregister":
                nginx.render(ports, down=set())
                nginx.reload()
            done.append(
                Restart(replica.index, at_deregister, in_flight, code, round(drain_s, 3), unfinished, round(ready_s, 3))
            )
            print(f"restarted replica {replica.index}: {done[-1]}", file=sys.stderr, flush=True)
            time.sleep(args.settle)  # let load reach the new replica before taking the next one away
    return done


# -- the run ----------------------------------------------------------------------------------------------


def model_env(choice: str) -> tuple[str, dict[str, str]]:
    """Which TTS model the replicas serve: the bundled one when it loads, else the tone test model."""
    if choice in ("auto", "bundled"):
        try:
            import sonare.tts

            sonare.tts.load_default()
            return "bundled", {}
        except Exception as exc:  # missing or not yet trained weights
            if choice == "bundled":
                raise SystemExit(f"the bundled TTS model does not load: {exc}") from exc
    path = os.pathsep.join(filter(None, [str(TONE_MODEL_DIR), os.environ.get("PYTHONPATH")]))
    return "tone", {"PYTHONPATH": path, "SONARE_TTS_MODULE": "tts_tone_model", "SONARE_STT_MODULE": ""}


def summarise(
    stats: LoadStats, restarts: list[Restart], reference: Attempt, wall_s: float, args, model: str, bench=None
) -> dict:
    truncated = [a for a in stats.completed if a.audio_s < reference.audio_s * (1 - TRUNCATION_TOLERANCE)]
    first_audio = sorted(a.first_audio_s for a in stats.completed if a.first_audio_s is not None)

    def pct(q: float) -> float | None:
        return round(first_audio[min(len(first_audio) - 1, int(q * len(first_audio)))], 4) if first_audio else None

    failed_restarts = [r for r in restarts if r.exit_code != 0 or r.unfinished_after_drain]
    failures = [
        *(["streams dropped"] if stats.dropped else []),
        *(["streams truncated"] if truncated else []),
        *(["nginx could not reach a replica"] if stats.lb_errors else []),
        *([f"replica {r.replica} did not drain and exit cleanly" for r in failed_restarts]),
        *(["no restart happened"] if not restarts else []),
        *([] if bench_failures_are_refusals(bench) else ["sonare bench saw a broken stream"]),
    ]
    return {
        "passed": not failures,
        "failures": failures,
        "model": model,
        "replicas": args.replicas,
        "lb_mode": args.lb_mode,
        "concurrency": args.concurrency,
        "drain_timeout_s": args.drain_timeout,
        "reference_audio_s": round(reference.audio_s, 3),
        "streams_started": stats.streams_started,
        "streams_completed": len(stats.completed),
        "streams_dropped": len(stats.dropped),
        "streams_truncated": len(truncated),
        "dropped_detail": [a.detail for a in stats.dropped][:10],
        "refusals_retried": dict(stats.refusals),
        "lb_errors": dict(stats.lb_errors),
        "audio_s_completed": round(sum(a.audio_s for a in stats.completed), 2),
        "first_audio_s": {"p50": round(statistics.median(first_audio), 4), "p95": pct(0.95), "max": pct(1.0)}
        if first_audio
        else None,
        "underruns": sum(a.underruns for a in stats.completed),
        "restarts": [asdict(r) for r in restarts],
        "sonare_bench": bench,
        "wall_s": round(wall_s, 1),
    }


async def drive(url: str, args, replicas: list[Replica], nginx: Nginx, ports: list[int]) -> tuple:
    reference = await tts_stream(url, args.text, args.word_interval, args.stream_timeout)
    if reference.kind != "completed":
        raise RuntimeError(f"the reference stream through nginx failed: {reference.detail}")
    stats, stop = LoadStats(), asyncio.Event()
    workers = [asyncio.create_task(load_worker(url, args, stats, stop)) for _ in range(args.concurrency)]
    bench = await start_sonare_bench(url, args) if args.bench_sessions else None
    await asyncio.sleep(args.settle)  # streams in flight on every replica before the first SIGTERM
    try:
        restarts = await asyncio.to_thread(rolling_restart, replicas, nginx, args, ports)
    finally:
        stop.set()  # workers finish the stream they are on; none is cancelled
        await asyncio.gather(*workers)
    bench_summary = None
    if bench is not None:
        out, _ = await asyncio.wait_for(bench.communicate(), timeout=args.stream_timeout * 2)
        bench_summary = json.loads(out)
    return stats, restarts, reference, bench_summary


async def start_sonare_bench(url: str, args: argparse.Namespace):
    """`sonare bench` alongside, unmodified: it does not retry, so a refusal counts against it as a failed
    session, and what matters is that every failure it reports is a clean refusal, none a cut stream."""
    command = [sys.executable, "-m", "sonare.cli", "bench", "--url", url, "--mode", "tts"]
    command += ["--sessions", str(args.bench_sessions), "--concurrency", str(args.bench_concurrency)]
    return await asyncio.create_subprocess_exec(*command, stdout=asyncio.subprocess.PIPE)


def bench_failures_are_refusals(summary: dict | None) -> bool:
    """`sonare bench` reports an error frame or refused handshake as "<status> <message>" and a close as
    "close <code> <reason>"; anything else is a broken stream."""
    if summary is None:
        return True

    def is_refusal(error: str) -> bool:
        words = error.split()
        if words[:1] == ["close"]:
            return len(words) > 1 and words[1] in {str(c) for c in REFUSAL_CLOSE_CODES}
        return bool(words) and words[0] in {str(s) for s in REFUSAL_STATUSES}

    return all(is_refusal(error) for error in summary["errors"])


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--replicas", type=int, default=3)
    p.add_argument("--cycles", type=int, default=1, help="times every replica is restarted")
    p.add_argument("--concurrency", type=int, default=6, help="streams in flight through the balancer")
    p.add_argument("--lb-mode", choices=["deregister", "direct"], default="deregister")
    p.add_argument("--model", choices=["auto", "bundled", "tone"], default="auto")
    p.add_argument("--text", default=DEFAULT_TEXT)
    p.add_argument("--repeat", type=int, default=1, help="say the text this many times per stream (longer streams)")
    p.add_argument("--word-interval", type=float, default=0.02, help="seconds between words (an LLM's pace)")
    p.add_argument("--drain-timeout", type=float, default=20.0, help="the replicas' SONARE_DRAIN_TIMEOUT")
    p.add_argument("--prestop", type=float, default=0.5, help="pause between deregistering and SIGTERM")
    p.add_argument("--settle", type=float, default=1.5, help="seconds of load before the first and after each restart")
    p.add_argument("--retry-pause", type=float, default=0.5, help="mean pause before retrying a refused stream")
    p.add_argument("--stream-timeout", type=float, default=60.0)
    p.add_argument("--bench-sessions", type=int, default=40, help="`sonare bench` sessions run alongside (0: none)")
    p.add_argument("--bench-concurrency", type=int, default=2)
    p.add_argument("--ready-timeout", type=float, default=180.0)
    p.add_argument("--threads", type=int, default=1, help="intra-op threads per replica")
    p.add_argument("--tts-slots", type=int, default=16, help="stream slots per replica")
    p.add_argument("--nginx", default=shutil.which("nginx") or "/usr/sbin/nginx")
    p.add_argument("--work-dir", type=Path, help="logs and nginx config (default: a fresh temporary directory)")
    p.add_argument("--json-out", type=Path)
    args = p.parse_args(argv)
    args.text = " ".join([args.text] * args.repeat)
    if args.lb_mode == "deregister" and args.replicas < 2:
        p.error("--lb-mode deregister needs at least 2 replicas")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not Path(args.nginx).exists():
        print(f"nginx not found at {args.nginx}: apt-get install -y nginx-light", file=sys.stderr)
        return 2
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="sonare-rolling-"))
    work.mkdir(parents=True, exist_ok=True)
    model, extra_env = model_env(args.model)
    env = os.environ | extra_env | {"SONARE_THREADS": str(args.threads), "SONARE_TTS_SLOTS": str(args.tts_slots)}
    env |= {"SONARE_LOG_FORMAT": "json", "SONARE_CONFIG": ""}
    ports = [free_port() for _ in range(args.replicas)]
    replicas = [Replica(i, port, work, env, args.drain_timeout) for i, port in enumerate(ports)]
    nginx = Nginx(args.nginx, work, free_port())
    t0 = time.monotonic()
    try:
        for replica in replicas:
            replica.start()
        for replica in replicas:
            replica.wait_ready(args.ready_timeout)
        nginx.render(ports, down=set())
        nginx.start()
        print(f"{args.replicas} replicas ({model} model) ready behind nginx on :{nginx.port}", file=sys.stderr)
        url = f"ws://127.0.0.1:{nginx.port}"
        stats, restarts, reference, bench = asyncio.run(drive(url, args, replicas, nginx, ports))
    finally:
        nginx.stop()
        for replica in replicas:
            replica.kill()
    summary = summarise(stats, restarts, reference, time.monotonic() - t0, args, model, bench)
    summary["work_dir"] = str(work)
    text = json.dumps(summary, indent=2)
    print(text)
    if args.json_out:
        args.json_out.write_text(text + "\n")
    return 0 if summary["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
