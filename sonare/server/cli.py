"""`sonare serve`: run the Cartesia-compatible server. Heavy imports happen inside the handler."""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "serve",
        help="run the streaming TTS/STT server (Cartesia-compatible API, SageMaker routes)",
        description="Settings come from flags, then SONARE_* environment variables, then the config file.",
    )
    p.add_argument("--config", help="YAML or TOML file of settings (also SONARE_CONFIG)")
    p.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, help="port (default 8000; 8080 in SageMaker)")
    p.add_argument("--api-key", dest="api_keys", action="append", help="accepted API key (repeatable)")
    p.add_argument(
        "--behind-proxy",
        action="store_const",
        const=True,
        help="an authenticating proxy fronts the server: allow a public address without API keys",
    )
    p.add_argument("--data-dir", help="where the voice library lives")
    p.add_argument("--model-dir", help="directory with model weights (SageMaker: /opt/ml/model)")
    p.add_argument("--tts-slots", type=int, help="concurrent TTS streams")
    p.add_argument("--stt-slots", type=int, help="concurrent STT streams")
    p.add_argument("--stt-step-ms", type=int, help="audio a live STT stream gathers a step (default: the model's, 80)")
    p.add_argument("--threads", type=int, help="intra-op threads for the inference thread")
    p.add_argument("--drain-timeout", type=float, help="seconds SIGTERM waits for in-flight streams")
    p.add_argument("--log-level", help="debug, info, warning, error")
    p.add_argument("--log-format", choices=["json", "text"])
    p.set_defaults(handler=serve)

    b = subparsers.add_parser(
        "bench",
        help="load a running server over the real protocol, with real-time pacing",
        description="Prints a JSON summary: time to first output and final latency percentiles, underruns; "
        "with --sweep, one summary per concurrency level and the knee.",
    )
    b.add_argument("--url", default="ws://127.0.0.1:8000", help="server WebSocket base URL")
    b.add_argument("--mode", choices=["tts", "stt"], default="tts")
    b.add_argument("--sessions", type=int, default=8, help="sessions in total")
    b.add_argument("--concurrency", type=int, default=4, help="sessions at once")
    b.add_argument("--api-key")
    b.add_argument("--voice", help="TTS voice id (default: the server's)")
    b.add_argument("--text", help="TTS text, sent word by word")
    b.add_argument("--word-interval", type=float, default=0.05, help="seconds between TTS words")
    b.add_argument("--audio", help="STT clip (any format libsndfile reads)")
    b.add_argument("--sample-rate", type=int, default=16000)
    b.add_argument("--sweep", help="comma-separated concurrency levels, e.g. 1,4,8,16,24: find the knee")
    b.add_argument("--rounds", type=int, default=2, help="with --sweep: sessions per level = level x rounds")
    b.add_argument("--csv", help="with --sweep: write one row per level here")
    b.add_argument("--plot", help="with --sweep: write an SVG chart of first-output latency here")
    b.set_defaults(handler=run_bench)


def serve(args: argparse.Namespace) -> int:
    from sonare.server.config import ConfigError, load_config

    flags = {k: v for k, v in vars(args).items() if k not in ("command", "handler", "config")}
    try:
        config = load_config(flags, config_file=args.config)
    except ConfigError as exc:
        print(f"sonare serve: {exc}", file=sys.stderr)
        return 2

    from sonare.server.runner import run

    return run(config)


def run_bench(args: argparse.Namespace) -> int:
    import json

    from sonare.server.bench import DEFAULT_TEXT, BenchConfig, bench, sweep, write_csv, write_svg

    clip = None
    if args.mode == "stt":
        if not args.audio:
            print("sonare bench: --audio is required for --mode stt", file=sys.stderr)
            return 2
        from sonare.audio.io import load_audio

        clip, _ = load_audio(args.audio, args.sample_rate)
    config = BenchConfig(
        url=args.url.rstrip("/"),
        mode=args.mode,
        sessions=args.sessions,
        concurrency=args.concurrency,
        api_key=args.api_key,
        text=args.text or DEFAULT_TEXT,
        voice=args.voice,
        sample_rate=args.sample_rate,
        word_interval_s=args.word_interval,
        clip=clip,
    )
    if args.sweep:
        try:
            levels = sorted({int(v) for v in args.sweep.split(",")})
        except ValueError:
            print("sonare bench: --sweep takes comma-separated integers", file=sys.stderr)
            return 2
        result = sweep(config, levels, args.rounds)
        if args.csv:
            write_csv(result, args.csv)
        if args.plot:
            write_svg(result, args.plot)
        print(json.dumps(result, indent=2))
        return 0
    summary = bench(config)
    print(json.dumps(summary, indent=2))
    return 0 if summary["succeeded"] == summary["sessions"] else 1
