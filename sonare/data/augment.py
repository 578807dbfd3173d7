"""Acoustic augmentation for recognition: the same speech heard through many rooms and channels.

Every transform is drawn from a seeded generator and recorded as a parameter dict in the
manifest, and rendering from the dict is deterministic, so a copy can be recreated exactly.
Order of application: reverberation, additive noise, telephone channel, level, clipping.

A section with `transform` ranges also makes each copy a new speaker first (`sonare.data.speakers`): a
real recording's articulation and prosody heard in many voices, where the recordings hold only one.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np
from scipy import signal

from sonare.audio.codecs import alaw_decode, alaw_encode, mulaw_decode, mulaw_encode
from sonare.audio.io import load_audio, save_audio
from sonare.audio.resample import resample
from sonare.data.speakers import SpeakerTransform, apply_speaker_transform, sample_transform

SAMPLE_RATE = 16000
NOISE_KINDS = ("white", "pink", "brown", "babble", "hum", "events")
CODECS = ("none", "mulaw", "alaw")
# Real recordings of everyday sounds (phones ringing, alarms, bells, a camera shutter, message
# tones) from the Debian package `sound-theme-freedesktop` (CC-BY, CC-BY-SA and GPL-2+ licensed,
# see its copyright file). The speaker-test files are left out: they are speech.
EVENT_SOUNDS_DIR = Path("/usr/share/sounds/freedesktop/stereo")


# ---- noise -------------------------------------------------------------------------------------


def _shaped_noise(rng: np.random.Generator, n: int, exponent: float) -> np.ndarray:
    """Gaussian noise whose power falls as 1 / f^exponent (0 white, 1 pink, 2 brown)."""
    spectrum = rng.standard_normal(n // 2 + 1) + 1j * rng.standard_normal(n // 2 + 1)
    f = np.fft.rfftfreq(n, 1 / SAMPLE_RATE)
    # Below 20 Hz nothing is audible and brown noise would wander off as a slow offset.
    shaped = spectrum / np.maximum(f, 20.0) ** (exponent / 2)
    shaped[0] = 0.0
    return _unit_rms(np.fft.irfft(shaped, n))


def _unit_rms(x: np.ndarray) -> np.ndarray:
    return x / (np.sqrt(np.mean(x**2)) + 1e-12)


def _babble(rng: np.random.Generator, n: int, talkers: int) -> np.ndarray:
    """Several overlapping speech-like sources: speech-spectrum noise with syllable-rate envelopes."""
    sos = signal.butter(2, [150, 3500], btype="bandpass", fs=SAMPLE_RATE, output="sos")
    t = np.arange(n) / SAMPLE_RATE
    total = np.zeros(n)
    for _ in range(talkers):
        carrier = signal.sosfilt(sos, _shaped_noise(rng, n, 1.0))
        # Syllables come at 3-6 per second; pauses between phrases switch a talker off for a while.
        envelope = np.maximum(0.0, np.sin(2 * np.pi * rng.uniform(3, 6) * t + rng.uniform(0, 2 * np.pi)))
        phrase = np.sin(2 * np.pi * rng.uniform(0.15, 0.4) * t + rng.uniform(0, 2 * np.pi)) > -0.3
        total += carrier * envelope * phrase
    return _unit_rms(total)


def _hum(rng: np.random.Generator, n: int) -> np.ndarray:
    """Mains hum (50 or 60 Hz with decaying harmonics) over a faint noise floor."""
    base = float(rng.choice([50.0, 60.0]))
    t = np.arange(n) / SAMPLE_RATE
    x = sum((0.6**k) * np.sin(2 * np.pi * base * (k + 1) * t + rng.uniform(0, 2 * np.pi)) for k in range(6))
    x = x + 0.05 * rng.standard_normal(n)
    return _unit_rms(x)


@functools.cache
def event_sounds() -> tuple[np.ndarray, ...]:
    """The event recordings at 16 kHz mono, or none when the package is not installed."""
    if not EVENT_SOUNDS_DIR.is_dir():
        return ()
    paths = sorted(p for p in EVENT_SOUNDS_DIR.glob("*.oga") if not p.name.startswith("audio-"))
    return tuple(load_audio(p, SAMPLE_RATE)[0] for p in paths)


def available_noise_kinds(kinds: list[str] | tuple[str, ...] = NOISE_KINDS) -> list[str]:
    return [k for k in kinds if k != "events" or event_sounds()]


def _events(rng: np.random.Generator, n: int) -> np.ndarray:
    """A few event sounds at random times over a faint room tone; unit RMS while a sound plays."""
    sounds = event_sounds()
    x = np.zeros(n)
    for _ in range(int(rng.integers(1, 4))):
        sound = sounds[int(rng.integers(len(sounds)))][:n]
        at = int(rng.integers(0, max(1, n - len(sound))))
        x[at : at + len(sound)] += sound * rng.uniform(0.3, 1.0)
    active = np.abs(x) > 1e-4
    level = np.sqrt(np.mean(x[active] ** 2)) if active.any() else 1.0
    return x / level + 0.01 * _shaped_noise(rng, n, 1.0)


def make_noise(kind: str, n: int, seed: int) -> np.ndarray:
    """Noise of the given kind, `n` samples at 16 kHz, at unit RMS (events: while they sound)."""
    rng = np.random.default_rng(seed)
    if kind == "events":
        return _events(rng, n)
    if kind == "babble":
        return _babble(rng, n, talkers=int(rng.integers(3, 8)))
    if kind == "hum":
        return _hum(rng, n)
    exponent = {"white": 0.0, "pink": 1.0, "brown": 2.0}[kind]
    return _shaped_noise(rng, n, exponent)


def speech_rms(audio: np.ndarray) -> float:
    """RMS of the louder half of 20 ms frames: the speech, not the pauses."""
    frame = SAMPLE_RATE // 50
    n = len(audio) // frame
    if n == 0:
        return float(np.sqrt(np.mean(audio**2))) if len(audio) else 0.0
    energy = (audio[: n * frame].reshape(n, frame) ** 2).mean(axis=1)
    return float(np.sqrt(energy[energy >= np.median(energy)].mean()))


def add_noise(audio: np.ndarray, kind: str, snr_db: float, seed: int) -> np.ndarray:
    noise = make_noise(kind, len(audio), seed)
    gain = speech_rms(audio) / 10 ** (snr_db / 20)
    return (audio + gain * noise).astype(np.float32)


# ---- reverberation -----------------------------------------------------------------------------


def room_impulse_response(rt60: float, drr_db: float, seed: int) -> np.ndarray:
    """A synthetic room: direct path, sparse early reflections, then exponentially decaying diffuse noise.

    `rt60` is the time for the tail to fall by 60 dB; `drr_db` the direct-to-reverberant energy
    ratio, which sets how far the talker seems from the microphone.
    """
    rng = np.random.default_rng(seed)
    n = int(rt60 * SAMPLE_RATE * 1.2) + 1
    t = np.arange(n) / SAMPLE_RATE
    decay = np.exp(-6.9078 * t / rt60)  # ln(1000): 60 dB of amplitude decay over rt60
    tail = rng.standard_normal(n) * decay
    # The diffuse field builds up over the first few milliseconds.
    tail *= np.minimum(1.0, t / 0.005)
    for _ in range(int(rng.integers(4, 10))):  # early reflections off walls, 2-30 ms late
        k = int(rng.uniform(0.002, 0.03) * SAMPLE_RATE)
        if k < n:
            tail[k] += rng.uniform(-1, 1) * 3.0
    # Walls absorb high frequencies: a gentle low-pass on the tail.
    tail = signal.sosfilt(signal.butter(1, rng.uniform(3000, 7000), fs=SAMPLE_RATE, output="sos"), tail)
    tail *= np.sqrt(10 ** (-drr_db / 10) / (np.sum(tail**2) + 1e-12))
    tail[0] = 1.0
    return tail


def add_reverb(audio: np.ndarray, rt60: float, drr_db: float, seed: int) -> np.ndarray:
    """Convolve with a synthetic room; the output keeps the input's length and direct-path timing."""
    wet = signal.fftconvolve(audio, room_impulse_response(rt60, drr_db, seed))[: len(audio)]
    peak = np.abs(wet).max(initial=0.0)
    scale = np.abs(audio).max(initial=0.0) / peak if peak > 0 else 1.0
    return (wet * scale).astype(np.float32)


