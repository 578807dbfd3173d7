import numpy as np
import pytest
from scipy import signal

from sonare.data.augment import (
    SAMPLE_RATE,
    add_noise,
    add_reverb,
    apply_acoustic,
    make_noise,
    sample_acoustic,
    speech_rms,
    telephone,
)
from sonare.data.speakers import SpeakerTransform, apply_speaker_transform

OPTIONS = {
    "reverb": {"prob": 0.5, "rt60": [0.2, 0.8]},
    "noise": {"prob": 1.0, "snr_db": [0, 20]},
    "telephone": {"prob": 0.5},
    "gain_db": [-10, 0],
    "clip": {"prob": 0.3, "drive_db": [3, 9]},
}


def _voice_like(seconds: float = 1.0, f0: float = 140.0) -> np.ndarray:
    t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    x = sum(np.sin(2 * np.pi * f0 * k * t) / k for k in range(1, 20))
    return (0.2 * x * (0.6 + 0.4 * np.sin(2 * np.pi * 3 * t))).astype(np.float32)


def test_chains_are_seeded_and_rendering_is_deterministic():
    a = sample_acoustic(np.random.default_rng(5), OPTIONS)
    assert a == sample_acoustic(np.random.default_rng(5), OPTIONS)
    x = _voice_like()
    np.testing.assert_array_equal(apply_acoustic(x, a), apply_acoustic(x, a))
    chains = [sample_acoustic(np.random.default_rng(s), OPTIONS) for s in range(40)]
    assert len({str(c) for c in chains}) == 40


@pytest.mark.parametrize("kind", ["white", "pink", "brown", "babble", "hum"])
def test_noise_is_added_at_the_requested_snr(kind):
    x = _voice_like(2.0)
    y = add_noise(x, kind, 10.0, seed=3)
    noise = y - x
    snr = 20 * np.log10(speech_rms(x) / np.sqrt(np.mean(noise**2)))
    assert abs(snr - 10.0) < 0.5


def test_event_recordings_when_installed():
    from sonare.data.augment import event_sounds

    if not event_sounds():
        pytest.skip("sound-theme-freedesktop not installed")
    x = make_noise("events", SAMPLE_RATE * 4, seed=0)
    assert len(x) == SAMPLE_RATE * 4
    assert np.abs(x).max() > 0.5  # at least one real sound lands in the window


def test_noise_colours_differ_in_slope():
    def high_share(kind):
        f, p = signal.welch(make_noise(kind, SAMPLE_RATE * 2, seed=1), fs=SAMPLE_RATE)
        return p[f > 2000].sum() / p.sum()

    assert high_share("white") > high_share("pink") > high_share("brown")


