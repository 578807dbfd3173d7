import numpy as np
import pytest

from sonare.data.align import align
from sonare.data.speakers import SpeakerTransform, apply_speaker_transform
from sonare.data.teachers import get_teacher
from sonare.data.timings import transfer_timings
from sonare.data.tokens import tokenize

pytest.importorskip("pyworld")
pytest.importorskip("numba")

TEXT = "My number is five five five, and the birds were thinking about rather heavy weather."


@pytest.mark.parametrize(("voice", "tempo"), [("en+f4", 0.8), ("en-us+m7", 1.25)])
def test_aligner_recovers_known_timings_after_time_stretch(voice, tempo):
    text = tokenize(TEXT, "en-us")
    utterance = get_teacher("espeak").synthesize(TEXT, voice)
    truth = transfer_timings(utterance.phones, text.tokens).timings
    stretched = apply_speaker_transform(utterance.audio, utterance.sample_rate, SpeakerTransform(tempo=tempo))
    result = align(stretched, utterance.sample_rate, text.tokens, TEXT)
    assert [t.label for t in result.timings] == text.tokens
    errors = np.array(
        [abs(got.start - want.start / tempo) for got, want in zip(result.timings, truth, strict=True)
         if got.label.strip(" ,.") and got.label not in "ˈˌ"]
    )  # fmt: skip
    # Reference voice, speaker and tempo all differ; boundaries must still land within a phone.
    assert np.mean(errors) < 0.025, f"mean boundary error {np.mean(errors) * 1000:.1f} ms"
    assert np.percentile(errors, 90) < 0.05
