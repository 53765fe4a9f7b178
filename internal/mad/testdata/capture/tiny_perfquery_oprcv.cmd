perfquery --oprcvcounters 2 1
