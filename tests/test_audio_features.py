import numpy as np
import pytest
import torch

from sonare.audio import features
from sonare.audio.features import StreamingFrames, frame_levels, log_mel, mel_filterbank, num_frames, warp_log_mel


def _signal(seconds: float, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * features.SAMPLE_RATE)) / features.SAMPLE_RATE
    return (0.3 * np.sin(2 * np.pi * 440 * t) + 0.05 * rng.standard_normal(len(t))).astype(np.float32)


def test_frame_count_and_shape():
    for n in (0, 399, 400, 559, 560, 16000):
        assert log_mel(np.zeros(n, dtype=np.float32)).shape == (num_frames(n), features.N_MELS)
    assert num_frames(16000) == 98  # 1 + (16000 - 400) // 160


def test_batched_equals_single():
    x = np.stack([_signal(0.5, 1), _signal(0.5, 2)])
    batch = log_mel(x)
    assert batch.shape == (2, num_frames(x.shape[1]), features.N_MELS)
    torch.testing.assert_close(batch[1], log_mel(x[1]))


def test_tone_lands_in_the_right_mel_bin():
    t = np.arange(features.SAMPLE_RATE) / features.SAMPLE_RATE
    for hz in (300.0, 1000.0, 4000.0):
        mel = log_mel(np.sin(2 * np.pi * hz * t).astype(np.float32))
        peak_bin = int(mel.mean(dim=0).argmax())
        centre = mel_filterbank()[:, peak_bin].argmax().item() * features.SAMPLE_RATE / features.N_FFT
        assert abs(centre - hz) / hz < 0.15


@pytest.mark.parametrize("factor", [0.88, 1.12])
def test_warping_a_tone_gives_the_tone_at_the_scaled_frequency(factor):
    t = np.arange(features.SAMPLE_RATE) / features.SAMPLE_RATE
    for hz in (500.0, 1500.0, 3000.0):
        warped = warp_log_mel(log_mel(np.sin(2 * np.pi * hz * t).astype(np.float32)).numpy(), factor)
        scaled = log_mel(np.sin(2 * np.pi * hz * factor * t).astype(np.float32)).numpy()
        assert abs(int(warped.mean(axis=0).argmax()) - int(scaled.mean(axis=0).argmax())) <= 1


def test_frame_levels_are_the_rms_of_each_frames_samples():
    x = _signal(0.5)
    levels = frame_levels(x).numpy()
    assert levels.shape == (num_frames(len(x)),)
    k = 7
    window = x[k * features.HOP : k * features.HOP + features.WINDOW]
    assert levels[k] == pytest.approx(float(np.sqrt(np.mean(window.astype(np.float64) ** 2))), rel=1e-5)
    assert frame_levels(0.1 * x).numpy() == pytest.approx(0.1 * levels, rel=1e-5)


def test_a_unit_warp_leaves_frames_unchanged():
    frames = log_mel(_signal(0.5)).numpy()
    np.testing.assert_allclose(warp_log_mel(frames, 1.0), frames, rtol=1e-6)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("transform", [log_mel, frame_levels], ids=["log_mel", "levels"])
def test_streaming_equals_offline(seed, transform):
    x = _signal(2.0, seed)
    rng = np.random.default_rng(seed)
    stream = StreamingFrames(transform)
    pieces, i = [], 0
    while i < len(x):
        n = int(rng.choice([0, 1, 7, 159, 160, 161, 400, 1234]))
        pieces.append(stream.push(x[i : i + n]))
        i += n
    streamed = torch.cat(pieces)
    offline = transform(x)
    assert streamed.shape == offline.shape
    assert (streamed - offline).abs().max().item() < 1e-5


def test_streaming_emits_frames_as_soon_as_complete():
    stream = StreamingFrames()
    assert stream.push(np.zeros(399, dtype=np.float32)).shape[0] == 0
    assert stream.push(np.zeros(1, dtype=np.float32)).shape[0] == 1
    assert stream.push(np.zeros(159, dtype=np.float32)).shape[0] == 0
    assert stream.push(np.zeros(1, dtype=np.float32)).shape[0] == 1
    stream.reset()
    assert stream.push(np.zeros(160, dtype=np.float32)).shape[0] == 0
