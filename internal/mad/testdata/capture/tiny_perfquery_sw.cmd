perfquery 1 1
