"""IPA phonemes per word from espeak-ng, loaded from the `espeakng-loader` wheel.

Text is split into words and punctuation first (punctuation drives prosody, so it is kept as
tokens), then each clause between punctuation marks is phonemised in one call so that espeak-ng
sees the words in context (English "the" before a vowel, French liaison, ...). espeak-ng joins
some unstressed words into one phoneme word ("in the" -> "ɪnðə") and expands others into several
("42" -> "fˈɔːɹɾi tˈuː"); the clause's phonemes are then mapped back onto the written words by
aligning them with each word phonemised on its own.

Phoneme tokens. espeak-ng is asked for IPA with a tie bar (U+0361) inside each multi-letter
phoneme, so its own phoneme segmentation survives: "t͡ʃ", "a͡ɪ", "o͡ʊ" are single tokens. A token is
one base character plus any combining marks (nasal, dental, syllabic ...) plus whatever tie bars
join to it. Stress marks (ˈ ˌ), the length mark (ː) and tone digits are tokens of their own, so a
model learns them once for every vowel; a length mark inside a tied phoneme ("ɔː͡ɹ") stays in it.
"""

from __future__ import annotations

import ctypes
import functools
import re
import threading
import unicodedata
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path

PUNCTUATION: tuple[str, ...] = (",", ".", "?", "!", ";", ":", "—", "…")

# When several marks stand together ("?!", ", —") the strongest one is kept.
_PUNCTUATION_STRENGTH = {p: i for i, p in enumerate(("?", "!", ".", "…", ";", ":", "—", ","))}

_PUNCTUATION_OF_CHAR = {
    **dict.fromkeys(",،、，､(){}[]（）", ","),
    **dict.fromkeys(".。।॥۔．", "."),
    **dict.fromkeys("?？؟\u037e", "?"),  # the last is the Greek question mark
    **dict.fromkeys("!！", "!"),
    **dict.fromkeys(";；؛", ";"),
    **dict.fromkeys(":：", ":"),
    **dict.fromkeys("—–―", "—"),
    "…": "…",
}

TIE = "\u0361"
_STRESS_AND_LENGTH = frozenset("ˈˌː")
# espeak-ng writes "(fr)" when it switches language for a foreign word, and "-" between words
# it links (French liaison); neither is a sound.
_NOT_SOUNDS = re.compile(r"\([^()]*\)|-")
# A few languages' phoneme tables leak espeak-ng's ASCII phoneme names or IPA ligatures into the
# IPA output; these have one unambiguous IPA spelling. (Other leaked marks such as "`" or "["
# stay as symbols: they still tell phonemes apart.)
_IPA_SPELLING = str.maketrans(
    {"g": "ɡ", ":": "ː", "?": "ʔ", "S": "ʃ", "Z": "ʒ", "N": "ŋ", "X": "x", "A": "ɑ"}
    | {"ʦ": "t" + TIE + "s", "ʧ": "t" + TIE + "ʃ", "ʤ": "d" + TIE + "ʒ"}
)
_REPEATED_TIES = re.compile(TIE + "{2,}")

_AUDIO_OUTPUT_SYNCHRONOUS = 2
_INITIALIZE_DONT_EXIT = 0x8000
_CHARS_UTF8 = 1
_PHONEMES_IPA = 0x02
_PHONEMES_TIE = 0x80
_PHONEME_MODE = _PHONEMES_IPA | _PHONEMES_TIE | (ord(TIE) << 8)


@dataclass(frozen=True)
class Word:
    """One spoken word and its phonemes."""

    text: str
    phonemes: tuple[str, ...]


class _Voice(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("languages", ctypes.c_void_p),
        ("identifier", ctypes.c_char_p),
        ("gender", ctypes.c_ubyte),
        ("age", ctypes.c_ubyte),
        ("variant", ctypes.c_ubyte),
        ("xx1", ctypes.c_ubyte),
        ("score", ctypes.c_int),
        ("spare", ctypes.c_void_p),
    ]


