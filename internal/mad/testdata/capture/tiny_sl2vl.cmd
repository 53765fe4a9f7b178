smpquery sl2vl 1
