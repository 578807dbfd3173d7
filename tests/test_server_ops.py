"""Operations: configuration, authentication, health and metrics, the SageMaker contract, and drain."""

from __future__ import annotations

import base64
import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import soundfile as sf
import websockets.sync.client as ws_client
from server_harness import ALTO, start_server
from stt_tone_model import tone
from websockets.exceptions import ConnectionClosed, InvalidStatus

from sonare.server.config import ConfigError, load_config

TESTS = Path(__file__).parent


# -- configuration ---------------------------------------------------------------------------------------


def test_flags_beat_environment_beat_file(tmp_path):
    file = tmp_path / "sonare.yaml"
    file.write_text("server:\n  port: 9001\n  tts_slots: 7\n  stt_slots: 5\n  api_keys: [a, b]\n")
    env = {"SONARE_TTS_SLOTS": "9", "SONARE_STT_SLOTS": "6"}
    config = load_config({"stt_slots": 4, "host": None}, env=env, config_file=file)
    assert (config.port, config.tts_slots, config.stt_slots, config.api_keys) == (9001, 9, 4, ("a", "b"))
    toml = tmp_path / "sonare.toml"
    toml.write_text('drain_timeout = 2.5\nbehind_proxy = true\nhost = "0.0.0.0"\n')
    config = load_config({}, env={"SONARE_CONFIG": str(toml), "SONARE_API_KEYS": "x, y"})
    assert (config.drain_timeout, config.behind_proxy, config.api_keys) == (2.5, True, ("x", "y"))


@pytest.mark.parametrize(
    ("flags", "env", "message"),
    [
        ({"host": "0.0.0.0"}, {}, "refusing to listen"),
        ({"port": 0}, {}, "port"),
        ({}, {"SONARE_TTS_SLOTS": "many"}, "tts_slots"),
        ({}, {"SONARE_BEHIND_PROXY": "perhaps"}, "behind_proxy"),
        ({}, {"SONARE_CONFIG": "/nonexistent.yaml"}, "cannot read"),
        ({"log_format": "xml"}, {}, "log_format"),
        ({}, {"SONARE_STT_STEP_MS": "-40"}, "stt_step_ms"),
        ({"stt_step_ms": 2000}, {}, "stt_step_ms"),
    ],
)
def test_bad_configuration_is_refused_with_a_reason(flags, env, message):
    with pytest.raises(ConfigError, match=message):
        load_config(flags, env=env)


def test_the_stt_step_setting_reaches_the_recogniser():
    from sonare.server.models import load_models
    from sonare.stt.stream import STEP_SECONDS

    config = load_config({"tts_module": "", "stt_step_ms": 120}, env={})
    assert load_models(config).models["stt"].step_seconds == pytest.approx(0.12)
    assert load_models(load_config({"tts_module": ""}, env={})).models["stt"].step_seconds == STEP_SECONDS


def test_public_address_needs_keys_or_a_proxy():
    assert load_config({"host": "0.0.0.0", "api_keys": ["k"]}, env={}).api_keys == ("k",)
    assert load_config({"host": "0.0.0.0", "behind_proxy": True}, env={}).behind_proxy
    assert load_config({"host": "::1"}, env={}).host == "::1"


def test_sagemaker_environment_sets_the_container_defaults():
    config = load_config({}, env={"SAGEMAKER_BIND_TO_PORT": "9099", "SM_MODEL_DIR": "/models"})
    assert (config.sagemaker, config.host, config.port, str(config.model_dir)) == (True, "0.0.0.0", 9099, "/models")
    assert load_config({}, env={"SM_MODEL_DIR": "/m"}).port == 8080
    assert load_config({"port": 7000}, env={"SM_MODEL_DIR": "/m"}).port == 7000


# -- auth, health, metrics --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def keyed(tmp_path_factory):
    running = start_server(tmp_path_factory.mktemp("auth"), api_keys=("key-one", "key-two"))
    yield running
    running.stop()


