perfquery -x 1 8
