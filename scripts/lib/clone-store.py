#!/usr/bin/env python3
"""A large fleet store in minutes, for timing the fleet commands (scripts/store-bench.sh with
HOSTBENCH_CLONE=1): N results over HOSTS hosts, a night apart per host, cloned in SQL from the
one result a real `hostbench results import` stored in SEED (an SQLite store). Each clone is
that row with its own id, UUID, host label, rack tag and start time, and kept figures (what
`history` reads) each scaled by 1 + N(0, JITTER%) (default 2; seeded, so no two nights are
alike; 0 keeps the seed's values, as store-bench.sh's imports do). Every 20th host gets a step:
from 60% of its nights on, its figures but the host's fixed-work reference are 30% larger (more
than a noisy seed's noise floor), so a search has changes to find. The clones keep the seed's own result JSON (no command timed here reads it:
`report --fleet` and `history --fleet` read the kept rows).

  clone-store.py SEED OUT N HOSTS [JITTER]
"""
import datetime
import json
import random
import sqlite3
import sys

seed_path, out_path, n, hosts = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
jitter = float(sys.argv[5]) / 100 if len(sys.argv) > 5 else 0.02
REFERENCE = "host/reference/fixed-work job"
rng = random.Random(67)
seed = sqlite3.connect(seed_path)
columns = [r[1] for r in seed.execute("PRAGMA table_info(results)")]
row = dict(zip(columns, seed.execute("SELECT * FROM results ORDER BY id LIMIT 1").fetchone()))
kept = json.loads(seed.execute("SELECT kept FROM result_figures WHERE result_id = ?", (row["id"],)).fetchone()[0])
schema = [r[0] for r in seed.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'")]
layout = seed.execute("PRAGMA user_version").fetchone()[0]
application = seed.execute("PRAGMA application_id").fetchone()[0]
out = sqlite3.connect(out_path)
out.execute("PRAGMA journal_mode = WAL")
for sql in schema:
    out.execute(sql)
out.execute(f"PRAGMA user_version = {layout}")
out.execute(f"PRAGMA application_id = {application}")
nights = (n + hosts - 1) // hosts
base = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
insert = f"INSERT INTO results ({','.join(columns)}) VALUES ({','.join('?' * len(columns))})"
for i in range(n):
    host, night = i % hosts, i // hosts
    step = 1.3 if host % 20 == 0 and night >= 0.6 * nights else 1.0
    clone = dict(row)
    clone["id"] = i + 1
    clone["uuid"] = f"00000000-0000-4000-8000-{i + 1:012d}"
    clone["host_label"] = f"node-{host}"
    clone["started_at"] = (base + datetime.timedelta(days=night, seconds=host)).isoformat(timespec="microseconds")
    out.execute(insert, [clone[c] for c in columns])
    figures = [dict(f, v=f["v"] * (1.0 if f["k"] == REFERENCE else step) * (1 + rng.gauss(0, jitter)))
               for f in kept["figures"]]
    out.execute("INSERT INTO result_figures (result_id, kept) VALUES (?, ?)",
                (i + 1, json.dumps(dict(kept, figures=figures), separators=(",", ":"))))
    out.execute("INSERT INTO result_tags (result_id, key, value) VALUES (?, 'rack', ?)", (i + 1, f"r{i % 50}"))
    if i % 10000 == 9999:
        out.commit()
out.commit()
out.execute("PRAGMA wal_checkpoint(TRUNCATE)")
out.close()
