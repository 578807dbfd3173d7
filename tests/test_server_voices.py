"""Voices: the library store (paging, filters, persistence) and the /voices routes."""

from __future__ import annotations

import httpx
import numpy as np
import pytest
from server_harness import ALTO, start_server
from tts_tone_model import VOICES

from sonare.voices.library import UnknownCursor, VoiceFilter, VoiceLibrary


def walk(library: VoiceLibrary, limit: int, **where) -> list[str]:
    ids, cursor = [], None
    while True:
        page, has_more = library.page(limit, starting_after=cursor, where=VoiceFilter(**where))
        ids += [v.id for v in page]
        if not has_more:
            # the SDK pages on until an empty page: past the last voice there is nothing
            assert not ids or library.page(limit, starting_after=ids[-1], where=VoiceFilter(**where))[0] == []
            return ids
        cursor = page[-1].id


def test_library_pages_builtins_then_stored_in_both_directions(tmp_path):
    library = VoiceLibrary(tmp_path / "v.sqlite3", VOICES)
    stored = [library.add(f"Stored {i}", [0.1 * i, 0, 0, 0], "en", gender="feminine").id for i in range(5)]
    everything = [v["id"] for v in VOICES] + stored
    for limit in (1, 2, 3, 100):
        assert walk(library, limit) == everything
    page, more = library.page(2, ending_before=stored[1])
    assert [v.id for v in page] == [VOICES[1]["id"], stored[0]] and more
    page, more = library.page(5, ending_before=stored[1])
    assert [v.id for v in page] == everything[:3] and not more
    assert walk(library, 2, is_owner=True) == stored
    assert walk(library, 2, gender="masculine") == [VOICES[1]["id"]]
    assert walk(library, 2, q="STORED 3") == [stored[3]]
    with pytest.raises(UnknownCursor):
        library.page(2, starting_after="nope")
    library.close()
    # stored voices persist, embeddings intact
    reopened = VoiceLibrary(tmp_path / "v.sqlite3", VOICES)
    voice = reopened.get(stored[4])
    assert voice is not None and voice.name == "Stored 4"
    np.testing.assert_array_equal(voice.embedding, np.array([0.4, 0, 0, 0], np.float32))
    with pytest.raises(ValueError, match="4 values"):
        reopened.add("bad", [1.0, 2.0], "en")
    with pytest.raises(ValueError, match="finite"):
        reopened.add("bad", [1.0, float("nan"), 0, 0], "en")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    running = start_server(tmp_path_factory.mktemp("voices"))
    yield running
    running.stop()


def test_voice_routes(server):
    created = httpx.post(
        f"{server.http}/voices/", json={"name": "Mine", "description": "made here", "embedding": [0.7, 0, 0, 0]}
    )
    assert created.status_code == 200
    mine = created.json()
    assert mine["is_owner"] is True and mine["language"] == "en"
    for path in ("/voices", "/voices/"):
        body = httpx.get(f"{server.http}{path}", params={"limit": 100}).json()
        assert [v["id"] for v in body["data"]][:2] == [ALTO, VOICES[1]["id"]]
        assert mine["id"] in [v["id"] for v in body["data"]] and body["has_more"] is False
    page = httpx.get(f"{server.http}/voices", params={"limit": 1}).json()
    assert page["has_more"] and page["next_page"] == ALTO
    rest = httpx.get(f"{server.http}/voices", params={"limit": 100, "starting_after": ALTO}).json()
    assert rest["data"][0]["id"] == VOICES[1]["id"]
    voice = httpx.get(f"{server.http}/voices/{ALTO}", params={"expand[]": "embedding"}).json()
    assert voice["embedding"] == [1.0, 0.0, 0.0, 0.0] and voice["description"] and voice["created_at"]
    assert "embedding" not in httpx.get(f"{server.http}/voices/{ALTO}").json()
    # the stored voice speaks: its embedding reaches the model
    tts = {
        "transcript": "hi",
        "voice": mine["id"],
        "output_format": {"container": "raw", "encoding": "pcm_f32le", "sample_rate": 24000},
    }
    assert httpx.post(f"{server.http}/tts/bytes", json=tts).status_code == 200


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status"),
    [
        ("GET", "/voices/../../etc/passwd", {}, 404),
        ("GET", "/voices/unknown", {}, 404),
        ("GET", "/voices", {"params": {"limit": 0}}, 400),
        ("GET", "/voices", {"params": {"limit": "ten"}}, 400),
        ("GET", "/voices", {"params": {"starting_after": "nobody"}}, 400),
        ("GET", "/voices", {"params": {"is_owner": "maybe"}}, 400),
        ("POST", "/voices/", {"json": {"name": "x", "embedding": [1, 2]}}, 400),
        ("POST", "/voices/", {"json": {"name": "", "embedding": [1, 2, 3, 4]}}, 400),
        ("POST", "/voices/", {"json": {"name": "x", "embedding": "abc"}}, 400),
        ("POST", "/voices/", {"json": {"name": "x", "embedding": [1, 0, 0, 0], "gender": "robot"}}, 400),
    ],
)
def test_voice_route_errors(server, method, path, kwargs, status):
    r = httpx.request(method, f"{server.http}{path}", **kwargs)
    assert r.status_code == status
    assert r.json()["message"]
