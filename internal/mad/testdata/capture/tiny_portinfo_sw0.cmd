smpquery portinfo 1 0
