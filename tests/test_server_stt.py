"""STT over the wire: /stt/websocket, /stt/turns/websocket and POST /stt on the tone recogniser."""

from __future__ import annotations

import io
import json
import time

import httpx
import numpy as np
import pytest
import soundfile as sf
import stt_tone_model
import websockets.sync.client as ws_client
from server_harness import start_server
from stt_tone_model import tone
from websockets.exceptions import ConnectionClosed

from sonare.audio.codecs import mulaw_encode


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    running = start_server(tmp_path_factory.mktemp("stt"), stt_slots=2)
    yield running
    running.stop()


def s16(audio: np.ndarray) -> bytes:
    return (audio * 32767).astype("<i2").tobytes()


def until_closed(ws, timeout: float = 5.0) -> list[dict]:
    messages = []
    with pytest.raises(ConnectionClosed):
        while True:
            messages.append(json.loads(ws.recv(timeout=timeout)))
    return messages


def stt_url(server, path="/stt/websocket", **query) -> str:
    params = {"model": "ink-whisper", "encoding": "pcm_s16le", "sample_rate": "16000"} | query
    return f"{server.ws}{path}?" + "&".join(f"{k}={v}" for k, v in params.items())


def test_stream_finalize_and_close(server):
    pcm = s16(tone("123", 16000))
    with ws_client.connect(stt_url(server)) as ws:
        for i in range(0, len(pcm), 3201):  # odd frame sizes split samples across frames
            ws.send(pcm[i : i + 3201])
        ws.send("finalize")
        ws.send("finalize")  # with nothing new: only flush_done
        ws.send(pcm)
        ws.send("close")
        messages = until_closed(ws)
        assert ws.close_code == 1000
    kinds = [m["type"] for m in messages]
    assert kinds[-1] == "done" and kinds.count("flush_done") == 2
    finals = [m for m in messages if m["type"] == "transcript" and m["is_final"]]
    assert [f["text"] for f in finals] == [" one two three", " one two three"]
    assert all(m["text"].strip() for m in messages if m["type"] == "transcript")
    assert [w["word"] for w in finals[1]["words"]] == ["one", "two", "three"]
    assert finals[1]["words"][0]["start"] == pytest.approx(0.9, abs=0.03)  # times run from the stream start
    assert finals[0]["duration"] == pytest.approx(0.9, abs=0.03)
    first_final = kinds.index("transcript", 0)
    assert messages[first_final]["is_final"] is False  # interims come while the digits are heard
    assert len({m["request_id"] for m in messages}) == 1


@pytest.mark.parametrize(
    ("encoding", "encode"),
    [("pcm_mulaw", lambda a: mulaw_encode(a).tobytes()), ("pcm_f32le", lambda a: a.astype("<f4").tobytes())],
)
def test_other_encodings_and_rates(server, encoding, encode):
    with ws_client.connect(stt_url(server, encoding=encoding, sample_rate="8000")) as ws:
        ws.send(encode(tone("59", 8000)))
        ws.send("done")  # pipecat's legacy spelling of close
        finals = [m for m in until_closed(ws) if m.get("is_final")]
    assert [f["text"] for f in finals] == [" five nine"]


def test_silence_gives_no_transcripts(server):
    with ws_client.connect(stt_url(server)) as ws:
        ws.send(bytes(3200 * 10))
        ws.send("finalize")
        ws.send("close")
        assert [m["type"] for m in until_closed(ws)] == ["flush_done", "done"]


def test_turns_socket_reports_turns_with_cumulative_transcripts(server):
    audio = np.concatenate([tone("12", 16000), np.zeros(8000, np.float32), tone("3", 16000)])
    with ws_client.connect(stt_url(server, "/stt/turns/websocket", model="ink-2")) as ws:
        assert json.loads(ws.recv(timeout=5))["type"] == "connected"
        ws.send(s16(audio))
        ws.send(json.dumps({"type": "config", "turn": {"end_threshold": 0.3}}))
        ws.send(json.dumps({"type": "config", "turn": {"end_threshold": 0.9}}))  # out of range: refused
        ws.send(json.dumps({"type": "config", "turn": {"eager_end_threshold": 0.3, "end_threshold": 0.35}}))
        # Checked against the settings in force: end is 0.3 now, so an eager end of 0.3 is not above it.
        ws.send(json.dumps({"type": "config", "turn": {"eager_end_threshold": 0.3}}))
        ws.send(json.dumps({"type": "close"}))
        messages = until_closed(ws)
    errors = [m for m in messages if m["type"] == "error"]
    assert len(errors) == 3 and "end_threshold" in errors[0]["message"]
    assert all("start > eager_end" in e["message"] for e in errors[1:])
    messages = [m for m in messages if m["type"] != "error"]  # the session went on
    kinds = [m["type"] for m in messages]
    assert kinds[0] == "turn.start"
    ends = [m["transcript"] for m in messages if m["type"] == "turn.end"]
    assert ends == [" one two", " three"]
    assert kinds.count("turn.start") == 2 and kinds[-1] == "turn.end"
    assert "turn.eager_end" in kinds and "turn.resume" in kinds
    updates = [m["transcript"] for m in messages if m["type"] == "turn.update"]
    assert updates[:2] == [" one", " one two"]


