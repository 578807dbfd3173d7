"""TTS evaluation: intelligibility (independent ASR WER), predicted quality (DNSMOS) and speed
(real-time factor, time to first audio) of any streaming synthesizer over a list of sentences."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from tqdm import tqdm

from sonare.eval.latency import StreamTiming, percentiles, time_stream
from sonare.eval.mos import DnsMos, dnsmos
from sonare.eval.registry import StreamingSynthesizer, Transcriber
from sonare.eval.wer import WordErrors, utterance_errors

WARM_UP_TEXT = "This sentence warms the synthesizer up before timing starts."


@dataclass(frozen=True)
class TtsUtterance:
    text: str
    timing: StreamTiming
    transcripts: dict[str, str]
    errors: dict[str, WordErrors]
    mos: DnsMos | None  # None when the synthesizer produced no audio

    def as_dict(self) -> dict[str, object]:
        return {
            "text": self.text,
            **self.timing.as_dict(),
            "transcripts": self.transcripts,
            "wer": {asr: e.as_dict() for asr, e in self.errors.items()},
            "dnsmos": self.mos.as_dict() if self.mos else None,
        }


@dataclass
class TtsReport:
    utterances: list[TtsUtterance] = field(default_factory=list)

    def summary(self) -> dict[str, float | int]:
        """Corpus WER per ASR, mean DNSMOS, overall RTF (total compute / total audio) and the
        distribution of time to first audio, in seconds."""
        out: dict[str, float | int] = {"sentences": len(self.utterances)}
        asr_names = self.utterances[0].errors if self.utterances else {}
        for asr in asr_names:
            total = sum((u.errors[asr] for u in self.utterances), WordErrors())
            out[f"wer_{asr}"] = total.wer
        scored = [u.mos for u in self.utterances if u.mos is not None]
        out["silent_outputs"] = len(self.utterances) - len(scored)
        for key in ("ovrl", "sig", "bak", "p808"):
            out[f"dnsmos_{key}"] = float(np.mean([getattr(m, key) for m in scored])) if scored else float("nan")
        compute = sum(u.timing.total_time for u in self.utterances)
        audio = sum(u.timing.audio_seconds for u in self.utterances)
        out["rtf"] = compute / audio if audio else float("nan")
        ttfa = percentiles([u.timing.time_to_first_audio for u in self.utterances], (50, 90))
        out["ttfa_p50"], out["ttfa_p90"] = ttfa["p50"], ttfa["p90"]
        return out


def evaluate_tts(
    synthesizer: StreamingSynthesizer,
    sentences: Sequence[str],
    transcribers: Mapping[str, Transcriber],
    show_progress: bool = False,
) -> TtsReport:
    """Synthesize each sentence (timed), then transcribe and score it.

    One untimed synthesis first warms the engine so that model loading and first-call setup do
    not count as latency.
    """
    for _ in synthesizer.stream(WARM_UP_TEXT):
        pass
    report = TtsReport()
    for text in tqdm(sentences, desc="tts", unit="sentence", disable=not show_progress):
        timing, audio = time_stream(lambda text=text: synthesizer.stream(text), synthesizer.sample_rate)
        rate = synthesizer.sample_rate
        transcripts = {name: asr.transcribe(audio, rate) if audio.size else "" for name, asr in transcribers.items()}
        errors = {name: utterance_errors(text, hyp) for name, hyp in transcripts.items()}
        mos = dnsmos(audio, rate) if audio.size else None
        report.utterances.append(TtsUtterance(text, timing, transcripts, errors, mos))
    return report
