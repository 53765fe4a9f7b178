perfquery -E 2 1
