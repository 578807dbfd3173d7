import math
import time

import numpy as np
import pytest

from sonare.eval.latency import Timer, format_table, percentiles, time_stream


def test_percentiles_of_a_known_sequence():
    summary = percentiles(list(range(1, 101)))
    assert summary["n"] == 100
    assert summary["mean"] == pytest.approx(50.5)
    assert summary["p50"] == pytest.approx(50.5)
    assert summary["p90"] == pytest.approx(90.1)
    assert summary["p99"] == pytest.approx(99.01)
    assert summary["max"] == 100


def test_percentiles_of_nothing_are_nan():
    summary = percentiles([])
    assert summary["n"] == 0 and math.isnan(summary["p50"]) and math.isnan(summary["mean"])
    assert math.isnan(summary["max"])


def test_timer_measures_a_sleep():
    with Timer() as timer:
        time.sleep(0.02)
    assert 0.015 < timer.elapsed < 0.5


def test_time_stream_measures_first_audio_and_real_time_factor():
    rate = 1000

    def stream():
        time.sleep(0.05)  # work before the first chunk counts towards time to first audio
        yield np.zeros(0, dtype=np.float32)  # an empty chunk is not audio
        yield np.ones(500, dtype=np.float32)
        time.sleep(0.05)
        yield np.ones(1500, dtype=np.float32)

    timing, audio = time_stream(stream, rate)
    assert audio.shape == (2000,)
    assert timing.chunks == 2
    assert timing.audio_seconds == pytest.approx(2.0)
    assert 0.04 < timing.time_to_first_audio < timing.total_time
    assert timing.real_time_factor == pytest.approx(timing.total_time / 2.0)
    assert timing.as_dict()["real_time_factor"] == timing.real_time_factor


def test_time_stream_without_audio():
    timing, audio = time_stream(lambda: iter([]), 16000)
    assert audio.size == 0 and math.isnan(timing.time_to_first_audio) and timing.real_time_factor == math.inf


def test_format_table_aligns_columns_and_formats_numbers():
    rows = [{"name": "piper", "wer": 0.01234, "n": 100}, {"name": "espeak-ng", "wer": 0.1, "n": 7}]
    lines = format_table(rows, ["name", "wer", "n"]).splitlines()
    assert lines[0].split() == ["name", "wer", "n"]
    assert lines[2] == "piper      0.012  100"
    assert lines[3] == "espeak-ng  0.100    7"
    assert format_table([]) == ""
