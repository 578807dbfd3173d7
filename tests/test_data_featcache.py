import threading

import numpy as np

from sonare.audio.io import save_audio
from sonare.data.build import _worker_pool
from sonare.data.featcache import FeatureStore, cache_features


def _records(tmp_path, n):
    rng = np.random.default_rng(0)
    out = []
    for i in range(n):
        name = f"audio/u{i}.flac"
        save_audio(tmp_path / name, (0.1 * rng.standard_normal(8000 + 160 * i)).astype(np.float32), 16000)
        out.append({"id": f"u{i}", "audio": name})
    return out


def test_cache_is_incremental_and_readable(tmp_path):
    records = _records(tmp_path, 4)
    assert cache_features(tmp_path, records[:2], progress=False) == 2
    assert cache_features(tmp_path, records, progress=False) == 2
    store = FeatureStore(tmp_path)
    assert sorted(store.ids()) == ["u0", "u1", "u2", "u3"]
    assert store["u3"].shape == (1 + (8000 + 480 - 400) // 160, 80)


def test_lock_is_released_when_pool_workers_start_inside_it(tmp_path):
    # Workers started while the lock file is open may inherit it; the lock must still be released.
    records = _records(tmp_path, 3)
    with _worker_pool(1) as pool:
        cache_features(tmp_path, records[:1], progress=False, map_fn=pool.map)
        finished = threading.Event()

        def again():
            cache_features(tmp_path, records, progress=False, map_fn=pool.map)
            finished.set()

        threading.Thread(target=again, daemon=True).start()
        assert finished.wait(30), "second writer blocked on a lock held by forked workers"
    assert len(FeatureStore(tmp_path)) == 3
