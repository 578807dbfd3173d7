"""The Sonare server: a Cartesia-compatible streaming TTS/STT API plus the SageMaker container contract.

Run it with `sonare serve` (settings: flags > `SONARE_*` environment > `--config` YAML/TOML file; see
`config.ServerConfig`). Routes, all at the root:

- TTS: `GET /tts/websocket` (contexts, `continue`, `flush`, `cancel`, timestamps), `POST /tts/bytes`
  (raw, wav, mp3), `POST /tts/sse`.
- STT: `GET /stt/websocket` (partials, finals, `finalize`, `close`/`done`), `GET /stt/turns/websocket`
  (turn events), `POST /stt` (batch upload).
- Voices: `GET /voices` (id cursors), `GET /voices/{id}`, `POST /voices/` (from an embedding).
- Auth: `POST /access-token` (short-lived browser tokens).
- Operations: `GET /live`, `GET /ready`, `GET /metrics` (Prometheus), `GET /` (version).
- SageMaker: `GET /ping`, `POST /invocations`, WebSocket `/invocations-bidirectional-stream`.

Layout: `service.Service` holds the engine, models, voices and drain state, independent of transport;
each route module speaks one protocol over it. `sonare bench` loads a running server.
"""
