perfquery --vlxmitcounters 2 1
