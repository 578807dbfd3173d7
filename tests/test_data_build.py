import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from sonare.data.manifest import (
    MANIFEST_NAME,
    ManifestWriter,
    load_record_audio,
    read_manifest,
    split_records,
    validate_record,
)

pytest.importorskip("sonare.text.sentences")
pytest.importorskip("pyworld")


def _records(corpus: Path) -> list[dict]:
    return list(read_manifest(corpus / MANIFEST_NAME))


def test_fixture_manifest_schema(fixture_corpus):
    from sonare.audio.io import load_audio
    from sonare.text.phonemes import PUNCTUATION, Word, phonemize

    records = _records(fixture_corpus)
    assert 10 <= len(records) <= 16
    assert len({r["id"] for r in records}) == len(records)
    for r in records:
        validate_record(r)
        audio, rate = load_audio(fixture_corpus / r["audio"])
        assert rate == r["sample_rate"]
        assert abs(len(audio) / rate - r["duration"]) < 1e-3
        # Every manifest word has timings inside the audio, in order.
        starts = [w["start"] for w in r["words"]]
        assert starts == sorted(starts)
    for r in records:
        if r["section"] == "conversation":
            continue
        # The stored phonemes are exactly those of the shared front end, word breaks and punctuation added.
        expected = [p for w in phonemize(r["normalized"]) if isinstance(w, Word) for p in w.phonemes]
        assert [p for p in r["phonemes"] if p != " " and p not in PUNCTUATION] == expected
    assert {r["split"] for r in records} == {"train", "heldout"}
    assert any(r["augment"] for r in records if r["section"] == "augmented")
    assert len({r["speaker"] for r in records if r["section"] == "speakers"}) >= 1


def test_conversation_pauses_are_labelled(fixture_corpus):
    (conversation,) = [r for r in _records(fixture_corpus) if r["section"] == "conversation"]
    pauses = conversation["pauses"]
    kinds = [p["kind"] for p in pauses]
    assert kinds[-1] == "end_of_turn" and "hold" in kinds
    assert pauses[-1]["end"] == conversation["duration"]
    words = conversation["words"]
    for pause in pauses:
        # No word is spoken inside a pause, and a pause follows the word before it.
        assert not any(w["start"] < pause["end"] - 1e-3 and w["end"] > pause["start"] + 1e-3 for w in words)
    for pause in pauses[:-1]:
        assert 0.2 - 1e-3 <= pause["end"] - pause["start"] <= 2.0 + 1e-3
    # Holds say whether a complete sentence precedes them, which the evaluator scores apart.
    assert all(isinstance(p["after_sentence"], bool) for p in pauses if p["kind"] == "hold")
    assert not any("after_sentence" in p for p in pauses if p["kind"] == "end_of_turn")


def test_holds_of_older_manifests_get_the_builders_labels_on_reading(fixture_corpus, tmp_path):
    (conversation,) = [r for r in _records(fixture_corpus) if r["section"] == "conversation"]
    built = [p.get("after_sentence") for p in conversation["pauses"]]
    older = {
        **conversation,
        "pauses": [{k: v for k, v in p.items() if k != "after_sentence"} for p in conversation["pauses"]],
    }
    with ManifestWriter(tmp_path / MANIFEST_NAME) as writer:
        writer.append(older)
    (read,) = read_manifest(tmp_path / MANIFEST_NAME)
    assert [p.get("after_sentence") for p in read["pauses"]] == built


def test_hold_labels_on_reading_follow_the_word_before_the_pause(tmp_path):
    words = [{"word": w, "start": i * 0.5, "end": i * 0.5 + 0.4} for i, w in enumerate(["eggs", "milk", "done", "ok"])]
    pauses = [
        {"start": 0.9, "end": 1.0, "kind": "hold"},  # after "milk,"
        {"start": 1.4, "end": 1.5, "kind": "hold"},  # after "done."
        {"start": 1.9, "end": 3.0, "kind": "end_of_turn"},
    ]
    record = {"id": "c", "normalized": "eggs, milk, done. ok.", "words": words, "pauses": pauses}
    garbled = {**record, "id": "g", "normalized": "eggs milk", "pauses": [dict(p) for p in pauses]}
    with ManifestWriter(tmp_path / MANIFEST_NAME) as writer:
        writer.append(record)
        writer.append(garbled)
    read, unaligned = read_manifest(tmp_path / MANIFEST_NAME)
    assert [p.get("after_sentence") for p in read["pauses"]] == [False, True, None]
    assert all("after_sentence" not in p for p in unaligned["pauses"])  # text and timed words do not line up


