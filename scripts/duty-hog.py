#!/usr/bin/env python3
"""A planted change for scripts/compare-false-alarms.sh: one thread on one CPU that spins
BUSY_MS of every PERIOD_MS, on an absolute schedule so its duty cycle stays fixed, until it
is killed. With --fifo PRIO it runs SCHED_FIFO at that priority (needs root), so a task it
interrupts waits the whole burst: a tail-latency change. Without it, it is an ordinary task
that takes BUSY_MS / PERIOD_MS of the CPU from whatever shares it: a throughput change.
With --jitter each period is drawn evenly from half to one and a half PERIOD_MS (the duty
cycle the same on average), so the bursts never lock in step with a periodic task (interbench's
Audio wakes every 50 ms: a burst every 10 ms would hit it always or never).

    scripts/duty-hog.py CPU BUSY_MS PERIOD_MS [--fifo PRIO] [--jitter]
"""
import os
import random
import sys
import time


def main() -> None:
    args = sys.argv[1:]
    fifo = None
    jitter = "--jitter" in args
    if jitter:
        args.remove("--jitter")
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
        start += random.uniform(0.5 * period, 1.5 * period) if jitter else period
        # Behind schedule (the hog itself was held off): start the next burst at once, but
        # never bunch up bursts to catch up.
        now = clock()
        if start > now:
            time.sleep(start - now)
        else:
            start = now


if __name__ == "__main__":
    main()
