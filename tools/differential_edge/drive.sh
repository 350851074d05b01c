#!/bin/bash
# Edge-value differential probes against torch (docs/DIFFERENTIAL_FINDINGS.md, section 0c).
#   /usr/bin/python3 tools/differential_edge/gen_pointwise.py /tmp/p.txt   # or gen_reductions.py
#   tools/differential_edge/drive.sh /tmp/p.txt                           # -> /tmp/p.txt.out
#   /usr/bin/python3 tools/differential_edge/cluster.py /tmp/p.txt.out [-v N]
# Each line of the list is an expression in `L` (kiln or torch). compare.py evaluates it in both and
# prints MISMATCH blocks (dtype, shape, values with NaN positions, infinities and signed zeros, or the
# exception class). torch itself dies of SIGFPE on INT_MIN // -1: the run restarts after that line.
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
f=$1; start=0; : > "$f.out"
n=$(wc -l < "$f")
while [ "$start" -lt "$n" ]; do
  PYTHONPATH=$root/bazel-bin /usr/bin/python3 "$here/compare.py" "$f" "$start" >> "$f.out" 2>&1
  if [ $? -eq 0 ]; then break; fi
  li=$(tr -d ' ' < "$f.prog")
  echo "CRASH at line $li: $(sed -n "$((li+1))p" "$f")" >> "$f.out"
  start=$((li+1))
done
