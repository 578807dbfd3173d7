"""Two TTS checkpoints of one lineage averaged tensor by tensor, written as an export beside the shipped voices.

    python benchmarks/tts_weight_average.py checkpoints/tts-joe-large.pt checkpoints/tts-joe-more.pt models/tts-avg
    SONARE_TTS_DIR=models/tts-avg sonare eval tts --engine sonare --sentences 400 --asr whisper-base --out OUT --quiet

The second checkpoint is the shipped one (`sonare/assets/tts`, or --voices DIR): each voice's speaker vector is the
row of its table that the voice was exported from, replaced by the average of that row in both checkpoints; the
voice's adaptation (its calibration and transform) is kept as it is. Both checkpoints must share the speaker table.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
from safetensors.torch import save_file

SPEAKERS = "speakers.weight"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first", type=Path, help="a slim or full checkpoint")
    parser.add_argument("second", type=Path, help="the checkpoint the voices were exported from")
    parser.add_argument("out", type=Path)
    parser.add_argument("--weight", type=float, default=0.5, help="the second checkpoint's share")
    parser.add_argument("--voices", type=Path, default=Path("sonare/assets/tts"), help="export holding voices.json")
    args = parser.parse_args()
    first, second = (torch.load(p, map_location="cpu", weights_only=False) for p in (args.first, args.second))
    if first["speakers"] != second["speakers"] or first["model"].keys() != second["model"].keys():
        raise SystemExit("the two checkpoints have different speaker tables or tensors")
    averaged = {
        name: (1 - args.weight) * a + args.weight * second["model"][name] if a.is_floating_point() else a
        for name, a in first["model"].items()
    }
    table, shipped_table = averaged.pop(SPEAKERS), second["model"][SPEAKERS]
    voices = json.loads((args.voices / "voices.json").read_text())
    d = shipped_table.shape[1]
    for voice in voices["voices"]:
        vector = torch.tensor(voice["embedding"][:d])
        row = int((shipped_table - vector).abs().amax(1).argmin())
        if not torch.allclose(shipped_table[row], vector, atol=1e-6):
            raise SystemExit(f"voice {voice['id']} is no row of the second checkpoint's speaker table")
        voice["embedding"][:d] = table[row].tolist()
    args.out.mkdir(parents=True, exist_ok=True)
    metadata = {"config": json.dumps(second["model_config"]), "step": str(second["step"])}
    save_file({k: v.contiguous() for k, v in averaged.items()}, args.out / "tts.safetensors", metadata=metadata)
    (args.out / "voices.json").write_text(json.dumps(voices, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