def test_features_are_cached_for_recognition(fixture_corpus):
    from sonare.audio.features import log_mel
    from sonare.audio.io import load_audio
    from sonare.data.featcache import FeatureStore

    store = FeatureStore(fixture_corpus)
    stt = [r for r in _records(fixture_corpus) if "stt" in r["tasks"]]
    assert set(store.ids()) == {r["id"] for r in stt}
    record = stt[-1]
    audio, _ = load_audio(fixture_corpus / record["audio"], 16000)
    expected = log_mel(audio).numpy()
    cached = np.asarray(store[record["id"]], dtype=np.float32)
    assert cached.shape == expected.shape
    assert np.abs(cached - expected).max() < 0.05  # float16 storage


def test_killed_build_resumes_to_the_same_manifest(fixture_corpus, tmp_path):
    out = tmp_path / "resumed"
    command = [sys.executable, "-m", "sonare.cli", "data", "fixture", "--out", str(out)]
    process = subprocess.Popen(command, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    try:
        while time.time() < deadline and len(_records(out)) < 4:
            time.sleep(0.05)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    partial = len(_records(out))
    assert 4 <= partial < len(_records(fixture_corpus))
    subprocess.run(command, check=True, capture_output=True)
    resumed, whole = _records(out), _records(fixture_corpus)
    assert [r["id"] for r in resumed] == [r["id"] for r in whole]
    # espeak-ng varies its timing by a few milliseconds from call to call (and Piper samples its
    # noise), so the measured values may differ slightly; everything the recipe decides may not.
    measured = {"duration", "words", "phones", "pauses", "alignment"}
    for a, b in zip(resumed, whole, strict=True):
        assert {k: v for k, v in a.items() if k not in measured} == {k: v for k, v in b.items() if k not in measured}
        assert abs(a["duration"] - b["duration"]) < 0.02 * b["duration"] + 0.05
        assert [w["word"] for w in a["words"]] == [w["word"] for w in b["words"]]
    assert not list(out.rglob("*.tmp"))


def test_truncated_last_line_is_dropped_and_repaired(tmp_path):
    path = tmp_path / MANIFEST_NAME
    with ManifestWriter(path) as writer:
        writer.append({"id": "a"})
    with path.open("ab") as f:
        f.write(b'{"id": "b", "te')
    assert [r["id"] for r in read_manifest(path)] == ["a"]
    with ManifestWriter(path) as writer:
        writer.append({"id": "c"})
    assert [json.loads(line)["id"] for line in path.read_text().splitlines()] == ["a", "c"]


def test_split_records_and_their_audio(fixture_corpus):
    manifest = fixture_corpus / MANIFEST_NAME
    heldout = split_records(manifest, "heldout")
    train = split_records(manifest, "train")
    assert heldout and train and len(heldout) + len(train) == len(list(read_manifest(manifest)))
    assert {r["split"] for r in heldout} == {"heldout"}
    audio, rate = load_record_audio(manifest, heldout[0])
    assert rate == heldout[0]["sample_rate"] and abs(len(audio) / rate - heldout[0]["duration"]) < 0.01
    with pytest.raises(SystemExit, match="no manifest"):
        split_records(fixture_corpus / "missing.jsonl", "train")


def test_a_section_whose_last_item_overshoots_its_hours_finishes_with_its_progress_bar(tmp_path):
    """One conversation of ten sentences and five 3 s pauses is far longer than the section's 6 s, so the bar's
    count passes its total by more than tqdm allows (it then drops the total, whose format used to crash the
    build); the section's 16 sentences also run out in the second conversation planned."""
    from sonare.data.build import build_corpus
    from sonare.data.config import CorpusConfig, Section

    conversation = {
        "turns": [5, 5], "sentences_per_turn": [2, 2],
        "hold_prob": 0.0, "hold_pause": [0.5, 0.5], "end_pause": [3.0, 3.0],
        "speakers": [{"teacher": "espeak", "voices": ["en-us+m1"]}],
    }  # fmt: skip
    section = Section(name="talk", kind="conversation", hours=6 / 3600, tasks=["stt"], conversation=conversation)
    hours = build_corpus(
        CorpusConfig(name="long", seed=3, language="en-us", sections=[section]), tmp_path, workers=1, features=False
    )
    assert hours["talk"] * 3600 > 42  # the overshoot the bar has to survive
    assert len(_records(tmp_path)) == 1
