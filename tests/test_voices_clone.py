"""Voice cloning: the speaker encoder on real speech, its refusals, the library's edits, and the clone flow
end to end through the API (HTTP and the cartesia SDK) and the CLI, on the shipped TTS model."""

from __future__ import annotations

import dataclasses
import io
import json
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import numpy as np
import pytest
import soundfile as sf
from server_harness import start_server

from sonare.audio.resample import resample
from sonare.tts import builtin_voices
from sonare.tts.adapt import ADAPTATION_DIM, SHIFT, WARP
from sonare.voices.encoder import CloneError, SpeakerEncoder, analyse
from sonare.voices.library import BuiltinVoice, VoiceLibrary

LIBRIVOX = Path("/usr/share/pocketsphinx/test/data/librivox")
RATE = 16000


@pytest.fixture(scope="module")
def speech() -> np.ndarray:
    """About 25 s of one real reader (LibriVox, 16 kHz), from Debian's pocketsphinx-testdata."""
    clips = sorted(LIBRIVOX.glob("*.wav"))
    if not clips:
        pytest.skip("pocketsphinx-testdata is not installed (make system-deps)")
    return np.concatenate([sf.read(c, dtype="float32")[0] for c in clips])


@pytest.fixture(scope="module")
def encoder() -> SpeakerEncoder:
    return SpeakerEncoder(builtin_voices())


def wav_bytes(audio: np.ndarray, rate: int = RATE) -> bytes:
    out = io.BytesIO()
    sf.write(out, audio, rate, format="WAV", subtype="PCM_16")
    return out.getvalue()


def chord(seconds: float, rate: int = RATE) -> np.ndarray:
    """A sustained major chord with harmonics: pitched like a voice, but not speech."""
    t = np.arange(int(seconds * rate)) / rate
    return sum(0.1 * np.sin(2 * np.pi * f * k * t) / k for f in (220.0, 277.2, 329.6) for k in (1, 2, 3)).astype(
        np.float32
    )


def test_a_clip_becomes_an_embedding_that_follows_the_speaker(speech, encoder):
    clip = speech[: 10 * RATE]
    embedding = encoder.embed(clip, RATE)
    assert embedding.shape == (encoder.embedding_dim,) and np.isfinite(embedding).all()
    adaptation = embedding[-ADAPTATION_DIM:]
    # The same reader played 12% faster: higher pitch and a shorter vocal tract, as the encoder must see.
    faster = resample(clip, RATE, int(RATE / 1.12))
    raised = encoder.embed(faster, RATE)[-ADAPTATION_DIM:]
    assert raised[SHIFT] - adaptation[SHIFT] == pytest.approx(np.log(1.12), abs=0.04)
    assert not np.allclose(raised, adaptation, atol=0.05)
    # Level and sample rate do not change who is speaking.
    np.testing.assert_allclose(encoder.embed(clip * 0.2, RATE), embedding, atol=1e-4)
    resampled = encoder.embed(resample(clip, RATE, 44100), 44100)[-ADAPTATION_DIM:]
    assert resampled[SHIFT] == pytest.approx(adaptation[SHIFT], abs=0.02)


