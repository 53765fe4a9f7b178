sminfo 1
