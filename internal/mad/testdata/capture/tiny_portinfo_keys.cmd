smpquery -K portinfo 2 1
