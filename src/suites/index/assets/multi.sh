#!/bin/sh
# hostbench's shell workload (UnixBench's shell tests): run N copies of a small text pipeline
# at once — sort a file, dump it with od and sort that numerically, grep it through tee into wc —
# and wait for all of them. One completion of this script is one "loop".
n=${1:-1}
i=0
while [ "$i" -lt "$n" ]; do
	(
		t=$$.$i
		sort < sort.src > "sort.$t"
		od "sort.$t" | sort -n -k 1 > "od.$t"
		grep the "sort.$t" | tee "grep.$t" | wc > "wc.$t"
		rm -f "sort.$t" "od.$t" "grep.$t" "wc.$t"
	) &
	i=$((i + 1))
done
wait
