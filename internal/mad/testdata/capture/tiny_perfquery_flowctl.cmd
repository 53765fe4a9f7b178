perfquery --flowctlcounters 2 1
