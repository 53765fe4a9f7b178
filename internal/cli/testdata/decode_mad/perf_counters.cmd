perfquery 2 1
