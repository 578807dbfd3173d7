"""Fuzzing the message schemas: any JSON a client sends is either accepted or refused with a 400 in the
protocol's error shape; nothing crashes, and no slot leaks."""

from __future__ import annotations

import json
import time

import pytest
import websockets.sync.client as ws_client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from server_harness import ALTO, start_server

from sonare.server.errors import ApiError
from sonare.server.stt_request import audio_params, turn_settings
from sonare.server.tts_request import parse_control, parse_settings

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5),
    max_leaves=20,
)

# Messages built from the real field names, with values of any type, so the fuzz reaches deep checks.
FIELDS = [
    "context_id", "model_id", "transcript", "voice", "output_format", "continue", "flush", "cancel",
    "language", "locale", "add_timestamps", "max_buffer_delay_ms", "generation_config", "speed",
]  # fmt: skip
field_values = st.one_of(
    json_values,
    st.sampled_from([ALTO, {"mode": "id", "id": ALTO}, {"mode": "embedding", "embedding": [1, 0, 0, 0]}]),
    st.fixed_dictionaries(
        {},
        optional={
            "container": st.sampled_from(["raw", "wav", "mp3", "ogg"]) | json_values,
            "encoding": st.sampled_from(["pcm_s16le", "pcm_f32le", "pcm_mulaw", "pcm_alaw"]) | json_values,
            "sample_rate": st.sampled_from([8000, 16000, 44100, 7999, 48001]) | json_values,
            "bit_rate": json_values,
            "speed": json_values,
            "volume": json_values,
        },
    ),
)
messages = st.dictionaries(st.sampled_from(FIELDS), field_values, max_size=len(FIELDS)) | json_values


@settings(max_examples=150, deadline=None)
@given(messages)
def test_tts_message_parsing_accepts_or_refuses_cleanly(message):
    try:
        parse_control(message, max_chars=1000)
        if isinstance(message, dict):
            parse_settings(message)
    except ApiError as exc:
        assert exc.status == 400 and exc.error_code == "invalid_request" and exc.message


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "encoding",
                "sample_rate",
                "language",
                "turn_start_threshold",
                "turn_eager_end_threshold",
                "turn_end_threshold",
                "turn_end_timeout_ms",
            ]
        ),  # fmt: skip
        st.text(max_size=12) | st.sampled_from(["pcm_s16le", "16000", "0.5", "nan", "inf", "-1", "en-US"]),
    )
)
def test_stt_query_parsing_accepts_or_refuses_cleanly(query):
    try:
        audio_params(query)
        turn_settings(query)
    except ApiError as exc:
        assert exc.status == 400 and exc.message


PROBE = {
    "context_id": "probe",
    "transcript": "ok",
    "voice": ALTO,
    "output_format": {"container": "raw", "encoding": "pcm_s16le", "sample_rate": 8000},
}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    running = start_server(tmp_path_factory.mktemp("fuzz"))
    yield running
    running.stop()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(messages.map(json.dumps) | st.binary(max_size=50), min_size=1, max_size=6))
def test_tts_socket_survives_any_messages(server, frames):
    with ws_client.connect(f"{server.ws}/tts/websocket") as ws:
        for frame in frames:
            ws.send(frame)
        # the socket still works after whatever came before
        ws.send(json.dumps(PROBE))
        while True:
            reply = json.loads(ws.recv(timeout=10))
            assert "type" in reply and "context_id" in reply
            if reply["type"] == "error":
                assert reply["status_code"] in (400, 404) and reply["message"]
            if reply["context_id"] == "probe" and reply["type"] == "done":
                break
    deadline = time.monotonic() + 2
    while server.service.engine.active_streams("tts") and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.service.engine.active_streams("tts") == 0
