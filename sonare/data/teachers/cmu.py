"""CMU/radio phones (flite, festival's US voices) written as espeak-ng en-us IPA.

With the same symbols as the shared phonemes, `sonare.data.timings` can carry an engine's phone
timings over to them. Pauses ("pau", "h#") have no IPA and are dropped.
"""

from __future__ import annotations

from sonare.data.teachers import Timing

CMU_TO_IPA = {
    "aa": "ɑː", "ae": "æ", "ah": "ʌ", "ao": "ɔː", "aw": "aʊ", "ax": "ə", "axr": "ɚ", "ay": "aɪ",
    "b": "b", "ch": "tʃ", "d": "d", "dh": "ð", "dx": "ɾ", "eh": "ɛ", "er": "ɜː", "ey": "eɪ",
    "el": "əl", "em": "əm", "en": "ən", "nx": "n",
    "f": "f", "g": "ɡ", "hh": "h", "ih": "ɪ", "iy": "iː", "jh": "dʒ", "k": "k", "l": "l", "m": "m",
    "n": "n", "ng": "ŋ", "ow": "oʊ", "oy": "ɔɪ", "p": "p", "r": "ɹ", "s": "s", "sh": "ʃ", "t": "t",
    "th": "θ", "uh": "ʊ", "uw": "uː", "v": "v", "w": "w", "y": "j", "z": "z", "zh": "ʒ",
}  # fmt: skip


def parse_segments(output: str) -> list[Timing]:
    """`pau:0.164 hh:0.255 ...` (segment:end time, any whitespace) into IPA spans, pauses dropped."""
    phones = []
    previous_end = 0.0
    for item in output.split():
        name, _, end_text = item.rpartition(":")
        try:
            end = float(end_text)
        except ValueError:
            continue
        if name in CMU_TO_IPA:
            phones.append(Timing(CMU_TO_IPA[name], previous_end, end))
        previous_end = end
    return phones
