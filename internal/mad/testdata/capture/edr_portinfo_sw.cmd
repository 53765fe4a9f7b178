smpquery portinfo 2 12
