"""Streaming synthesis: the TTS model behind the engine's session interface.

Per stream, text arrives in pieces of any size. Complete words are normalised, phonemised and queued as ids;
each engine step then, for every stream in the batch,

  1. runs the phoneme encoder over newly queued ids (a phoneme is ready once LOOKAHEAD more ids are encoded;
     a flush or the end of input releases the last ones by encoding EOS and PADs on a copy of the state),
  2. predicts the ready phonemes' durations (scaled by 1/speed) and emits word timestamps from them,
  3. decodes up to FRAMES_PER_STEP acoustic frames and renders them to PCM with the streaming vocoder.

The stream's whole context lives in fixed-size state rows (encoder SSM, decoder SSM, vocoder), so ten minutes
of speech use the memory of ten seconds; host-side queues hold only text not yet spoken.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import Tensor

from sonare.ssm import BatchState
from sonare.text.inventory import BOS_ID, EOS_ID, SPACE_ID
from sonare.tts.acoustic import HOP, SAMPLE_RATE
from sonare.tts.adapt import ADAPTATION_DIM, adapt_frames
from sonare.tts.messages import (
    AudioChunk,
    EndOfInput,
    Flush,
    FlushDone,
    SynthesisOptions,
    TextPiece,
    WordTimestamps,
)
from sonare.tts.model import TTSModel, frame_features
from sonare.tts.refiner import RefinedVocoder
from sonare.tts.vocoder import HarmonicNoiseVocoder

# Frames decoded per step at most: 32 (372 ms of audio). Per-op overhead weighs heavily on a CPU step, so a
# bigger step costs little more: one stream's real-time factor is 0.030 at 32 frames against 0.040 at 16
# (`benchmarks/tts_latency.py --frames-per-step`); 24 and 32 measured alike on a 16-stream server.
FRAMES_PER_STEP = 32
# A stream's first step decodes only this many frames (186 ms), and each later step at most as many frames as
# the stream has emitted so far (16, 16, 32, 32, ...): a burst of new streams gets its first audio from a
# narrower, cheaper batch, and each step's audio covers the time the next, wider step takes to compute. (8
# first frames were cheaper still but left too little audio buffered: streams underran at 16 concurrent.)
FIRST_STEP_FRAMES = 16
# The encoder runs just in time: a stream encodes more ids only while fewer than ENCODE_AHEAD_FRAMES frames are
# queued, at most MAX_IDS_PER_STEP at once (about 1.5 s of speech). Steps then cost about the same from first
# to last: encoding a whole sentence at once made one step of a 16-stream burst several times dearer than the
# rest, and every stream in that batch waited for it.
MAX_IDS_PER_STEP = 24
ENCODE_AHEAD_FRAMES = 2 * FRAMES_PER_STEP
# A stream's first encoder pass takes only this many ids: BOS, the look-ahead and about 8 phonemes, several
# steps' worth of frames. First audio then waits for neither the rest of the sentence nor a look-ahead release.
FIRST_PASS_IDS = 12
MAX_TEXT_CHARS = 100_000  # per stream, not yet spoken


@dataclass
class _Mark:
    """A flush or the end of input, placed after the ids queued before it."""

    after_ids: int
    flush_id: int | None  # None: end of input
    frame_end: int | None = None  # the timeline frame where its audio ends, once its last id is timed


class TTSSession:
    def __init__(self, options: SynthesisOptions, speaker: Tensor, adaptation: Tensor, language: str):
        self.options = options
        self.speaker = speaker  # (d_speaker,) the decoder's conditioning
        self.adaptation = adaptation  # (ADAPTATION_DIM,) frame transform of a cloned voice (`sonare.tts.adapt`)
        self.language = language
        self.text = ""  # received, not yet phonemised (an unfinished word)
        self.ids: collections.deque[tuple[int, int]] = collections.deque()  # (id, word) awaiting the encoder
        self.n_queued = 0  # ids ever queued (BOS included)
        self.n_encoded = 0  # ids ever encoded
        self.n_released = 0  # ids whose look-ahead is complete (their encoder output is known)
        self.unreleased: collections.deque[int] = collections.deque()  # words of ids encoded, not released
        self.marks: collections.deque[_Mark] = collections.deque()
        self.frames: collections.deque[tuple[Tensor, int, int]] = collections.deque()  # (hidden, offset, of)
        self.frames_scheduled = 0  # the timeline: frames given a duration so far
        self.frames_emitted = 0
        self.duration_carry = 0.0
        self.words: list[str] = []
        self.word_ids_left: dict[int, int] = {}
        self.word_start: dict[int, float] = {}
        self.samples_out = 0
        self.ended = False  # end of input has been fully spoken
        self.first_audio_at: float | None = None
        self._queue_ids([(BOS_ID, -1)])

    # -- inputs (engine thread) -------------------------------------------------------------------------

    def push(self, item: Any) -> None:
        if self.marks and self.marks[-1].flush_id is None:
            raise ValueError("input after the end of input")
        if isinstance(item, TextPiece):
            if len(self.text) + len(item.text) > MAX_TEXT_CHARS:
                raise ValueError(f"more than {MAX_TEXT_CHARS} characters of unspoken text")
            self.text += item.text
            self._phonemise(final=False)
        elif isinstance(item, Flush):
            self._phonemise(final=True)
            self.marks.append(_Mark(self.n_queued, item.flush_id))
        elif isinstance(item, EndOfInput):
            self._phonemise(final=True)
            self._queue_ids([(EOS_ID, -1)])  # the utterance's closing silence, as in training
            self.marks.append(_Mark(self.n_queued, None))
        else:
            raise ValueError(f"unsupported input {type(item).__name__}")

    def _phonemise(self, final: bool) -> None:
        """Queue the ids of every complete word; an unfinished word waits for its next piece."""
        from sonare.text import encode, normalize, phonemize

        cut = len(self.text) if final else max(self.text.rfind(" "), self.text.rfind("\n")) + 1
        complete, self.text = self.text[:cut], self.text[cut:]
        if not complete.strip():
            return
        items = phonemize(normalize(complete), language=self.language)
        ids, owners = encode(items)
        body = list(zip(ids[1:-1], owners[1:-1], strict=True))  # without encode's own BOS and EOS
        base = len(self.words)
        new_words: list[str] = []  # as timestamps show them: punctuation stays on the word before it
        for item in items:
            if not isinstance(item, str):
                new_words.append(item.text)
            elif new_words:
                new_words[-1] += item
        if base and new_words:  # a word break joins these words to those already queued
            body.insert(0, (SPACE_ID, -1))
        self.words.extend(new_words)
        tagged = [(i, base + w if w >= 0 else -1) for i, w in body]
        for _, w in tagged:
            if w >= 0:
                self.word_ids_left[w] = self.word_ids_left.get(w, 0) + 1
        self._queue_ids(tagged)

    def _queue_ids(self, tagged: list[tuple[int, int]]) -> None:
        self.ids.extend(tagged)
        self.n_queued += len(tagged)

    def encodable(self) -> int:
        """How many queued ids the next encoder pass may take: none while enough frames are queued, and never
        past the next mark, so a flush's look-ahead release can run on the state exactly at the mark."""
        if len(self.frames) >= ENCODE_AHEAD_FRAMES:
            return 0
        n = min(len(self.ids), MAX_IDS_PER_STEP if self.n_encoded else FIRST_PASS_IDS)
        for mark in self.marks:
            if mark.after_ids > self.n_encoded:
                return min(n, mark.after_ids - self.n_encoded)
        return n

    def needs_release(self) -> bool:
        """At a mark with ids still inside the look-ahead window."""
        return bool(self.unreleased) and any(m.after_ids == self.n_encoded > self.n_released for m in self.marks)

    # -- engine-facing ------------------------------------------------------------------------------------

    def ready(self, now: float) -> bool:
        return bool(self.ids or self.frames or self.marks)

    def frame_budget(self) -> int:
        """Frames this stream may decode in the next step (see FIRST_STEP_FRAMES)."""
        return min(FRAMES_PER_STEP, max(FIRST_STEP_FRAMES, self.frames_emitted))

    def deadline(self) -> float | None:
        if self.first_audio_at is None:
            return None
        return self.first_audio_at + self.samples_out / SAMPLE_RATE

    def finished(self) -> bool:
        return self.ended