@pytest.mark.parametrize(
    ("path", "query", "fragment"),
    [
        ("/stt/websocket", {"encoding": "pcm_s24le"}, "encoding"),
        ("/stt/websocket", {"sample_rate": "abc"}, "sample_rate"),
        ("/stt/websocket", {"sample_rate": "96000"}, "sample_rate"),
        ("/stt/websocket", {"min_volume": "2"}, "min_volume"),
        ("/stt/websocket", {"max_silence_duration_secs": "-1"}, "max_silence_duration_secs"),
        ("/stt/websocket", {"language": "xx"}, "language"),
        ("/stt/turns/websocket", {"turn_eager_end_threshold": "0.3", "turn_end_threshold": "0.4"}, "start >"),
    ],
)
def test_bad_parameters_are_an_error_then_a_close(server, path, query, fragment):
    with ws_client.connect(stt_url(server, path, **query)) as ws:
        messages = until_closed(ws)
        assert ws.close_code == 1008
    assert len(messages) == 1
    error = messages[0]
    assert error["type"] == "error" and error["status_code"] == error["code"] == 400
    assert fragment in error["message"]


def test_unknown_text_is_an_error_and_the_stream_goes_on(server):
    with ws_client.connect(stt_url(server)) as ws:
        ws.send("hello?")
        error = json.loads(ws.recv(timeout=5))
        assert error["type"] == "error" and error["done"] is False
        ws.send(s16(tone("7", 16000)))
        ws.send("close")
        assert [m["text"] for m in until_closed(ws) if m.get("is_final")] == [" seven"]


def test_full_server_closes_with_1013(server):
    url = stt_url(server)
    with ws_client.connect(url), ws_client.connect(url), ws_client.connect(url) as third:
        messages = until_closed(third)
        assert third.close_code == 1013
        assert (messages[0]["code"], messages[0]["error_code"]) == (429, "concurrency_limited")
    deadline = time.monotonic() + 2
    while server.service.engine.active_streams("stt") and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.service.engine.active_streams("stt") == 0  # dropped sockets freed their slots


def upload(server, data: bytes, name="clip.wav", query="", **fields):
    return httpx.post(f"{server.http}/stt{query}", files={"file": (name, data)}, data={"model": "ink-whisper"} | fields)


@pytest.mark.parametrize("fmt", ["WAV", "FLAC", "OGG", "MP3"])
def test_batch_transcription_of_files(server, fmt):
    buf = io.BytesIO()
    sf.write(buf, tone("4567", 22050), 22050, format=fmt)
    r = upload(server, buf.getvalue(), **{"timestamp_granularities[]": "word"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["text"] == "four five six seven" and body["type"] == "transcript"
    assert body["duration"] == pytest.approx(1.2, abs=0.06)
    assert [w["word"] for w in body["words"]] == ["four", "five", "six", "seven"]


def test_batch_raw_pcm_and_errors(server):
    r = upload(server, s16(tone("8", 16000)), query="?encoding=pcm_s16le&sample_rate=16000")
    assert r.status_code == 200 and r.json()["text"] == "eight" and "words" not in r.json()
    assert upload(server, b"garbage" * 100).status_code == 400
    assert upload(server, b"").status_code == 400
    r = upload(server, b"\0" * 10, query="?encoding=pcm_s99&sample_rate=16000")
    assert r.status_code == 400 and "encoding" in r.json()["message"]
    assert httpx.post(f"{server.http}/stt", json={"file": "x"}).status_code == 400


def test_oversize_upload_is_refused(tmp_path):
    small = start_server(tmp_path, max_upload_bytes=10_000)
    try:
        r = upload(small, bytes(20_000))
        assert r.status_code == 413 and r.json()["error_code"] == "payload_too_large"
    finally:
        small.stop()


def test_missing_model_answers_503_and_the_rest_serves(tmp_path):
    tts_only = start_server(tmp_path, stt_module="")
    try:
        r = upload(tts_only, b"RIFF")
        assert r.status_code == 503 and r.json()["error_code"] == "model_not_found"
        with ws_client.connect(stt_url(tts_only)) as ws:
            error = until_closed(ws)[0]
            assert (error["status_code"], error["error_code"]) == (503, "model_not_found")
        assert httpx.get(f"{tts_only.http}/ready").json()["models"] == ["tts"]
    finally:
        tts_only.stop()


def test_keyterms_and_silence_settings_reach_the_stream_and_too_many_keyterms_are_refused(server):
    # Repeated, with spaces encoded both ways clients encode them.
    query = "&keyterm=Sonare&keyterm=pound%20key&keyterm=Acme+Corp&max_silence_duration_secs=1.5&min_volume=0.02"
    with ws_client.connect(stt_url(server) + query) as ws:
        ws.send(s16(tone("7", 16000)))
        ws.send("close")
        finals = [m for m in until_closed(ws) if m.get("is_final")]
    assert [f["text"] for f in finals] == [" seven"]
    assert stt_tone_model.OPENED[-1].keyterms == ("Sonare", "pound key", "Acme Corp")
    assert stt_tone_model.OPENED[-1].turn.end_timeout_s == 1.5 and stt_tone_model.OPENED[-1].turn.min_volume == 0.02
    with ws_client.connect(stt_url(server) + "".join(f"&keyterm=term{i}" for i in range(101))) as ws:
        messages = until_closed(ws)
        assert ws.close_code == 1008
    assert messages[0]["type"] == "error" and "keyterm" in messages[0]["message"]


def test_keyterm_bounds():
    from sonare.server.errors import ApiError
    from sonare.server.stt_request import keyterms

    assert keyterms([" Acme Corp ", "R2D2"]) == ("Acme Corp", "R2D2")
    for values, fragment in ((["x" * 601, "y" * 600], "1200 characters"), (["ok", "--"], "letter or digit")):
        with pytest.raises(ApiError, match=fragment):
            keyterms(values)
