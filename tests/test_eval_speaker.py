import numpy as np
import pytest

from sonare.eval.speaker import (
    SpeakerEncoder,
    cosine_similarity,
    equal_error_rate,
    mean_embedding,
    same_vs_different,
)

SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "She sells sea shells by the shore every single morning.",
]


@pytest.fixture(scope="module")
def encoder() -> SpeakerEncoder:
    return SpeakerEncoder()


@pytest.fixture(scope="module")
def voice_embeddings(encoder) -> dict[str, list[np.ndarray]]:
    from sonare.data.teachers import get_teacher

    espeak = get_teacher("espeak")
    embeddings = {}
    for voice in ("en-us", "en-us+f3"):
        clips = [espeak.synthesize(text, voice) for text in SENTENCES]
        embeddings[voice] = [encoder.embed(clip.audio, clip.sample_rate) for clip in clips]
    return embeddings


def test_embeddings_are_unit_norm_and_rate_independent(encoder):
    from sonare.audio.resample import resample
    from sonare.data.teachers import get_teacher

    clip = get_teacher("espeak").synthesize(SENTENCES[0], "en-us")
    native = encoder.embed(clip.audio, clip.sample_rate)
    at_48k = encoder.embed(resample(clip.audio, clip.sample_rate, 48000), 48000)
    assert np.linalg.norm(native) == pytest.approx(1.0, abs=1e-5)
    assert cosine_similarity(native, at_48k) > 0.99


def test_same_voice_is_more_similar_than_a_different_voice(voice_embeddings):
    male, female = voice_embeddings["en-us"], voice_embeddings["en-us+f3"]
    same = cosine_similarity(male[0], male[1])
    different = max(cosine_similarity(m, f) for m in male for f in female)
    assert same > different + 0.05
    report = same_vs_different(voice_embeddings)
    assert report.same_pairs == 2 and report.different_pairs == 4
    assert report.separation > 0.05 and report.equal_error_rate == 0.0


def test_similarity_arithmetic():
    a, b = np.array([1.0, 0.0]), np.array([1.0, 1.0])
    assert cosine_similarity(a, b) == pytest.approx(np.sqrt(0.5))
    assert np.linalg.norm(mean_embedding([a, b])) == pytest.approx(1.0)
    assert equal_error_rate([0.9, 0.8], [0.1, 0.2]) == 0.0
    assert equal_error_rate([0.5, 0.9], [0.6, 0.1]) == pytest.approx(0.5)
    with pytest.raises(ValueError):
        same_vs_different({"a": [a], "b": [b]})
