from sonare.data.teachers import Timing
from sonare.data.timings import transfer_timings


def _spans(labels_and_durations, start=0.1):
    out, t = [], start
    for label, d in labels_and_durations:
        out.append(Timing(label, t, t + d))
        t += d
    return out


def test_piper_style_characters_map_onto_tied_tokens():
    # Piper: one character per symbol, stress marks with their own time, spaces between words.
    piper = [("h", 0.05), ("ˈ", 0.02), ("a", 0.08), ("ɪ", 0.04), (" ", 0.03), ("j", 0.05), ("u", 0.1)]
    source = _spans(piper)
    target = ["h", "ˈ", "a͡ɪ", " ", "j", "u"]
    result = transfer_timings(source, target)
    assert result.matched == 1.0
    labels = [t.label for t in result.timings]
    assert labels == target
    ai = result.timings[2]
    # The stress mark's time goes to the vowel it marks; the stress token itself takes none.
    assert result.timings[1].end - result.timings[1].start == 0
    assert abs(ai.start - 0.15) < 1e-9 and abs(ai.end - 0.29) < 1e-9
    for a, b in zip(result.timings, result.timings[1:], strict=False):
        assert a.end == b.start


def test_pauses_go_to_unmatched_word_breaks_and_punctuation():
    # espeak-ng style: phoneme events only, a pause between 0.3 and 0.6.
    source = [Timing("h", 0.0, 0.1), Timing("aɪ", 0.1, 0.3), Timing("j", 0.6, 0.7), Timing("uː", 0.7, 0.9)]
    target = ["h", "a͡ɪ", ",", " ", "j", "u", "ː"]
    result = transfer_timings(source, target)
    by_label = {t.label: t for t in result.timings}
    assert abs(by_label[","].start - 0.3) < 1e-9
    assert abs(by_label[" "].end - 0.6) < 1e-9
    assert result.timings[-1].end == 0.9


def test_accent_vowels_are_replaced_in_place():
    source = _spans([("b", 0.1), ("ɑː", 0.2), ("θ", 0.1)])  # British "bath"
    target = ["b", "æ", "θ"]
    result = transfer_timings(source, target)
    assert result.covered == 1.0 and result.matched < 1.0
    assert abs(result.timings[1].start - 0.2) < 1e-9 and abs(result.timings[2].start - 0.4) < 1e-9
