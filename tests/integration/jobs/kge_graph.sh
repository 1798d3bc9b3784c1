#!/usr/bin/env bash
# A tiny knowledge graph for the KGE tests, in the plain layout (train.txt,
# valid.txt, test.txt of subject<TAB>relation<TAB>object names): 300 entities
# in 30 clusters of 10; relation "same" links members of one cluster (about
# half the ordered pairs), "next" links cluster c to cluster c+1 (15% of the
# pairs). 5% of the triples go to valid, 10% to test, except those naming an
# entity that no training triple names. Seeded: the same files every time.
# usage: kge_graph.sh DIR [SEED]
set -eu
mkdir -p "$1"
awk -v dir="$1" -v seed="${2:-1}" 'BEGIN {
    srand(seed); n = 0
    for (c = 0; c < 30; c++)
        for (a = 0; a < 10; a++)
            for (b = 0; b < 10; b++) {
                x = c * 10 + a
                if (a != b && rand() < 0.5) { S[n] = x; R[n] = "same"; O[n] = c * 10 + b; n++ }
                if (rand() < 0.15) { S[n] = x; R[n] = "next"; O[n] = ((c + 1) % 30) * 10 + b; n++ }
            }
    for (i = 0; i < n; i++) {
        u = rand(); P[i] = u < 0.05 ? "valid" : u < 0.15 ? "test" : "train"
        if (P[i] == "train") { seen[S[i]] = 1; seen[O[i]] = 1 }
    }
    for (i = 0; i < n; i++) {
        p = (seen[S[i]] && seen[O[i]]) ? P[i] : "train"
        printf "e%d\t%s\te%d\n", S[i], R[i], O[i] > (dir "/" p ".txt")
    }
}'
