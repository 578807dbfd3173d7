import sys
from pathlib import Path

# test helpers (small real models) live beside the tests
sys.path.insert(0, str(Path(__file__).parent))
