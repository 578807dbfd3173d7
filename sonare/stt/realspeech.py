"""A manifest of real human speech for `sonare eval stt`: every transcribed recording that Debian packages put on
this machine, each set a section of its own:

- `librivox` (pocketsphinx-testdata): five public-domain read sentences from "Sense and Sensibility", one
  reader, 16 kHz, 71 words;
- `cards` (pocketsphinx-testdata): five short spoken card names ("eight of spades four of clubs seven of
  hearts"), 16 kHz, 21 words;
- `alsa` (alsa-utils): the eight speaker-test announcements ("front left", "rear center", ...), 48 kHz, 16
  words; each file is named after what it says;
- `asterisk` (asterisk-core-sounds-en-wav): the Asterisk PBX's English prompts ("Please enter your password
  followed by the pound key."), one professional voice (Allison Smith, CC-BY-SA-3.0) recorded for telephones,
  8 kHz; what each says is listed in the package's core-sounds-en.txt;
- `asterisk-words`: the same voice's isolated words for reading out numbers, dates and call signs ("twelfth",
  "November", "foxtrot"). Spoken letters, symbols and tones are left out: a letter's name has no spelling to
  score a transcript against;
- `ktuberling` (ktuberling-data): KDE's KTuberling toy naming the pieces a child places ("moustache", "palm
  tree", "pepperoni"), one voice, 44.1 kHz, GPL-2+; each sound's name in the English sound theme is what it says;
- `qabcs` (qabcs-data): qABCs, an alphabet book for children, naming the picture for each letter ("accordion",
  "ice cream", "xylophone"), one American voice (Jordan Irwin), 44.1 kHz, GPL-3+; the book's abc1.json names each
  picture and its sound.

Four fifths of the `asterisk` prompts (chosen by a hash of their names, so always the same ones) are also written
as a recorded dataset in the LJSpeech layout, `asterisk-adaptation/`, for a recogniser to adapt to real speech
(configs/data-stt-asterisk.yaml): the one real voice here long enough to train on. Their manifest records carry
`split: train`, so `sonare eval stt` (held-out split by default) scores only what no model trained on: the last
fifth, `asterisk-words` and the other voices. `--split train` scores the adaptation prompts themselves.

    apt-get install pocketsphinx-testdata alsa-utils asterisk-core-sounds-en asterisk-core-sounds-en-wav \
        ktuberling-data qabcs-data
    python -m sonare.stt.realspeech runs/realspeech
    sonare eval stt --manifest runs/realspeech/manifest.jsonl --asr sonare --asr whisper-tiny
"""

from __future__ import annotations

import gzip
import json
import re
import sys
import zlib
from pathlib import Path

POCKETSPHINX = Path("/usr/share/pocketsphinx/test/data")
ALSA = Path("/usr/share/sounds/alsa")
ASTERISK = Path("/usr/share/asterisk/sounds/en_US_f_Allison")
ASTERISK_LISTING = Path("/usr/share/doc/asterisk-core-sounds-en/core-sounds-en.txt.gz")
# Asterisk's prompt folders -> section; `letters` and `silence` hold no words to score.
ASTERISK_SECTIONS = {
    "": "asterisk",
    "dictate": "asterisk",
    "followme": "asterisk",
    "digits": "asterisk-words",
    "phonetic": "asterisk-words",
}
KTUBERLING = Path("/usr/share/ktuberling/sounds")
# KTuberling sound names whose words are spelled otherwise: joined, or misspelled in the theme.
KTUBERLING_WORDS = {"palmtree": "palm tree", "fallingstar": "falling star", "sphynx": "sphinx", "brocolli": "broccoli"}
KTUBERLING_LETTERS = {"ufo"}  # a run of letters' names, left out like Asterisk's spoken letters
QABCS = Path("/usr/share/qabcs/abcs/en")
# qABCs picture names written joined where English writes them apart.
QABCS_WORDS = {"yinyang": "yin yang", "yoyo": "yo-yo"}
ADAPTATION_FOLDER = "asterisk-adaptation"
ADAPTATION_SHARE = 0.8  # of the `asterisk` prompts; the rest stay held out with every other set

# pocketsphinx-testdata's sets: folder -> transcription file, whose lines read "<s> words </s> (clip)".
TRANSCRIBED = {"librivox": "transcription", "cards": "cards.transcription"}


def _transcribed(folder: Path, listing: str) -> list[tuple[str, Path, str]]:
    clips = []
    for line in (folder / listing).read_text().splitlines():
        match = re.fullmatch(r"<s>\s*(.*?)\s*</s> \((.+)\)", line.strip())
        if match:
            text, clip = match.groups()
            clips.append((clip, folder / f"{clip}.wav", text))
    return clips


def _announcements(folder: Path) -> list[tuple[str, Path, str]]:
    """speaker-test's channel names, which each file says (Noise.wav is noise)."""
    return [(p.stem, p, p.stem.replace("_", " ").lower()) for p in sorted(folder.glob("*_*.wav"))]


def _named_pieces(folder: Path) -> list[tuple[str, Path, str]]:
    """KTuberling's English sounds: a name is a piece, after its playground's prefix ("egypt_camel" says "camel")."""
    theme = (folder / "en.soundtheme").read_text(encoding="utf-8")
    clips = []
    for name, file in re.findall(r'<sound name="([^"]+)" file="([^"]+)"', theme):
        word = name.rpartition("_")[2]
        if word not in KTUBERLING_LETTERS and (folder / file).exists():
            clips.append((name, folder / file, KTUBERLING_WORDS.get(word, word)))
    return clips


