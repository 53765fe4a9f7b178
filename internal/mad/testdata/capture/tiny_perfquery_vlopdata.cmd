perfquery --vlopdata 2 1
