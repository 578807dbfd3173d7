"""Real English speech that Debian packages install without transcripts, gathered as one folder per voice.

Games and toys ship recorded voices: tutorials read aloud, announcers, units answering orders, codec test
sentences. Nothing lists what they say, so they cannot score a recogniser, but once
`sonare data label` has transcribed them (two Whisper models that must agree) they are the many real
voices the recogniser has never trained on. Each source below names a package, where its speech lies
(a folder, or the inside of a game's zip archive) and how its clips split into voices:

    apt-get install hedgewars-data warzone2100-data nexuiz-data megaglest-data codec2-examples \
        boswars-data kajongg openarena-data neverball-common klettres-data
    python -m sonare.data.found_speech runs/found-speech          # -> runs/found-speech/<voice>/<clip>.wav
    sonare data label runs/found-speech --out runs/found-speech-labelled

`--root DIR` reads the packages from a tree where their .debs were unpacked (`dpkg-deb -x`) instead of `/`.
Speech that is processed past human (Warzone's NEXUS, Hedgewars' Robot, OpenArena's Festival voice),
grunts, screams and other languages are left out by where they lie; clips that are not words at all are
left for the labeller to reject. Digital silence that pads a clip is cut to a quarter second each side.
None of these voices is in the real-speech evaluation (`sonare.stt.realspeech`), so training on them leaves
that evaluation unheard.
"""

from __future__ import annotations

import argparse
import fnmatch
import io
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sonare.audio.io import load_audio, save_audio
from sonare.data.recordings import safe_name

# Clips longer than this are whole scenes (codec2's minute-long radio recordings): too long to train on.
MAX_SECONDS = 20.0
# Some clips are padded with seconds of digital silence (Boswars' units: 10 s); past this margin it is cut.
SILENCE_MARGIN = 0.25
SILENCE_PEAK = 1e-3  # -60 dBFS: below any recorded room or hiss, above dither


@dataclass(frozen=True)
class Source:
    """Speech files matching `pattern` (fnmatch, `*` crosses folders) under `path`, a folder or a zip archive,
    relative to the package root; `voice` names each clip's voice from its path inside."""

    package: str
    path: str
    pattern: str
    voice: Callable[[str], str]


def _folder(depth: int) -> Callable[[str], str]:
    """The voice is the folder `depth` levels above the file (1: the file's own folder)."""
    return lambda member: member.split("/")[-1 - depth]


def _named(name: str) -> Callable[[str], str]:
    return lambda _member: name


_NEXUIZ = "usr/share/games/nexuiz/data/data.pk3"
_MEGAGLEST = "usr/share/games/megaglest/techs/megapack/factions"
_HEDGEWARS_PACKS = ("British", "Classic", "Default", "HillBilly", "Mobster", "Pirate", "Singer", "Surfer")
_WARZONE_VOICED = ("tutorial", "countdown", "extra", "proxmessages", "vtoltalk", "trnsppil", "coltive")

