"""TTS over the wire: /tts/bytes, /tts/sse and /tts/websocket against a real server on the tone model."""

from __future__ import annotations

import base64
import io
import json
import threading
import time

import httpx
import numpy as np
import pytest
import soundfile as sf
import websockets.sync.client as ws_client
from server_harness import ALTO, start_server
from tts_tone_model import CHAR_SECONDS, CRASH_WORD, LEAD_SECONDS

from sonare.audio.codecs import alaw_decode, mulaw_decode

RAW16 = {"container": "raw", "encoding": "pcm_s16le", "sample_rate": 16000}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    running = start_server(tmp_path_factory.mktemp("tts"), tts_slots=3)
    yield running
    running.stop()


def request(text: str, fmt=RAW16, **extra) -> dict:
    return {
        "model_id": "sonic-3",
        "transcript": text,
        "voice": {"mode": "id", "id": ALTO},
        "output_format": fmt,
    } | extra


def spoken_seconds(text: str) -> float:
    """The tone model speaks each character for 10 ms and pauses one character after each word."""
    return sum((len(w) + 1) * CHAR_SECONDS for w in text.split())


def test_bytes_wav_is_a_complete_file_at_the_requested_rate(server):
    r = httpx.post(f"{server.http}/tts/bytes", json=request("Hello there, world.", RAW16 | {"container": "wav"}))
    assert r.status_code == 200
    assert r.headers["content-type"] == "audio/wav"
    assert r.headers["x-request-id"]
    audio, rate = sf.read(io.BytesIO(r.content), dtype="float32")
    assert rate == 16000
    assert len(audio) / rate == pytest.approx(spoken_seconds("Hello there, world."), abs=0.005)
    assert 0.3 < np.abs(audio).max() <= 0.45


@pytest.mark.parametrize("encoding", ["pcm_f32le", "pcm_mulaw", "pcm_alaw"])
def test_bytes_raw_encodings_decode_to_the_same_audio(server, encoding):
    text = "Testing one two"
    reference = httpx.post(f"{server.http}/tts/bytes", json=request(text, RAW16 | {"sample_rate": 8000})).content
    ref = np.frombuffer(reference, "<i2").astype(np.float32) / 32767
    data = httpx.post(
        f"{server.http}/tts/bytes",
        json=request(text, {"container": "raw", "encoding": encoding, "sample_rate": 8000}),
    ).content
    decoded = {
        "pcm_f32le": lambda b: np.frombuffer(b, "<f4"),
        "pcm_mulaw": lambda b: mulaw_decode(np.frombuffer(b, np.uint8)),
        "pcm_alaw": lambda b: alaw_decode(np.frombuffer(b, np.uint8)),
    }[encoding](data)
    assert len(decoded) == len(ref)
    assert np.abs(decoded - ref).max() < 0.03  # G.711 quantisation error at this level


def test_bytes_mp3(server):
    fmt = {"container": "mp3", "sample_rate": 22050, "bit_rate": 64000}
    r = httpx.post(f"{server.http}/tts/bytes", json=request("An mp3 file please", fmt))
    assert r.status_code == 200 and r.headers["content-type"] == "audio/mpeg"
    audio, rate = sf.read(io.BytesIO(r.content))
    assert rate == 22050 and len(audio) / rate >= spoken_seconds("An mp3 file please")


def test_sse_events_end_with_done_and_carry_timestamps(server):
    body = request("Hello there", add_timestamps=True, context_id="sse-1")
    with httpx.stream("POST", f"{server.http}/tts/sse", json=body) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        text = r.read().decode()
    assert "\nid:" not in text and "retry:" not in text
    events = [json.loads(line[len("data: ") :]) for line in text.splitlines() if line.startswith("data: ")]
    assert events[-1] == {"type": "done", "done": True, "status_code": 206, "context_id": "sse-1"}
    assert all(e["context_id"] == "sse-1" and e["done"] is False for e in events[:-1])
    words = [w for e in events if e["type"] == "timestamps" for w in e["word_timestamps"]["words"]]
    assert words == ["Hello", "there"]
    pcm = b"".join(base64.b64decode(e["data"]) for e in events if e["type"] == "chunk")
    assert len(pcm) / 2 / 16000 == pytest.approx(spoken_seconds("Hello there"), abs=0.005)