@pytest.mark.parametrize("warp", [-0.12, 0.0, 0.08, 0.15])
def test_the_formant_warp_of_a_transformed_base_voice_is_recovered(encoder, warp):
    """A profile that is the base voice with its formants scaled (and a different microphone tilt) gives
    back that scale, and pitch statistics pass through."""
    import torch

    from sonare.tts.adapt import RANGE, warp_envelope

    _, base = encoder.bases[0]
    envelope = warp_envelope(torch.tensor(base.envelope)[None, None], torch.tensor([warp]))[0, 0].numpy()
    tilt = np.linspace(0.0, -1.5, len(envelope))
    profile = dataclasses.replace(base, envelope=tuple(envelope + tilt), median_lf0=base.median_lf0 + 0.2)
    adaptation = encoder.adapt(profile)[-ADAPTATION_DIM:]
    assert adaptation[WARP] == pytest.approx(warp, abs=0.021)
    # The pitch change follows the base voice's own calibration (`sonare.voices.encoder.calibration`).
    calibration = encoder.bases[0][0][-ADAPTATION_DIM:]
    assert adaptation[SHIFT] == pytest.approx(calibration[SHIFT] + 0.2, abs=1e-5)
    assert adaptation[RANGE] == pytest.approx(calibration[RANGE], abs=1e-5)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda s: s[: 2 * RATE], "at least 3 s"),
        (lambda s: np.tile(s, 3)[: 61 * RATE], "at most 60 s"),
        (lambda s: np.zeros(5 * RATE, np.float32), "silent"),
        (lambda s: np.random.default_rng(0).normal(0, 0.1, 6 * RATE).astype(np.float32), "voiced speech"),
        (lambda s: chord(6.0), "does not sound like speech"),
        (lambda s: np.concatenate([s[: RATE // 2], np.zeros(5 * RATE, np.float32)]), "voiced speech"),
    ],
    ids=["too-short", "too-long", "silence", "noise", "music", "mostly-silence"],
)
@pytest.mark.parametrize("path", ["trained", "analysis"])
def test_unusable_clips_are_refused_with_the_reason(speech, encoder, make, message, path):
    measure = encoder.embed if path == "trained" else analyse
    with pytest.raises(CloneError, match=message):
        measure(make(speech), RATE)


def test_library_updates_deletes_and_protects_builtins(tmp_path):
    builtins = builtin_voices()
    library = VoiceLibrary(tmp_path / "v.sqlite3", builtins)
    dim = len(builtins[0]["embedding"])
    voice = library.add("Mine", np.zeros(dim), "en")
    assert library.update(voice.id, name="Renamed", gender="feminine").name == "Renamed"
    assert library.get(voice.id).gender == "feminine" and library.get(voice.id).description == ""
    assert library.update("no-such-id", name="x") is None
    with pytest.raises(BuiltinVoice):
        library.delete(builtins[0]["id"])
    with pytest.raises(BuiltinVoice):
        library.update(builtins[0]["id"], name="x")
    assert library.delete(voice.id) and library.get(voice.id) is None and not library.delete(voice.id)

    # Concurrent writers: every add lands exactly once, and each writer's delete removes only its own row.
    keep = [library.add(f"keep {i}", np.zeros(dim), "en").id for i in range(10)]
    added: list[str] = []

    def writer(n: int) -> None:
        assert library.delete(keep[n])
        added.extend(library.add(f"w{n}-{i}", np.full(dim, n, np.float32), "en").id for i in range(20))

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stored, cursor, more = [], builtins[-1]["id"], True
    while more:
        page, more = library.page(100, starting_after=cursor)
        stored += [v.id for v in page]
        cursor = stored[-1]
    assert sorted(stored) == sorted(added + keep[8:]) and len(set(added)) == 160
    library.close()


# -- end to end on the shipped model --------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    running = start_server(
        tmp_path_factory.mktemp("clone"), tts_module="sonare.tts", stt_module="", max_upload_bytes=4_000_000
    )
    yield running
    running.stop()


def stored_count(server) -> int:
    return sum(not v["is_public"] for v in httpx.get(f"{server.http}/voices", params={"limit": 100}).json()["data"])


def clone(server, audio: bytes, **fields) -> httpx.Response:
    data = {"name": "Reader", "language": "en", **fields}
    return httpx.post(f"{server.http}/voices/clone", files={"clip": ("clip.wav", audio)}, data=data, timeout=60)


def test_clone_then_speak_rename_and_delete_over_http(server, speech):
    r = clone(server, wav_bytes(speech[: 8 * RATE]), description="an Austen reader")
    assert r.status_code == 200, r.text
    voice = r.json()
    assert voice["name"] == "Reader" and voice["is_owner"] and voice["language"] == "en"
    fetched = httpx.get(f"{server.http}/voices/{voice['id']}", params={"expand[]": "embedding"}).json()
    assert len(fetched["embedding"]) == server.service.loaded.models["tts"].embedding_dim

    body = {"transcript": "Hello from a cloned voice.", "voice": {"mode": "id", "id": voice["id"]}}
    body["output_format"] = {"container": "raw", "encoding": "pcm_f32le", "sample_rate": 22050}
    cloned = np.frombuffer(httpx.post(f"{server.http}/tts/bytes", json=body, timeout=60).content, "<f4")
    body["voice"] = {"mode": "embedding", "embedding": fetched["embedding"]}
    by_embedding = np.frombuffer(httpx.post(f"{server.http}/tts/bytes", json=body, timeout=60).content, "<f4")
    body["voice"] = {"mode": "id", "id": "joe"}
    default = np.frombuffer(httpx.post(f"{server.http}/tts/bytes", json=body, timeout=60).content, "<f4")
    assert len(cloned) > 22050 and np.abs(cloned).max() > 0.05
    np.testing.assert_array_equal(cloned, by_embedding)
    assert not np.array_equal(cloned[: len(default)], default[: len(cloned)])  # it is not the default voice

    patched = httpx.patch(f"{server.http}/voices/{voice['id']}", json={"name": "Narrator", "description": "new"})
    assert patched.status_code == 200 and patched.json()["name"] == "Narrator"
    mixed = httpx.post(
        f"{server.http}/voices/mix", json={"voices": [{"id": voice["id"], "weight": 1}, {"id": "joe", "weight": 3}]}
    ).json()["embedding"]
    expected = (np.asarray(fetched["embedding"]) + 3 * np.asarray(builtin_voices()[0]["embedding"])) / 4
    np.testing.assert_allclose(mixed, expected, atol=1e-5)
    clip_only = httpx.post(f"{server.http}/voices/clone/clip", files={"clip": ("c.wav", wav_bytes(speech[: 8 * RATE]))})
    np.testing.assert_allclose(clip_only.json()["embedding"], fetched["embedding"], atol=1e-5)

    assert httpx.delete(f"{server.http}/voices/{voice['id']}").status_code == 204
    assert httpx.get(f"{server.http}/voices/{voice['id']}").status_code == 404


@pytest.mark.parametrize(
    ("files", "data", "status"),
    [
        (None, {"name": "x", "language": "en"}, 400),  # no clip
        ({"clip": ("c.wav", b"RIFF\x24\x00\x00\x00WAVEfmt garbage that is not audio")}, {"name": "x"}, 400),
        ({"clip": ("c.mp3", b"\xff\xfb" + bytes(500))}, {"name": "x"}, 400),
        ({"clip": ("c.wav", b"")}, {"name": "x"}, 400),
        ({"clip": ("c.wav", "SHORT")}, {"name": "x"}, 422),
        ({"clip": ("c.wav", "SILENCE")}, {"name": "x"}, 422),
        ({"clip": ("c.wav", "MUSIC")}, {"name": "x"}, 422),
        ({"clip": ("c.wav", "NOISE")}, {"name": "x"}, 422),
        ({"clip": ("c.wav", "SPEECH")}, {"name": ""}, 400),
        ({"clip": ("c.wav", "SPEECH")}, {"name": "x", "description": "d" * 3000}, 400),
        ({"clip": ("c.wav", "HUGE")}, {"name": "x"}, 413),
    ],
    ids=["no-clip", "lying-header", "bad-mp3", "empty", "short", "silence", "music", "noise", "no-name", "long-desc",
         "oversize"],
)  # fmt: skip
def test_bad_clone_requests_get_a_clear_error_and_store_nothing(server, speech, files, data, status):
    clips = {
        "SHORT": wav_bytes(speech[:RATE]),
        "SILENCE": wav_bytes(np.zeros(6 * RATE, np.float32)),
        "MUSIC": wav_bytes(chord(6.0)),
        "NOISE": wav_bytes(np.random.default_rng(1).normal(0, 0.1, 6 * RATE).astype(np.float32)),
        "SPEECH": wav_bytes(speech[: 6 * RATE]),
        "HUGE": wav_bytes(np.tile(speech, 6)[: 150 * RATE]),  # 4.8 MB, over this server's 4 MB limit
    }
    if files is not None:
        name, content = files["clip"]
        files = {"clip": (name, clips.get(content, content) if isinstance(content, str) else content)}
    before = stored_count(server)
    r = httpx.post(f"{server.http}/voices/clone", files=files, data=data, timeout=60)
    assert r.status_code == status, r.text
    assert r.json()["message"] and r.json()["error_code"]
    assert stored_count(server) == before


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status"),
    [
        ("DELETE", "/voices/joe", {}, 403),
        ("PATCH", "/voices/joe", {"json": {"name": "x"}}, 403),
        ("DELETE", "/voices/no-such-voice", {}, 404),
        ("PATCH", "/voices/no-such-voice", {"json": {"name": "x"}}, 404),
        ("PATCH", "/voices/joe", {"json": {"gender": "robot"}}, 400),
        ("POST", "/voices/mix", {"json": {"voices": []}}, 400),
        ("POST", "/voices/mix", {"json": {"voices": [{"id": "nobody", "weight": 1}]}}, 404),
        ("POST", "/voices/mix", {"json": {"voices": [{"id": "joe", "weight": -1}]}}, 400),
        ("POST", "/voices/mix", {"json": {"voices": [{"embedding": [1, 2], "weight": 1}]}}, 400),
        ("POST", "/voices/mix", {"json": {"voices": [{"id": "joe", "weight": 0}]}}, 400),
    ],
)
def test_library_route_errors(server, method, path, kwargs, status):
    r = httpx.request(method, f"{server.http}{path}", **kwargs)
    assert r.status_code == status and r.json()["message"]


