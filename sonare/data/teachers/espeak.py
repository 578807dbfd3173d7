"""espeak-ng through the library bundled in the `espeakng-loader` wheel (ctypes).

espeak-ng keeps global state, and `sonare.text` drives the same library for phonemisation, so this
engine loads its own private copy of the shared object: two copies never see each other's voice or
callback. Phoneme and word timings come from espeak-ng's synthesis events; with the IPA
initialisation flag the phoneme events carry IPA.
"""

from __future__ import annotations

import ctypes
import shutil
import tempfile
import threading
from pathlib import Path

import numpy as np

from sonare.data.teachers import Timing, Utterance

_AUDIO_OUTPUT_SYNCHRONOUS = 2
_INITIALIZE_PHONEME_EVENTS = 0x0001
_INITIALIZE_PHONEME_IPA = 0x0002
_INITIALIZE_DONT_EXIT = 0x8000
_CHARS_UTF8 = 1
_POS_CHARACTER = 1
_RATE = 1
_EVENT_END = 0
_EVENT_WORD = 1
_EVENT_PHONEME = 7
_DEFAULT_WPM = 175

# espeak-ng English voices (by file name; "en" is British English), close enough to share the
# `sonare.text` en-us phoneme inventory, and the voice variants espeak-ng ships (each a different
# synthetic speaker), less the ones that are not a speaking voice (robots, a demon, unvoiced breath).
ENGLISH_LANGUAGES = (
    "en-us",
    "en",
    "en-gb-scotland",
    "en-gb-x-rp",
    "en-gb-x-gbclan",
    "en-gb-x-gbcwmd",
    "en-029",
    "en-us-nyc",
)
VARIANTS = (
    "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8",
    "f1", "f2", "f3", "f4", "f5",
    "klatt", "klatt2", "klatt3", "klatt4", "klatt5", "klatt6", "croak", "whisper",
    "Alex", "Alicia", "Andrea", "Andy", "Annie", "AnxiousAndy", "Denis", "Diogo", "Gene", "Gene2", "Henrique",
    "Hugo", "Jacky", "Lee", "Marco", "Mario", "Michael", "Mike", "Mr serious", "Nguyen", "Reed", "RicishayMax",
    "Storm", "Tweaky", "adam", "anika", "announcer", "antonio", "aunty", "belinda", "benjamin", "boris", "david",
    "ed", "edward", "edward2", "grandma", "grandpa", "gustave", "ian", "iven", "iven2", "iven3", "iven4", "john",
    "kaukovalta", "linda", "marcelo", "max", "michel", "miguel", "mike2", "norbert", "pablo", "paul", "pedro",
    "quincy", "rob", "robert", "sandro", "shelby", "steph", "steph2", "steph3", "travis", "victor", "zac",
)  # fmt: skip


class _Event(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int),
        ("unique_identifier", ctypes.c_uint),
        ("text_position", ctypes.c_int),
        ("length", ctypes.c_int),
        ("audio_position", ctypes.c_int),
        ("sample", ctypes.c_int),
        ("user_data", ctypes.c_void_p),
        ("id", ctypes.c_char * 8),
    ]


_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.POINTER(_Event))


