perfquery -D 2 1
