"""End of turn with and without the sentence-end check: the turn head alone against the head and the words, on the
held-out conversations or on those the training recipe holds back (where the check's constants are chosen).

The model's outputs come from one pass over each conversation (`SonareTurnDetector.outputs`); then the tracker
runs at each end threshold, alone and with the decoder (`turn_fires`), for each (sentence-end minimum, unfinished
end threshold) pair given, scored as `sonare eval turns` scores them: each end is heard at the end of the live step
that heard its frame (`--step`, seconds a stream gathers, default the shipped setting). `--by-pause` also splits
the true ends by how long the speaker then stayed silent.

    python benchmarks/stt_turn_gate.py --manifest corpus/default/manifest.jsonl --held-back \
        --thresholds 0.85 --gates 0.1,0.99 0.1,0.95,0.03,0.99
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch

PAUSE_BINS = ((0.0, 0.6), (0.6, 1.2), (1.2, 2.0), (2.0, 3.1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--manifest", type=Path, nargs="+", default=[Path("corpus/default/manifest.jsonl")])
    parser.add_argument("--held-back", action="store_true", help="the conversations held back from training")
    parser.add_argument("--step", type=float, help="seconds of audio a live stream gathers a step")
    parser.add_argument("--thresholds", type=float, nargs="+", default=[0.85], help="end thresholds")
    parser.add_argument(
        "--gates",
        nargs="*",
        default=[],
        help="the tracker's sentence-end tiers: MIN,UNSURE,UNFINISHED_MIN,UNFINISHED (`SentenceEndTiers`, in "
        "that order), or MIN,UNFINISHED for one tier",
    )
    parser.add_argument("--by-pause", action="store_true", help="ends found per length of the silence after them")
    parser.add_argument("--out", type=Path, help="write the results here (JSON)")
    args = parser.parse_args()
    torch.set_num_threads(1)

    from sonare.data.manifest import load_record_audio, split_records
    from sonare.eval.turns import END_OF_TURN, Pause, TurnOutcomes, score_fires, summarize
    from sonare.stt.evaluation import SonareTurnDetector
    from sonare.stt.turns import SentenceEndTiers
    from sonare.train.common import is_held_back
    from sonare.train.stt import STTTrainConfig

    detector = SonareTurnDetector(args.step)
    conversations = []
    for manifest in args.manifest:
        if args.held_back:
            fraction = STTTrainConfig.val_turn_fraction
            records = [r for r in split_records(manifest, "train") if is_held_back(r["id"], fraction)]
        else:
            records = split_records(manifest, "heldout")
        for r in records:
            if r.get("pauses"):
                audio, rate = load_record_audio(manifest, r)
                pauses = sorted((Pause.from_dict(p) for p in r["pauses"]), key=lambda p: p.start)
                conversations.append((pauses, *detector.outputs(audio, rate), len(audio) / rate))
    print(f"{len(conversations)} conversations ({'held back' if args.held_back else 'held out'})")

    def tiers_of(gate: str) -> SentenceEndTiers:
        values = [float(x) for x in gate.split(",")]
        return SentenceEndTiers(*(values if len(values) == 4 else values * 2))

    settings = [("head alone", None)] + [(f"words {g}", tiers_of(g)) for g in args.gates]
    results = []
    for threshold in args.thresholds:
        for name, tiers in settings:
            pooled, ends = TurnOutcomes(), []
            for pauses, logp, probs, seconds in conversations:
                decoder = detector.stt.new_decoder() if tiers is not None else None
                fires = detector.fires(probs, threshold, decoder, logp, tiers)  # None: the recogniser's own
                outcome = score_fires(pauses, fires, seconds)
                pooled.extend(outcome)
                silences = [p.end - p.start for p in pauses if p.kind == END_OF_TURN]
                ends += list(zip(silences, outcome.end_latencies, strict=True))
            m = summarize(pooled)
            row = {"end_threshold": threshold, "detector": name, **m.as_dict()}
            print(
                f"{threshold:.2f} {name:18s} false cut-offs {m.false_cutoff_rate:.3f} (mid-sentence "
                f"{m.mid_sentence_false_cutoff_rate:.3f}, after a sentence {m.after_sentence_false_cutoff_rate:.3f}), "
                f"missed {m.miss_rate:.3f}, p50 {m.latency_p50:.3f} s"
            )
            if args.by_pause:
                row["ends_by_silence"] = []
                for low, high in PAUSE_BINS:
                    found = [lat for silence, lat in ends if low <= silence < high and lat is not None]
                    total = sum(low <= silence < high for silence, _ in ends)
                    p50 = float(np.median(found)) if found else None
                    row["ends_by_silence"].append(
                        {"silence_s": [low, high], "ends": total, "found": len(found), "p50": p50}
                    )
                    print(f"     ends followed by {low}-{high} s of silence: {len(found)} of {total} found")
            results.append(row)
    if args.out:
        args.out.write_text(json.dumps({"conversations": len(conversations), "results": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
