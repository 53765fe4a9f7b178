smpquery pkeys 2 1
