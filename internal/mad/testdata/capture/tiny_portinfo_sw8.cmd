smpquery portinfo 1 8