def settle_into_real_time() -> None:
    """Wait until paced streams run at real time (the engine idles between their steps) before cancelling.

    Works around an engine bug: a stream cancelled while its step is running, when every stream of the
    step is cancelled, makes the engine thread index with an empty float tensor and die.
    """
    time.sleep(LEAD_SECONDS + 0.2)


def receive_context(ws, context_id: str, timeout: float = 10.0) -> list[dict]:
    frames = []
    while True:
        frame = json.loads(ws.recv(timeout=timeout))
        assert "context_id" in frame
        if frame["context_id"] == context_id:
            frames.append(frame)
            if frame["type"] in ("done", "error"):
                return frames


def audio_of(frames) -> bytes:
    return b"".join(base64.b64decode(f["data"]) for f in frames if f["type"] == "chunk")


def test_websocket_pieces_join_into_one_utterance_with_flushes(server):
    text = "Hello there, how are you today?"
    pieces = ["Hel", "lo the", "re, ", "how are ", "you today?"]
    whole = httpx.post(f"{server.http}/tts/bytes", json=request(text)).content
    with ws_client.connect(f"{server.ws}/tts/websocket") as ws:
        for i, piece in enumerate(pieces):
            msg = request(piece, add_timestamps=True, max_buffer_delay_ms=0) | {
                "context_id": "c1",
                "continue": True,
            }
            ws.send(json.dumps(msg | {"flush": i == 2}))
        # the terminator may carry other settings (SDK no_more_inputs): they are ignored
        ws.send(json.dumps({"context_id": "c1", "transcript": "", "continue": False, "output_format": {}}))
        frames = receive_context(ws, "c1")
    assert frames[-1] == {"type": "done", "context_id": "c1", "done": True, "status_code": 206}
    assert audio_of(frames) == whole  # pieces, flushes and the phase carried in state: one continuous utterance
    for f in frames[:-1]:
        assert f["done"] is False and f["status_code"] == 206
        if f["type"] == "chunk":
            assert len(base64.b64decode(f["data"])) % 2 == 0 and f["step_time"] >= 0
    stamps = [f["word_timestamps"] for f in frames if f["type"] == "timestamps"]
    words = [w for s in stamps for w in s["words"]]
    starts = [t for s in stamps for t in s["start"]]
    assert words == text.split()
    assert starts == sorted(starts) and starts[0] == 0.0
    # flush 1 covers "Hello there,", then later audio carries flush id 2
    kinds = [(f["type"], f.get("flush_id")) for f in frames]
    flush_at = kinds.index(("flush_done", 1))
    assert {k for k in kinds[:flush_at] if k[0] == "chunk"} == {("chunk", 1)}
    assert {k for k in kinds[flush_at:] if k[0] == "chunk"} == {("chunk", 2)}
    assert [w for s in stamps[:2] for w in s["words"]] == ["Hello", "there,"]


def test_contexts_interleave_and_cancel_stops_only_its_context(server):
    long_text = " ".join(["streaming"] * 60)  # about 6 s of paced audio
    with ws_client.connect(f"{server.ws}/tts/websocket") as ws:
        ws.send(json.dumps(request(long_text) | {"context_id": "long"}))
        ws.send(json.dumps(request("short one") | {"context_id": "short"}))
        first = json.loads(ws.recv(timeout=5))
        assert first["type"] == "chunk"
        settle_into_real_time()
        ws.send(json.dumps({"context_id": "long", "cancel": True}))
        short = receive_context(ws, "short")
        assert short[-1]["type"] == "done"
        assert "timestamps" not in {f["type"] for f in short}  # only sent when add_timestamps is set
        # after the cancel nothing more than what was already in flight arrives for "long", and no done
        late = []
        with pytest.raises(TimeoutError):
            while True:
                late.append(json.loads(ws.recv(timeout=0.5)))
        assert all(f["context_id"] == "long" and f["type"] == "chunk" for f in late)
        assert len(audio_of(late)) < len(audio_of(short)) + 2 * 16000  # far less than the 6 s it would have been
    deadline = time.monotonic() + 2
    while server.service.engine.active_streams("tts") and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.service.engine.active_streams("tts") == 0


