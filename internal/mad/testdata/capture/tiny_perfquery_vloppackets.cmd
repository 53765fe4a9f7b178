perfquery --vloppackets 2 1