def test_cartesia_sdk_clones_then_speaks_with_the_new_id_over_the_websocket(server, speech):
    cartesia = pytest.importorskip("cartesia")
    client = cartesia.Cartesia(api_key="local", base_url=server.http, websocket_base_url=server.ws, max_retries=0)
    voice = client.voices.clone(clip=("clip.wav", wav_bytes(speech[: 8 * RATE])), name="SDK reader", language="en")
    raw = {"container": "raw", "encoding": "pcm_s16le", "sample_rate": 16000}
    with client.tts.websocket_connect() as conn:
        ctx = conn.context(model_id="sonic-3", voice={"mode": "id", "id": voice.id}, output_format=raw)
        for word in ["Hello,", "this", "is", "my", "cloned", "voice."]:
            ctx.push(word + " ")
        ctx.no_more_inputs()
        events = list(ctx.receive())
    assert events[-1].type == "done"
    audio = b"".join(e.audio for e in events if e.type == "chunk")
    assert len(audio) > 16000  # over half a second of speech
    client.voices.delete(voice.id)


def test_cli_clones_lists_and_speaks(tmp_path, speech):
    clip = tmp_path / "me.flac"
    sf.write(clip, speech[: 8 * RATE], RATE)
    env = {"SONARE_DATA_DIR": str(tmp_path / "data"), "PATH": "/usr/bin:/bin"}
    run = [sys.executable, "-m", "sonare.cli"]
    out = subprocess.run([*run, "clone", str(clip), "--name", "Me"], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    voice_id = json.loads(out.stdout)["id"]
    listing = subprocess.run([*run, "voices"], capture_output=True, text=True, env=env).stdout
    assert f"{voice_id}\tMe\ten\tstored" in listing and "joe\tJoe" in listing
    wav = tmp_path / "hello.wav"
    said = subprocess.run([*run, "say", "--voice", voice_id, "Hello there.", "-o", str(wav)], env=env)
    assert said.returncode == 0 and sf.info(wav).duration > 0.3
    silent = tmp_path / "silent.wav"
    sf.write(silent, np.zeros(5 * RATE, np.float32), RATE)
    refused = subprocess.run([*run, "clone", str(silent), "--name", "X"], capture_output=True, text=True, env=env)
    assert refused.returncode != 0 and "silent" in refused.stderr


def test_teacher_clips_take_the_first_seconds_of_the_speakers_own_audio(tmp_path):
    from sonare.audio.io import save_audio
    from sonare.voices.encoder import teacher_clips

    def corpus(name: str, records: list[tuple[str, float, bool]]) -> str:
        root = tmp_path / name
        (root / "audio").mkdir(parents=True)
        lines = []
        for i, (speaker, seconds, augmented) in enumerate(records):
            save_audio(root / "audio" / f"{i}.wav", np.full(int(seconds * 16000), 0.1, np.float32), 16000)
            record = {"speaker": speaker, "audio": f"audio/{i}.wav", "text": f"clip {i}", "augment": augmented}
            lines.append(json.dumps(record))
        (root / "manifest.jsonl").write_text("\n".join(lines) + "\n")
        return str(root / "manifest.jsonl")

    first = corpus("a", [("joe", 1.0, False), ("ann", 5.0, False), ("joe", 2.0, True), ("joe", 1.5, False)])
    second = corpus("b", [("joe", 2.0, False), ("joe", 2.0, False)])
    texts = [text for _, _, text in teacher_clips([first, second], "joe", seconds=4.0)]
    assert texts == ["clip 0", "clip 3", "clip 0"]  # others' and augmented audio skipped; stops once 4 s are in
    # Full after the first manifest: the next is never opened (a directory here, which cannot be read as one).
    assert len(teacher_clips([first, str(tmp_path)], "joe", seconds=2.0)) == 2
    with pytest.raises(ValueError, match="no audio"):
        teacher_clips([first], "nobody")
