"""A small real TTS streaming model for tests: random weights, with every phoneme lasting exactly 3 frames."""

import math

import torch

from sonare.text.inventory import vocab_size
from sonare.tts.model import TTSConfig, TTSModel
from sonare.tts.stream import TTSStreamingModel

FRAMES_PER_ID = 3


def small_tts(seed: int = 0) -> TTSStreamingModel:
    torch.manual_seed(seed)
    cfg = TTSConfig(vocab_size=vocab_size(), n_speakers=2, d_speaker=8, d_text=32, text_layers=1, lookahead=2,
                    d_frame=32, frame_layers=1, d_state=8, head_dim=16)  # fmt: skip
    model = TTSModel(cfg)
    with torch.no_grad():  # fixed durations make the timeline predictable
        last = model.durations.net[-1]
        last.weight.zero_()
        last.bias.fill_(math.log(FRAMES_PER_ID + 1))
        model.frame_mean[0] = math.log(120.0)
        model.frame_std[0] = 0.05
    voices = {"a": model.speakers.weight[0].detach().clone(), "b": model.speakers.weight[1].detach().clone()}
    return TTSStreamingModel(model.eval(), voices, "a")
