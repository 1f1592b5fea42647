"""Benchmarks. Each `bench_<area>.py` module exposes `run() -> dict` of named figures."""