def test_every_auth_form_is_accepted_and_health_is_public(keyed):
    url = f"{keyed.http}/voices"
    for public in ("/", "/live", "/ready", "/ping"):
        assert httpx.get(f"{keyed.http}{public}").status_code == 200
    refused = httpx.get(url)
    assert refused.status_code == 401
    assert refused.json()["error_code"] == "unauthorized" and refused.json()["request_id"]
    assert httpx.get(url, headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert httpx.get(f"{keyed.http}/metrics").status_code == 401
    for kwargs in (
        {"headers": {"Authorization": "Bearer key-one"}},
        {"headers": {"X-API-Key": "key-two"}},
        {"params": {"api_key": "key-one"}},
        {"params": {"access_token": "key-two"}},
        {"headers": {"Authorization": "Bearer key-one", "Cartesia-Version": "1999-01-01"}},
    ):
        assert httpx.get(url, **kwargs).status_code == 200


def test_websocket_handshake_is_refused_with_401(keyed):
    with pytest.raises(InvalidStatus) as refused:
        ws_client.connect(f"{keyed.ws}/tts/websocket")
    assert refused.value.response.status_code == 401
    url = f"{keyed.ws}/tts/websocket?api_key=key-one&cartesia_version=2024-11-13"
    with ws_client.connect(url) as ws:
        assert ws.response.headers["x-request-id"]
        ws.send(json.dumps({"context_id": "a", "transcript": "", "continue": False}))
        assert json.loads(ws.recv(timeout=5))["type"] == "done"


def test_access_tokens_open_only_their_granted_routes(keyed):
    url = f"{keyed.http}/access-token"
    assert httpx.post(url, json={"grants": {"tts": True}}).status_code == 401
    key = {"X-API-Key": "key-one"}
    token = httpx.post(url, json={"grants": {"tts": True, "agent": True}, "expires_in": 60}, headers=key).json()[
        "token"
    ]
    body = {
        "transcript": "token",
        "voice": ALTO,
        "output_format": {"container": "raw", "encoding": "pcm_s16le", "sample_rate": 8000},
    }
    assert (
        httpx.post(f"{keyed.http}/tts/bytes", json=body, headers={"Authorization": f"Bearer {token}"}).status_code
        == 200
    )
    with ws_client.connect(f"{keyed.ws}/tts/websocket?access_token={token}") as ws:
        ws.send(json.dumps({"context_id": "a", "transcript": "", "continue": False}))
        assert json.loads(ws.recv(timeout=5))["type"] == "done"
    assert httpx.post(f"{keyed.http}/stt", params={"access_token": token}).status_code == 401  # not granted
    assert httpx.post(url, json={}, params={"access_token": token}).status_code == 401  # tokens mint nothing
    forged = token[:-2] + ("AA" if not token.endswith("AA") else "BB")
    assert httpx.get(f"{keyed.http}/voices", params={"access_token": forged}).status_code == 401
    assert keyed.service.auth.token_grants(keyed.service.auth.issue_token(["stt"], -1)) == set()  # expired
    for bad in ({"grants": {"tts": "yes"}}, {"grants": {}, "expires_in": 7200}, {"grants": []}):
        assert httpx.post(url, json=bad, headers=key).status_code == 400


def test_health_version_and_metrics(keyed):
    assert httpx.get(f"{keyed.http}/").json() == {"ok": True, "version": "2026-08-14"}
    ready = httpx.get(f"{keyed.http}/ready").json()
    assert ready["status"] == "ready" and ready["models"] == ["stt", "tts"]
    body = {
        "transcript": "metrics",
        "voice": ALTO,
        "output_format": {"container": "wav", "encoding": "pcm_s16le", "sample_rate": 8000},
    }
    headers = {"X-API-Key": "key-one", "X-Request-ID": "trace-123"}
    r = httpx.post(f"{keyed.http}/tts/bytes", json=body, headers=headers)
    assert r.headers["x-request-id"] == "trace-123"  # an upstream id is kept for tracing
    text = httpx.get(f"{keyed.http}/metrics", headers=headers).text
    for name in (
        "sonare_active_streams",
        "sonare_stream_slots",
        "sonare_step_seconds_bucket",
        'sonare_http_requests_total{method="POST",route="/tts/bytes",status="200"}',
        'sonare_audio_seconds_produced_total{route="/tts/bytes"}',
        'sonare_time_to_first_audio_seconds_bucket{le="0.01",route="/tts/bytes"}',
        "sonare_ready 1.0",
    ):
        assert name in text, name


def test_without_a_tts_model_its_routes_answer_503(tmp_path):
    stt_only = start_server(tmp_path, tts_module="")
    try:
        r = httpx.post(f"{stt_only.http}/tts/bytes", json={"transcript": "hi"})
        assert r.status_code == 503 and r.json()["error_code"] == "model_not_found"
        with ws_client.connect(f"{stt_only.ws}/tts/websocket") as ws:
            ws.send(json.dumps({"context_id": "a", "transcript": "hi"}))
            error = json.loads(ws.recv(timeout=5))
            assert (error["status_code"], error["error_code"], error["context_id"]) == (503, "model_not_found", "a")
        assert httpx.get(f"{stt_only.http}/voices").json()["data"] == []
    finally:
        stt_only.stop()


# -- SageMaker --------------------------------------------------------------------------------------------


def test_sagemaker_invocations(keyed):
    auth = {"X-API-Key": "key-one"}
    url = f"{keyed.http}/invocations"
    fmt = {"container": "wav", "encoding": "pcm_s16le", "sample_rate": 16000}
    with httpx.stream(
        "POST", url, json={"transcript": "sage maker", "voice": ALTO, "output_format": fmt}, headers=auth
    ) as r:
        assert r.status_code == 200 and r.headers["transfer-encoding"] == "chunked"
        audio, rate = sf.read(io.BytesIO(r.read()))
    assert rate == 16000 and len(audio) > 0
    wav = io.BytesIO()
    sf.write(wav, tone("42", 16000), 16000, format="WAV")
    r = httpx.post(url, content=wav.getvalue(), headers=auth | {"content-type": "audio/wav"})
    assert r.json()["text"] == "four two"
    pcm = (tone("9", 8000) * 32767).astype("<i2").tobytes()
    body = {"audio": base64.b64encode(pcm).decode(), "encoding": "pcm_s16le", "sample_rate": 8000}
    assert httpx.post(url, json=body, headers=auth).json()["text"] == "nine"
    r = httpx.post(url, json={"neither": 1}, headers=auth)
    assert r.status_code == 400 and "transcript" in r.json()["message"]
    assert httpx.post(url, json={"audio": "***"}, headers=auth).status_code == 400


def test_sagemaker_bidirectional_stream(keyed):
    base = f"{keyed.ws}/invocations-bidirectional-stream?api_key=key-one"
    with ws_client.connect(base) as ws:
        msg = {
            "context_id": "s",
            "transcript": "hi",
            "voice": ALTO,
            "output_format": {"container": "raw", "encoding": "pcm_s16le", "sample_rate": 16000},
        }
        ws.send(json.dumps(msg))
        frames = [json.loads(ws.recv(timeout=5)) for _ in range(2)]
        assert [f["type"] for f in frames] == ["chunk", "done"]
    with ws_client.connect(f"{base}&protocol=stt&encoding=pcm_s16le&sample_rate=16000") as ws:
        ws.send((tone("3", 16000) * 32767).astype("<i2").tobytes())
        ws.send("close")
        messages = []
        with pytest.raises(ConnectionClosed):
            while True:
                messages.append(json.loads(ws.recv(timeout=5)))
        assert [m["text"] for m in messages if m.get("is_final")] == [" three"]
    with ws_client.connect(f"{base}&protocol=video") as ws:
        assert json.loads(ws.recv(timeout=5))["status_code"] == 400


# -- drain ------------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_sigterm_drains_in_flight_streams_then_exits(tmp_path):
    port = free_port()
    env = os.environ | {
        "PYTHONPATH": str(TESTS),
        "SONARE_TTS_MODULE": "tts_tone_model",
        "SONARE_STT_MODULE": "",
        "SONARE_DATA_DIR": str(tmp_path),
        "SONARE_THREADS": "1",
    }
    cmd = [sys.executable, "-m", "sonare.cli", "serve", "--port", str(port), "--drain-timeout", "10"]
    proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/ready").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline and proc.poll() is None, "server did not start"
            time.sleep(0.1)
        text = " ".join(["draining"] * 20)  # about 1.8 s of audio, paced in real time
        msg = {
            "context_id": "inflight",
            "transcript": text,
            "voice": ALTO,
            "output_format": {"container": "raw", "encoding": "pcm_s16le", "sample_rate": 16000},
        }
        with ws_client.connect(f"ws://127.0.0.1:{port}/tts/websocket") as ws:
            ws.send(json.dumps(msg))
            assert json.loads(ws.recv(timeout=5))["type"] == "chunk"
            t0 = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            time.sleep(0.2)
            assert httpx.get(f"{base}/ready").status_code == 503  # balancers stop sending work
            assert httpx.get(f"{base}/live").status_code == 200
            r = httpx.post(f"{base}/tts/bytes", json=msg)
            assert r.status_code == 503 and r.json()["error_code"] == "server_draining"
            ws.send(json.dumps(msg | {"context_id": "late"}))
            frames = []
            while not any(f["context_id"] == "inflight" and f["type"] == "done" for f in frames):
                frames.append(json.loads(ws.recv(timeout=5)))
            late = [f for f in frames if f["context_id"] == "late"]
            assert late[0]["type"] == "error" and late[0]["status_code"] == 503
            pcm = sum(len(base64.b64decode(f["data"])) for f in frames if f["type"] == "chunk")
            assert pcm > 0.8 * 16000 * 2  # the rest of the utterance still arrived
        assert proc.wait(timeout=10) == 0
        assert time.monotonic() - t0 < 10
    finally:
        if proc.poll() is None:
            proc.kill()
        log = proc.communicate()[1]
    lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    assert any(line["message"] == "drain finished" and line["unfinished"] == 0 for line in lines)
    assert all("time" in line and "level" in line for line in lines)
    access = [line for line in lines if line["logger"] == "sonare.server.access"]
    assert access and all(line["request_id"] for line in access)
    assert {line["status"] for line in access if "status" in line} >= {200, 503}


# -- bench ------------------------------------------------------------------------------------------------


def test_bench_drives_tts_and_stt_over_the_protocol(keyed, tmp_path):
    from sonare.server.bench import BenchConfig, bench

    common = {"url": keyed.ws, "api_key": "key-one", "sessions": 3, "concurrency": 2}
    tts = bench(BenchConfig(mode="tts", text="one two three four", voice=ALTO, word_interval_s=0.01, **common))
    assert tts["succeeded"] == 3 and tts["errors"] == []
    assert tts["audio_s"] > 3 * 0.15 and tts["first_output_s"]["p50"] < 1.0
    assert 0 < tts["connect_s"]["p50"] < 1.0  # the handshake is timed apart from first audio
    stt = bench(BenchConfig(mode="stt", clip=tone("12", 16000), **common))
    assert stt["succeeded"] == 3 and stt["final_s"]["max"] < 1.0
    refused = bench(BenchConfig(mode="tts", url=keyed.ws, sessions=1, concurrency=1))
    assert refused["succeeded"] == 0 and refused["errors"]


def test_bench_sweep_finds_the_knee_and_writes_csv_and_plot(keyed, tmp_path, monkeypatch):
    import csv

    from sonare.server.bench import BenchConfig, sweep, write_csv, write_svg

    cfg = BenchConfig(url=keyed.ws, api_key="key-one", mode="tts", text="one two three", voice=ALTO, word_interval_s=0)
    result = sweep(cfg, [1, 2, 3], rounds=1)
    assert [row["concurrency"] for row in result["levels"]] == [1, 2, 3]
    assert [row["sessions"] for row in result["levels"]] == [1, 2, 3]
    # text sent at once: the tone model keeps ahead of playback at every level
    assert result["knee"] == 3
    assert all("chunk_gap_s" in r and r["rtf"]["p50"] > 0 for r in result["levels"])
    write_csv(result, tmp_path / "sweep.csv")
    rows = list(csv.DictReader((tmp_path / "sweep.csv").read_text().splitlines()))
    assert [int(r["concurrency"]) for r in rows] == [1, 2, 3] and float(rows[0]["first_p95"]) > 0
    write_svg(result, tmp_path / "sweep.svg")
    svg = (tmp_path / "sweep.svg").read_text()
    assert svg.startswith("<svg") and svg.count("<polyline") == 2

    # a level with a failure or an underrun ends the clean run: the knee is the level before it
    from sonare.server import bench as bench_module

    outcomes = iter([(1, 0), (2, 0), (2, 3), (8, 0)])  # (succeeded, underruns) at levels 1, 2, 4, 8

    def fake(c: BenchConfig) -> dict:
        succeeded, underruns = next(outcomes)
        return {"sessions": c.sessions, "succeeded": min(succeeded, c.sessions), "underruns": underruns}

    monkeypatch.setattr(bench_module, "bench", fake)
    assert sweep(cfg, [1, 2, 4, 8], rounds=1)["knee"] == 2
