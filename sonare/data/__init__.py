"""The synthetic speech corpus factory: teacher engines, alignment, augmentation, corpus builds.

    sonare data build --config configs/data-default.yaml [--out corpus/default] [--workers 2]
    sonare data fixture --out DIR          # a dozen utterances, for tests
    sonare data stats corpus/default

A corpus directory holds `manifest.jsonl` (one JSON object per utterance, appended as the build
goes, so training can read it while it grows), `audio/<section>/...flac` and, for recognition,
`features/` (16 kHz log-mel in memory-mapped shards, see `featcache.FeatureStore`).

Manifest record fields:
    id            "<section>-<index>", fixed by the recipe
    audio         path relative to the corpus directory (FLAC, 16-bit)
    text          the sentence as generated; normalized: as read (`sonare.text.normalize`)
    phonemes      tokens of `sonare.text.phonemize(normalized)`: each word's phonemes, " " between
                  neighbouring words, punctuation tokens where they stand (the layout of
                  `sonare.text.inventory.encode`, without BOS/EOS)
    phones        [{phoneme, start, end}] one per token of `phonemes`, in order, contiguous, in
                  seconds; silence before the first and after the last token is not covered;
                  stress marks take zero time, pauses go to " " and punctuation tokens
    words         [{word, start, end}]
    speaker       "<teacher>:<voice>" or "<teacher>:<voice>:<transform digest>"
    teacher, voice, rate
    transform     speaker transform (pitch_semitones, pitch_range, formant_ratio, tempo); {} = none
    augment       acoustic chain (reverb, noise, telephone, gain_db, clip); {} = clean
    language, duration (s), sample_rate (22050 Piper/espeak native, 24000 Kokoro, 16000
                  flite/festival/augmented)
    split         "train" or "heldout" (held-out speakers, voices and sentences)
    section, tasks ("tts", "stt", "turn")
    alignment     how phones were timed: {"method": "engine", matched, covered} or {"method": "dtw", cost}
    source        (augmented copies) id of the clean original
    pauses        (conversations) [{start, end, kind: "hold" | "end_of_turn"}]; a hold also has
                  after_sentence (it follows a complete sentence)
"""
