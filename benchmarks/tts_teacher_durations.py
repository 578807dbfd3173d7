"""Are the default voice's lost words in its durations or in its frames? The same frame decoder, fed its own
predicted durations or its teacher's (Piper joe's alignment of the same sentence), Whisper base WER of each.

Session 29's lost words are short function words swallowed by the word before ("score is" -> "scores") and
"-ty" numbers heard as two words: timing errors as much as spectral ones. Piper samples its durations, so the
teacher's are one natural rhythm among many; the predictor learnt their mean. Four renderings of each sentence,
all through the same offline path (the whole sentence encoded at once, decoded, adapted to `joe`, vocoded):

- own durations: what the shipped voice speaks (the path is checked against `synthesize` by its WER);
- teacher durations: Piper's frames per phoneme;
- teacher rhythm at own tempo: Piper's durations scaled to the predicted total, so only the rhythm differs;
- Piper joe itself, the reference.

    python benchmarks/tts_teacher_durations.py --sentences 200 --shard 0/2 --out A.json   # shards run in parallel
    python benchmarks/tts_teacher_durations.py --sentences 200 --shard 1/2 --out B.json
    python benchmarks/tts_teacher_durations.py --summarize A.json B.json
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import sentence_shards  # benchmarks/, this script's folder
import torch
from torch import Tensor

ARMS = ("own durations", "teacher durations", "teacher rhythm at own tempo", "Piper joe")


def rounded(exact: Tensor) -> Tensor:
    """Fractional frames per phoneme -> whole frames, rounded on the running total as the stream carries them."""
    ends = torch.round(torch.cumsum(exact, 0))
    return torch.diff(ends, prepend=ends.new_zeros(1)).clamp(min=0).long()


def measure(sentences: int, shard: int, shards: int) -> dict[str, dict]:
    from sonare.data.render import phone_spans, speak
    from sonare.data.speakers import SpeakerTransform
    from sonare.eval.registry import DEFAULT_BEAM_SIZE, load_transcriber
    from sonare.eval.wer import WordErrors, utterance_errors
    from sonare.text import generate_sentences
    from sonare.text.normalize import normalize
    from sonare.tts import load_default
    from sonare.tts.acoustic import SAMPLE_RATE
    from sonare.tts.adapt import adapt_frames
    from sonare.tts.dataset import token_ids_and_durations

    streaming = load_default()
    model = streaming.model
    voice = streaming.voices["joe"]
    speaker, adaptation = voice[: model.cfg.d_speaker], voice[model.cfg.d_speaker :]
    asr = load_transcriber("whisper-base", DEFAULT_BEAM_SIZE)
    errors = {arm: WordErrors() for arm in ARMS}
    tempo: list[float] = []  # own total / teacher total, per sentence

    def render(h: Tensor, durations: Tensor) -> np.ndarray:
        n = int(durations.sum())
        frames = model.denormalize(model.decode_aligned(h, speaker[None], durations[None], n))
        frames = adapt_frames(frames, adaptation[None])
        return streaming.vocoder.render(frames[0]).numpy().astype(np.float32)

    for text in list(generate_sentences(sentences, seed=0, split="heldout"))[shard::shards]:
        text = normalize(text)
        teacher = speak("piper", "joe", 1.0, SpeakerTransform(), text, "en-us")
        duration = len(teacher.audio) / teacher.sample_rate
        ids, frames = token_ids_and_durations(teacher.text.tokens, phone_spans(teacher.timings), duration)
        ids_t, teacher_frames = torch.from_numpy(ids)[None], torch.from_numpy(frames).float()
        with torch.no_grad():
            h = model.encode(ids_t, speaker[None])
            own = torch.expm1(model.durations(h[0])).clamp(min=0)
            scaled = teacher_frames * own.sum() / teacher_frames.sum()
            audio = {
                "own durations": render(h, rounded(own)),
                "teacher durations": render(h, teacher_frames.long()),
                "teacher rhythm at own tempo": render(h, rounded(scaled)),
                "Piper joe": teacher.audio,
            }
        tempo.append(float(own.sum() / teacher_frames.sum()))
        for arm, signal in audio.items():
            rate = teacher.sample_rate if arm == "Piper joe" else SAMPLE_RATE
            errors[arm] = errors[arm] + utterance_errors(text, asr.transcribe(signal, rate))
    return {
        "arms": {arm: {"errors": e.errors, "words": e.reference_words} for arm, e in errors.items()},
        "tempo": tempo,
    }


def summarize(paths: list[str]) -> None:
    shards = [json.loads(Path(p).read_text()) for p in paths]
    tempo = [t for s in shards for t in s["tempo"]]
    print(f"{len(tempo)} sentences; own duration / teacher's: median {np.median(tempo):.3f}")
    print(f"{'rendering':<30} {'WER':>7}")
    for arm in ARMS:
        errors = sum(s["arms"][arm]["errors"] for s in shards)
        words = sum(s["arms"][arm]["words"] for s in shards)
        print(f"{arm:<30} {errors / words:7.2%}  ({errors} of {words} words)")


if __name__ == "__main__":
    sentence_shards.run(measure, summarize)
