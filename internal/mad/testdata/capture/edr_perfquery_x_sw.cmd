perfquery -x 2 12
