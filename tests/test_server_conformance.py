"""The unmodified client libraries against a real server: the official `cartesia` SDK, pipecat and the
LiveKit plugin, each only pointed at the server's URL (install with the `conformance` extra)."""

from __future__ import annotations

import asyncio
import io

import numpy as np
import pytest
import soundfile as sf
from server_harness import ALTO, start_server
from stt_tone_model import tone

TEXT = "Hello there, how are you?"
RAW16 = {"container": "raw", "encoding": "pcm_s16le", "sample_rate": 16000}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    running = start_server(tmp_path_factory.mktemp("conformance"))
    yield running
    running.stop()


def pcm16(digits: str, trailing_silence: float = 0.0) -> np.ndarray:
    audio = np.concatenate([tone(digits, 16000), np.zeros(int(trailing_silence * 16000), np.float32)])
    return (audio * 32767).astype("<i2")


def reference_pcm(server) -> bytes:
    import httpx

    body = {"transcript": TEXT, "voice": ALTO, "output_format": RAW16}
    return httpx.post(f"{server.http}/tts/bytes", json=body).content


# -- cartesia SDK 4.x ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def client(server):
    cartesia = pytest.importorskip("cartesia")
    return cartesia.Cartesia(api_key="local", base_url=server.http, websocket_base_url=server.ws, max_retries=0)


def test_sdk_bytes_and_sse(server, client):
    voice = {"mode": "id", "id": ALTO}
    audio = client.tts.generate(model_id="sonic-3", transcript=TEXT, voice=voice, output_format=RAW16).read()
    assert audio == reference_pcm(server)
    events = list(
        client.tts.generate_sse(
            model_id="sonic-3", transcript=TEXT, voice=voice, output_format=RAW16, add_timestamps=True
        )
    )
    assert events[-1].type == "done"
    words = [w for e in events if e.type == "timestamps" for w in e.word_timestamps.words]
    assert words == TEXT.split()


def test_sdk_websocket_contexts_pushed_word_by_word(server, client):
    with client.tts.websocket_connect() as conn:
        ctx = conn.context(model_id="sonic-3", voice={"mode": "id", "id": ALTO}, output_format=RAW16)
        for word in TEXT.split(" "):
            ctx.push(word + " ")
        ctx.no_more_inputs()
        events = list(ctx.receive())
    assert events[-1].type == "done"
    assert b"".join(e.audio for e in events if e.type == "chunk") == reference_pcm(server)


def test_sdk_stt_streaming_batch_and_voices(client):
    with client.stt.manual_finalize.websocket(model="ink-whisper", encoding="pcm_s16le", sample_rate=16000) as stt:
        stt.send_raw(pcm16("123").tobytes())
        stt.send("finalize")
        stt.send("close")
        events = list(stt)
    assert [e.text for e in events if e.type == "transcript" and e.is_final] == [" one two three"]
    assert [e.type for e in events][-2:] == ["flush_done", "done"]
    wav = io.BytesIO()
    sf.write(wav, tone("45", 16000), 16000, format="WAV")
    result = client.stt.transcribe(
        file=("a.wav", wav.getvalue()), model="ink-whisper", timestamp_granularities=["word"]
    )
    assert result.text == "four five" and [w.word for w in result.words] == ["four", "five"]
    # auto-pagination follows starting_after until an empty page
    assert [v.id for v in client.voices.list(limit=1)] == [ALTO, "0b9e4c11-tone-bass"]
    assert client.voices.get(ALTO).name == "Alto"


# -- pipecat ----------------------------------------------------------------------------------------------


def test_pipecat_tts_services(server):
    pytest.importorskip("pipecat")
    from pipecat.frames.frames import TTSAudioRawFrame, TTSSpeakFrame
    from pipecat.services.cartesia.tts import CartesiaHttpTTSService, CartesiaTTSService
    from pipecat.tests.utils import SleepFrame, run_test

    async def run() -> tuple[bytes, bytes]:
        import aiohttp

        ws_tts = CartesiaTTSService(
            api_key="local",
            url=f"{server.ws}/tts/websocket",
            sample_rate=16000,
            settings=CartesiaTTSService.Settings(voice=ALTO, model="sonic-3"),
        )
        down, _ = await run_test(ws_tts, frames_to_send=[TTSSpeakFrame(TEXT), SleepFrame(1.0)])
        streamed = b"".join(f.audio for f in down if isinstance(f, TTSAudioRawFrame))
        async with aiohttp.ClientSession() as session:
            http_tts = CartesiaHttpTTSService(
                api_key="local",
                base_url=server.http,
                sample_rate=16000,
                aiohttp_session=session,
                settings=CartesiaHttpTTSService.Settings(voice=ALTO),
            )
            down, _ = await run_test(http_tts, frames_to_send=[TTSSpeakFrame(TEXT), SleepFrame(0.5)])
        return streamed, b"".join(f.audio for f in down if isinstance(f, TTSAudioRawFrame))

    streamed, whole = asyncio.run(run())
    assert streamed == whole == reference_pcm(server)


