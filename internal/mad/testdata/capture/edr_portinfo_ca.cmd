smpquery portinfo 1 1
