"""Audio I/O and signal processing shared by every model and the server.

io: load/save any common format as float32 mono; resample: soxr, offline and streaming;
features: 16 kHz log-mel (80 bins, 25 ms / 10 ms), offline and streaming; codecs: G.711.
"""