class _Espeak:
    """The process-wide espeak-ng library. espeak-ng is global state: every call holds the lock."""

    def __init__(self) -> None:
        import espeakng_loader

        self.lock = threading.RLock()
        lib = ctypes.CDLL(espeakng_loader.get_library_path())
        lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        lib.espeak_Initialize.restype = ctypes.c_int
        lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        lib.espeak_SetVoiceByName.restype = ctypes.c_int
        lib.espeak_TextToPhonemes.argtypes = [ctypes.POINTER(ctypes.c_char_p), ctypes.c_int, ctypes.c_int]
        lib.espeak_TextToPhonemes.restype = ctypes.c_char_p
        lib.espeak_ListVoices.argtypes = [ctypes.c_void_p]
        lib.espeak_ListVoices.restype = ctypes.POINTER(ctypes.POINTER(_Voice))
        data_path = espeakng_loader.get_data_path()
        options = _INITIALIZE_DONT_EXIT
        if lib.espeak_Initialize(_AUDIO_OUTPUT_SYNCHRONOUS, 0, data_path.encode(), options) <= 0:
            raise RuntimeError(f"espeak-ng failed to initialise with data at {data_path}")
        self.lib = lib
        self.voice_of_language = self._voices_by_language(Path(data_path))
        self.language: str | None = None

    def _voices_by_language(self, data_path: Path) -> dict[str, str]:
        """Map every language code to the identifier of the voice that speaks it best."""
        voices = self.lib.espeak_ListVoices(None)
        best: dict[str, tuple[int, str]] = {}
        i = 0
        while voices[i]:
            voice = voices[i].contents
            i += 1
            identifier = voice.identifier.decode()
            if identifier.startswith("mb/") or not _has_dictionary(data_path, identifier):
                continue  # MBROLA voices need another engine; some voices ship without a dictionary
            # `languages` is a list of (priority byte, NUL-terminated name), ended by a zero byte.
            addr = voice.languages
            while priority := ctypes.c_ubyte.from_address(addr).value:
                name = ctypes.string_at(addr + 1)
                addr += 2 + len(name)
                language = name.decode()
                if language not in best or priority < best[language][0]:
                    best[language] = (priority, identifier)
        return {language: identifier for language, (_, identifier) in sorted(best.items())}

    def set_language(self, language: str) -> None:
        if language == self.language:
            return
        identifier = self.voice_of_language.get(language)
        if identifier is None or self.lib.espeak_SetVoiceByName(identifier.encode()) != 0:
            raise ValueError(f"espeak-ng has no language {language!r}; see list_languages()")
        self.language = language

    def to_ipa(self, text: str) -> str:
        """IPA for `text` (already in the current language), words separated by spaces."""
        buffer = ctypes.create_string_buffer(text.encode())
        pointer = ctypes.c_char_p(ctypes.addressof(buffer))
        pieces = []
        # espeak-ng returns one clause per call and advances the pointer; NULL at the end.
        while pointer.value:
            result = self.lib.espeak_TextToPhonemes(ctypes.byref(pointer), _CHARS_UTF8, _PHONEME_MODE)
            if result:
                pieces.append(result.decode())
        return " ".join(pieces)


def _has_dictionary(data_path: Path, identifier: str) -> bool:
    """Whether the voice's pronunciation dictionary is installed.

    espeak-ng names the dictionary in the voice file, or else after the first language code up
    to its first hyphen ("en-us" -> en_dict).
    """
    dictionary = None
    for line in (data_path / "lang" / identifier).read_text(encoding="utf-8").splitlines():
        key, _, value = line.partition(" ")
        if key == "dictionary":
            dictionary = value.split()[0]
            break
        if key == "language" and dictionary is None:
            dictionary = value.split()[0].split("-")[0]
    return dictionary is not None and (data_path / f"{dictionary}_dict").exists()


@functools.cache
def _espeak() -> _Espeak:
    return _Espeak()


def list_languages() -> list[str]:
    """Language codes of every espeak-ng voice (for example "en-us", "fr-fr", "cmn")."""
    return list(_espeak().voice_of_language)


def split_phonemes(ipa_word: str) -> tuple[str, ...]:
    """Phoneme tokens of one word of espeak-ng IPA (see the module docstring for the rules)."""
    tokens: list[str] = []
    join_next = False
    ipa_word = _REPEATED_TIES.sub(TIE, _NOT_SOUNDS.sub("", ipa_word).translate(_IPA_SPELLING))
    for ch in ipa_word:
        if ch.isspace():
            continue
        if ch == TIE and tokens:
            # "ɔː͡ɹ": the tie joins the whole phoneme, length mark included.
            if tokens[-1] == "ː" and len(tokens) > 1:
                tokens[-2:] = [tokens[-2] + "ː"]
            tokens[-1] += ch
            join_next = True
        elif tokens and (join_next or unicodedata.category(ch) == "Mn"):
            tokens[-1] += ch
            join_next = False
        else:
            tokens.append(ch)
            join_next = False
    return tuple(tokens)