# ---- channel ------------------------------------------------------------------------------------


TELEPHONE_RATE = 8000


def narrowband(audio: np.ndarray, codec: str) -> np.ndarray:
    """16 kHz audio as a phone line carries it: 300-3400 Hz at 8 kHz, through a G.711 round trip ("mulaw",
    "alaw"; anything else: linear)."""
    sos = signal.butter(4, [300, 3400], btype="bandpass", fs=SAMPLE_RATE, output="sos")
    narrow = resample(signal.sosfilt(sos, audio).astype(np.float32), SAMPLE_RATE, TELEPHONE_RATE)
    if codec == "mulaw":
        return mulaw_decode(mulaw_encode(narrow))
    if codec == "alaw":
        return alaw_decode(alaw_encode(narrow))
    return narrow


def telephone(audio: np.ndarray, codec: str) -> np.ndarray:
    """Narrowband telephone (`narrowband`), back to 16 kHz and the input's length."""
    out = resample(narrowband(audio, codec), TELEPHONE_RATE, SAMPLE_RATE)
    return np.pad(out, (0, max(0, len(audio) - len(out))))[: len(audio)]


def clip(audio: np.ndarray, drive_db: float) -> np.ndarray:
    """Overdrive into hard clipping at full scale, then restore the original peak level."""
    peak = np.abs(audio).max(initial=0.0)
    if peak == 0:
        return audio
    driven = np.clip(audio / peak * 10 ** (drive_db / 20), -1.0, 1.0)
    return (driven * peak).astype(np.float32)


# ---- sampling and applying a chain --------------------------------------------------------------