class EspeakTeacher:
    name = "espeak"

    def __init__(self) -> None:
        import espeakng_loader

        # A private copy of the library has its own globals (see the module docstring).
        self._dir = tempfile.TemporaryDirectory(prefix="sonare-espeak-")
        private = Path(self._dir.name) / "libespeak-ng-teacher.so"
        shutil.copyfile(espeakng_loader.get_library_path(), private)
        lib = ctypes.CDLL(str(private))
        lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        lib.espeak_SetSynthCallback.argtypes = [_CALLBACK]
        lib.espeak_Synth.argtypes = [
            ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_int, ctypes.c_uint,
            ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p,
        ]  # fmt: skip
        lib.espeak_Synchronize.argtypes = []
        options = _INITIALIZE_PHONEME_EVENTS | _INITIALIZE_PHONEME_IPA | _INITIALIZE_DONT_EXIT
        rate = lib.espeak_Initialize(_AUDIO_OUTPUT_SYNCHRONOUS, 100, espeakng_loader.get_data_path().encode(), options)
        if rate <= 0:
            raise RuntimeError("espeak-ng failed to initialise")
        self.sample_rate = int(rate)
        self._lib = lib
        self._lock = threading.Lock()
        self._samples: list[np.ndarray] = []
        self._events: list[tuple[int, int, int, int, bytes]] = []
        self._callback = _CALLBACK(self._on_audio)  # kept referenced: the library holds the pointer
        lib.espeak_SetSynthCallback(self._callback)
        variants_dir = Path(espeakng_loader.get_data_path()) / "voices" / "!v"
        self._variants = [v for v in VARIANTS if (variants_dir / v).exists()]

    def voices(self) -> list[str]:
        return [language for language in ENGLISH_LANGUAGES] + [
            f"{language}+{variant}" for language in ENGLISH_LANGUAGES for variant in self._variants
        ]

    def _on_audio(self, wav, count, events) -> int:
        if count > 0:
            self._samples.append(np.ctypeslib.as_array(wav, shape=(count,)).copy())
        i = 0
        while events[i].type != _EVENT_END:
            e = events[i]
            self._events.append((e.type, e.text_position, e.length, e.sample, bytes(e.id)))
            i += 1
        return 0

    def synthesize(self, text: str, voice: str = "en-us", rate: float = 1.0) -> Utterance:
        encoded = text.encode("utf-8")
        with self._lock:
            if self._lib.espeak_SetVoiceByName(voice.encode()) != 0:
                raise ValueError(f"espeak-ng has no voice {voice!r}")
            self._lib.espeak_SetParameter(_RATE, round(_DEFAULT_WPM * rate), 0)
            self._samples, self._events = [], []
            buffer = ctypes.create_string_buffer(encoded)
            status = self._lib.espeak_Synth(buffer, len(encoded) + 1, 0, _POS_CHARACTER, 0, _CHARS_UTF8, None, None)
            if status != 0:
                raise RuntimeError(f"espeak_Synth failed with status {status}")
            self._lib.espeak_Synchronize()
            samples, events = self._samples, self._events
        audio = (np.concatenate(samples) if samples else np.zeros(0, np.int16)).astype(np.float32) / 32768.0
        return Utterance(audio, self.sample_rate, *self._timings(events, encoded, len(audio)))

    def _timings(self, events, encoded: bytes, total: int) -> tuple[list[Timing], list[Timing]]:
        """Turn start events into spans: each phoneme ends where the next one starts.

        espeak-ng marks pauses with a phoneme event whose label is empty or "_"; they end the
        preceding phoneme and are dropped. Word events give the word's text position; a word
        ends where its last phoneme ends.
        """
        sr = self.sample_rate
        starts: list[tuple[int, str]] = []
        word_starts: list[tuple[int, str]] = []
        for kind, text_position, length, sample, ident in events:
            if kind == _EVENT_PHONEME:
                starts.append((sample, ident.split(b"\0")[0].decode("utf-8", "replace")))
            elif kind == _EVENT_WORD:
                word = encoded[text_position - 1 : text_position - 1 + length].decode("utf-8", "replace")
                word_starts.append((sample, word))
        starts.append((total, ""))
        phones = [
            Timing(label, s / sr, e / sr)
            for (s, label), (e, _) in zip(starts, starts[1:], strict=False)
            if label.strip("_ ") and e > s
        ]
        words = []
        for i, (sample, word) in enumerate(word_starts):
            next_start = word_starts[i + 1][0] if i + 1 < len(word_starts) else total
            inside = [p for p in phones if sample / sr <= p.start < next_start / sr]
            if inside:
                words.append(Timing(word, inside[0].start, inside[-1].end))
        return phones, words
