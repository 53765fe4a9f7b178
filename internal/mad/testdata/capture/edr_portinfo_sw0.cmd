smpquery portinfo 2 0
