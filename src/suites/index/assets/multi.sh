#!/bin/sh
# hostbench's multi.sh, as UnixBench's: start N copies of the per-copy script, each a /bin/sh
# of its own on the same input, and wait for all of them. One completion is one "loop".
n=${1:-1}
i=1
while [ "$i" -le "$n" ]; do
	/bin/sh tst.sh sort.src &
	i=$((i + 1))
done
wait
