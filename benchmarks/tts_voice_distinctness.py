"""How distinct the built-in voices sound to an independent speaker encoder (Resemblyzer).

Each built-in voice reads 2N held-out sentences; the encoder embeds each half (N sentences, a mean of utterance
embeddings). The table is the cosine similarity of every voice's first half to every voice's second half: the
diagonal is how consistently one voice is recognised as itself, the rest how close two voices sound. For scale,
on the corpus's held-out speakers the same encoder puts two clips of one speaker at 0.83 on average and two
speakers at 0.57 (docs/benchmarks.md, "Speaker similarity").

    python benchmarks/tts_voice_distinctness.py [--sentences 10] [--model-dir DIR]
"""

from __future__ import annotations

import argparse
import os

import torch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, default=10, help="sentences per half")
    ap.add_argument("--model-dir", default=os.environ.get("SONARE_TTS_DIR"))
    args = ap.parse_args()
    torch.set_num_threads(1)

    from sonare.eval.speaker import SpeakerEncoder, cosine_similarity
    from sonare.text import generate_sentences
    from sonare.text.normalize import normalize
    from sonare.tts import load_default
    from sonare.tts.messages import SynthesisOptions, VoiceSpec

    model = load_default(args.model_dir)
    encoder = SpeakerEncoder()
    sentences = [normalize(s) for s in generate_sentences(2 * args.sentences, seed=7, split="heldout")]
    halves = (sentences[: args.sentences], sentences[args.sentences :])
    embeddings = {}
    for voice in model.voices:
        options = SynthesisOptions(VoiceSpec(id=voice))
        embeddings[voice] = [
            encoder.embed_speaker([(model.synthesize(s, options)[0], model.sample_rate) for s in half])
            for half in halves
        ]
    voices = list(embeddings)
    print(f"{args.sentences} held-out sentences per half; rows: first half, columns: second half")
    print("| voice | " + " | ".join(voices) + " |")
    print("|---|" + "---:|" * len(voices))
    for a in voices:
        row = [cosine_similarity(embeddings[a][0], embeddings[b][1]) for b in voices]
        print(f"| {a} | " + " | ".join(f"{x:.3f}" for x in row) + " |")


if __name__ == "__main__":
    main()