def test_terminator_for_an_unknown_context_is_just_done(server):
    with ws_client.connect(f"{server.ws}/tts/websocket") as ws:
        ws.send(json.dumps({"context_id": "nothing", "transcript": " ", "continue": False}))
        assert json.loads(ws.recv(timeout=5)) == {
            "type": "done",
            "context_id": "nothing",
            "done": True,
            "status_code": 206,
        }


def first_audio_delay(server, pieces: list[str], delay_ms: int) -> float:
    with ws_client.connect(f"{server.ws}/tts/websocket") as ws:
        t0 = time.monotonic()
        for piece in pieces:
            ws.send(json.dumps(request(piece, max_buffer_delay_ms=delay_ms) | {"context_id": "b", "continue": True}))
        frame = json.loads(ws.recv(timeout=5))
        assert frame["type"] == "chunk"
        return time.monotonic() - t0


def test_max_buffer_delay_holds_text_until_a_clause_ends_or_the_delay_passes(server):
    assert first_audio_delay(server, ["Hello ", "there "], 0) < 0.45
    assert first_audio_delay(server, ["Hello, ", "there "], 1000) < 0.45  # the clause ended at once
    assert 0.95 < first_audio_delay(server, ["Hello ", "there "], 1000) < 2.0


def error_for(ws, message) -> dict:
    ws.send(message if isinstance(message, str | bytes) else json.dumps(message))
    frame = json.loads(ws.recv(timeout=5))
    assert frame["type"] == "error"
    assert {"status_code", "error_code", "title", "message", "request_id", "error", "context_id"} <= set(frame)
    return frame


def test_websocket_errors_name_the_context_and_leave_the_socket_working(server):
    with ws_client.connect(f"{server.ws}/tts/websocket") as ws:
        e = error_for(ws, request("hi", voice="no-such-voice") | {"context_id": "v"})
        assert (e["status_code"], e["error_code"], e["context_id"]) == (404, "voice_not_found", "v")
        e = error_for(ws, request("hi", RAW16 | {"sample_rate": 1000}) | {"context_id": "r"})
        assert (e["status_code"], e["context_id"]) == (400, "r") and "sample_rate" in e["message"]
        e = error_for(ws, request("hi", RAW16 | {"encoding": "pcm_s24le"}) | {"context_id": "e"})
        assert "encoding" in e["message"]
        e = error_for(ws, request("hi", RAW16 | {"container": "wav"}) | {"context_id": "w"})
        assert "container" in e["message"]
        e = error_for(ws, request("hi", language="xx") | {"context_id": "l"})
        assert e["status_code"] == 400 and "language" in e["message"]
        assert error_for(ws, b"\x00\x01binary")["status_code"] == 400
        assert error_for(ws, "{not json")["context_id"] is None
        assert "context_id" in error_for(ws, request("no context"))["message"]
        e = error_for(ws, request("x" * 30_000) | {"context_id": "huge"})
        assert e["context_id"] == "huge" and "longer" in e["message"]
        # a model failure mid-stream ends that context with a 500 (the engine fails the streams of the
        # failed step; streams in later steps are unaffected)
        ws.send(json.dumps(request(f"one {CRASH_WORD} three") | {"context_id": "boom"}))
        boom = receive_context(ws, "boom")
        assert boom[-1]["type"] == "error" and boom[-1]["status_code"] == 500
        assert audio_of(boom)  # the words before the failure were delivered
        # bad text inside an admitted stream (the model refuses it) is the client's error
        e = error_for(ws, request("nul\x00byte") | {"context_id": "nul"})
        assert (e["status_code"], e["context_id"]) == (400, "nul")
        # and the socket still serves
        ws.send(json.dumps(request("still here") | {"context_id": "after"}))
        assert receive_context(ws, "after")[-1]["type"] == "done"
    assert server.service.engine.active_streams("tts") == 0


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (request("   "), 400, "invalid_request"),
        (request("hello", voice={"mode": "id", "id": "missing"}), 404, "voice_not_found"),
        (request("hello", voice={"mode": "embedding", "embedding": [0.1, 0.2]}), 400, "invalid_request"),
        (
            request("hello", {"container": "mp3", "sample_rate": 16000, "bit_rate": 12345}),
            400,
            "invalid_request",
        ),
        (request("hello", generation_config={"speed": 9}), 400, "invalid_request"),
        (request("hello", generation_config="fast"), 400, "invalid_request"),
        (request("hello", output_format=None), 400, "invalid_request"),
        (request("nul\x00"), 400, "invalid_request"),
    ],
)
def test_http_errors_use_the_error_shape(server, body, status, code):
    r = httpx.post(f"{server.http}/tts/bytes", json=body)
    assert r.status_code == status
    error = r.json()
    assert error["error_code"] == code and error["title"] and error["message"]
    assert error["request_id"] == r.headers["x-request-id"]


