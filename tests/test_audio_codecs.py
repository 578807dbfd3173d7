import warnings

import numpy as np
import pytest

from sonare.audio.codecs import alaw_decode, alaw_encode, mulaw_decode, mulaw_encode


def _pcm(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, 20000)
    x[:10000] *= 0.01  # quiet samples exercise the small segments
    return x.astype(np.float32)


def test_silence_codes_follow_g711():
    assert mulaw_encode(np.zeros(1))[0] == 0xFF
    assert alaw_encode(np.zeros(1))[0] == 0xD5


@pytest.mark.parametrize(("encode", "decode"), [(mulaw_encode, mulaw_decode), (alaw_encode, alaw_decode)])
def test_round_trip_error_is_relative(encode, decode):
    x = _pcm()
    y = decode(encode(x))
    assert y.dtype == np.float32
    # Companding keeps the relative error under ~6% for all but the smallest samples.
    big = np.abs(x) > 0.01
    assert np.max(np.abs(y[big] - x[big]) / np.abs(x[big])) < 0.07
    assert np.max(np.abs(y - x)) < 0.04


@pytest.mark.parametrize(("encode", "decode"), [(mulaw_encode, mulaw_decode), (alaw_encode, alaw_decode)])
def test_decode_encode_is_identity_on_codes(encode, decode):
    codes = np.arange(256, dtype=np.uint8)
    decoded = decode(codes)
    again = encode(decoded)
    # Every code except negative zero (mu-law 0x7F decodes to 0, which encodes as 0xFF) survives.
    same = again == codes
    assert same.sum() >= 255


def test_matches_python_audioop_when_available():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        audioop = pytest.importorskip("audioop")
    x = _pcm(1)
    pcm16 = np.clip(np.round(x * 32768), -32768, 32767).astype("<i2").tobytes()
    np.testing.assert_array_equal(mulaw_encode(x), np.frombuffer(audioop.lin2ulaw(pcm16, 2), np.uint8))
    np.testing.assert_array_equal(alaw_encode(x), np.frombuffer(audioop.lin2alaw(pcm16, 2), np.uint8))
    codes = np.arange(256, dtype=np.uint8).tobytes()
    np.testing.assert_array_equal(
        np.round(mulaw_decode(np.frombuffer(codes, np.uint8)) * 32768).astype(np.int16),
        np.frombuffer(audioop.ulaw2lin(codes, 2), "<i2"),
    )
    np.testing.assert_array_equal(
        np.round(alaw_decode(np.frombuffer(codes, np.uint8)) * 32768).astype(np.int16),
        np.frombuffer(audioop.alaw2lin(codes, 2), "<i2"),
    )