def _pictures(folder: Path) -> list[tuple[str, Path, str]]:
    """qABCs's English pictures: for each letter, each category's picture name and the sound that says it."""
    book = json.loads((folder / "abc1.json").read_text(encoding="utf-8"))
    sounds = folder / "sounds" / "words"
    clips = []
    for letter in book["letters"]:
        for entries in letter.values():  # the letter's own sound (a file name) and one picture per category
            for picture in entries.values():
                if isinstance(picture, dict) and (sounds / picture["sound_pic"]).exists():
                    name = picture["name"].lower()
                    clips.append(
                        (Path(picture["sound_pic"]).stem, sounds / picture["sound_pic"], QABCS_WORDS.get(name, name))
                    )
    return clips


def _spoken(listed: str) -> str:
    """What a prompt says, from its listing: keypad symbols read as spoken, notes on sounds dropped."""
    text = re.sub(r"\[[^]]*\]|\([^)]*\)|<[^>]*>", " ", listed)
    text = text.replace("*", " star ").replace("#", " pound ").replace("...", " ")
    return " ".join(text.split())


def _prompts(folder: Path, listing: Path) -> dict[str, list[tuple[str, Path, str]]]:
    """Asterisk's prompts by section: every listed recording that says words."""
    sets: dict[str, list[tuple[str, Path, str]]] = {}
    with gzip.open(listing, "rt") as lines:
        listed_lines = lines.read().splitlines()
    for line in listed_lines:
        name, _, listed = line.partition(": ")
        subfolder = name.rpartition("/")[0]
        path, text = folder / f"{name}.wav", _spoken(listed)
        if subfolder in ASTERISK_SECTIONS and re.search(r"[a-zA-Z0-9]", text) and path.exists():
            sets.setdefault(ASTERISK_SECTIONS[subfolder], []).append((name.replace("/", "-"), path, text))
    return sets


def is_adaptation_prompt(section: str, clip: str) -> bool:
    """Whether a clip is one of the prompts a recogniser may adapt on (a hash of its name: the same in every run)."""
    return section == "asterisk" and zlib.crc32(clip.encode()) % 100 < ADAPTATION_SHARE * 100


def _write_adaptation_dataset(out: Path, clips: list[tuple[str, Path, str]]) -> None:
    """The adaptation prompts as an LJSpeech-layout dataset (metadata.csv and wavs/ linked to the package's files),
    and their transcripts one per line in text.txt, for a language model's `text_files`."""
    wavs = out / "wavs"
    wavs.mkdir(parents=True, exist_ok=True)
    for link in wavs.glob("*.wav"):
        link.unlink()
    for clip, path, _ in clips:
        (wavs / f"{clip}.wav").symlink_to(path)
    (out / "metadata.csv").write_text("".join(f"{clip}|{text}\n" for clip, _, text in clips))
    (out / "text.txt").write_text("".join(f"{text}\n" for _, _, text in clips))


def write_manifest(
    out_dir: str | Path,
    pocketsphinx: Path = POCKETSPHINX,
    alsa: Path = ALSA,
    asterisk: Path = ASTERISK,
    asterisk_listing: Path = ASTERISK_LISTING,
    ktuberling: Path = KTUBERLING,
    qabcs: Path = QABCS,
) -> Path:
    """manifest.jsonl with one record per clip (absolute audio paths), and the adaptation prompts' dataset beside it."""
    if not all((pocketsphinx / folder / listing).exists() for folder, listing in TRANSCRIBED.items()):
        raise SystemExit(f"no transcribed clips under {pocketsphinx}: apt-get install pocketsphinx-testdata")
    if not list(alsa.glob("*_*.wav")):
        raise SystemExit(f"no speaker-test clips under {alsa}: apt-get install alsa-utils")
    if not asterisk_listing.exists() or not list(asterisk.glob("*.wav")):
        raise SystemExit(
            f"no Asterisk prompts under {asterisk}: apt-get install asterisk-core-sounds-en asterisk-core-sounds-en-wav"
        )
    if not (ktuberling / "en.soundtheme").exists():
        raise SystemExit(f"no KTuberling sounds under {ktuberling}: apt-get install ktuberling-data")
    if not (qabcs / "abc1.json").exists():
        raise SystemExit(f"no qABCs sounds under {qabcs}: apt-get install qabcs-data")
    sets = {section: _transcribed(pocketsphinx / section, listing) for section, listing in TRANSCRIBED.items()}
    sets["alsa"] = _announcements(alsa)
    sets.update(_prompts(asterisk, asterisk_listing))
    sets["ktuberling"] = _named_pieces(ktuberling)
    sets["qabcs"] = _pictures(qabcs)
    records = [
        {
            "id": f"{section}-{clip}",
            "audio": str(path),
            "text": text,
            "normalized": text,
            "section": section,
            "split": "train" if is_adaptation_prompt(section, clip) else "heldout",
        }
        for section, clips in sets.items()
        for clip, path, text in clips
    ]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    adaptation = [c for c in sets["asterisk"] if is_adaptation_prompt("asterisk", c[0])]
    _write_adaptation_dataset(out / ADAPTATION_FOLDER, adaptation)
    manifest = out / "manifest.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in records))
    return manifest


if __name__ == "__main__":
    print(write_manifest(sys.argv[1] if len(sys.argv) > 1 else "runs/realspeech"))