def test_reverb_keeps_length_and_adds_a_tail():
    x = np.zeros(SAMPLE_RATE, dtype=np.float32)
    x[1000] = 0.5
    y = add_reverb(x, rt60=0.5, drr_db=0.0, seed=2)
    assert len(y) == len(x)
    assert np.argmax(np.abs(y)) == 1000  # the direct path stays where it was
    assert np.abs(y[1000 + SAMPLE_RATE // 10 :]).max() > 1e-4


def test_telephone_band_limits():
    rng = np.random.default_rng(0)
    x = (0.1 * rng.standard_normal(SAMPLE_RATE)).astype(np.float32)
    for codec in ("none", "mulaw", "alaw"):
        y = telephone(x, codec)
        f, p = signal.welch(y, fs=SAMPLE_RATE)
        inside = p[(f > 500) & (f < 3000)].mean()
        assert p[f > 4500].mean() < inside * 1e-3
        assert p[f < 100].mean() < inside * 0.1


def test_speaker_transform_pitch_and_tempo():
    pytest.importorskip("pyworld")
    x = _voice_like(1.0, f0=140.0)
    up = apply_speaker_transform(x, SAMPLE_RATE, SpeakerTransform(pitch_semitones=12.0))
    f, p = signal.welch(up[2000:-2000], fs=SAMPLE_RATE, nperseg=4096)
    assert abs(f[np.argmax(p)] - 280.0) < 20
    fast = apply_speaker_transform(x, SAMPLE_RATE, SpeakerTransform(tempo=1.25))
    assert abs(len(fast) - len(x) / 1.25) < 0.01 * SAMPLE_RATE
    same = SpeakerTransform(pitch_semitones=2.0, formant_ratio=1.1)
    np.testing.assert_array_equal(
        apply_speaker_transform(x, SAMPLE_RATE, same), apply_speaker_transform(x, SAMPLE_RATE, same)
    )


def test_augment_copies_become_new_speakers_with_their_timings_retimed(tmp_path):
    pytest.importorskip("pyworld")
    from types import SimpleNamespace

    from sonare.audio.io import load_audio, save_audio
    from sonare.data.augment import plan_augment, render_augment

    save_audio(tmp_path / "src.wav", _voice_like(1.0, f0=140.0), SAMPLE_RATE)
    source = {
        "id": "src", "section": "real", "audio": "src.wav", "text": "hello there", "speaker": "recorded:one",
        "teacher": "recorded", "voice": "one", "transform": {}, "duration": 1.0, "sample_rate": SAMPLE_RATE,
        "words": [{"word": "hello", "start": 0.1, "end": 0.5}, {"word": "there", "start": 0.5, "end": 0.9}],
        "phones": [{"phoneme": "h", "start": 0.1, "end": 0.2}],
    }  # fmt: skip
    config = SimpleNamespace(seed=1)
    section = SimpleNamespace(
        name="copies", sources=["real"], acoustic={}, split="train", tasks=["stt"],
        transform={"pitch_semitones": [11.9, 12.0], "tempo": [1.25, 1.25]},
    )  # fmt: skip
    plan = plan_augment(config, section, [source])
    specs = [next(plan) for _ in range(3)]
    assert len({str(s["transform"]) for s in specs}) == 3  # each copy its own speaker

    record = render_augment(specs[0], str(tmp_path))
    audio, _ = load_audio(tmp_path / record["audio"], SAMPLE_RATE)
    assert abs(record["duration"] - 0.8) < 0.01
    assert record["words"][1] == {"word": "there", "start": 0.4, "end": 0.72}
    assert record["phones"][0]["end"] == 0.16
    assert record["speaker"] != source["speaker"] and record["transform"]["tempo"] == 1.25
    f, p = signal.welch(audio[2000:-2000], fs=SAMPLE_RATE, nperseg=4096)
    assert abs(f[np.argmax(p)] - 280.0) < 20  # an octave up

    section.transform = {}
    plain = render_augment(next(plan_augment(config, section, [source])), str(tmp_path))
    assert plain["speaker"] == source["speaker"] and plain["words"] == source["words"]


def test_speaker_transforms_compose_into_one():
    pytest.importorskip("pyworld")
    first = SpeakerTransform(pitch_semitones=3.0, pitch_range=1.2, formant_ratio=1.1, tempo=1.1)
    second = SpeakerTransform(pitch_semitones=-5.0, pitch_range=0.5, formant_ratio=0.9, tempo=1.2)
    both = first.then(second)
    assert both.to_dict() == {"pitch_semitones": -2.0, "pitch_range": 0.6, "formant_ratio": 0.99, "tempo": 1.32}
    x = _voice_like(1.0, f0=140.0)
    twice = apply_speaker_transform(apply_speaker_transform(x, SAMPLE_RATE, first), SAMPLE_RATE, second)
    once = apply_speaker_transform(x, SAMPLE_RATE, both)
    assert abs(len(twice) - len(once)) < 0.01 * SAMPLE_RATE
    pitch = [signal.welch(y[2000:-2000], fs=SAMPLE_RATE, nperseg=4096) for y in (twice, once)]
    assert abs(pitch[0][0][np.argmax(pitch[0][1])] - pitch[1][0][np.argmax(pitch[1][1])]) < 10
