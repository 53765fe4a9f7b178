perfquery --vlxmitflowctlerrors 2 1
