perfquery -E 1 4