def _is_word_char(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "LMN"


def _split_text(text: str) -> list[str | list[str]]:
    """Split text into clauses (lists of words) and canonical punctuation tokens."""
    items: list[str | list[str]] = []
    clause: list[str] = []
    word: list[str] = []

    def end_word() -> None:
        # Apostrophes and hyphens belong to a word only between letters ("don't", "allez-vous").
        w = "".join(word).strip("'’-")
        if w:
            clause.append(w)
        word.clear()

    def add_punctuation(mark: str) -> None:
        end_word()
        if clause:
            items.append(list(clause))
            clause.clear()
        elif not items:
            return  # nothing spoken yet: a leading mark has no prosodic role
        previous = items[-1]
        if isinstance(previous, str):
            if _PUNCTUATION_STRENGTH[mark] < _PUNCTUATION_STRENGTH[previous]:
                items[-1] = mark
        else:
            items.append(mark)

    i = 0
    while i < len(text):
        ch = text[i]
        if _is_word_char(ch) or (ch in "'’-" and word and i + 1 < len(text) and _is_word_char(text[i + 1])):
            word.append(ch)
        elif ch == "." and text.startswith("..", i):
            add_punctuation("…")
            while i + 1 < len(text) and text[i + 1] == ".":
                i += 1
        elif ch == "-":
            # "--" or a free-standing hyphen is a dash; a hyphen at the edge of a word is dropped
            start = i
            while i + 1 < len(text) and text[i + 1] == "-":
                i += 1
            free = (start == 0 or text[start - 1].isspace()) and (i + 1 == len(text) or text[i + 1].isspace())
            if i > start or free:
                add_punctuation("—")
            else:
                end_word()
        elif ch in _PUNCTUATION_OF_CHAR:
            add_punctuation(_PUNCTUATION_OF_CHAR[ch])
        else:
            end_word()
        i += 1
    end_word()
    if clause:
        items.append(clause)
    return items


@functools.lru_cache(maxsize=65536)
def _word_alone(language: str, word: str) -> tuple[tuple[str, ...], ...]:
    """The phoneme words espeak-ng makes of one written word on its own (several for "42")."""
    engine = _espeak()
    with engine.lock:
        engine.set_language(language)
        ipa = engine.to_ipa(word)
    return tuple(tokens for tokens in map(split_phonemes, ipa.split()) if tokens)


def _clause_words(language: str, words: list[str]) -> list[Word]:
    engine = _espeak()
    with engine.lock:
        engine.set_language(language)
        ipa_words = [split_phonemes(w) for w in engine.to_ipa(" ".join(words)).split()]
    ipa_words = [w for w in ipa_words if w]
    alone = [_word_alone(language, w) for w in words]
    if len(ipa_words) == len(words) and all(len(a) == 1 for a in alone):
        return [Word(w, p) for w, p in zip(words, ipa_words, strict=True)]
    return _align(words, ipa_words, [tuple(p for part in a for p in part) for a in alone])


def _align(words: list[str], ipa_words: list[tuple[str, ...]], alone: list[tuple[str, ...]]) -> list[Word]:
    """Share the clause's phonemes out among the written words.

    The clause's phonemes are aligned with those of the words phonemised one by one. A matched
    phoneme takes the index of its word; a run that differs ("ɐ" for "a" in context, "ˈe͡ɪ" alone)
    is spread over the words of the run it replaces; extra phonemes join the word before. Indices
    are then made non-decreasing so every word gets a contiguous run.
    """
    clause = [p for w in ipa_words for p in w]
    reference = [p for a in alone for p in a]
    owner_of_reference = [i for i, a in enumerate(alone) for _ in a]
    owner: list[int | None] = [None] * len(clause)
    matcher = SequenceMatcher(None, clause, reference, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("equal", "replace"):
            for k in range(i1, i2):
                owner[k] = owner_of_reference[j1 + (k - i1) * (j2 - j1) // (i2 - i1)]
    phonemes: list[list[str]] = [[] for _ in words]
    current = 0
    for token, index in zip(clause, owner, strict=True):
        if index is not None:
            current = max(current, index)
        phonemes[current].append(token)
    return [Word(w, tuple(p)) for w, p in zip(words, phonemes, strict=True)]


def phonemize(text: str, language: str = "en-us") -> list[Word | str]:
    """Words of `text` with their IPA phoneme tokens, and punctuation tokens (see PUNCTUATION) as str.

    Text should be normalised first (digits and symbols spelled out) for languages that have a
    normaliser; otherwise espeak-ng's own reading of digits is used. In scripts written without
    spaces (Chinese, Japanese, Thai) a "word" is a run of text between spaces or punctuation.
    """
    result: list[Word | str] = []
    for item in _split_text(text):
        if isinstance(item, str):
            result.append(item)
        else:
            result.extend(_clause_words(language, item))
    return result
