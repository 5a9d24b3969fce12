#!/usr/bin/env python3
"""A planted change for scripts/compare-false-alarms.sh: one thread on one CPU that spins
BUSY_MS of every PERIOD_MS, on an absolute schedule so its duty cycle stays fixed, until it
is killed. With --fifo PRIO it runs SCHED_FIFO at that priority (needs root), so a task it
interrupts waits the whole burst: a tail-latency change. Without it, it is an ordinary task
that takes BUSY_MS / PERIOD_MS of the CPU from whatever shares it: a throughput change.

    scripts/duty-hog.py CPU BUSY_MS PERIOD_MS [--fifo PRIO]
"""
import os
import sys
import time


def main() -> None:
    args = sys.argv[1:]
    fifo = None
    if "--fifo" in args:
        i = args.index("--fifo")
        fifo = int(args[i + 1])
        del args[i : i + 2]
    if len(args) != 3:
        sys.exit(__doc__.strip().splitlines()[-1].strip())
    cpu, busy, period = int(args[0]), float(args[1]) / 1e3, float(args[2]) / 1e3
    if not 0 < busy < period:
        sys.exit("BUSY_MS must be above 0 and below PERIOD_MS")
    os.sched_setaffinity(0, {cpu})
    if fifo is not None:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(fifo))
    clock = time.monotonic
    start = clock()
    while True:
        end = start + busy
        while clock() < end:
            pass
        start += period
        # Behind schedule (the hog itself was held off): start the next burst at once, but
        # never bunch up bursts to catch up.
        now = clock()
        if start > now:
            time.sleep(start - now)
        else:
            start = now


if __name__ == "__main__":
    main()
