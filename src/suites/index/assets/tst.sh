#!/bin/sh
# hostbench's tst.sh, the per-copy work of UnixBench's shell tests: sort the input, dump the
# sorted file with od and sort that numerically, count the lines holding "the" through tee and
# wc, and remove the four files. Each copy names its files by its process id.
sort < "$1" > sort.$$
od sort.$$ | sort -n -k 1 > od.$$
grep the sort.$$ | tee grep.$$ | wc > wc.$$
rm sort.$$ grep.$$ od.$$ wc.$$