def sample_acoustic(rng: np.random.Generator, options: dict[str, Any]) -> dict[str, Any]:
    """Draw one augmentation chain from a section's `acoustic` options (see configs/data-default.yaml)."""
    chain: dict[str, Any] = {}
    if (reverb := options.get("reverb")) and rng.random() < reverb["prob"]:
        chain["reverb"] = {
            "rt60": round(float(rng.uniform(*reverb["rt60"])), 3),
            "drr_db": round(float(rng.uniform(*reverb.get("drr_db", [-3, 12]))), 2),
            "seed": int(rng.integers(2**31)),
        }
    if (noise := options.get("noise")) and rng.random() < noise["prob"]:
        chain["noise"] = {
            "kind": str(rng.choice(available_noise_kinds(noise.get("kinds", NOISE_KINDS)))),
            "snr_db": round(float(rng.uniform(*noise["snr_db"])), 2),
            "seed": int(rng.integers(2**31)),
        }
    if (phone := options.get("telephone")) and rng.random() < phone["prob"]:
        chain["telephone"] = {"codec": str(rng.choice(phone.get("codecs", CODECS)))}
    if "gain_db" in options:
        chain["gain_db"] = round(float(rng.uniform(*options["gain_db"])), 2)
    if (clipping := options.get("clip")) and rng.random() < clipping["prob"]:
        chain["clip"] = {"drive_db": round(float(rng.uniform(*clipping["drive_db"])), 2)}
    return chain


def apply_acoustic(audio: np.ndarray, chain: dict[str, Any]) -> np.ndarray:
    """Apply a chain drawn by `sample_acoustic` to 16 kHz audio; deterministic for a given chain."""
    x = np.asarray(audio, dtype=np.float32)
    if "reverb" in chain:
        x = add_reverb(x, **chain["reverb"])
    if "noise" in chain:
        x = add_noise(x, **chain["noise"])
    if "telephone" in chain:
        x = telephone(x, chain["telephone"]["codec"])
    if "gain_db" in chain:
        x = x * np.float32(10 ** (chain["gain_db"] / 20))
    if "clip" in chain:
        x = clip(x, chain["clip"]["drive_db"])
    # The saved file is 16-bit PCM: keep within full scale so levels survive the trip.
    return np.clip(x, -1.0, 1.0).astype(np.float32)


# ---- corpus sections -----------------------------------------------------------------------------


def plan_augment(config, section, records: list[dict[str, Any]]):
    """Specs for an `augment` section: item i copies a source utterance through a drawn chain."""
    from sonare.data.build import audio_path, item_rng

    # Sections are drawn with equal chance, so a large one does not crowd out the others' speakers.
    by_section = [[r for r in records if r["section"] == name] for name in section.sources]
    by_section = [rs for rs in by_section if rs]
    if not by_section:
        raise ValueError(f"section {section.name}: its source sections are empty")
    index = 0
    while True:
        rng = item_rng(config.seed, section.name, index)
        pool = by_section[int(rng.integers(len(by_section)))]
        source = pool[int(rng.integers(len(pool)))]
        item_id = f"{section.name}-{index:06d}"
        transform = sample_transform(rng, section.transform) if section.transform else SpeakerTransform()
        yield {
            "kind": "augment",
            "id": item_id,
            "section": section.name,
            "audio": audio_path(section, item_id, index),
            "source": source,
            "augment": sample_acoustic(rng, section.acoustic),
            "transform": transform.to_dict(),
            "split": section.split,
            "tasks": section.tasks,
        }
        index += 1


def render_augment(spec: dict[str, Any], corpus_dir: str) -> dict[str, Any]:
    from sonare.data.build import speaker_id

    source = spec["source"]
    audio, _ = load_audio(Path(corpus_dir) / source["audio"], SAMPLE_RATE)
    transform = SpeakerTransform.from_dict(spec["transform"])
    audio = apply_acoustic(apply_speaker_transform(audio, SAMPLE_RATE, transform), spec["augment"])
    save_audio(Path(corpus_dir) / spec["audio"], audio, SAMPLE_RATE)
    record = {k: v for k, v in source.items() if k not in ("alignment",)}
    if not transform.is_identity:
        # The copy's voice is the source's own transform (a teacher's transformed speaker) followed by this one.
        voice = SpeakerTransform.from_dict(source.get("transform") or {}).then(transform)
        record.update(
            speaker=speaker_id(source["teacher"], source["voice"], voice),
            transform=voice.to_dict(),
            words=_retimed(source.get("words", []), transform),
            phones=_retimed(source.get("phones", []), transform),
        )
    record.update(
        id=spec["id"],
        section=spec["section"],
        audio=spec["audio"],
        source=source["id"],
        augment=spec["augment"],
        sample_rate=SAMPLE_RATE,
        duration=round(len(audio) / SAMPLE_RATE, 4),
        split=spec["split"],
        tasks=spec["tasks"],
    )
    return record


def _retimed(timings: list[dict[str, Any]], transform: SpeakerTransform) -> list[dict[str, Any]]:
    """A manifest's word or phone spans, moved to where they fall in the transformed audio."""
    return [
        {**t, "start": round(transform.moved(t["start"]), 4), "end": round(transform.moved(t["end"]), 4)}
        for t in timings
    ]