class TTSStreamingModel:
    """The engine's view of the TTS model (name "tts")."""

    name = "tts"

    def __init__(
        self,
        model: TTSModel,
        voices: Mapping[str, Tensor],
        default_voice: str,
        vocoder: HarmonicNoiseVocoder | RefinedVocoder | None = None,
    ):
        self.model = model.eval()
        self.vocoder = vocoder or HarmonicNoiseVocoder()
        self.voices = dict(voices)
        self.default_voice = default_voice
        self.sample_rate = SAMPLE_RATE
        self.lookahead = model.cfg.lookahead

    # -- state -------------------------------------------------------------------------------------------

    def new_state(self, slots: int) -> BatchState:
        return BatchState.merge(
            {
                "enc": self.model.encoder.ssm.new_state(slots),
                "dec": self.model.decoder.ssm.new_state(slots),
                "voc": self.vocoder.new_state(slots),
            }
        )

    def open(self, options: Mapping[str, Any] | SynthesisOptions) -> TTSSession:
        if not isinstance(options, SynthesisOptions):
            raise ValueError("TTS streams take SynthesisOptions")
        if not 0.5 <= options.speed <= 2.0:
            raise ValueError("speed must be between 0.5 and 2.0")
        if not 0.0 <= options.volume <= 2.0:
            raise ValueError("volume must be between 0 and 2")
        voice = self.voice_embedding(options)
        d = self.model.cfg.d_speaker
        return TTSSession(options, voice[:d], voice[d:], _espeak_language(options.language))

    @property
    def embedding_dim(self) -> int:
        """Numbers in a voice embedding: the speaker vector, then the adaptation (`sonare.tts.adapt`)."""
        return self.model.cfg.d_speaker + ADAPTATION_DIM

    def voice_embedding(self, options: SynthesisOptions) -> Tensor:
        voice = options.voice
        if voice.embedding is not None:
            emb = torch.tensor(voice.embedding, dtype=torch.float32)
            if emb.shape != (self.embedding_dim,):
                raise ValueError(f"voice embeddings have {self.embedding_dim} numbers, got {len(emb)}")
            if not torch.isfinite(emb).all():
                raise ValueError("voice embedding has non-finite values")
            return emb
        key = voice.id or self.default_voice
        if key not in self.voices:
            raise ValueError(f"unknown voice {key!r}")
        return self.voices[key]

    # -- one batched step --------------------------------------------------------------------------------

    def step(self, state: BatchState, sessions: Sequence[TTSSession]) -> tuple[BatchState, list[list[Any]]]:
        events: list[list[Any]] = [[] for _ in sessions]
        enc, dec, voc = state.part("enc"), state.part("dec"), state.part("voc")
        released = self._encode(enc, sessions)
        self._schedule(sessions, released, events)
        self._decode(dec, voc, sessions, events)
        for i, s in enumerate(sessions):
            self._settle_marks(s, voc, i, events[i])
        return BatchState.merge({"enc": enc, "dec": dec, "voc": voc}), events

    def _encode(self, enc: BatchState, sessions: Sequence[TTSSession]) -> dict[int, list[tuple[Tensor, int]]]:
        """Run the encoder over queued ids; returns, per session, the (hidden, word) of released ids."""
        released: dict[int, list[tuple[Tensor, int]]] = {}
        k = self.lookahead
        rows = [i for i, s in enumerate(sessions) if s.encodable()]
        if rows:
            take = [sessions[i].encodable() for i in rows]
            ids = torch.zeros(len(rows), max(take), dtype=torch.long)
            for r, (i, n) in enumerate(zip(rows, take, strict=True)):
                s = sessions[i]
                batch = [s.ids.popleft() for _ in range(n)]
                ids[r, :n] = torch.tensor([b[0] for b in batch])
                s.unreleased.extend(b[1] for b in batch)
            idx = torch.tensor(rows)
            h, new = self.model.encoder(ids, self._speakers(sessions, rows), enc.gather(idx), torch.tensor(take))
            enc.scatter_(idx, new)
            for r, (i, n) in enumerate(zip(rows, take, strict=True)):
                s = sessions[i]
                # the output at stream position p stands for id p - k; skip ids a flush already released
                first = min(n, max(0, s.n_released + k - s.n_encoded))
                s.n_encoded += n
                released[i] = [(h[r, p], s.unreleased.popleft()) for p in range(first, n)]
                s.n_released += n - first
        # At a flush or the end, EOS/PADs on a copy of the state release the ids inside the look-ahead.
        closing = [i for i, s in enumerate(sessions) if s.needs_release()]
        if closing:
            idx = torch.tensor(closing)
            pads = torch.zeros(len(closing), k, dtype=torch.long)
            h, _ = self.model.encoder(pads, self._speakers(sessions, closing), enc.gather(idx))
            for r, i in enumerate(closing):
                s = sessions[i]
                m = len(s.unreleased)
                released.setdefault(i, []).extend((h[r, k - m + j], s.unreleased.popleft()) for j in range(m))
                s.n_released += m
        return released

    @staticmethod
    def _speakers(sessions: Sequence[TTSSession], rows: list[int]) -> Tensor:
        return torch.stack([sessions[i].speaker for i in rows])

    def _schedule(
        self,
        sessions: Sequence[TTSSession],
        released: dict[int, list[tuple[Tensor, int]]],
        events: list[list[Any]],
    ) -> None:
        """Durations for newly released ids; word timestamps once a word's last phoneme is timed."""
        order = [i for i, items in released.items() if items]
        if not order:
            return
        hidden = torch.stack([h for i in order for h, _ in released[i]])
        predicted = torch.expm1(self.model.durations(hidden)).clamp(min=0).tolist()
        k = 0
        for i in order:
            s = sessions[i]
            stamps = WordTimestamps()
            first_id = s.n_released - len(released[i])
            for j, (h, word) in enumerate(released[i]):
                exact = predicted[k] / s.options.speed + s.duration_carry
                k += 1
                n = int(round(exact))
                s.duration_carry = exact - n
                if word >= 0:
                    s.word_start.setdefault(word, s.frames_scheduled * HOP / SAMPLE_RATE)
                s.frames.extend((h, f, n) for f in range(n))
                s.frames_scheduled += n
                if word >= 0:
                    s.word_ids_left[word] -= 1
                    if s.word_ids_left[word] == 0:
                        stamps.words.append(s.words[word])
                        stamps.start.append(s.word_start.pop(word))
                        stamps.end.append(s.frames_scheduled * HOP / SAMPLE_RATE)
                for mark in s.marks:
                    if mark.frame_end is None and mark.after_ids <= first_id + j + 1:
                        mark.frame_end = s.frames_scheduled
            if stamps.words and s.options.word_timestamps:
                events[i].append(stamps)

    def _decode(
        self, dec: BatchState, voc: BatchState, sessions: Sequence[TTSSession], events: list[list[Any]]
    ) -> None:
        rows = [i for i, s in enumerate(sessions) if s.frames]
        if not rows:
            return
        take = [min(len(sessions[i].frames), sessions[i].frame_budget()) for i in rows]
        width = max(take)  # the batch is only as wide as its widest row: new streams alone make a cheap step
        d_text = self.model.cfg.d_text
        hidden = torch.zeros(len(rows), width, d_text)
        offsets = torch.zeros(len(rows), width)
        durations = torch.ones(len(rows), width)
        for r, (i, n) in enumerate(zip(rows, take, strict=True)):
            items = [sessions[i].frames.popleft() for _ in range(n)]
            hidden[r, :n] = torch.stack([h for h, _, _ in items])
            offsets[r, :n] = torch.tensor([f for _, f, _ in items], dtype=torch.float32)
            durations[r, :n] = torch.tensor([of for _, _, of in items], dtype=torch.float32)
        cond = torch.cat([hidden, frame_features(offsets, durations)], dim=-1)
        idx = torch.tensor(rows)
        lengths = torch.tensor(take)
        out, new = self.model.decoder(cond, self._speakers(sessions, rows), dec.gather(idx), lengths)
        dec.scatter_(idx, new)
        frames = self.model.denormalize(out)  # (R, F, FRAME_DIM)
        frames = adapt_frames(frames, torch.stack([sessions[i].adaptation for i in rows]))

        audio, vstate = self.vocoder.run(frames, voc.gather(idx), lengths)
        voc.scatter_(idx, vstate)
        now = time.monotonic()
        for r, (i, n) in enumerate(zip(rows, take, strict=True)):
            s = sessions[i]
            s.frames_emitted += n
            self._emit(s, audio[r, : n * HOP].numpy(), events[i])
            if s.first_audio_at is None:
                s.first_audio_at = now

    @staticmethod
    def _emit(s: TTSSession, pcm: np.ndarray, events: list[Any]) -> None:
        samples = np.clip(pcm * s.options.volume, -1.0, 1.0).astype(np.float32)
        events.append(AudioChunk(samples, SAMPLE_RATE, s.samples_out / SAMPLE_RATE))
        s.samples_out += len(samples)

    def _settle_marks(self, s: TTSSession, voc: BatchState, row: int, events: list[Any]) -> None:
        """Report flushes, and end the stream, once everything before the mark has been spoken."""
        while s.marks:
            mark = s.marks[0]
            if mark.frame_end is None and mark.after_ids <= s.n_released:
                mark.frame_end = s.frames_scheduled  # nothing new since the last mark
            if mark.frame_end is None or s.frames_emitted < mark.frame_end:
                return
            s.marks.popleft()
            if mark.flush_id is not None:
                events.append(FlushDone(mark.flush_id))
            else:
                owed = self.vocoder.pending(voc.gather(torch.tensor([row])))  # this row only: it may run a model
                self._emit(s, owed[0].numpy(), events)
                s.ended = True

    # -- offline use -------------------------------------------------------------------------------------

    def stream(self, pieces: Iterable[str], options: SynthesisOptions) -> Iterator[Any]:
        """Events for text arriving in `pieces`, stepping one stream without the engine (CLI, evaluation)."""
        with torch.inference_mode():
            session = self.open(options)
            state = self.new_state(1)
            for piece in pieces:
                session.push(TextPiece(piece))
                while session.ids or session.frames:
                    state, (events,) = self.step(state, [session])
                    yield from events
            session.push(EndOfInput())
            while not session.finished():
                state, (events,) = self.step(state, [session])
                yield from events

    def synthesize(self, text: str, options: SynthesisOptions) -> tuple[np.ndarray, list[WordTimestamps]]:
        """Whole-text synthesis through the streaming path: audio and word timestamps."""
        audio, stamps = [], []
        for event in self.stream([text], options):
            if isinstance(event, AudioChunk):
                audio.append(event.pcm)
            elif isinstance(event, WordTimestamps):
                stamps.append(event)
        return (np.concatenate(audio) if audio else np.zeros(0, np.float32)), stamps


def _espeak_language(language: str) -> str:
    """Cartesia language codes ("en") to espeak-ng voices ("en-us")."""
    return {"en": "en-us"}.get(language, language)
