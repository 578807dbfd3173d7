"""The recogniser's word language model and the beam search that uses it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sonare.stt.beam import BeamDecoder, BeamSettings
from sonare.stt.decode import GreedyDecoder
from sonare.stt.lm import BOS, EOS, WordLM
from sonare.stt.model import FRAME_SECONDS
from sonare.stt.turns import DEFAULT_TIERS
from sonare.stt.vocab import ALPHABET, BLANK

TEXT = ["the cat sat on the mat", "the cat ate", "a dog sat on the cat", "the mat was red"] * 3 + ["one more line"]


@pytest.fixture(scope="module")
def lm() -> WordLM:
    return WordLM.train(TEXT)


def test_every_distribution_sums_to_one(lm):
    for history in [(BOS, BOS), (BOS, "the"), ("the", "cat"), ("sat", "on"), ("red", "dog"), ("nope", "nope")]:
        total = sum(math.exp(lm.log_prob(*history, w)) for w in lm.vocab if w != BOS)
        assert total == pytest.approx(1.0, abs=1e-6), history


def test_context_raises_what_followed_it(lm):
    assert lm.log_prob(BOS, "the", "cat") > lm.log_prob(BOS, "the", "dog")
    assert lm.log_prob("sat", "on", "the") > lm.log_prob("sat", "on", "mat")
    assert lm.log_prob("the", "cat", "zebra") is None
    assert "ca" in lm.prefixes and "cx" not in lm.prefixes


def test_save_and_load_keep_every_probability(lm, tmp_path):
    lm.decoding = {"alpha": 0.6, "beta": 2.0}
    lm.save(tmp_path / "lm.safetensors")
    back = WordLM.load(tmp_path / "lm.safetensors")
    assert back.vocab == lm.vocab and back.decoding == {"alpha": 0.6, "beta": 2.0} and back.end_threshold is None
    lm.end_threshold, lm.eager_threshold = 0.65, 0.4
    lm.save(tmp_path / "lm.safetensors")
    back = WordLM.load(tmp_path / "lm.safetensors")
    assert (back.end_threshold, back.eager_threshold) == (0.65, 0.4)
    for gram in [(BOS, BOS, "the"), ("the", "cat", "sat"), ("on", "the", "mat"), ("a", "dog", EOS)]:
        assert back.log_prob(*gram) == pytest.approx(lm.log_prob(*gram), abs=1e-6)


def _frames(spelling: list[dict[str, float]]) -> np.ndarray:
    """CTC log-probabilities: per frame the given letter probabilities, the rest to blank, a blank after each."""
    rows = []
    for probs in spelling:
        for p in (probs, {}):
            row = np.full(len(ALPHABET) + 1, 1e-6)
            for ch, v in p.items():
                row[ALPHABET.index(ch) + 1] = v
            row[BLANK] = max(1e-6, 1.0 - sum(p.values()))
            rows.append(np.log(row / row.sum()))
    return np.array(rows, np.float32)


def _decode(decoder, logp: np.ndarray) -> tuple[str, list[str]]:
    partials = []
    for k, row in enumerate(logp):
        decoder.push(row, k)
        partials.append(decoder.text())
    return " ".join(w.word for w in decoder.take_segment()), partials


def test_the_language_model_corrects_a_letter_the_acoustics_got_wrong(lm):
    # "the cat" where the acoustics slightly prefer "tha cat" and "cet".
    spelling = [{"t": 0.9}, {"h": 0.9}, {"a": 0.5, "e": 0.4}, {" ": 0.9}, {"c": 0.9}, {"e": 0.5, "a": 0.4}, {"t": 0.9}]
    logp = _frames(spelling)
    greedy, _ = _decode(GreedyDecoder(FRAME_SECONDS), logp)
    beam, _ = _decode(BeamDecoder(lm, BeamSettings(alpha=1.0, beta=1.0), FRAME_SECONDS), logp)
    assert greedy == "tha cet"
    assert beam == "the cat"


def test_partials_revise_only_their_last_word_and_words_carry_times(lm):
    words = ["the", "cat", "sat", "on", "the", "mat"]
    spelling = [{ch: 0.6, "e": 0.2} if ch != "e" else {"e": 0.6, "a": 0.2} for ch in " ".join(words)]
    decoder = BeamDecoder(lm, BeamSettings(), FRAME_SECONDS)
    final, partials = _decode(decoder, _frames(spelling))
    assert final == "the cat sat on the mat"
    for before, after in zip(partials, partials[1:], strict=False):
        kept = before.split()[:-1]
        assert after.split()[: len(kept)] == kept, (before, after)
    decoder = BeamDecoder(lm, BeamSettings(), FRAME_SECONDS)
    for k, row in enumerate(_frames(spelling)):
        decoder.push(row, k)
    timed = decoder.take_segment()
    assert [w.word for w in timed] == words
    assert all(a.end <= b.start + 1e-9 and a.start < a.end for a, b in zip(timed, timed[1:], strict=False))


def test_the_margin_drops_prefixes_far_below_the_best_but_keeps_the_close_ones(lm):
    spelling = [{ch: 0.6, "e": 0.2} if ch != "e" else {"e": 0.6, "a": 0.2} for ch in "the cat sat"]
    logp = _frames(spelling)
    wide, narrow = (BeamDecoder(lm, BeamSettings(beam=64, margin=m), FRAME_SECONDS) for m in (math.inf, 3.0))
    for k, row in enumerate(logp):
        for decoder in (wide, narrow):
            decoder.push(row, k)
        best = max(h.total() for h in narrow.hyps.values())
        assert all(h.total() >= best - 3.0 for h in narrow.hyps.values())
        # On this input no prefix that ends within the margin of the best was lost earlier on the way.
        assert {key for key, h in wide.hyps.items() if h.total() >= best - 3.0} <= set(narrow.hyps)
    assert len(narrow.hyps) < len(wide.hyps)
    assert [w.word for w in narrow.take_segment()] == [w.word for w in wide.take_segment()] == ["the", "cat", "sat"]


def test_the_sentence_end_probability_follows_the_words_heard(lm):
    def heard(text: str) -> float:
        decoder = BeamDecoder(lm, BeamSettings(), FRAME_SECONDS)
        for k, row in enumerate(_frames([{ch: 0.999} for ch in text])):
            decoder.push(row, k)
        return decoder.sentence_end_probability()

    assert heard("the cat sat on the") < DEFAULT_TIERS.sentence_end_min  # half a sentence: the tracker holds the turn
    assert heard("the cat sat on the mat") > 4 * DEFAULT_TIERS.sentence_end_min
    # An unknown last word leaves only the chance of a sentence ending at all.
    assert heard("the zorb") == pytest.approx(math.exp(lm.log_prob("nope", "nope", EOS)))


def test_an_unknown_word_survives_when_the_acoustics_are_sure(lm):
    # As sure as the CTC head's peaky posteriors usually are: the unknown word's charge, paid when its spelling
    # leaves every known word, must not put it further below the best prefix than the beam's margin.
    spelling = [{ch: 0.999} for ch in "the zorb"]
    final, _ = _decode(BeamDecoder(lm, BeamSettings(), FRAME_SECONDS), _frames(spelling))
    assert final == "the zorb"


def test_new_domain_text_without_a_corpus_keeps_the_tuned_beam(lm, tmp_path):
    from sonare.train.lm import LMTrainConfig, train_lm

    lm.decoding, lm.end_threshold = {"alpha": 0.6, "beta": 2.5, "beam": 12}, 0.7
    lm.save(tmp_path / "lm.safetensors")
    (tmp_path / "domain.txt").write_text("book the sonare demo for friday\n")
    cfg = LMTrainConfig(generated_sentences=50, wordnet=False, text_files=[str(tmp_path / "domain.txt")],
                        stt_recipe=str(tmp_path / "no-such-recipe.yaml"), beam=8)  # fmt: skip
    train_lm(cfg, tmp_path)
    updated = WordLM.load(tmp_path / "lm.safetensors")
    assert "sonare" in updated.words
    assert updated.decoding["alpha"] == 0.6 and updated.decoding["beta"] == 2.5 and updated.decoding["beam"] == 8
    assert updated.end_threshold == 0.7


def test_repeated_domain_text_keeps_its_word_triples(tmp_path):
    from sonare.train.lm import LMTrainConfig, train_lm

    (tmp_path / "domain.txt").write_text("please enter your mailbox number\n")
    probability = {}
    for repeat in (1, 3):
        out = tmp_path / f"repeat-{repeat}"
        out.mkdir()
        cfg = LMTrainConfig(generated_sentences=50, wordnet=False, text_files=[str(tmp_path / "domain.txt")],
                            text_repeat=repeat, stt_recipe=None)  # fmt: skip
        probability[repeat] = WordLM.load(train_lm(cfg, out)).log_prob("enter", "your", "mailbox")
    # seen once, the triple is pruned and "mailbox" after "enter your" falls back on lower orders
    assert probability[3] > probability[1] + 1.0


def test_a_key_term_wins_where_the_audio_is_unsure_and_leaves_other_audio_alone(lm):
    # "the cat mab" (a product name the model does not know) where the acoustics lean slightly to "mat"
    spelling = [{ch: 0.9} for ch in "the cat ma"] + [{"t": 0.5, "b": 0.4}]
    plain, _ = _decode(BeamDecoder(lm, BeamSettings(), FRAME_SECONDS), _frames(spelling))
    boosted, _ = _decode(
        BeamDecoder(lm, BeamSettings(), FRAME_SECONDS, keyterms=["MAB", "Zorb Ltd."]), _frames(spelling)
    )
    assert plain == "the cat mat" and boosted == "the cat mab"
    # audio that clearly says a known word keeps it
    clear = _frames([{ch: 0.95} for ch in "the cat mat"])
    assert _decode(BeamDecoder(lm, BeamSettings(), FRAME_SECONDS, keyterms=["mab"]), clear)[0] == "the cat mat"


def test_generated_answers_teach_the_model_that_a_turn_can_be_one_value(tmp_path):
    from sonare.stt.lm import BOS
    from sonare.train.lm import LMTrainConfig, train_lm

    opens = {}
    for answers in (0, 3000):
        out = tmp_path / f"answers-{answers}"
        out.mkdir()
        cfg = LMTrainConfig(generated_sentences=3000, generated_answers=answers, wordnet=False, stt_recipe=None)
        opens[answers] = WordLM.load(train_lm(cfg, out)).log_prob(BOS, BOS, "tuesday")
    # a turn opens with "Tuesday" far more often once lone answers are in the text
    assert opens[3000] > opens[0] + 1.0


def test_generated_words_join_the_text_as_one_word_turns():
    from sonare.train.lm import LMTrainConfig, training_text

    plain = training_text(LMTrainConfig(generated_sentences=200, wordnet=False, stt_recipe=None))
    with_words = training_text(
        LMTrainConfig(generated_sentences=200, generated_words=300, wordnet=False, stt_recipe=None)
    )
    added = with_words[len(plain) :]
    assert with_words[: len(plain)] == plain and len(added) == 300
    assert all(len(line.split()) == 1 for line in added)