SOURCES: tuple[Source, ...] = (
    *(
        Source("hedgewars-data", f"usr/share/games/hedgewars/Data/Sounds/voices/{pack}", "*.ogg", _named(pack))
        for pack in _HEDGEWARS_PACKS
    ),
    # Warzone 2100: the tutorial's narrator, the command computer, three taunting voices, pilots.
    *(
        Source("warzone2100-data", "usr/share/games/warzone2100/base.wz", f"audio/{folder}/*.ogg", _named(folder))
        for folder in _WARZONE_VOICED
    ),
    Source("warzone2100-data", "usr/share/games/warzone2100/base.wz", "audio/memressp/*.ogg", _named("computer")),
    Source("warzone2100-data", "usr/share/games/warzone2100/base.wz", "audio/taunts/*.ogg", _folder(1)),
    Source("warzone2100-data", "usr/share/games/warzone2100/base.wz", "sequenceaudio/*.ogg", _named("briefing")),
    # Nexuiz: the tutorial's narrator, the male announcer and each character's team calls.
    Source("nexuiz-data", _NEXUIZ, "sound/tutorial/*.ogg", _named("tutorial")),
    Source("nexuiz-data", _NEXUIZ, "sound/announcer/male/*.ogg", _named("announcer")),
    Source("nexuiz-data", _NEXUIZ, "sound/player/*/coms/*.ogg", lambda member: member.split("/")[2]),
    Source("nexuiz-data", _NEXUIZ, "sound/player/torus/*.ogg", _named("torus")),
    # MegaGlest: every unit's answers when chosen and ordered (animals and war cries fall to the labeller).
    Source("megaglest-data", _MEGAGLEST, "*/units/*/sounds/*_ack*.wav", _folder(2)),
    Source("megaglest-data", _MEGAGLEST, "*/units/*/sounds/*_select*.wav", _folder(2)),
    Source("codec2-examples", "usr/share/codec2/wav", "*.wav", lambda member: Path(member).stem),
    Source("boswars-data", "usr/share/games/boswars/units", "*/*.wav", _named("units")),
    Source("boswars-data", "usr/share/games/boswars/campaigns/tutorial", "*.wav", _named("tutorial")),
    *(
        Source("kajongg", f"usr/share/kajongg/voices/{voice}", "*.ogg", _named(voice))
        for voice in ("female1", "female2", "male1", "male2")
    ),
    Source(
        "openarena-data", "usr/share/games/openarena/missionpack/mp-pak0.pk3", "sound/voices/rott/*.ogg", _folder(1)
    ),
    Source("neverball-common", "usr/share/games/neverball/snd", "*.ogg", _named("announcer")),
    Source("klettres-data", "usr/share/klettres/en/syllab", "*.ogg", _named("us")),
    Source("klettres-data", "usr/share/klettres/en_GB/syllab", "*.ogg", _named("gb")),
)


def _members(location: Path, pattern: str) -> Iterator[tuple[str, bytes]]:
    """(path inside `location`, file bytes) for every file matching `pattern`, in name order."""
    if location.is_file():
        with zipfile.ZipFile(location) as archive:
            for name in sorted(archive.namelist()):
                if fnmatch.fnmatch(name, pattern):
                    yield name, archive.read(name)
    elif location.is_dir():
        for file in sorted(location.glob("**/*")):
            member = file.relative_to(location).as_posix()
            if file.is_file() and fnmatch.fnmatch(member, pattern):
                yield member, file.read_bytes()


def trim_silence(audio: np.ndarray, rate: int) -> np.ndarray:
    """`audio` without the near-digital silence at either end past `SILENCE_MARGIN`; all of it when silent."""
    loud = np.flatnonzero(np.abs(audio) > SILENCE_PEAK)
    if len(loud) == 0:
        return audio[:0]
    margin = int(SILENCE_MARGIN * rate)
    return audio[max(0, loud[0] - margin) : loud[-1] + 1 + margin]


def collect(out_dir: str | Path, root: str | Path = "/") -> dict[str, int]:
    """Write every source's clips as `out_dir/<package>-<voice>/<clip>.wav`; returns clips per package.

    Packages that are not installed under `root` are skipped with a message, so any subset works."""
    out, root = Path(out_dir), Path(root)
    counts: dict[str, int] = {}
    for source in SOURCES:
        location = root / source.path
        if not location.exists():
            print(f"skipping {source.package}: nothing at {location} (apt-get install {source.package})")
            continue
        for member, data in _members(location, source.pattern):
            try:
                audio, rate = load_audio(io.BytesIO(data))
            except RuntimeError as error:  # libsndfile cannot read it (soundfile.LibsndfileError)
                print(f"skipping {source.package}:{member}: {error}")
                continue
            audio = trim_silence(audio, rate)
            if len(audio) == 0 or len(audio) > MAX_SECONDS * rate:
                continue
            voice = safe_name(f"{source.package.removesuffix('-data')}-{source.voice(member)}")
            save_audio(
                out / voice / f"{safe_name(member.removesuffix(Path(member).suffix).replace('/', '_'))}.wav",
                audio,
                rate,
            )
            counts[source.package] = counts.get(source.package, 0) + 1
    return counts


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="folder to write one folder of clips per voice into")
    parser.add_argument("--root", default="/", help="where the packages are installed or unpacked")
    args = parser.parse_args(argv)
    counts = collect(args.out, args.root)
    for package, n in counts.items():
        print(f"{package}: {n} clips")


if __name__ == "__main__":
    main()