def test_pipecat_stt_services(server):
    pytest.importorskip("pipecat")
    from pipecat.frames.frames import InputAudioRawFrame, InterimTranscriptionFrame, TranscriptionFrame
    from pipecat.services.cartesia.stt import CartesiaSTTService
    from pipecat.services.cartesia.turns.stt import CartesiaTurnsSTTService
    from pipecat.tests.utils import SleepFrame, run_test

    pcm = pcm16("123", trailing_silence=0.5).tobytes()
    frames = [
        InputAudioRawFrame(audio=pcm[i : i + 640], sample_rate=16000, num_channels=1) for i in range(0, len(pcm), 640)
    ]

    async def run(service) -> list:
        down, _ = await run_test(service, frames_to_send=[SleepFrame(0.2), *frames, SleepFrame(1.0)])
        return [(type(f), f.text) for f in down if isinstance(f, TranscriptionFrame | InterimTranscriptionFrame)]

    for service in (
        CartesiaSTTService(api_key="local", base_url=server.ws, sample_rate=16000),
        CartesiaTurnsSTTService(api_key="local", url=f"{server.ws}/stt/turns/websocket", sample_rate=16000),
    ):
        transcripts = asyncio.run(run(service))
        assert (TranscriptionFrame, " one two three") in transcripts
        assert (InterimTranscriptionFrame, " one") in transcripts


# -- LiveKit ----------------------------------------------------------------------------------------------


def test_livekit_tts_and_stt(server):
    pytest.importorskip("livekit.plugins.cartesia")
    import aiohttp
    from livekit import rtc
    from livekit.agents.stt import SpeechEventType
    from livekit.plugins import cartesia

    async def run() -> tuple[bytes, bytes, dict]:
        async with aiohttp.ClientSession() as session:
            tts = cartesia.TTS(
                api_key="local",
                base_url=server.http,
                http_session=session,
                model="sonic-3",
                voice=ALTO,
                sample_rate=16000,
            )
            whole = b"".join([bytes(ev.frame.data) async for ev in tts.synthesize(TEXT)])
            stream = tts.stream()
            for sentence in ("Hello there, ", "how are you?"):
                stream.push_text(sentence)
            stream.end_input()
            streamed = b"".join([bytes(ev.frame.data) async for ev in stream])
            await stream.aclose()
            finals = {}
            for model in ("ink-whisper", "ink-2"):
                stt = cartesia.STT(
                    api_key="local", base_url=server.http, http_session=session, model=model, sample_rate=16000
                )
                finals[model] = await transcribe(stt.stream(), pcm16("123", trailing_silence=0.5))
            return whole, streamed, finals

    async def transcribe(stream, audio: np.ndarray) -> list[str]:
        async def feed():
            for i in range(0, len(audio), 1600):
                chunk = audio[i : i + 1600]
                stream.push_frame(rtc.AudioFrame(chunk.tobytes(), 16000, 1, len(chunk)))
                await asyncio.sleep(0.005)
            await asyncio.sleep(0.3)
            stream.end_input()

        feeder = asyncio.create_task(feed())
        finals = [ev.alternatives[0].text async for ev in stream if ev.type == SpeechEventType.FINAL_TRANSCRIPT]
        await feeder
        await stream.aclose()
        return finals

    whole, streamed, finals = asyncio.run(asyncio.wait_for(run(), 30))
    reference = reference_pcm(server)
    # livekit re-frames audio into fixed-size frames, padding the last one with silence
    for audio in (whole, streamed):
        assert audio[: len(reference)] == reference and not audio[len(reference) :].strip(b"\0")
    assert finals == {"ink-whisper": [" one two three"], "ink-2": [" one two three"]}
