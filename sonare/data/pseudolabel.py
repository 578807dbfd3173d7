"""Transcripts for untranscribed recordings, from two independent Whisper models that must agree.

A team's call recordings, or the voices `sonare.data.found_speech` gathers, come without transcripts. Each clip
is transcribed by Whisper base and Whisper tiny.en (`sonare.eval.asr`, offline); a clip is kept only when both
read the same words (case, punctuation and hyphens aside), since two models of different size rarely make
the same mistake, and a clip that reads as nothing or as bracketed sound ("[laughs]") is no speech to
learn words from. The kept clips are written in the LJSpeech layout that a corpus section of kind
`recordings` reads (`sonare.data.recordings`), one folder per voice:

    sonare data label runs/found-speech --out runs/found-speech-labelled
    # in: runs/found-speech/<voice>/<clip>.(wav|flac|ogg|mp3)
    # out: runs/found-speech-labelled/<voice>/metadata.csv + wavs/<clip>.wav; transcripts.jsonl (every clip)

Both transcripts of every clip go to `transcripts.jsonl` as they are made, so an interrupted run resumes
where it stopped and the kept set can be audited. The transcripts are Whisper's, not a person's: on the real
speech here that people transcribed, the labeller keeps 565 of 708 clips and its transcripts of them are 2.0%
WER from the people's (sentences 0-1.5%, isolated words 2-9%; `benchmarks/pseudolabel_accuracy.py`,
docs/benchmarks.md, STT, session 54).
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from tqdm import tqdm

from sonare.audio.io import load_audio, save_audio
from sonare.data.recordings import METADATA
from sonare.eval.asr import WHISPER_RATE, WhisperTranscriber

AUDIO_SUFFIXES = (".wav", ".flac", ".ogg", ".mp3", ".opus")
TRANSCRIPTS = "transcripts.jsonl"
READERS = ("whisper-base", "whisper-tiny")
MIN_SECONDS = 0.25  # shorter clips are clicks and breaths more often than words
WINDOW_SECONDS = 28.0  # clips read together fill one Whisper window (30 s) with a margin
GAP_SECONDS = 1.0  # silence between clips read together, long enough for Whisper to end a phrase


def words(text: str) -> list[str]:
    """A transcript's words for comparing two readings: lower case, hyphens as spaces, no punctuation."""
    return re.sub(r"[^a-z0-9' ]", "", text.lower().replace("-", " ")).split()


def agreed(readings: dict[str, str]) -> str | None:
    """The first reader's transcript when every reader read the same words and they are words; else None."""
    texts = [readings[name] for name in READERS]
    if any(not t.isascii() or re.search(r"[\[\]()*♪]", t) for t in texts):
        return None
    first = words(texts[0])
    if not first or any(words(t) != first for t in texts[1:]):
        return None
    return texts[0]


def _clips(in_dir: Path) -> list[tuple[str, Path]]:
    """(voice, file) for every audio file one folder down, in name order.

    ValueError when there are none, or when two files of a voice share a name but not its suffix: a clip is
    known by its name without suffix (in the transcripts and the dataset), so one would overwrite the other."""
    folders = sorted(p for p in in_dir.iterdir() if p.is_dir()) if in_dir.is_dir() else []
    clips = [(f.name, file) for f in folders for file in sorted(f.iterdir()) if file.suffix.lower() in AUDIO_SUFFIXES]
    if not clips:
        raise ValueError(f"{in_dir}: no audio clips in a folder directly under it (one folder per voice)")
    seen: dict[tuple[str, str], Path] = {}
    for voice, file in clips:
        if (other := seen.setdefault((voice, file.stem), file)) != file:
            raise ValueError(f"{other} and {file}: two clips of one name; rename or remove one")
    return clips


def _packs(clips: list[tuple[str, Path]]) -> Iterator[list[tuple[str, Path, np.ndarray]]]:
    """Consecutive clips of one voice, loaded at Whisper's rate, as many as fit one Whisper window together."""
    pack: list[tuple[str, Path, np.ndarray]] = []
    length = 0.0
    for voice, file in clips:
        audio, _rate = load_audio(file, WHISPER_RATE)
        seconds = len(audio) / WHISPER_RATE + GAP_SECONDS
        if pack and (voice != pack[0][0] or length + seconds > WINDOW_SECONDS):
            yield pack
            pack, length = [], 0.0
        pack.append((voice, file, audio))
        length += seconds
    if pack:
        yield pack


