smpquery -D portinfo 0,1 1