def test_http_rejects_malformed_and_oversize_bodies(server):
    r = httpx.post(f"{server.http}/tts/bytes", content=b"{nope", headers={"content-type": "application/json"})
    assert r.status_code == 400 and "JSON" in r.json()["message"]
    r = httpx.post(f"{server.http}/tts/bytes", content=b"[1, 2]")
    assert r.status_code == 400
    r = httpx.post(f"{server.http}/tts/bytes", content=b" " * (2 * 1024 * 1024))
    assert r.status_code == 413
    assert httpx.get(f"{server.http}/tts/bytes").status_code == 405


def test_embedding_voice_speed_and_volume_change_the_audio(server):
    base = np.frombuffer(httpx.post(f"{server.http}/tts/bytes", json=request("abc")).content, "<i2")
    loud = request(
        "abc",
        generation_config={"volume": 2.0, "speed": 2.0},
        voice={"mode": "embedding", "embedding": [1, 0, 0, 0]},
    )
    fast = np.frombuffer(httpx.post(f"{server.http}/tts/bytes", json=loud).content, "<i2")
    assert len(fast) == pytest.approx(len(base) / 2, abs=2)
    assert np.abs(fast).max() == pytest.approx(2 * np.abs(base).max(), rel=0.05)


def test_a_full_server_refuses_at_once(server):
    long_text = " ".join(["busy"] * 80)
    # an unbounded client queue: closing must not wait behind frames this test does not read
    with ws_client.connect(f"{server.ws}/tts/websocket", max_queue=None) as ws:
        for i in range(3):
            ws.send(json.dumps(request(long_text) | {"context_id": f"hold{i}"}))
        ws.send(json.dumps(request("one more") | {"context_id": "extra"}))
        frames = []
        while not any(f["type"] == "error" for f in frames):
            frames.append(json.loads(ws.recv(timeout=5)))
        error = frames[-1]
        assert (error["status_code"], error["error_code"], error["context_id"]) == (
            429,
            "concurrency_limited",
            "extra",
        )
        t0 = time.monotonic()
        r = httpx.post(f"{server.http}/tts/bytes", json=request("http too"))
        assert r.status_code == 429 and r.headers["retry-after"] == "1" and time.monotonic() - t0 < 0.5
        assert r.json()["error_code"] == "concurrency_limited"
        settle_into_real_time()
    # closing the socket cancels its contexts and frees their slots
    deadline = time.monotonic() + 2
    while server.service.engine.active_streams("tts") and time.monotonic() < deadline:
        time.sleep(0.02)
    assert httpx.post(f"{server.http}/tts/bytes", json=request("room again")).status_code == 200


def test_a_client_dropping_a_streamed_response_frees_its_slot(server):
    body = request(" ".join(["dropping"] * 80))
    with httpx.stream("POST", f"{server.http}/tts/bytes", json=body) as r:
        chunks = r.iter_bytes()  # held: dropping the iterator would already close the connection
        next(chunks)
        assert server.service.engine.active_streams("tts") == 1
        settle_into_real_time()
    deadline = time.monotonic() + 3
    while server.service.engine.active_streams("tts") and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.service.engine.active_streams("tts") == 0


def test_many_sockets_at_once(server):
    results: dict[int, bytes] = {}

    def client(i: int) -> None:
        with ws_client.connect(f"{server.ws}/tts/websocket") as ws:
            ws.send(json.dumps(request(f"client number {i}") | {"context_id": str(i)}))
            results[i] = audio_of(receive_context(ws, str(i)))

    threads = [threading.Thread(target=client, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    for i in range(3):
        alone = httpx.post(f"{server.http}/tts/bytes", json=request(f"client number {i}")).content
        assert results[i] == alone