def _read_pack(
    readers: dict[str, WhisperTranscriber], pack: list[tuple[str, Path, np.ndarray]]
) -> list[dict[str, str]]:
    """Each reader's words for each clip of a pack, read as one recording with silence between the clips.

    Whisper's encoder costs the same for one word as for 30 s, so reading a window of clips at once is many
    times faster than one by one; a word belongs to the clip its middle falls in (gaps split halfway)."""
    if not pack:
        return []
    gap = np.zeros(int(GAP_SECONDS * WHISPER_RATE), np.float32)
    pieces, bounds, t = [gap[: len(gap) // 2]], [], GAP_SECONDS / 2
    for _voice, _file, audio in pack:
        bounds.append(t + len(audio) / WHISPER_RATE + GAP_SECONDS / 2)
        pieces += [audio, gap]
        t += len(audio) / WHISPER_RATE + GAP_SECONDS
    recording = np.concatenate(pieces)
    readings: list[dict[str, str]] = [{} for _ in pack]
    for name, reader in readers.items():
        said: list[list[str]] = [[] for _ in pack]
        for word, start, end in reader.timed_words(recording, WHISPER_RATE):
            said[min(bisect.bisect(bounds, (start + end) / 2), len(pack) - 1)].append(word)
        for reading, clip_words in zip(readings, said, strict=True):
            reading[name] = " ".join(clip_words)
    return readings


def label(in_dir: str | Path, out_dir: str | Path, threads: int = 2) -> tuple[int, int, float]:
    """Transcribe every clip (resuming), write the agreed ones; returns (kept, clips, kept seconds)."""
    src, out = Path(in_dir), Path(out_dir)
    clips = _clips(src)
    out.mkdir(parents=True, exist_ok=True)
    log = out / TRANSCRIPTS
    done = {}
    if log.exists():
        done = {(r["voice"], r["clip"]): r for r in map(json.loads, log.read_text().splitlines())}
    todo = [(voice, file) for voice, file in clips if (voice, file.stem) not in done]
    if todo:
        readers = {name: WhisperTranscriber(name, cpu_threads=threads) for name in READERS}
        with log.open("a") as f, tqdm(total=len(todo), desc="transcribing", unit="clip") as bar:
            for pack in _packs(todo):
                audible = [clip for clip in pack if len(clip[2]) >= MIN_SECONDS * WHISPER_RATE]
                heard = dict(zip([file for _, file, _ in audible], _read_pack(readers, audible), strict=True))
                for voice, file, audio in pack:
                    readings = heard.get(file, dict.fromkeys(READERS, ""))
                    record = {"voice": voice, "clip": file.stem, "seconds": round(len(audio) / WHISPER_RATE, 3)}
                    done[(voice, file.stem)] = {**record, **readings}
                    f.write(json.dumps(done[(voice, file.stem)]) + "\n")
                f.flush()
                bar.update(len(pack))
    return _write_dataset(out, clips, done)


def _write_dataset(
    out: Path, clips: list[tuple[str, Path]], done: dict[tuple[str, str], dict]
) -> tuple[int, int, float]:
    kept, seconds = 0, 0.0
    by_voice: dict[str, list[tuple[Path, str]]] = {}
    for voice, file in clips:
        text = agreed(done[(voice, file.stem)])
        if text is not None:
            by_voice.setdefault(voice, []).append((file, text))
    for voice, items in by_voice.items():
        folder = out / voice
        (folder / "wavs").mkdir(parents=True, exist_ok=True)
        lines = []
        for file, text in items:
            audio, rate = load_audio(file)
            save_audio(folder / "wavs" / f"{file.stem}.wav", audio, rate)
            lines.append(f"{file.stem}|{' '.join(text.replace('|', ' ').split())}\n")
            kept += 1
            seconds += len(audio) / rate
        (folder / METADATA).write_text("".join(lines), encoding="utf-8")
    return kept, len(clips), seconds
