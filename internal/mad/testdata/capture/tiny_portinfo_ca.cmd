smpquery portinfo 2 1
