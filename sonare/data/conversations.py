"""One speaker's side of a conversation, for training and testing end-of-turn detection.

A conversation is a few turns. Inside a turn the speaker may pause without having finished (a
"hold"): after a conjunction ("... and"), in the middle of a list ("eggs, milk,"), while reading
out a number ("my number is ... five five five ..."), or after a filler ("um"). Between turns the
pause is an "end_of_turn". The two kinds of pause are drawn from overlapping length ranges, so
the silence alone cannot tell them apart; the words and the intonation mostly can (a hold inside
a sentence is read with continuation punctuation, a turn ends with a full stop or question mark).
A turn of several sentences holds between them, after a complete sentence: the hard case.

The manifest record lists word and phone timings and every pause as {start, end, kind}, measured
from the end of the last word to the start of the next; the final pause runs to the end of the
audio. A hold also says whether it follows a complete sentence (`after_sentence`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from sonare.audio.io import save_audio
from sonare.audio.resample import resample
from sonare.data.augment import SAMPLE_RATE, apply_acoustic, sample_acoustic
from sonare.data.manifest import ends_sentence
from sonare.data.render import normalize_level, phone_spans, speak
from sonare.data.speakers import SpeakerTransform, sample_transform
from sonare.data.teachers import Timing
from sonare.data.timings import WORD_BREAK

HOLD = "hold"
END_OF_TURN = "end_of_turn"
CONJUNCTIONS = ("and", "but", "so", "because", "or", "then", "which")
FILLERS = ("um", "uh", "so", "well", "hmm", "you know")
NUMBER_LEADS = ("my number is", "the number is", "my account number is", "the code is", "my zip code is")
DIGITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
FADE_SECONDS = 0.01


def _hold_text(segment: str) -> str:
    """Text read before a hold ends in a comma, which teachers speak with continuation intonation."""
    return re.sub(r"[\s.,;:!?]*$", "", segment) + ","


def _final_text(segment: str) -> str:
    segment = segment.rstrip()
    return segment if segment[-1:] in ".?!" else re.sub(r"[,;:]*$", "", segment) + "."


def _split_at_conjunction(sentence: str, rng: np.random.Generator) -> list[str] | None:
    words = sentence.split()
    cuts = [i for i, w in enumerate(words[1:-2], start=1) if w.lower().strip(",") in CONJUNCTIONS]
    if not cuts:
        return None
    i = int(rng.choice(cuts))
    return [" ".join(words[: i + 1]), " ".join(words[i + 1 :])]


def _split_mid_list(sentence: str, rng: np.random.Generator) -> list[str] | None:
    cuts = [m.end() for m in re.finditer(r",\s", sentence) if 3 < m.end() < len(sentence) - 6]
    if not cuts:
        return None
    i = int(rng.choice(cuts))
    return [sentence[:i], sentence[i:]]


def _number_turn(rng: np.random.Generator) -> list[str]:
    groups = [3, 3, 4] if rng.random() < 0.6 else [int(rng.integers(2, 5)) for _ in range(int(rng.integers(2, 4)))]
    spoken = [" ".join(DIGITS[int(d)] for d in rng.integers(0, 10, size=g)) for g in groups]
    return [str(rng.choice(NUMBER_LEADS)).capitalize(), *spoken]


def plan_turn(sentences: list[str], rng: np.random.Generator, hold_prob: float) -> list[tuple[str, str]]:
    """Segments of one turn as (text to read, kind of the pause after it)."""
    sentence = sentences[0]
    pieces: list[str] | None = [sentence]
    how = "none"
    if rng.random() < hold_prob:
        how = str(rng.choice(["conjunction", "list", "number", "filler"]))
        if how == "conjunction":
            pieces = _split_at_conjunction(sentence, rng) or _split_mid_list(sentence, rng)
        elif how == "list":
            pieces = _split_mid_list(sentence, rng) or _split_at_conjunction(sentence, rng)
        elif how == "number":
            pieces = _number_turn(rng)
        else:
            pieces = None
        if pieces is None:  # filler, or nothing to split: hesitate before the sentence
            pieces = [str(rng.choice(FILLERS)).capitalize(), sentence]
    texts = [_hold_text(p) for p in pieces[:-1]] + [_final_text(pieces[-1])]
    if how != "number":  # a number read out ends its turn
        # Further sentences follow a pause that is still a hold; each keeps its own final
        # punctuation, as a speaker who stops after a complete sentence and goes on does.
        texts += [_final_text(extra) for extra in sentences[1:]]
    return [(t, HOLD) for t in texts[:-1]] + [(texts[-1], END_OF_TURN)]


def plan_conversations(config, section):
    from sonare.data.build import audio_path, item_rng, section_sentences, speaker_id
    from sonare.text import normalize

    options = section.conversation
    sentences = section_sentences(config, section)
    speakers = options["speakers"]
    cursor = 0
    index = 0
    while cursor < len(sentences):
        rng = item_rng(config.seed, section.name, index)
        group = speakers[int(rng.integers(len(speakers)))]
        voice = str(rng.choice(group["voices"]))
        transform = sample_transform(rng, group["transform"]) if group.get("transform") else SpeakerTransform()
        segments: list[tuple[str, str]] = []
        for _ in range(int(rng.integers(options["turns"][0], options["turns"][1] + 1))):
            if cursor >= len(sentences):  # the section's sentences ran out: the last conversation is shorter
                break
            count = int(
                rng.integers(
                    options.get("sentences_per_turn", [1, 1])[0],
                    options.get("sentences_per_turn", [1, 1])[1] + 1,
                )
            )
            segments += plan_turn(sentences[cursor : cursor + count], rng, options["hold_prob"])
            cursor += count
        pauses = [
            round(float(rng.uniform(*options["hold_pause" if kind == HOLD else "end_pause"])), 3)
            for _, kind in segments
        ]
        item_id = f"{section.name}-{index:06d}"
        yield {
            "kind": "conversation",
            "id": item_id,
            "section": section.name,
            "audio": audio_path(section, item_id, index),
            "segments": [{"text": t, "normalized": normalize(t), "pause_after": kind} for t, kind in segments],
            "pauses": pauses,
            "lead": round(float(rng.uniform(0.2, 1.0)), 3),
            "speaker": speaker_id(group["teacher"], voice, transform),
            "teacher": group["teacher"],
            "voice": voice,
            "rate": round(float(rng.uniform(*group.get("rate", [1.0, 1.0]))), 3),
            "transform": transform.to_dict(),
            "augment": sample_acoustic(rng, options.get("acoustic", {})),
            "language": config.language,
            "split": section.split,
            "tasks": section.tasks,
        }
        index += 1


def _fade(audio: np.ndarray) -> np.ndarray:
    n = min(len(audio) // 2, int(FADE_SECONDS * SAMPLE_RATE))
    if n:
        ramp = np.linspace(0.0, 1.0, n, dtype=np.float32)
        audio = audio.copy()
        audio[:n] *= ramp
        audio[-n:] *= ramp[::-1]
    return audio


def render_conversation(spec: dict[str, Any], corpus_dir: str) -> dict[str, Any]:
    transform = SpeakerTransform.from_dict(spec["transform"])
    pieces = [np.zeros(int(spec["lead"] * SAMPLE_RATE), dtype=np.float32)]
    position = spec["lead"]
    tokens: list[str] = []
    phones: list[Timing] = []
    words: list[dict[str, Any]] = []
    pauses: list[dict[str, Any]] = []
    for segment, pause in zip(spec["segments"], spec["pauses"], strict=True):
        speech = speak(spec["teacher"], spec["voice"], spec["rate"], transform, segment["normalized"], spec["language"])
        audio = resample(speech.audio, speech.sample_rate, SAMPLE_RATE)
        # Keep exactly the speech, from its first phoneme to its last: pauses are then exact.
        first, last = speech.timings[0].start, speech.timings[-1].end
        audio = _fade(audio[int(first * SAMPLE_RATE) : int(np.ceil(last * SAMPLE_RATE))])
        offset = position - first
        if tokens:
            tokens.append(WORD_BREAK)
            phones.append(Timing(WORD_BREAK, phones[-1].end, position))
        tokens += speech.text.tokens
        phones += [Timing(t.label, t.start + offset, t.end + offset) for t in speech.timings]
        words += [
            {
                "word": w,
                "start": round(speech.timings[a].start + offset, 4),
                "end": round(speech.timings[b - 1].end + offset, 4),
            }
            for w, a, b in speech.text.words
        ]
        pieces.append(audio)
        position += len(audio) / SAMPLE_RATE
        labelled = {"start": round(position, 4), "end": round(position + pause, 4), "kind": segment["pause_after"]}
        if segment["pause_after"] == HOLD:
            # Scored apart: a hold after a complete sentence is heard exactly as an end of turn until the speaker
            # goes on, while one mid-sentence (after "and", a list item, a filler, some digits) can be told apart.
            labelled["after_sentence"] = ends_sentence(segment["text"])
        pauses.append(labelled)
        pieces.append(np.zeros(int(round(pause * SAMPLE_RATE)), dtype=np.float32))
        position += pause
    audio = normalize_level(np.concatenate(pieces), SAMPLE_RATE)
    audio = apply_acoustic(audio, spec["augment"])
    save_audio(Path(corpus_dir) / spec["audio"], audio, SAMPLE_RATE)
    duration = len(audio) / SAMPLE_RATE
    pauses[-1]["end"] = round(duration, 4)
    return {
        "id": spec["id"],
        "section": spec["section"],
        "audio": spec["audio"],
        "text": " ".join(s["text"] for s in spec["segments"]),
        "normalized": " ".join(s["normalized"] for s in spec["segments"]),
        "phonemes": tokens,
        "words": words,
        "phones": phone_spans([Timing(t.label, min(t.start, duration), min(t.end, duration)) for t in phones]),
        "pauses": pauses,
        "speaker": spec["speaker"],
        "teacher": spec["teacher"],
        "voice": spec["voice"],
        "rate": spec["rate"],
        "transform": spec["transform"],
        "augment": spec["augment"],
        "language": spec["language"],
        "duration": round(duration, 4),
        "sample_rate": SAMPLE_RATE,
        "split": spec["split"],
        "tasks": spec["tasks"],
    }
