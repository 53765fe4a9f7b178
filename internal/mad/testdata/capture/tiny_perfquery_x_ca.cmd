perfquery -x 2 1
