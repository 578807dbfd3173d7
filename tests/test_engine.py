"""The engine drives a real (random-weight) SSM model: batching must not change any stream's output."""

import asyncio
import time

import pytest
import torch
from frame_model import END, FrameModel

from sonare.engine import Engine, EngineClosed, EngineFull, StreamFailed


async def collect(stream) -> torch.Tensor:
    return torch.stack([frame async for frame in stream])


def with_engine(test, slots=8, max_batch=64, model=None):
    model = model or FrameModel()
    engine = Engine({"frames": model}, slots=slots, max_batch=max_batch, threads=1)
    engine.start()
    try:
        return asyncio.run(test(engine, model))
    finally:
        engine.stop()


def test_concurrent_streams_equal_each_stream_alone():
    inputs = [torch.randn(n, 16, dtype=torch.float64) for n in (5, 40, 17, 1, 33, 25)]

    async def run(engine, model):
        streams = [engine.open("frames") for _ in inputs]
        # feed in ragged pieces, interleaved across streams, so batches mix streams at different positions
        for piece in range(0, 40, 7):
            for stream, x in zip(streams, inputs, strict=True):
                if piece < len(x):
                    stream.push(x[piece : piece + 7])
            await asyncio.sleep(0)
        for stream in streams:
            stream.push(END)
        return await asyncio.gather(*(collect(s) for s in streams))

    outputs = with_engine(run, slots=8)
    model = FrameModel()
    for x, y in zip(inputs, outputs, strict=True):
        alone, _ = model.net(x[None])
        assert y.shape == x.shape
        assert (y - alone[0]).abs().max() < 1e-10


def test_full_engine_refuses_at_once_and_cancel_frees_the_slot():
    async def run(engine, model):
        a, b = engine.open("frames"), engine.open("frames")
        t0 = time.perf_counter()
        with pytest.raises(EngineFull):
            engine.open("frames")
        refuse_time = time.perf_counter() - t0
        a.cancel()
        c = engine.open("frames")  # no waiting: the slot came back synchronously
        # the surviving streams still work after the refusal
        for s in (b, c):
            s.push(torch.randn(3, 16, dtype=torch.float64))
            s.push(END)
        outs = await asyncio.gather(collect(b), collect(c))
        return refuse_time, outs, engine.active_streams("frames")

    refuse_time, outs, active = with_engine(run, slots=2)
    assert refuse_time < 0.01
    assert [o.shape[0] for o in outs] == [3, 3]
    assert active == 0


def test_cancelled_stream_gets_no_more_events_and_its_slot_is_reused_cleanly():
    x = torch.randn(20, 16, dtype=torch.float64)

    async def run(engine, model):
        a = engine.open("frames")
        a.push(torch.randn(500, 16, dtype=torch.float64))
        await asyncio.sleep(0.01)
        a.cancel()
        b = engine.open("frames")  # takes a's slot; must start from a clean state
        assert b.slot == a.slot
        b.push(x)
        b.push(END)
        return await collect(b)

    y = with_engine(run, slots=1)
    alone, _ = FrameModel().net(x[None])
    assert (y - alone[0]).abs().max() < 1e-10


def test_new_stream_is_served_before_a_long_running_one():
    async def run(engine, model):
        long = engine.open("frames")
        long.push(torch.randn(3000, 16, dtype=torch.float64))
        long.push(END)
        await asyncio.sleep(0.02)
        new = engine.open("frames")
        new.push(torch.randn(1, 16, dtype=torch.float64))
        new.push(END)
        await collect(new)
        remaining = len(long.session.frames)
        long.cancel()
        return remaining

    remaining = with_engine(run, slots=2, max_batch=1)
    assert remaining > 0  # the newcomer did not wait for the long stream to finish


def test_bad_input_ends_only_that_stream():
    async def run(engine, model):
        good, bad = engine.open("frames"), engine.open("frames")
        bad.push(torch.randn(2, 3))  # wrong width
        good.push(torch.randn(4, 16, dtype=torch.float64))
        good.push(END)
        with pytest.raises(StreamFailed) as failure:
            await collect(bad)
        return failure.value, await collect(good), engine.active_streams()

    failure, good_out, active = with_engine(run)
    assert failure.client_error and "shape" in str(failure)
    assert good_out.shape == (4, 16)
    assert active == 0


def test_draining_engine_refuses_new_streams_but_finishes_admitted_ones():
    async def run(engine, model):
        s = engine.open("frames")
        engine.stop_admitting()
        with pytest.raises(EngineClosed):
            engine.open("frames")
        s.push(torch.randn(6, 16, dtype=torch.float64))
        s.push(END)
        return await collect(s)

    assert with_engine(run).shape == (6, 16)


def test_metrics_record_steps_batches_and_first_output():
    async def run(engine, model):
        streams = [engine.open("frames") for _ in range(4)]
        for s in streams:
            s.push(torch.randn(10, 16, dtype=torch.float64))
            s.push(END)
        await asyncio.gather(*(collect(s) for s in streams))
        return engine.metrics.registry

    registry = with_engine(run)
    sample = registry.get_sample_value
    assert sample("sonare_step_seconds_count", {"model": "frames"}) >= 10
    assert sample("sonare_batch_size_sum", {"model": "frames"}) == 40
    assert sample("sonare_time_to_first_output_seconds_count", {"model": "frames"}) == 4
    assert sample("sonare_active_streams", {"model": "frames"}) == 0


def test_cancelling_every_stream_during_a_step_keeps_the_engine_alive():
    async def run(engine, model):
        for _ in range(20):
            streams = [engine.open("frames") for _ in range(4)]
            for s in streams:
                s.push(torch.randn(200, 16, dtype=torch.float64))
            await asyncio.sleep(0.002)
            for s in streams:
                s.cancel()
        s = engine.open("frames")
        s.push(torch.randn(3, 16, dtype=torch.float64))
        s.push(END)
        return await collect(s), engine.alive

    out, alive = with_engine(run, slots=4)
    assert out.shape == (3, 16) and alive


def test_new_streams_step_alone_only_while_running_streams_have_audio_to_spare():
    from types import SimpleNamespace

    from sonare.engine.engine import _batch

    def stream(started: bool, deadline: float | None) -> SimpleNamespace:
        return SimpleNamespace(started=started, session=SimpleNamespace(deadline=lambda: deadline))

    now, need = 100.0, 0.15  # seconds of buffered audio the running streams must have to spare
    new = [stream(False, None), stream(False, None)]
    comfortable = stream(True, now + need + 0.05)
    short = stream(True, now + need / 2)
    assert _batch([*new, comfortable], now, need) == new
    assert _batch([*new, comfortable, short], now, need) == [*new, comfortable, short]
    assert _batch(new, now, need) == new and _batch([comfortable], now, need) == [comfortable]
